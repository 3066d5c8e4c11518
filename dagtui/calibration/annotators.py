"""Several annotators: how far two people agree on each node, the ceiling a judge is read
against, and the labels a calibration compares the judge with.

A case may keep each person's labels in `annotations` (`dagtui.run.cases.Annotation`) beside
the adjudicated `expected`. A judge's kappa of 0.6 means little alone: if two careful people
agree at 0.65 on that node, the judge is near the ceiling the criterion allows; if they agree
at 0.95, the judge (or the criterion's wording) is the problem. So `human_agreement` measures,
per judgement node and per pair of annotators, raw agreement and Cohen's kappa (with the same
seeded bootstrap interval as the judge's, `dagtui.calibration.stats`) on the cases both of them
labelled with a verdict. No judge is asked: it is read from the cases file alone.

"Unsure" labels (`dagtui.labels.check.UNSURE`) are kept in the file but are no verdict: a
pair where either person was unsure is left out of agreement and kappa (and counted as
`unsure`); in a calibration `certain` drops them before the runs, so the forced run treats an
unsure gate like a missing label (its path below is unknown) and the judge's verdict there is
compared with nothing. The judge cannot answer "unsure" (yet), so there is no "unsure
together" figure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

from dagtui.calibration import stats
from dagtui.graph.model import BinaryNode, Graph, NonBinaryNode
from dagtui.labels.check import is_unsure, normalize_label, verdict_of
from dagtui.run.cases import Case, CaseError, annotators, as_annotator


@dataclass
class PairAgreement:
    """Two annotators on one judgement node: the cases both labelled with a verdict."""

    node: str
    first: str
    second: str
    cases: int = 0
    #: cases both labelled where either (or both) said unsure: left out of the figures
    unsure: int = 0
    agreement: float | None = None
    kappa: float | None = None
    kappa_ci: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["kappa_ci"] = list(self.kappa_ci) if self.kappa_ci else None
        return out


def human_agreement(graph: Graph, cases: Sequence[Case], *, seed: int = stats.SEED
                    ) -> dict[str, list[PairAgreement]]:
    """node id -> one `PairAgreement` per pair of annotators (in the order they first
    appear), for each binary and non-binary node some pair both labelled; {} when fewer than
    two people annotated."""
    people = annotators(cases)
    out: dict[str, list[PairAgreement]] = {}
    if len(people) < 2:
        return out
    for nid, node in graph.nodes.items():
        if not isinstance(node, BinaryNode | NonBinaryNode):
            continue
        pairs = [_pair(node, a, b, cases, seed) for a, b in combinations(people, 2)]
        pairs = [p for p in pairs if p.cases or p.unsure]
        if pairs:
            out[nid] = pairs
    return out


def _pair(node: BinaryNode | NonBinaryNode, a: str, b: str, cases: Sequence[Case],
          seed: int) -> PairAgreement:
    out = PairAgreement(node.id, a, b)
    first: list[Hashable] = []
    second: list[Hashable] = []
    for case in cases:
        mine, theirs = case.annotation(a), case.annotation(b)
        if mine is None or theirs is None or node.id not in mine.expected \
                or node.id not in theirs.expected:
            continue
        x, y = mine.expected[node.id], theirs.expected[node.id]
        if is_unsure(node, x) or is_unsure(node, y):
            out.unsure += 1
            continue
        if verdict_of(node, x) is None or verdict_of(node, y) is None:
            continue  # a bad label `--lenient` let through: measured nowhere
        first.append(normalize_label(node, x))
        second.append(normalize_label(node, y))
    out.cases = len(first)
    out.agreement = stats.raw_agreement(first, second)
    out.kappa = stats.cohen_kappa(first, second)
    out.kappa_ci = stats.bootstrap_kappa(first, second, seed=seed)
    return out


def compared(cases: Sequence[Case], annotator: str | None) -> list[Case]:
    """The cases labelled as the judge is compared with them: the adjudicated labels
    (`annotator` None), else that annotator's (`as_annotator`); a `CaseError` naming the
    annotators there are when nobody of that name annotated any case."""
    if annotator is None:
        return list(cases)
    people = annotators(cases)
    if annotator not in people:
        known = ", ".join(repr(p) for p in people) if people else "none: no case has " \
            "'annotations'"
        raise CaseError(f"no case is annotated by {annotator!r} (annotators: {known})")
    return [as_annotator(c, annotator) for c in cases]


def certain(graph: Graph, case: Case) -> Case:
    """`case` without its unsure labels (the same object when it has none): what the
    calibration's runs read, so an unsure gate is a missing label there."""
    nodes = graph.nodes
    expected = case.expected or {}
    kept = {k: v for k, v in expected.items() if not is_unsure(nodes.get(str(k)), v)}
    return case if len(kept) == len(expected) else dataclasses.replace(case, expected=kept)


def unsure_cases(graph: Graph, cases: Sequence[Case]) -> dict[str, list[str]]:
    """node id -> the names of `cases` labelled unsure there (nodes with none left out)."""
    out: dict[str, list[str]] = {}
    for case in cases:
        for nid, value in (case.expected or {}).items():
            node = graph.nodes.get(str(nid))
            if node is not None and is_unsure(node, value):
                out.setdefault(str(nid), []).append(case.name)
    return out
