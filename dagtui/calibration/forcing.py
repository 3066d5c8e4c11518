"""Teacher forcing: the judge answers every node, the human labels choose the path.

`ForcingJudge` wraps the real judge. For a binary or non-binary node it asks the real judge
(and records what it said), then hands the engine the *label* (read by the labels judge, so
labels mean exactly what they mean in `dagtui test`), so the run goes where the human said
and every node the labels reach is judged, however wrong the judge was further up. A reached
judgement node without a label ends that case's forced run with `label_missing`, before any
call: without a label the path is unknown.

Task nodes: the judge's own evidence is passed downstream, never the label text. Labels for
task nodes are often item lists rather than full text, and with the judge's evidence the
downstream prompts are exactly those a free run sends, so the forced and the free run share
their answers (see `SharedAnswers`) and nothing is asked twice. If the task call fails, a
label that gives evidence text stands in, so the nodes below are still judged.

G-Eval leaves are asked and recorded; their label (a 0..10 score) is optional.

`SharedAnswers` sits between both runs and the real judge: one question (node, exact prompt,
sample index, model) is sent once, and whoever asks it again — the free run after the forced
one, or a second case with an identical prompt — gets the same reply with no calls attached,
like a cache hit that costs nothing and never double-counts.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from typing import Any

from dagtui.calibration.items import TaskLabelError, task_label
from dagtui.judges.base import Ask, Judge, JudgeError, Reply
from dagtui.judges.labels import LabelsJudge
from dagtui.kinds import find_kind


@dataclass
class Observation:
    """What the real judge said for one node of one case at one sample index."""

    value: Any = None
    reason: str = ""
    error: str | None = None
    error_kind: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class ItemAnswers(dict[int, tuple[str, Any, str]]):
    """What the judge said of each item of a map node, in one case: item index -> (item
    text, answer, reason)."""


class SharedAnswers(Judge):
    """The real judge, asked at most once per distinct question (see the module docstring)."""

    def __init__(self, inner: Judge) -> None:
        self.inner = inner
        self.name = inner.name
        self.llm = inner.llm
        self.needs_params = inner.needs_params
        self._replies: dict[tuple[Any, ...], asyncio.Future[Reply]] = {}

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def answer(self, ask: Ask) -> Reply:
        key = (ask.node.id, ask.kind, json.dumps(ask.prompt.messages, sort_keys=True),
               ask.sample, ask.model)
        future = self._replies.get(key)
        if future is None:
            future = asyncio.ensure_future(self.inner.answer(ask))
            self._replies[key] = future
            return await asyncio.shield(future)
        reply = await asyncio.shield(future)
        return replace(reply, calls=[])


class ForcingJudge(Judge):
    """The real judge's verdicts recorded, the labels' verdicts followed."""

    name = "teacher-forcing"

    def __init__(self, inner: Judge) -> None:
        self.inner = inner
        self.llm = inner.llm
        self.needs_params = inner.needs_params
        self.labels = LabelsJudge()
        #: (case name, node id, sample) -> what the real judge said
        self.observed: dict[tuple[str, str, int], Observation] = {}

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "forcing": "labels"}

    def _record(self, ask: Ask, obs: Observation) -> None:
        key = (ask.case.name, ask.node.id, ask.sample)
        if ask.item is None:
            self.observed[key] = obs
            return
        # a map node's item: the node's observation gathers its items (`ItemAnswers`)
        gathered = self.observed.get(key)
        if gathered is None or not isinstance(gathered.value, ItemAnswers):
            gathered = self.observed[key] = Observation(ItemAnswers())
        if obs.ok:
            text = next(iter(ask.evidence.values()), "")
            gathered.value[ask.item] = (str(text), obs.value, obs.reason)
        elif gathered.error is None:
            gathered.error, gathered.error_kind = obs.error, obs.error_kind

    async def answer(self, ask: Ask) -> Reply:
        kind = find_kind(ask.kind)  # None: not a node's own request (G-Eval's steps)
        if kind is not None and kind.decides:  # a verdict a judge chooses
            label = await self.labels.answer(ask)  # label_missing / out_of_set: the case stops
            try:
                reply = await self.inner.answer(ask)
            except Exception as exc:  # noqa: BLE001 - recorded; the label carries the path on
                self._record(ask, failed_observation(exc))
                return Reply(label.value, "the label (the judge failed: teacher forcing goes on)",
                             calls=list(getattr(exc, "calls", [])))
            self._record(ask, Observation(reply.value, reply.reason))
            return Reply(label.value, f"the label (teacher forcing); the judge said "
                         f"{reply.value!r}: {reply.reason}", raw=reply.raw, calls=reply.calls)
        if kind is None:  # geval_steps: no label, just the judge
            return await self.inner.answer(ask)
        try:
            reply = await self.inner.answer(ask)
        except Exception as exc:
            self._record(ask, failed_observation(exc))
            fallback = self._label_text(ask) if kind.extracts else None
            if fallback is None:
                raise
            return Reply(fallback, "the label's evidence text (the judge failed)",
                         calls=list(getattr(exc, "calls", [])))
        self._record(ask, Observation(reply.value, reply.reason))
        return reply

    @staticmethod
    def _label_text(ask: Ask) -> str | None:
        value = (ask.case.expected or {}).get(ask.node.id)
        if value is None:
            return None
        try:
            return task_label(value).text
        except TaskLabelError:
            return None


def failed_observation(exc: Exception) -> Observation:
    """A failed call as an observation (a judge error by kind, anything else as `other`)."""
    if isinstance(exc, JudgeError):
        return Observation(error=str(exc), error_kind=exc.kind)
    return Observation(error=f"{type(exc).__name__}: {exc}", error_kind="other")
