"""`unsure`: what a judgement node (or a map node's items) does when the judge says the
material does not settle the question.

Without `unsure` a judge must pick a verdict, and a coin-flip becomes a score. With it the
answer schema offers one more answer, `CANNOT_TELL` ("cannot tell"), and the node says what that
answer means (`Unsure.mode`):

- `unscored`: the case ends with status `unscored` (neither pass, fail nor error);
- `human`: a person decides (the debugger asks); where nobody can be asked (CI) it is
  `unscored`;
- `{ score = N }`: the path ends with score N, like a verdict's;
- `{ then = "node" }`: the run continues at that node (the same question to a stronger
  model, say).

The model (`dagtui.graph.model.Judgement.branches`) turns the last two into a verdict of
their own, so routing, path analysis and drawings follow them like any verdict. This module
only reads the field; the validator reports a value it cannot read (DAG026).
"""

from __future__ import annotations

from typing import Any

from dagtui.record import FrozenRecord, frozen

#: the answer a judge gives when the material does not settle the question (the extra
#: value the answer schema offers when `unsure` is declared)
CANNOT_TELL = "cannot tell"
#: the label a person gives when they looked and cannot tell, on any node (kept in the
#: cases file, left out of every kappa: `dagtui.labels.check.is_unsure`)
UNSURE = "unsure"
#: the values `unsure` may take as a string
UNSURE_WORDS = ("unscored", "human")
#: the status of a case that ended on an unsure answer with nowhere to go
UNSCORED = "unscored"


@frozen
class Unsure(FrozenRecord):
    """A node's `unsure` as it acts: `mode` is unscored, human, score or then."""

    mode: str
    score: int | float | None = None
    then: str | None = None

    @property
    def ends_unscored(self) -> bool:
        """The case stops without a score (unscored, or human where nobody is asked)."""
        return self.mode in UNSURE_WORDS

    def describe(self) -> str:
        if self.mode == "score":
            return f"score {self.score:g}" if self.score is not None else "score"
        if self.mode == "then":
            return f"then {self.then}"
        return self.mode


def read_unsure(value: Any) -> Unsure | None:
    """The rule a node's `unsure` value declares; None when absent or unreadable (the
    validator says why: `unsure_problem`)."""
    if value is None or unsure_problem(value) is not None:
        return None
    if isinstance(value, str):
        return Unsure(value)
    if "score" in value:
        return Unsure("score", score=value["score"])
    return Unsure("then", then=value["then"])


def unsure_problem(value: Any) -> str | None:
    """Why `value` is not a usable `unsure` (None when it is)."""
    if isinstance(value, str):
        if value in UNSURE_WORDS:
            return None
        return f'unsure "{value}" is not "unscored" or "human" (or a table {{ score = N }} ' \
               'or { then = "node" })'
    if isinstance(value, dict):
        if set(value) == {"score"}:
            score = value["score"]
            if isinstance(score, bool) or not isinstance(score, int | float) \
                    or not 0 <= score <= 10:
                return f"unsure's score must be a number from 0 to 10, got {score!r}"
            return None
        if set(value) == {"then"}:
            if not isinstance(value["then"], str) or not value["then"]:
                return "unsure's then must name a node"
            return None
        return 'unsure as a table takes exactly one key: { score = N } or { then = "node" }'
    return 'unsure must be "unscored", "human", { score = N } or { then = "node" }'
