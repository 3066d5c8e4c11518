"""The labelling screen opened from another screen of the app: `L` in the editor (on the
graph being edited, at the selected node) and `L` in the calibration view (on the selected
node's disagreeing cases).

The cases file is the one `dagtui label` would open (`dagtui.run.cases.cases_source`: the
graph's `[metric].cases`, relative to the graph file) and the session is built by the same
`dagtui.labels.session.open_session`. Labels are written to the cases file only: the graph
(and so the editor's unsaved edits and its disk watch, which follow the graph file) is
untouched. Refusals are notifications on the screen that asked, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from textual.screen import Screen

from dagtui.graph.model import Graph


def judge_lookup(graph: Graph, judged: Mapping[str, Any] | None = None) -> Any:
    """The judge's cached answers (`cached_judge`, never a call) for `r` to reveal: the model
    and endpoint `judged` names (a saved calibration's `judge`), else the graph's own. None
    when no judge can be set up (the screen then says it has no cached answer)."""
    from dagtui.labels.session import cached_judge

    judged = judged or {}
    try:
        return cached_judge(graph, model=judged.get("model"), api_base=judged.get("api_base"))
    except (ValueError, OSError, ImportError):
        return None


def push_label_screen(host: Screen[Any], graph: Graph, graph_path: str | Path, *,
                      cases: str | None = None, node: str | None = None, only: Sequence[str] | None = None,
                      order: str = "file", judge: Any = None,
                      on_close: Callable[[], None] | None = None) -> bool:
    """Push `LabelScreen` over `host` on `graph` (its file `graph_path`) and its cases file.

    `cases`: the cases file as `--cases` names it (default: the graph's `[metric].cases`);
    `node`: start at the first case where that node is next to label; `only`: label just
    those cases (by name), each visited again from its first node (`relabel`), as the
    calibration view asks for the cases where judge and label disagree; `order`, `judge`:
    as `dagtui label --order` and the cached answers it reveals. `on_close` runs once the
    screen is left. False (and a notification on `host`) when it cannot open."""
    from dagtui.labels.check import scan
    from dagtui.labels.session import open_session
    from dagtui.run.cases import cases_source
    from dagtui.tui.label.screen import LabelScreen

    path = cases_source(graph, graph_path, cases)
    if path is None:
        host.notify(f"{Path(graph_path).name} names no cases file: set [metric].cases "
                    "(or run dagtui label --cases FILE)", severity="warning", title="label")
        return False
    try:
        session = open_session(graph, path, order=order, judge=judge, only=only,
                               relabel=only is not None)
    except (OSError, ValueError) as exc:
        host.notify(f"{path}: {exc}", severity="error", title="label", timeout=10)
        return False
    if not session.cases:
        host.notify(f"{path}: none of those cases is in the file now", severity="warning",
                    title="label")
        return False
    problems = scan(graph, session.cases)
    if problems:
        first = problems[0].format()
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        host.notify(f"{first}{more}: asked again", severity="warning", title="labels",
                    timeout=8)
    if node is not None and node in graph.nodes:
        session.go_to_node(node)
    title = f"{Path(graph_path).name} · {path}"

    def closed(_: object) -> None:
        if on_close is not None:
            on_close()

    host.app.push_screen(LabelScreen(session, title=title), closed)
    return True
