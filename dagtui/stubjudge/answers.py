"""What a stand-in judge answers: reading dagtui's requests and writing replies to them.

Two responders share the reading of a request (`prompt_kind`, `labels_in`, `split_request`):

- `smart_answer`, the tests' default: always a valid answer (evidence for a task, true for a
  binary question, the first label, a 7), so a test controls the path with `Script` rules;
- `demo_answer`, what `dagtui demo-judge` serves: small deterministic rules that read the
  request the way a person skimming it might (the short lines of a text are its headings; a
  question holding quoted terms asks whether they are all there; a criteria listing quoted
  terms in an order asks how far the material is from it). Every reason starts with
  `DEMO_PREFIX`, so no trace or report can pass its answers off as a model's.

The request layout they read is `dagtui.judges.prompts.build_prompt`'s: the node's question first,
a non-binary node's label list next, then the material (evidence, case fields), then the
line that asks for JSON, each part set off by a blank line.
"""

from __future__ import annotations

import ast
import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dagtui.judges.prompts import EXAMPLES_END, EXAMPLES_HEAD

FAULT_KINDS = ("429", "500", "timeout", "malformed", "bad_json", "out_of_set",
               "400", "401", "403", "404")
#: what a server dagtui does not control may send (dagtui/stubjudge/server.py's doc)
HOSTILE_KINDS = ("echo_key", "echo_key_bad", "huge", "gzip_bomb", "huge_error",
                 "huge_reason", "never")

#: how every reason of the demo judge begins
DEMO_PREFIX = "demo judge, not a model:"
#: the score the demo judge gives every G-Eval leaf
DEMO_GEVAL_SCORE = 7
_LABELS_HEAD = "Choose exactly one of these labels:"
_ANSWER_HEAD = "\n\nAnswer with JSON:"


@dataclass
class Fault:
    """An injected failure for one request (one of FAULT_KINDS)."""

    kind: str


Answer = str | dict | Fault
Responder = Callable[[dict[str, Any]], Answer]


def last_user(body: dict[str, Any]) -> str:
    """The last user message of a chat request (a corrective turn, when there is one)."""
    for msg in reversed(body.get("messages", [])):
        if msg.get("role") == "user":
            return str(msg.get("content", ""))
    return ""


def first_user(body: dict[str, Any]) -> str:
    """The first user message: the node's request itself."""
    for msg in body.get("messages", []):
        if msg.get("role") == "user":
            return str(msg.get("content", ""))
    return ""


def prompt_kind(body: dict[str, Any]) -> str:
    """What the prompt asks for: task, binary, non_binary, geval or geval_steps."""
    text = first_user(body)
    if '"steps"' in text:
        return "geval_steps"
    if '"score"' in text:
        return "geval"
    if '"output"' in text:
        return "task"
    if "true or false" in text:
        return "binary"
    return "non_binary"


def labels_in(body: dict[str, Any]) -> list[str]:
    """The labels a non-binary request offers: dagtui's bullet list, or DeepEval's Python
    list after `'verdict'` (so the benchmark can drive DeepEval's own DAGMetric too)."""
    text = first_user(body)
    m = re.search(r"Choose exactly one of these labels:\n((?:- .*\n?)+)", text)
    if m:
        return [line[2:] for line in m.group(1).splitlines() if line.startswith("- ")]
    m = re.search(r"'verdict' (\[[^\]\n]*\])", text)
    if m:
        with contextlib.suppress(ValueError, SyntaxError):
            return [str(label) for label in ast.literal_eval(m.group(1))]
    return []


def split_request(body: dict[str, Any]) -> tuple[str, str]:
    """(the node's question, the material it is asked about) of a dagtui request."""
    text = first_user(body)
    question, _, rest = text.partition("\n\n")
    if rest.startswith(_LABELS_HEAD):
        rest = rest.partition("\n\n")[2]
    if rest.startswith(EXAMPLES_HEAD):  # a node's worked examples come before the case
        rest = rest.partition(EXAMPLES_END + "\n\n")[2]
    material = rest.rsplit(_ANSWER_HEAD, 1)[0] if _ANSWER_HEAD in rest else rest
    return question, material


def smart_answer(body: dict[str, Any]) -> dict[str, Any]:
    """A valid answer for whatever the request asks."""
    kind = prompt_kind(body)
    if kind == "task":
        return {"reason": "extracted", "output": "Intro\nBody\nConclusion"}
    if kind == "binary":
        return {"reason": "stub says yes", "verdict": True}
    if kind == "non_binary":
        labels = labels_in(body)
        return {"reason": "stub picks the first label", "verdict": labels[0] if labels else "?"}
    if kind == "geval_steps":
        return {"reason": "generic steps", "steps": ["Read the input.", "Judge the output."]}
    return {"reason": "decent", "score": 7}


class Script:
    """Answers from rules: the first rule whose text occurs in the prompt wins.

    `rules` is a list of (substring, answer) where answer is a dict/str/Fault or a callable
    taking the request body. Unmatched requests get `fallback` (default: smart_answer).
    """

    def __init__(self, rules: list[tuple[str, Any]], fallback: Responder | None = None) -> None:
        self.rules = rules
        self.fallback = fallback or smart_answer

    def __call__(self, body: dict[str, Any]) -> Answer:
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        for needle, answer in self.rules:
            if needle in text:
                return answer(body) if callable(answer) else answer
        return self.fallback(body)


# --------------------------------------------------------------------------- the demo judge

#: 'term' or "term"; an apostrophe inside a word (the summary's) opens no quote
_QUOTED = re.compile(r"(?<!\w)'([^'\n]+)'(?!\w)|\"([^\"\n]+)\"")
_SENTENCE_END = tuple(".,;:!?")
#: Markdown around a heading: `## Intro ##`, `**Intro**`
_MARKUP = re.compile(r"^[#*\s]+|[#*\s]+$")
_LIST_ITEM = re.compile(r"^(?:[-*•+]\s|\d+[.)]\s)")


def quoted_terms(question: str) -> list[str]:
    """The short terms (five words at most) a question quotes ('Intro', "Body"), in the
    order it names them."""
    terms = [single or double for single, double in _QUOTED.findall(question)]
    return [t for t in terms if len(t.split()) <= 5]


def heading_lines(material: str) -> list[str]:
    """The lines of `material` that look like headings: at most five words, no sentence
    punctuation at the end, not a list item; Markdown `#` and `**` taken off."""
    found = []
    for raw in material.splitlines():
        line = _MARKUP.sub("", raw)
        if not line or _LIST_ITEM.match(raw.strip()) or line.endswith(_SENTENCE_END):
            continue
        if len(line.split()) <= 5:
            found.append(line)
    return found


def _position(term: str, material: str) -> int | None:
    """Where `term` first occurs in `material` as a whole word, ignoring case."""
    m = re.search(rf"(?<!\w){re.escape(term)}(?!\w)", material, re.IGNORECASE)
    return m.start() if m else None


def _demo_task(material: str) -> dict[str, Any]:
    lines = heading_lines(material)
    why = (f"{len(lines)} short line(s) without final punctuation taken as the headings"
           if lines else "no short line without final punctuation: nothing extracted")
    return {"reason": f"{DEMO_PREFIX} {why}", "output": "\n".join(lines)}


def _demo_binary(question: str, material: str) -> dict[str, Any]:
    terms = quoted_terms(question)
    if not terms:
        return {"reason": f"{DEMO_PREFIX} the question quotes no term to look for, so yes",
                "verdict": True}
    missing = [t for t in terms if _position(t, material) is None]
    if missing:
        names = ", ".join(repr(t) for t in missing)
        return {"reason": f"{DEMO_PREFIX} {names} not found as a word", "verdict": False}
    return {"reason": f"{DEMO_PREFIX} every quoted term ({len(terms)}) found as a word",
            "verdict": True}


def _demo_non_binary(question: str, material: str, labels: list[str]) -> dict[str, Any]:
    if not labels:
        return {"reason": f"{DEMO_PREFIX} no labels offered", "verdict": "?"}
    terms = quoted_terms(question)
    if len(terms) < 2:
        return {"reason": f"{DEMO_PREFIX} no quoted order to compare: the first label",
                "verdict": labels[0]}
    where = {t: _position(t, material) for t in terms}
    found = sorted((pos, t) for t, pos in where.items() if pos is not None)
    seen = [t for _pos, t in found] + [t for t in terms if where[t] is None]
    misplaced = sum(1 for named, met in zip(terms, seen, strict=True) if named != met)
    index = 0 if misplaced == 0 else min(len(labels) - 1, misplaced - 1)
    why = ("the quoted terms appear in the order named" if misplaced == 0
           else f"{misplaced} of {len(terms)} quoted terms out of the order named")
    return {"reason": f"{DEMO_PREFIX} {why}: label {index + 1} of {len(labels)}",
            "verdict": labels[index]}


def demo_answer(body: dict[str, Any]) -> dict[str, Any]:
    """`dagtui demo-judge`'s answer: the same request always gets the same answer, from the
    rules in this module's docstring, with a reason that says it is not a model's."""
    kind = prompt_kind(body)
    question, material = split_request(body)
    if kind == "task":
        return _demo_task(material)
    if kind == "binary":
        return _demo_binary(question, material)
    if kind == "non_binary":
        return _demo_non_binary(question, material, labels_in(body))
    if kind == "geval_steps":
        return {"reason": f"{DEMO_PREFIX} the same two steps for every criteria",
                "steps": ["Read the material given.", "Score how well it meets the criteria."]}
    return {"reason": f"{DEMO_PREFIX} every G-Eval leaf scores {DEMO_GEVAL_SCORE} of 10",
            "score": DEMO_GEVAL_SCORE}
