"""Bias probes: does a node's verdict move when nothing that matters moved?

`dagtui calibrate --probes order,padding` asks every labelled judgement node again, teacher
forced like sample 0 (`forcing.ForcingJudge`: the labels choose the path, task nodes pass the
judge's own evidence down), with one change to its request:

- `order`: a non-binary node's options listed reversed, and rotated by one (the first option
  last); with two options both are the same order and it is asked once. A binary node has no
  options to reorder: the probe skips it and says so.
- `padding`: the case material followed by neutral filler of about half its length
  (`dagtui.judges.prompts.padding`: a fixed text, the same for every case), for binary and non-binary
  nodes alike.

Per node and probe: how many verdicts were compared (cases x variants, both answers usable),
how many differ from the normal prompt's (the flip rate), and raw agreement and Cohen's kappa
with the labels on those same pairs, normal -> probed. `--max-flip R` fails a node whose flip
rate is above R.

The probe requests are built by `build_prompt`'s `options_order` / `pad` hook, only here: a
normal run's prompts and cache keys never change. The probe calls go through the same judge
(and its cache) as the rest of calibration; a request a probe leaves as it was (a task node, a
binary node under `order`) is answered from the normal run's answer (`SharedAnswers`), with no
call.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from dagtui.calibration import stats
from dagtui.calibration.forcing import Observation
from dagtui.graph.model import Graph, NodeBase
from dagtui.judges.base import Ask, Judge, Reply
from dagtui.judges.prompts import build_prompt
from dagtui.kinds import kind_of
from dagtui.labels.check import normalize_label
from dagtui.run.cases import Case
from dagtui.text import verdict_text as show

#: the probes `--probes` accepts, in the order they run and are reported
PROBES = ("order", "padding")
#: the padding probe's filler, as a share of the case material's length
PAD_SHARE = 0.5
#: why the order probe skips a binary node
NO_OPTIONS = "binary: no options to reorder"


def parse_probes(text: str) -> list[str]:
    """`order,padding` as a list in `PROBES` order; ValueError naming what is unknown."""
    asked = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in asked if p not in PROBES]
    if unknown or not asked:
        raise ValueError(f"unknown probe {', '.join(map(repr, unknown)) or repr(text)}: "
                         f"choose from {', '.join(PROBES)}")
    return [p for p in PROBES if p in asked]


@dataclass(frozen=True)
class Variant:
    """One changed request: which probe, its name in the report, and the change."""

    probe: str
    name: str
    #: node id -> its options in the order to list them (order probe)
    orders: dict[str, list[str]] = field(default_factory=dict)
    pad: float = 0.0

    def applies(self, node: NodeBase) -> bool:
        """Whether this variant changes `node`'s request (judgement nodes only)."""
        if not kind_of(node).chooses:
            return False
        return node.id in self.orders if self.probe == "order" else self.pad > 0


def orders_of(labels: Sequence[str]) -> dict[str, list[str]]:
    """The order probe's variants of one option list: reversed and rotated by one, each
    kept only when it differs from the declared order and from the ones before."""
    declared = list(labels)
    out: dict[str, list[str]] = {}
    for name, order in (("reversed", declared[::-1]), ("rotated", declared[1:] + declared[:1])):
        if order != declared and order not in out.values():
            out[name] = order
    return out


def variants(graph: Graph, probes: Sequence[str]) -> list[Variant]:
    """Every changed request the probes ask, one engine pass each."""
    out: list[Variant] = []
    if "order" in probes:
        per_node = {nid: orders_of(kind_of(node).options_of(node))
                    for nid, node in graph.nodes.items()}
        for name in ("reversed", "rotated"):
            orders = {nid: o[name] for nid, o in per_node.items() if name in o}
            if orders:
                out.append(Variant("order", name, orders=orders))
    if "padding" in probes:
        out.append(Variant("padding", "padded", pad=PAD_SHARE))
    return out


class ProbeJudge(Judge):
    """The judge asked `variant`'s request instead of the normal one, for the judgement
    nodes the variant changes; every other request goes through as it is."""

    name = "bias-probe"

    def __init__(self, inner: Judge, variant: Variant) -> None:
        self.inner = inner
        self.variant = variant
        self.llm = inner.llm
        self.needs_params = inner.needs_params

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "probe": self.variant.name}

    async def answer(self, ask: Ask) -> Reply:
        if not self.variant.applies(ask.node):  # a task, a G-Eval leaf, a binary's order
            return await self.inner.answer(ask)
        prompt = build_prompt(ask.graph, ask.node, ask.case.fields, ask.evidence,
                              options_order=self.variant.orders.get(ask.node.id),
                              pad=self.variant.pad)
        return await self.inner.answer(replace(ask, prompt=prompt))


# --------------------------------------------------------------------------- results


@dataclass
class ProbeResult:
    """One probe on one node: verdicts compared, flipped, and agreement normal -> probed."""

    node: str
    type: str
    probe: str
    #: the variants asked (`reversed`, `rotated`; `padded`)
    variants: list[str] = field(default_factory=list)
    #: why the probe did not apply (a binary node under `order`), else None
    skipped: str | None = None
    #: (case, variant) pairs with a usable normal and probed verdict
    compared: int = 0
    flipped: int = 0
    flip_rate: float | None = None
    #: raw agreement and kappa with the labels on the compared pairs, normal and probed
    agreement: float | None = None
    agreement_probed: float | None = None
    kappa: float | None = None
    kappa_probed: float | None = None
    #: the flipped verdicts: case, variant, label, normal and probed verdict, reason
    flips: list[dict[str, Any]] = field(default_factory=list)
    #: probe calls that failed (case, variant, kind)
    errors: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Probes:
    """Every probe's results, per node (judgement nodes only), and what they cost."""

    probes: list[str]
    pad_share: float = PAD_SHARE
    nodes: dict[str, dict[str, ProbeResult]] = field(default_factory=dict)
    calls: int = 0
    cache_hits: int = 0

    def above(self, max_flip: float) -> list[tuple[str, str, float]]:
        """(node, probe, flip rate) for each probe result whose flip rate is above
        `max_flip`."""
        return [(nid, r.probe, r.flip_rate) for nid, per in self.nodes.items()
                for r in per.values() if r.flip_rate is not None and r.flip_rate > max_flip]

    def to_dict(self) -> dict[str, Any]:
        return {"probes": self.probes, "pad_share": self.pad_share,
                "nodes": {nid: {p: r.to_dict() for p, r in per.items()}
                          for nid, per in self.nodes.items()},
                "calls": self.calls, "cache_hits": self.cache_hits}


Observed = dict[tuple[str, str, int], Observation]


def analyse(graph: Graph, cases: Sequence[Case], probes: Sequence[str], normal: Observed,
            probed: Sequence[tuple[Variant, Observed]]) -> Probes:
    """Compare each variant's verdicts (sample 0) with the normal prompt's (no calls)."""
    out = Probes(list(probes))
    for nid, node in graph.nodes.items():
        kind = kind_of(node)
        if not kind.chooses:
            continue
        per: dict[str, ProbeResult] = {}
        for probe in probes:
            result = ProbeResult(nid, node.type, probe)
            if probe == "order" and kind.options is None:
                result.skipped = NO_OPTIONS
            else:
                asked = [(v, obs) for v, obs in probed if v.probe == probe and v.applies(node)]
                result.variants = [v.name for v, _ in asked]
                if not asked:
                    result.skipped = "one option: no other order"
                _compare(result, node, cases, normal, asked)
            per[probe] = result
        out.nodes[nid] = per
    return out


def _same(a: Any, b: Any) -> bool:
    return bool(a == b and type(a) is type(b))


def _compare(result: ProbeResult, node: NodeBase, cases: Sequence[Case],
             normal: Observed, asked: Sequence[tuple[Variant, Observed]]) -> None:
    labels: list[Hashable] = []
    before: list[Hashable] = []
    after: list[Hashable] = []
    for case in cases:
        base = normal.get((case.name, node.id, 0))
        if base is None or not base.ok:
            continue
        label = normalize_label(node, (case.expected or {}).get(node.id))
        for variant, observed in asked:
            obs = observed.get((case.name, node.id, 0))
            if obs is None:
                continue
            if not obs.ok:
                result.errors.append({"case": case.name, "variant": variant.name,
                                      "kind": obs.error_kind})
                continue
            labels.append(label)
            before.append(base.value)
            after.append(obs.value)
            if not _same(base.value, obs.value):
                result.flips.append({"case": case.name, "variant": variant.name,
                                     "label": show(label), "normal": show(base.value),
                                     "probed": show(obs.value), "reason": obs.reason})
    result.compared = len(labels)
    result.flipped = len(result.flips)
    if labels:
        result.flip_rate = result.flipped / len(labels)
        result.agreement = stats.raw_agreement(labels, before)
        result.agreement_probed = stats.raw_agreement(labels, after)
        result.kappa = stats.cohen_kappa(labels, before)
        result.kappa_probed = stats.cohen_kappa(labels, after)

