"""Which judge the debugger uses, from a name (`--judge`, the `j` key): labels, human,
replay or litellm. litellm itself is not imported here: `LiteLLMJudge` loads it on its first
call, so stepping with labels or a person never pays for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...judges.base import Judge
from ...model import Graph
from ...trace import Trace

JUDGE_NAMES = ("labels", "human", "replay", "litellm")


def make_debug_judge(name: str, graph: Graph, *, model: str | None = None,
                     api_base: str | None = None, trace: Trace | str | Path | None = None,
                     cache: Any = True, app: Any = None) -> Judge:
    """A judge by name; raises ValueError with a message a person can act on."""
    if name == "labels":
        from ...judges.labels import LabelsJudge

        return LabelsJudge()
    if name == "human":
        from .human import TuiHumanJudge

        return TuiHumanJudge(app)
    if name == "replay":
        if trace is None:
            raise ValueError("the replay judge needs a saved trace (--trace FILE)")
        from ...judges.replay import ReplayJudge

        return ReplayJudge(trace)
    if name == "litellm":
        from ...api import make_judge

        return make_judge(model, graph, api_base=api_base, cache=cache)
    raise ValueError(f"unknown judge {name!r} (one of {', '.join(JUDGE_NAMES)})")


def default_judge_name(cases: list[Any]) -> str:
    """Offline first: the labels judge when the cases carry labels, else the human judge."""
    return "labels" if any(getattr(c, "expected", None) for c in cases) else "human"
