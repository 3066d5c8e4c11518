"""dagtui: a workbench for LLM-judge decision graphs (DeepEval-style DAG rubrics).

The package root is the Python API (SPEC §11). It imports nothing heavy: Textual and litellm
are loaded only by the TUI and by a real judge call.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .diagnostics import Diagnostic, Severity
from .loader import GraphError, load_file, load_text
from .model import Graph

__all__ = [
    "Diagnostic",
    "Graph",
    "GraphError",
    "Severity",
    "__version__",
    "load_file",
    "load_text",
]
