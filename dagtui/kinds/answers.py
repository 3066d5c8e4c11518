"""What a judge may answer to one kind of request, and how that answer is read.

A request asks for one JSON field (`output`, `verdict`, `score` or `steps`) after the
reason. Each `Answer` below owns everything that depends on that field: its JSON schema,
the line telling the judge how to answer, the reading of a model's reply (tolerant of how
models really answer, never guessing), the one corrective sentence sent when a reply was
unusable, and the check of a value a non-model judge (a person, a callback) produced.
Node kinds (`dagtui.kinds`) pick one; a new kind with a new answer shape adds one here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from dagtui.graph.unsure import CANNOT_TELL
from dagtui.record import Record


class AnswerError(ValueError):
    """An answer that cannot be used. `kind` is `malformed` (no usable JSON) or
    `out_of_set` (valid JSON, but the verdict is not an allowed value)."""

    def __init__(self, kind: str, message: str, raw: str) -> None:
        self.kind = kind
        self.raw = raw
        super().__init__(message)


@dataclass(eq=False, repr=False)
class Parsed(Record):
    value: Any
    reason: str = ""


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def extract_json(raw: str) -> Any:
    """The first JSON object in `raw`: bare, in a code fence, or amid prose."""
    text = raw.strip()
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block.strip())
        except (json.JSONDecodeError, ValueError):
            continue
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
            return obj
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
    raise AnswerError("malformed", "the answer holds no JSON object", raw)


class Answer:
    """One answer shape. Subclasses say how the field is typed, shown, read and checked."""

    #: the JSON field holding the answer
    field: str = ""
    #: what the reason should explain (`"reason": "<why>"`)
    why: str = "why"
    #: the answer field as shown to the judge in the request's last line
    shown: str = ""
    #: what follows the JSON shape in that line
    tail: str = ""
    #: the corrective sentence's demand (labels are filled in by `correction`)
    want: str = ""
    #: True for a 0..10 score (judges record how it was obtained: `Reply.method`)
    scored: bool = False
    #: True for evidence text handed to the node's children (a task's output), not a verdict
    evidence: bool = False
    #: True for a small integer a model's log-probabilities can weight: a judge that has
    #: them reports the probability-weighted value (G-Eval's score), not the sampled token
    weighted: bool = False

    def schema_property(self, labels: list[str]) -> dict[str, Any]:
        """The answer field's JSON schema."""
        raise NotImplementedError

    def correction(self, labels: list[str]) -> str:
        """What the corrective turn asks for."""
        return self.want

    def missing(self, data: dict[str, Any], raw: str) -> None:
        """Raise when the reply has no answer field at all."""
        if self.field not in data:
            raise AnswerError("malformed", f'the answer has no "{self.field}" field', raw)

    def read(self, data: dict[str, Any], raw: str, labels: list[str]) -> Any:
        """The usable value in a model's reply object; raises AnswerError."""
        raise NotImplementedError

    def check(self, value: Any, labels: list[str], who: str, shown: str) -> Any:
        """A value a non-model judge produced, as the run uses it; raises AnswerError
        (`out_of_set`) naming `who` (`node 'x'`) when the node does not allow it."""
        return value

    def coerce(self, value: Any) -> Any:
        """A value a person wrote (a what-if override, a label), before it is matched to a
        verdict."""
        return value

    def choices(self, labels: list[str]) -> list[Any]:
        """The answers to pick from, when the set is closed (a person picks one); empty when
        the answer is written (text, a score)."""
        return []


class TextAnswer(Answer):
    """Evidence text (a task node): a list is accepted, one item per line."""

    field = "output"
    evidence = True
    why = "how you found it"
    shown = ('"output": "<the extracted text; use one line per item when there are '
             'several>"')
    want = '"output" must be a string.'

    def schema_property(self, labels: list[str]) -> dict[str, Any]:
        return {"type": "string"}

    def read(self, data: dict[str, Any], raw: str, labels: list[str]) -> Any:
        self.missing(data, raw)
        out = data["output"]
        if isinstance(out, list):
            out = "\n".join(str(x) for x in out)
        return "" if out is None else str(out)

    def check(self, value: Any, labels: list[str], who: str, shown: str) -> Any:
        if isinstance(value, list):
            value = "\n".join(str(v) for v in value)
        if not isinstance(value, str):
            raise AnswerError("out_of_set", f"{who} needs evidence text, got {value!r}", shown)
        return value


_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


class BooleanAnswer(Answer):
    """True or false (a binary judgement); "yes"/"no" and the like are read too."""

    field = "verdict"
    shown = '"verdict": true or false'
    want = '"verdict" must be true or false.'

    def schema_property(self, labels: list[str]) -> dict[str, Any]:
        return {"type": "boolean"}

    def read(self, data: dict[str, Any], raw: str, labels: list[str]) -> Any:
        self.missing(data, raw)
        verdict = data["verdict"]
        if isinstance(verdict, bool):
            return verdict
        if isinstance(verdict, str) and verdict.strip().lower() in _TRUE | _FALSE:
            return verdict.strip().lower() in _TRUE
        raise AnswerError("out_of_set", f"verdict {verdict!r} is not true or false", raw)

    def check(self, value: Any, labels: list[str], who: str, shown: str) -> Any:
        if not isinstance(value, bool):
            raise AnswerError("out_of_set", f"{who} needs true or false, got {value!r}", shown)
        return value

    def coerce(self, value: Any) -> Any:
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        return value

    def choices(self, labels: list[str]) -> list[Any]:
        return [True, False]


def _norm(label: str) -> str:
    return " ".join(label.lower().split()).strip(" .'\"")


class LabelAnswer(Answer):
    """One of the node's labels (a non_binary judgement), offered in declared order."""

    field = "verdict"
    shown = '"verdict": "<exactly one of the labels above, spelled as listed>"'

    def schema_property(self, labels: list[str]) -> dict[str, Any]:
        return {"type": "string", "enum": labels}

    def choices(self, labels: list[str]) -> list[Any]:
        return list(labels)

    def correction(self, labels: list[str]) -> str:
        allowed = "; ".join(json.dumps(label) for label in labels)
        return f'"verdict" must be exactly one of: {allowed}.'

    def read(self, data: dict[str, Any], raw: str, labels: list[str]) -> Any:
        """The exact label, else a unique case- and space-insensitive match."""
        self.missing(data, raw)
        verdict = data["verdict"]
        if isinstance(verdict, str):
            if verdict in labels:
                return verdict
            matches = [label for label in labels if _norm(label) == _norm(verdict)]
            if len(matches) == 1:
                return matches[0]
        raise AnswerError("out_of_set", f"verdict {verdict!r} is not one of the labels {labels}",
                          raw)

    def check(self, value: Any, labels: list[str], who: str, shown: str) -> Any:
        if value not in labels:
            raise AnswerError("out_of_set", f"{who}: {value!r} is not one of the labels "
                              f"{labels}", shown)
        return value


class ScoreAnswer(Answer):
    """A 0..10 score (a scored leaf); `integer` for a G-Eval score, else any number."""

    field = "score"
    scored = True

    def __init__(self, *, integer: bool, shown: str) -> None:
        self.integer = integer
        self.weighted = integer
        self.shown = shown
        self.want = ('"score" must be an integer from 0 to 10.' if integer
                     else '"score" must be a number from 0 to 10.')

    def schema_property(self, labels: list[str]) -> dict[str, Any]:
        return {"type": "integer" if self.integer else "number"}

    def read(self, data: dict[str, Any], raw: str, labels: list[str]) -> Any:
        score = data.get("score")
        if isinstance(score, str):
            try:
                score = float(score.strip())
            except ValueError:
                raise AnswerError("out_of_set", f"score {score!r} is not a number", raw) from None
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise AnswerError("malformed", 'the answer has no numeric "score"', raw)
        if not 0 <= score <= 10:
            raise AnswerError("out_of_set", f"score {score:g} is outside 0..10", raw)
        return score

    def check(self, value: Any, labels: list[str], who: str, shown: str) -> Any:
        if not is_score(value):
            raise AnswerError("out_of_set", f"{who} needs a score from 0 to 10, got {value!r}",
                              shown)
        return value


def is_score(value: Any) -> bool:
    """A number from 0 to 10 (not a bool): what a scored leaf's answer must be."""
    return not isinstance(value, bool) and isinstance(value, int | float) and 0 <= value <= 10


class StepsAnswer(Answer):
    """Evaluation steps (the extra call a G-Eval leaf with only criteria makes)."""

    field = "steps"
    why = "why these steps"
    shown = '"steps": ["<step 1>", "<step 2>", ...]'
    tail = " with 3 to 5 concrete steps."
    want = '"steps" must be a list of strings.'

    def schema_property(self, labels: list[str]) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "string"}}

    def read(self, data: dict[str, Any], raw: str, labels: list[str]) -> Any:
        steps = data.get("steps")
        if not isinstance(steps, list) or not steps:
            raise AnswerError("malformed", 'the answer has no "steps" list', raw)
        return [str(s) for s in steps]


class UnsureAnswer(Answer):
    """A verdict answer that may also be "cannot tell from the material" (`CANNOT_TELL`): what a
    node declaring `unsure` offers its judge (`dagtui.graph.unsure`). It wraps the node's own
    answer; without `unsure` that answer is used as it is, so the request stays unchanged."""

    def __init__(self, inner: Answer) -> None:
        self.inner = inner
        self.field = inner.field
        self.why = inner.why
        self.shown = (f'{inner.shown}, or "{CANNOT_TELL}" when the material does not settle the '
                      'question')
        self.tail = inner.tail

    def schema_property(self, labels: list[str]) -> dict[str, Any]:
        own = self.inner.schema_property(labels)
        if "enum" in own:
            return {**own, "enum": [*own["enum"], CANNOT_TELL]}
        return {"anyOf": [own, {"type": "string", "enum": [CANNOT_TELL]}]}

    def correction(self, labels: list[str]) -> str:
        return f'{self.inner.correction(labels)} Or "{CANNOT_TELL}".'

    def read(self, data: dict[str, Any], raw: str, labels: list[str]) -> Any:
        self.missing(data, raw)
        value = data[self.field]
        if isinstance(value, str) and _norm(value) == CANNOT_TELL:
            return CANNOT_TELL
        return self.inner.read(data, raw, labels)

    def check(self, value: Any, labels: list[str], who: str, shown: str) -> Any:
        if value == CANNOT_TELL:
            return CANNOT_TELL
        return self.inner.check(value, labels, who, shown)

    def coerce(self, value: Any) -> Any:
        return CANNOT_TELL if value == CANNOT_TELL else self.inner.coerce(value)

    def choices(self, labels: list[str]) -> list[Any]:
        return [*self.inner.choices(labels), CANNOT_TELL]


TEXT = TextAnswer()
BOOLEAN = BooleanAnswer()
LABEL = LabelAnswer()
INT_SCORE = ScoreAnswer(integer=True,
                        shown='"score": <an integer from 0 (worst) to 10 (best)>')
METRIC_SCORE = ScoreAnswer(integer=False,
                           shown='"score": <a number from 0 (worst) to 10 (best): the '
                                 'metric\'s 0..1 score times 10>')
STEPS = StepsAnswer()
