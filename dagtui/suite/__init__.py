"""Suites: rules (graph files or inline checks) gated on each other over a dataset.

A dependent rule runs on a case only when every rule it depends on scored that case above 0,
so cheap code checks run first and expensive judges see only what survives them. See
`model` (the suite and its refusing edit operations), `loader` (file -> suite + positioned
diagnostics), `gating` (levels, the AND > 0 gate, filter, sample, budget), `runner` (rules
run through the engine and `dagtui.graph.checks`), `report` (summary, JSON, JUnit), `cli`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagtui.lazyattrs import lazy_attributes

if TYPE_CHECKING:
    from dagtui.suite.loader import (
        SuiteError,
        SuiteLoad,
        check_suite_file,
        load_suite_file,
        load_suite_text,
        validate_suite_file,
    )
    from dagtui.suite.model import (
        CycleError,
        FilterCond,
        Rule,
        RuleInUseError,
        Sample,
        Suite,
        SuiteEditError,
    )
    from dagtui.suite.sniff import is_suite_file, is_suite_text

#: the names below, imported on first use: importing a module of this package (as
#: `dagtui edit` does `sniff`, before its first frame) loads none of the others
_LAZY = {
    **dict.fromkeys(("SuiteError", "SuiteLoad", "check_suite_file", "load_suite_file",
                     "load_suite_text", "validate_suite_file"), "loader"),
    **dict.fromkeys(("CycleError", "FilterCond", "Rule", "RuleInUseError", "Sample", "Suite",
                     "SuiteEditError"), "model"),
    **dict.fromkeys(("is_suite_file", "is_suite_text"), "sniff"),
}


__getattr__ = lazy_attributes(__name__, _LAZY, globals())

__all__ = [
    "CycleError",
    "FilterCond",
    "Rule",
    "RuleInUseError",
    "Sample",
    "Suite",
    "SuiteEditError",
    "SuiteError",
    "SuiteLoad",
    "check_suite_file",
    "is_suite_file",
    "is_suite_text",
    "load_suite_file",
    "load_suite_text",
    "validate_suite_file",
]
