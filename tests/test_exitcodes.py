"""One set of exit codes (`dagtui.exitcodes.ExitCode`), the contract README "Command line"
states: 0 ok, 1 failures, 2 usage or input error, 3 judge errors. A module that wrote its own
numbers could drift from it unnoticed, so none may."""

from __future__ import annotations

import re
from pathlib import Path

from dagtui.exitcodes import ExitCode

PACKAGE = Path(__file__).resolve().parent.parent / "dagtui"


def test_values_are_the_documented_ones() -> None:
    assert [(c.name, int(c)) for c in ExitCode] == [
        ("OK", 0), ("FAILURES", 1), ("USAGE", 2), ("JUDGE", 3)]


def test_no_module_defines_its_own_exit_numbers() -> None:
    own = re.compile(r"^EXIT_\w+(?:\s*,\s*EXIT_\w+)*\s*=\s*\(?\s*\d", re.MULTILINE)
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if own.search(p.read_text(encoding="utf-8"))]
    assert not offenders, f"exit numbers defined outside dagtui/exitcodes.py: {offenders}"
