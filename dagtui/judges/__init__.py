"""Judges: who answers a node (a model, a person, the case's labels, a saved trace).

Nothing here imports litellm at import time; `LiteLLMJudge` loads it on its first call.
"""

from __future__ import annotations

from .base import (
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
from .labels import LabelsJudge
from .litellm_judge import LiteLLMJudge
from .replay import ReplayJudge

__all__ = [
    "ERROR_KINDS",
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
]
