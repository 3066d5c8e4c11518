"""A stand-in judge: an OpenAI-compatible chat-completions server on 127.0.0.1.

One implementation for two uses: the tests and benchmarks drive real litellm clients against
it (`StubServer` with `smart_answer`, `Script` rules or injected `Fault`s; see
tests/stub_server.py), and `dagtui demo-judge` serves `demo_answer`, deterministic rules
whose every reason says they are not a model, so `run`, `calibrate` and `step --model` can be
tried without an API key. Standard library only (and the request layout's headings from
dagtui.judges.prompts); nothing here imports litellm or Textual.
"""

from __future__ import annotations

from dagtui.stubjudge.answers import (
    DEMO_PREFIX,
    FAULT_KINDS,
    HOSTILE_KINDS,
    Answer,
    Fault,
    Responder,
    Script,
    demo_answer,
    first_user,
    labels_in,
    last_user,
    prompt_kind,
    smart_answer,
)
from dagtui.stubjudge.server import StubServer

__all__ = [
    "DEMO_PREFIX", "FAULT_KINDS", "HOSTILE_KINDS", "Answer", "Fault", "Responder", "Script",
    "StubServer",
    "demo_answer", "first_user", "labels_in", "last_user", "prompt_kind", "smart_answer",
]
