"""Every test keeps dagtui's working directory (cache, calibrations, traces) in its own
temporary folder: `DAGTUI_DIR` (dagtui.workdir), so a run of a shipped graph under graphs/
neither writes into the checkout nor finds another test's cached answers. Tests of where
`.dagtui/` lives without it remove the variable themselves."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _own_workdir(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGTUI_DIR", str(tmp_path / ".dagtui"))
