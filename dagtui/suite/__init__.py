"""Suites: rules (graph files or inline checks) gated on each other over a dataset.

A dependent rule runs on a case only when every rule it depends on scored that case above 0,
so cheap code checks run first and expensive judges see only what survives them. See
`model` (the suite and its refusing edit operations), `loader` (file -> suite + positioned
diagnostics), `gating` (levels, the AND > 0 gate, filter, sample, budget), `runner` (rules
run through the engine and `dagtui.graph.checks`), `report` (summary, JSON, JUnit), `cli`.
"""

from __future__ import annotations

from dagtui.suite.loader import (
    SuiteError,
    SuiteLoad,
    check_suite_file,
    is_suite_file,
    is_suite_text,
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
