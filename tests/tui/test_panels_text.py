"""User text in the bottom tables is shown as written, never read as markup."""

from __future__ import annotations

from dagtui.diagnostics import Diagnostic, Severity
from dagtui.tui.widgets.panels import problem_rows


def test_brackets_in_messages_and_places_survive() -> None:
    d = Diagnostic("DAG108", Severity.WARNING, 'no judge model is pinned in [metric] (model = "...")',
                   line=2, node="[odd] node", field="criteria")
    (_mark, code, line, where, message), = problem_rows([d])
    assert code.plain == "DAG108" and line == "2"
    assert where.plain == "[odd] node.criteria"
    assert message.plain == 'no judge model is pinned in [metric] (model = "...")'
