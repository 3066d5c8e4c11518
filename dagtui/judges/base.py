"""What a judge is: something that answers one node of one case at a time.

The engine builds the exact prompt (`dagtui.judges.prompts`) for every node, whatever the judge, so
a person stepping with the human judge sees the same words a model would get. A judge gets an
`Ask` (node, prompt, case, evidence) and returns a `Reply` (the parsed value, the reason, and
one `CallRecord` per request it actually made), or raises `JudgeError` with a `kind` the run
summary counts apart (429, 5xx, timeout, malformed, out_of_set, ...).

Implementations: `LiteLLMJudge` (any litellm model), `LabelsJudge` (the case's `expected`),
`ReplayJudge` (a saved trace), `CallbackJudge` (a Python function; tests, benchmarks), and
`HumanJudge`, the base the TUI subclasses to ask a person.
"""

from __future__ import annotations

import abc
import contextlib
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from dagtui.graph.model import Graph, NodeBase, about
from dagtui.judges.prompts import Prompt
from dagtui.kinds.answers import AnswerError
from dagtui.redact import redact

if TYPE_CHECKING:
    from dagtui.run.cases import Case

class ErrorKind(StrEnum):
    """Why a judge could not answer: the one vocabulary of error kinds, which every route
    to a model classifies into (`dagtui.judges.errors.classify`) and the summary counts
    apart. A member is its string (`ErrorKind.RATE_LIMIT == "429"`), as traces store it."""

    RATE_LIMIT = "429"
    SERVER = "5xx"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    MALFORMED = "malformed"
    OUT_OF_SET = "out_of_set"
    REQUEST = "request"
    AUTH = "auth"
    NOT_FOUND = "not_found"
    NOT_RUN = "not_run"
    TOO_LARGE = "too_large"
    LABEL_MISSING = "label_missing"
    CHECK = "check"
    GRAPH = "graph"
    OTHER = "other"


#: error kinds the summary reports apart, as plain strings
ERROR_KINDS = tuple(kind.value for kind in ErrorKind)


@dataclass
class CallRecord:
    """One request to a model and what came back (a cache hit is a call that cost nothing)."""

    request: dict[str, Any] = field(metadata=about(
        "What was sent: model, messages, response format, parameters (emptied in the "
        "summary report, kept in the results and traces)."))
    raw: str | None = field(default=None, metadata=about("The text received, as received."))
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = field(default=None, metadata=about(
        "USD, when the provider prices the model."))
    latency: float = field(default=0.0, metadata=about("Seconds."))
    cache_hit: bool = False
    retries: int = 0
    retry_kinds: list[str] = field(default_factory=list, metadata=about(
        "The error kind of each failed attempt that was retried (429, 5xx, timeout, ...)."))
    error: str | None = None
    error_kind: str | None = None
    purpose: str = field(default="answer", metadata=about(
        "Why the call was made: answer, correction, geval_steps, metric."))

    def __post_init__(self) -> None:
        self.error = redact(self.error)  # an echoed key never reaches a trace

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallRecord:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


@dataclass
class Ask:
    """One question for a judge."""

    graph: Graph
    node: NodeBase
    prompt: Prompt
    case: Case
    evidence: dict[str, Any] = field(default_factory=dict)
    sample: int = 0
    #: a node-level model (a geval leaf's `model`) that overrides the judge's default
    model: str | None = None
    #: a map node's item this asks about (0-based; `evidence` holds that item alone)
    item: int | None = None

    @property
    def kind(self) -> str:
        return self.prompt.kind


@dataclass
class Reply:
    """A judge's answer to one `Ask`.

    `value`: bool (binary), label (non_binary), evidence text (task), 0..10 number (geval),
    list of steps (geval_steps). `method` says how a geval score was obtained.
    """

    value: Any
    reason: str = ""
    raw: str | None = None
    calls: list[CallRecord] = field(default_factory=list)
    method: str | None = None
    sampled: Any = None  # geval: the score as sampled, when `value` is probability-weighted


class JudgeError(Exception):
    """A judge could not answer. `kind` is one of ERROR_KINDS; `raw` shows what came back."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        raw: str | None = None,
        calls: list[CallRecord] | None = None,
    ) -> None:
        #: a plain string (pickled to workers, written to traces), one of ERROR_KINDS
        self.kind = str(kind) if kind in ERROR_KINDS else ErrorKind.OTHER.value
        self.raw = redact(raw)
        self.calls = calls or []
        super().__init__(redact(message))


class Judge(abc.ABC):
    """The interface every judge implements."""

    #: short name for traces and summaries
    name: str = "judge"
    #: True when the judge calls a model (the engine then generates geval steps with it)
    llm: bool = False
    #: True when the judge reads the case params (the engine checks they exist first)
    needs_params: bool = True
    #: told (one line) when the judge starts loading a client library on its first real
    #: call, which takes seconds (the debugger shows it); judges that load nothing never call
    setup_note: Callable[[str], None] | None = None

    @abc.abstractmethod
    async def answer(self, ask: Ask) -> Reply:
        """Answer one node; raise JudgeError when no usable answer can be had."""

    def describe(self) -> dict[str, Any]:
        """What the trace records about this judge (never secrets)."""
        return {"name": self.name}

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most judges hold nothing
        """Release resources (connections, caches)."""

    def guarded(self) -> contextlib.AbstractContextManager[None]:
        """Held while a batch runs: a model judge probes first and halts when it cannot
        work (`dagtui.judges.health`); other judges have nothing to guard."""
        return contextlib.nullcontext()


def check_value(ask: Ask, value: Any, raw: str | None = None) -> Any:
    """Validate a value a non-model judge produced against what the node allows (the
    request's answer shape says what that is)."""
    shown = raw if raw is not None else repr(value)
    try:
        return ask.prompt.answer.check(value, ask.prompt.labels, f"node {ask.node.id!r}", shown)
    except AnswerError as exc:
        raise JudgeError(exc.kind, str(exc), raw=exc.raw) from None


def scored_method(ask: Ask, method: str) -> str | None:
    """`method` for a score (`Reply.method` says how a 0..10 score was obtained), else None."""
    return method if ask.prompt.answer.scored else None


@dataclass
class HumanAnswer:
    """What a person answered: the value (see `Reply.value`) and an optional reason."""

    value: Any
    reason: str = ""


class HumanJudge(Judge):
    """Base for a judge that asks a person (the TUI debugger implements `ask_person`).

    `ask_person` receives the full `Ask` — node, exact prompt (`ask.prompt.messages`), the
    allowed labels (`ask.prompt.labels`), the evidence from task parents — and returns a
    `HumanAnswer`: a bool for binary nodes, one of the labels for non_binary, evidence text
    for task nodes, a 0..10 number for geval leaves. Raise `asyncio.CancelledError` (or let
    the task be cancelled) when the person abandons the run.
    """

    name = "human"
    llm = False
    needs_params = True

    @abc.abstractmethod
    async def ask_person(self, ask: Ask) -> HumanAnswer:
        """Show the question to a person and wait for the answer."""

    async def answer(self, ask: Ask) -> Reply:
        start = time.perf_counter()
        got = await self.ask_person(ask)
        value = check_value(ask, got.value)
        reply = Reply(value, got.reason, raw=None, method=scored_method(ask, "human"))
        reply.calls = []
        _ = time.perf_counter() - start
        return reply


AnswerFn = Callable[[Ask], Any]


class CallbackJudge(Judge):
    """A judge backed by a Python function `fn(ask) -> value | (value, reason)` (sync or
    async). Used by tests and the overhead benchmark; no model, no network."""

    name = "callback"
    llm = False

    def __init__(self, fn: AnswerFn | Callable[[Ask], Awaitable[Any]], *,
                 needs_params: bool = True, name: str = "callback") -> None:
        self.fn = fn
        self.needs_params = needs_params
        self.name = name

    async def answer(self, ask: Ask) -> Reply:
        out = self.fn(ask)
        if inspect.isawaitable(out):
            out = await out
        reason = ""
        if isinstance(out, tuple) and len(out) == 2:
            out, reason = out
        value = check_value(ask, out)
        return Reply(value, str(reason), method=scored_method(ask, "callback"))
