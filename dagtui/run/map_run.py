"""Running a map node: its criteria asked of each item of its task parent's list, one call
per item, concurrently, then the answers aggregated (`dagtui.graph.mapping`).

Each item's request is the node's own request with that item alone as its evidence (under
the task's output label), built by the engine's one prompt builder, so each is cached on its
own and an item that is the same in two cases is asked once. One item's judge error is the
node's error (the case errors, naming the item); it never becomes a score.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dagtui.graph.mapping import aggregate, split_items
from dagtui.graph.model import MapNode
from dagtui.graph.unsure import CANNOT_TELL
from dagtui.judges.base import Ask, JudgeError, Reply, check_value
from dagtui.judges.prompts import Prompt
from dagtui.report.trace import StepRecord

if TYPE_CHECKING:
    from dagtui.run.engine import Engine, Session


def map_items(node: MapNode, evidence: dict[str, Any]) -> tuple[str | None, list[str]]:
    """(the task parent the items come from, the items) of a map node's evidence."""
    for parent, output in evidence.items():
        return parent, split_items(output)
    return None, []


def _prompt_key(prompt: Prompt) -> str:
    """A short fingerprint of an item's request (an earlier answer is reused only for the
    same bytes: an edited criteria asks again)."""
    blob = json.dumps(prompt.messages, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _earlier(session: Session, node: MapNode) -> dict[str, dict[str, Any]]:
    """Item text -> its entry in the earlier run's step (`Session.reuse`), unless the node
    is to be asked afresh."""
    previous = session.reuse.get(node.id)
    if previous is None or not previous.items or node.id in session.fresh:
        return {}
    return {e["item"]: e for e in previous.items
            if "answer" in e and e.get("source") in ("judge", "reused", "human")}


async def judge_items(engine: Engine, session: Session, rec: StepRecord, node: MapNode,
                      evidence: dict[str, Any],
                      overrides: Mapping[int, Any] | None = None) -> None:
    """Judge every item (up to `max_items`) and set `rec`'s answer to the node's outcome:
    the aggregate verdict, a fraction leaf's score, or `CANNOT_TELL` when an item could not be
    told (the node's `unsure` then says what happens). `overrides` answers items by index
    instead of the judge (a what-if on one item); an item whose request is unchanged since
    the earlier run reuses its answer (edit and re-run)."""
    parent, items = map_items(node, evidence)
    overrides = overrides or {}
    earlier = _earlier(session, node)
    sources: dict[int, str] = {}
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
        if i in overrides:
            sources[i] = "override"
            value = check_value(ask, prompt.answer.coerce(overrides[i]))
            rec.notes.append(f"item {i + 1} overridden (what-if)")
            return prompt, Reply(value, "item overridden (what-if)", method="override")
        old = earlier.get(item)
        if old is not None and old.get("key") == _prompt_key(prompt):
            sources[i] = "reused"
            return prompt, Reply(old["answer"], old.get("reason", ""))
        sources[i] = "judge"
        reply = await engine.judge.answer(ask)
        if reply.value == CANNOT_TELL and person is not None:  # unsure = "human": a person decides
            async with person_lock:  # one question on the screen at a time
                asked = await person.answer(ask)
            reply = Reply(asked.value, asked.reason or reply.reason, raw=reply.raw,
                          calls=reply.calls, method="human")
            rec.notes.append(f"the judge could not tell about item {i + 1}; a person "
                             "answered (unsure = \"human\")")
            rec.unsure = True
            sources[i] = "human"
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
            entry.update(answer=reply.value, reason=reply.reason, cached=cached,
                         source=sources.get(i, "judge"), key=_prompt_key(prompt))
            answers.append(reply.value)
        entries.append(entry)
    entries.extend({"item": item, "judged": False} for item in skipped)
    rec.items = entries
    if first_error is not None:
        raise first_error
    if rec.prompt is None:  # nothing to judge: what one item's request looks like
        rec.prompt = engine.prompt_for(session, node, {parent: "(no items)"} if parent else {}
                                       ).messages
    unsure = sum(1 for a in answers if a == CANNOT_TELL)
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
        rec.answer, rec.reason = CANNOT_TELL, f"cannot tell for {unsure} of {len(judged)} items"
        return
    rec.answer = outcome.score if outcome.score is not None else outcome.verdict
    rec.reason = f"{outcome.passed} of {outcome.judged} items pass"


def item_lines(items: list[dict[str, Any]]) -> list[str]:
    """A map node's items as the debugger lists them: number, answer, the item, and the
    reason (or error) indented under it."""
    from dagtui.text import verdict_text

    out = []
    for i, entry in enumerate(items, start=1):
        if entry.get("judged") is False:
            out.append(f"{i:3}. not judged  {entry['item']}")
            continue
        if "error" in entry:
            out.append(f"{i:3}. ERROR  {entry['item']}")
            out.append(f"       {entry.get('error_kind')}: {entry['error']}")
            continue
        how = entry.get("source", "judge")
        tag = "" if how == "judge" else f" ({how})"
        out.append(f"{i:3}. {verdict_text(entry.get('answer'))}{tag}  {entry['item']}")
        if entry.get("reason"):
            out.append(f"       {entry['reason']}")
    return out
