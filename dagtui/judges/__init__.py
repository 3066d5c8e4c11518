"""Judges: who answers a node (a model, a person, the case's labels, a saved trace).

Nothing here imports litellm at import time; `LiteLLMJudge` loads it on its first call.
`make_judge` (`dagtui.judges.factory`) makes any of them from a name or a model string.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagtui.lazyattrs import lazy_attributes

if TYPE_CHECKING:
    from dagtui.judges.base import (
        ERROR_KINDS,
        Ask,
        CallbackJudge,
        CallRecord,
        HumanAnswer,
        HumanJudge,
        Judge,
        JudgeError,
        Reply,
    )
    from dagtui.judges.factory import JUDGE_NAMES, default_judge_name, make_judge, model_for
    from dagtui.judges.labels import LabelsJudge
    from dagtui.judges.litellm_judge import LiteLLMJudge
    from dagtui.judges.replay import ReplayJudge

#: the names below, imported on first use: a module of this package (the prompt builder,
#: the cache) imports without every judge
_LAZY = {
    **dict.fromkeys(("ERROR_KINDS", "Ask", "CallbackJudge", "CallRecord", "HumanAnswer",
                     "HumanJudge", "Judge", "JudgeError", "Reply"), "base"),
    **dict.fromkeys(("JUDGE_NAMES", "default_judge_name", "make_judge", "model_for"),
                    "factory"),
    "LabelsJudge": "labels", "LiteLLMJudge": "litellm_judge", "ReplayJudge": "replay",
}
__getattr__ = lazy_attributes(__name__, _LAZY, globals())

__all__ = [
    "ERROR_KINDS",
    "JUDGE_NAMES",
    "Ask",
    "CallRecord",
    "CallbackJudge",
    "HumanAnswer",
    "HumanJudge",
    "Judge",
    "JudgeError",
    "LabelsJudge",
    "LiteLLMJudge",
    "Reply",
    "ReplayJudge",
    "default_judge_name",
    "make_judge",
    "model_for",
]
