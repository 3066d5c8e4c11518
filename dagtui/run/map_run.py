"""Running a map node: its criteria asked of each item of its task parent's list, one call
per item, concurrently, then the answers aggregated (`dagtui.graph.mapping`).

Each item's request is the node's own request with that item alone as its evidence (under
the task's output label), built by the engine's one prompt builder, so each is cached on its
own and an item that is the same in two cases is asked once. One item's judge error is the
node's error (the case errors, naming the item); it never becomes a score.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from dagtui.graph.mapping import aggregate, split_items
from dagtui.graph.model import MapNode
from dagtui.graph.unsure import UNSURE
from dagtui.judges.base import Ask, JudgeError, Reply
from dagtui.judges.prompts import Prompt
from dagtui.report.trace import StepRecord

if TYPE_CHECKING:
    from dagtui.run.engine import Engine, Session


def map_items(node: MapNode, evidence: dict[str, Any]) -> tuple[str | None, list[str]]:
    """(the task parent the items come from, the items) of a map node's evidence."""
    for parent, output in evidence.items():
        return parent, split_items(output)
    return None, []


async def judge_items(engine: Engine, session: Session, rec: StepRecord, node: MapNode,
                      evidence: dict[str, Any]) -> None:
    """Judge every item (up to `max_items`) and set `rec`'s answer to the node's outcome:
    the aggregate verdict, a fraction leaf's score, or `UNSURE` when an item could not be
    told (the node's `unsure` then says what happens)."""
    parent, items = map_items(node, evidence)
    cap = node.max_items
    judged = items[:cap] if cap is not None else items
    skipped = items[len(judged):]
    model = getattr(node, "model", None) or None
    person_lock = asyncio.Lock()

    rule = node.unsure_rule
    person = engine.person if rule is not None and rule.mode == "human" else None

    async def one(i: int, item: str) -> tuple[Prompt, Reply]:
        shown = {parent: item} if parent is not None else {}
        prompt = engine.prompt_for(session, node, shown)
        ask = Ask(engine.graph, node, prompt, session.case, shown, session.sample, model,
                  item=i)
        reply = await engine.judge.answer(ask)
        if reply.value == UNSURE and person is not None:  # unsure = "human": a person decides
            async with person_lock:  # one question on the screen at a time
                asked = await person.answer(ask)
            reply = Reply(asked.value, asked.reason or reply.reason, raw=reply.raw,
                          calls=reply.calls, method="human")
            rec.notes.append(f"the judge could not tell about item {i + 1}; a person "
                             "answered (unsure = \"human\")")
            rec.unsure = True
        return prompt, reply

    results = await asyncio.gather(*(one(i, it) for i, it in enumerate(judged)),
                                   return_exceptions=True)
    entries: list[dict[str, Any]] = []
    answers: list[Any] = []
    first_error: JudgeError | None = None
    for i, (item, got) in enumerate(zip(judged, results, strict=True)):
        entry: dict[str, Any] = {"item": item}
        if isinstance(got, BaseException):
            if not isinstance(got, JudgeError):
                raise got
            rec.calls.extend(got.calls)
            entry.update(error=str(got), error_kind=got.kind)
            if first_error is None:
                first_error = JudgeError(got.kind, f"item {i + 1} ({item!r}): {got}",
                                         raw=got.raw)
        else:
            prompt, reply = got
            if rec.prompt is None:
                rec.prompt = prompt.messages
            rec.calls.extend(reply.calls)
            cached = bool(reply.calls) and all(c.cache_hit for c in reply.calls)
            entry.update(answer=reply.value, reason=reply.reason, cached=cached)
            answers.append(reply.value)
        entries.append(entry)
    entries.extend({"item": item, "judged": False} for item in skipped)
    rec.items = entries
    if first_error is not None:
        raise first_error
    if rec.prompt is None:  # nothing to judge: what one item's request looks like
        rec.prompt = engine.prompt_for(session, node, {parent: "(no items)"} if parent else {}
                                       ).messages
    unsure = sum(1 for a in answers if a == UNSURE)
    outcome = aggregate(node.aggregate, [a is True for a in answers], node.empty)
    note = (f"{outcome.passed} of {outcome.judged} items pass" if judged
            else f"the list is empty: empty = {str(node.empty).lower()}")
    if skipped:
        note += f"; {len(skipped)} not judged (max_items = {cap})"
    if unsure:
        note += f"; the judge could not tell for {unsure}"
    rec.notes.append(note)
    rec.source = "judge"
    if unsure:
        rec.unsure = True
        rec.answer, rec.reason = UNSURE, f"cannot tell for {unsure} of {len(judged)} items"
        return
    rec.answer = outcome.score if outcome.score is not None else outcome.verdict
    rec.reason = f"{outcome.passed} of {outcome.judged} items pass"
