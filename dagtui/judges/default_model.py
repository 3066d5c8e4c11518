"""The model a litellm judge calls when none is named: the one rule, for every judge maker.

Its own module so that the judge (`dagtui.judges.litellm_judge`) and the factory that makes
it (`dagtui.judges.factory`) both read it without importing each other.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dagtui.graph.model import Graph

DEFAULT_MODEL = "gpt-4.1-mini"


def model_for(graph: Graph | None, model: str | None = None) -> str:
    """The judge model: explicit, else DAGTUI_MODEL, else the graph's pinned model, else
    the default."""
    pinned = graph.metric.model if graph is not None else None
    return model or os.environ.get("DAGTUI_MODEL") or pinned or DEFAULT_MODEL
