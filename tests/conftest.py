"""Every test keeps dagtui's working directory (cache, calibrations, traces) in its own
temporary folder: `DAGTUI_DIR` (dagtui.workdir), so a run of a shipped graph under graphs/
neither writes into the checkout nor finds another test's cached answers. Tests of where
`.dagtui/` lives without it remove the variable themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

#: where a run of a shipped graph would leave its `.dagtui/` without DAGTUI_DIR
CHECKOUT_WORKDIRS = [Path(__file__).resolve().parents[1] / sub / ".dagtui"
                     for sub in ("graphs", "graphs/suites", ".")]
_BEFORE = {p for p in CHECKOUT_WORKDIRS if p.exists()}


@pytest.fixture(autouse=True)
def _own_workdir(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGTUI_DIR", str(tmp_path / ".dagtui"))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a test left a `.dagtui/` in the checkout (a fixture wider than one
    test runs before `_own_workdir`: it must set DAGTUI_DIR itself). Such a folder is
    ignored by git but not by the editor: a calibration saved there puts badges, and the
    imports behind them, into every later `dagtui edit` of that graph."""
    left = [p for p in CHECKOUT_WORKDIRS if p.exists() and p not in _BEFORE]
    if left:
        print(f"\ntests left dagtui working folders in the checkout: {left}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
