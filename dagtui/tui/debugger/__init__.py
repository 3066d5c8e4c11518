"""The step debugger (README "The debugger"): one case through one graph, node by node.

`DebuggerScreen` is pushed over the editor by F5 (`open_debugger(editor_app)`);
`DebuggerApp` runs it alone for `dagtui step`.
"""

from __future__ import annotations

from dagtui.tui.debugger.app import DebuggerApp, graph_cases, open_debugger
from dagtui.tui.debugger.human import TuiHumanJudge
from dagtui.tui.debugger.screen import DebuggerScreen
from dagtui.tui.keys import DEBUGGER_KEYS

__all__ = [
    "DEBUGGER_KEYS",
    "DebuggerApp",
    "DebuggerScreen",
    "TuiHumanJudge",
    "graph_cases",
    "open_debugger",
]
