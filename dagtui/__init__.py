"""dagtui: a workbench for LLM-judge decision graphs (DeepEval-style DAG rubrics).

The package root is the Python API (README "Python"). It imports nothing heavy: Textual and litellm
are loaded only by the TUI and by a real judge call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagtui.lazyattrs import lazy_attributes

__version__ = "0.1.0"

if TYPE_CHECKING:
    from dagtui.diagnostics import Diagnostic, Severity
    from dagtui.graph.loader import GraphError, load_file, load_text
    from dagtui.graph.model import Graph

__all__ = [
    "Diagnostic",
    "Graph",
    "GraphError",
    "Severity",
    "__version__",
    "a_align",
    "a_calibrate",
    "a_evaluate",
    "align",
    "calibrate",
    "check_labels",
    "evaluate",
    "load",
    "load_file",
    "load_text",
]

#: every name above, imported on first use: `import dagtui` runs before any command does
#: (`dagtui edit` pauses the garbage collector before its imports, dagtui.tui.startup), and
#: `dagtui --version` or `--help` need none of them
_LAZY = {"Diagnostic": "diagnostics", "Severity": "diagnostics", "GraphError": "graph.loader",
         "load_file": "graph.loader", "load_text": "graph.loader", "Graph": "graph.model",
         "load": "api", "evaluate": "api", "a_evaluate": "api", "LoadedGraph": "api",
         "check_labels": "api",
         "calibrate": "calibration.core", "a_calibrate": "calibration.core",
         "align": "api", "a_align": "api"}
__getattr__ = lazy_attributes(__name__, _LAZY, globals())
