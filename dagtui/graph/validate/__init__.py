"""The validator: everything that makes a loaded graph unable to run, or likely to run wrong.

The loader (`dagtui.graph.loader`) reports what does not fit the file format (syntax, unknown keys,
wrong types). This module reports what does not make sense as a rubric (docs/format.md lists
the codes): missing fields, dangling references, cycles, malformed verdicts, bad check
settings, and, from path analysis (`dagtui.graph.paths`), every verdict combination that ends at no
leaf or at two. Its warnings are DeepEval's silent failures (tests/test_silent_failures.py)
made loud: a judgement that sees no evidence, a node that never runs, a threshold no path can
fail, and so on.

Every diagnostic names the node and field and points at the offending key or value in the
TOML text, so the CLI prints `file:line:col` and the editor can jump there.

`check_text` is what the editor calls on every keystroke: load + validate + paths, in one
`ValidationResult`. It is written to stay fast on big graphs (see tests/benchmarks/bench_validate.py).

The package holds one module per job: `driver` (the entry points below), `checker` (one pass,
in order), `base` (the state every check shares), `metric`, `nodes`, `check_nodes`,
`verdicts`, `shape` (cycles, gate depth), `path_checks`, `hints` (criteria code could check),
`cases` (files the graph names), `environment` (is DeepEval installed) and `report`.
"""

from __future__ import annotations

from dagtui.graph.validate.base import Analyzer
from dagtui.graph.validate.cases import missing_cases_file
from dagtui.graph.validate.check_nodes import REGEX_FLAGS
from dagtui.graph.validate.checker import STRUCTURAL, Checker
from dagtui.graph.validate.driver import (
    check_file,
    check_graph,
    check_load,
    check_text,
    file_checks,
    validate,
)
from dagtui.graph.validate.environment import deepeval_installed
from dagtui.graph.validate.hints import checkable_hint
from dagtui.graph.validate.path_checks import MAX_PATH_DIAGNOSTICS
from dagtui.graph.validate.report import ValidationResult
from dagtui.graph.validate.shape import MAX_GATE_DEPTH

#: the pass's old private name, kept for callers that build one directly
_Checker = Checker

__all__ = [
    "MAX_GATE_DEPTH",
    "MAX_PATH_DIAGNOSTICS",
    "REGEX_FLAGS",
    "STRUCTURAL",
    "Analyzer",
    "Checker",
    "ValidationResult",
    "check_file",
    "check_graph",
    "check_load",
    "check_text",
    "checkable_hint",
    "deepeval_installed",
    "file_checks",
    "missing_cases_file",
    "validate",
]
