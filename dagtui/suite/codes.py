"""Stable diagnostic codes for suite files (SUI0xx errors, SUI1xx warnings).

They use `dagtui.diagnostics.Diagnostic` (so `validate` prints, JSON-encodes and annotates
them like graph diagnostics) but live here, beside the suite code that raises them, so the
graph code table stays about graphs. `severity_of` reads the number, as for DAG codes.
"""

from __future__ import annotations

from dagtui.diagnostics import Diagnostic, add_codes, severity_of

SUITE_CODES: dict[str, str] = {
    # errors: the suite cannot run as written
    "SUI001": "TOML syntax error",
    "SUI002": "unknown key",
    "SUI003": "a rule needs exactly one of graph / check",
    "SUI004": "value has the wrong type",
    "SUI005": "dependency on an unknown rule",
    "SUI006": "rule depends on itself",
    "SUI007": "dependency cycle",
    "SUI008": "graph file not found",
    "SUI009": "rule graph has errors",
    "SUI010": "invalid inline check",
    "SUI011": "invalid filter condition",
    "SUI012": "invalid sample",
    "SUI013": "invalid max_calls",
    "SUI014": "unknown status",
    "SUI015": "suite has no rules",
    "SUI016": "dependency whose score can never exceed 0",
    "SUI017": "file cannot be read as a suite",
    "SUI018": "invalid rpm",
    # warnings: it runs, but probably not as meant
    "SUI101": "dependency on a paused rule",
    "SUI102": "budget smaller than one case",
    "SUI103": "dependencies deeper than three levels",
    "SUI104": "default cases file not found",
}
add_codes(SUITE_CODES)  # a suite diagnostic's title, as `Diagnostic.title` gives it


def suite_diag(
    code: str,
    message: str,
    file: str | None = None,
    line: int = 0,
    col: int = 0,
    rule: str | None = None,
    fld: str | None = None,
) -> Diagnostic:
    """A Diagnostic for a suite code; `node` carries the rule id (printed as `[rule.field]`)."""
    return Diagnostic(code, severity_of(code), message, file, line, col, rule, fld)


def title_of(code: str) -> str:
    """Title for SUI codes alone (`Diagnostic.title` knows every table)."""
    return SUITE_CODES.get(code, "")
