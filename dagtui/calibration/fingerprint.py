"""What a calibration measured, as fingerprints, and whether it still describes the graph.

A kappa is a measurement of one prompt, one judge and one set of labels. Edit the node's
criteria, swap the model, relabel three cases, and the saved figure describes something
that no longer exists. So `dagtui calibrate` saves, beside the figures, a *provenance*
record (`provenance`), and `dagtui calibrate --check`, `dagtui run` and the editor compare
it with the graph, the judge and the labels of now (`compare`): per node fresh, stale (with
the reasons) or missing.

Per judge-asked node the record keeps one hash per part, so a change can be named:

- `prompt`: the whole request as `dagtui.judges.prompts.build_prompt` sends it, with every piece of
  case material (params, upstream evidence) replaced by a fixed placeholder — what the judge
  is asked, minus what it is asked about. It catches what the named parts below do not (the
  system prompt, `include_reason`, `multi_turn`), reported as "prompt changed";
- `criteria`: the node's own text (criteria, instructions, a G-Eval leaf's name and steps, a
  metric leaf's class and arguments);
- `options`: the verdicts in declared order (their names and order are in the prompt);
- `params`: the params shown, their order and the turn window;
- `upstream`: the output labels of the task nodes whose evidence the node reads, in order;
- `model`, `endpoint`, `temperature`: the judge (the node's own `model` wins, as in the
  engine; the endpoint normalised as the cache normalises it, `dagtui.judges.cache.normal_base`,
  with any `user:password@` left out);
- `labels`: one hash of every (case, label) pair for the node, and a hash per case
  (`label_cases`), so "3 labels changed" can be counted.

Hashes are `dagtui.judges.cache.content_hash` (the cache key's hashing: one home), cut to
`HASH_LEN` hex digits: a fingerprint is compared, never trusted as a secret. End-to-end
figures (sensitivity and specificity of pass/fail, the basis of the corrected pass rate,
`dagtui.calibration.correction`) also depend on the verdicts' scores, the routes, the
check nodes and the threshold (`graph` hash) and on each case's `expected_score` and check
node labels (`expected_cases`): those are compared too, and named apart.

Textual-free and litellm-free: `--check` makes no call and imports no client.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dagtui.graph.model import SINGLE_TURN_PARAMS, Graph
from dagtui.judges.cache import content_hash, normal_base
from dagtui.judges.prompts import PARAM_TITLES, build_prompt
from dagtui.kinds import kind_of
from dagtui.redact import redact

#: provenance format version (a file with another version reads as "no fingerprint")
VERSION = 1
HASH_LEN = 16
#: the parts compared per node, in the order reasons are given
PARTS = ("criteria", "options", "params", "upstream", "prompt", "model", "endpoint",
         "temperature")
#: the parts of the prompt that have a name (a change to the prompt beyond them is "prompt
#: changed")
PROMPT_PARTS = ("criteria", "options", "params", "upstream")
#: the judge's parts (the editor, which does not know the judge a run will use, skips them)
JUDGE_PARTS = ("model", "endpoint", "temperature")
#: node fields that are structure, not the node's own text (compared as their own parts,
#: or not shown to the node's judge at all)
STRUCTURE = {"id", "type", "label", "params", "turn_window", "verdicts", "children",
             "output_label", "model"}
NO_FINGERPRINT = "no fingerprint (recalibrate)"


def short_hash(value: Any) -> str:
    return content_hash(value)[:HASH_LEN]


@dataclass(frozen=True)
class JudgeSetting:
    """The judge a calibration ran with, or a run will run with: what its figures depend on."""

    model: str | None
    api_base: str | None = None
    temperature: float | None = None

    @classmethod
    def of(cls, described: Mapping[str, Any]) -> JudgeSetting:
        """From a judge's `describe()` (model, api_base, temperature)."""
        temp = described.get("temperature")
        return cls(described.get("model"), described.get("api_base"),
                   float(temp) if isinstance(temp, int | float) else None)

    @property
    def endpoint(self) -> str | None:
        """The endpoint as compared: normalised, without credentials in the URL."""
        base = normal_base(self.api_base)
        return None if base is None else re.sub(r"//[^/@]*@", "//", base)

    def shown(self) -> dict[str, Any]:
        """What the record shows in clear (redacted: a key in a URL never reaches a file)."""
        return {"model": self.model, "endpoint": redact(self.endpoint),
                "temperature": self.temperature}


# --------------------------------------------------------------------------- measuring


def judged(graph: Graph) -> list[str]:
    """The nodes a judge answers (their figures depend on a prompt), in file order."""
    return [nid for nid, node in graph.nodes.items()
            if kind_of(node).request is not None and kind_of(node).answer is not None]


def _placeholders() -> dict[str, Any]:
    """Case material with every field a fixed marker: the prompt minus what it is about."""
    fields: dict[str, Any] = {p: f"<{p}>" for p in (*SINGLE_TURN_PARAMS, *PARAM_TITLES)}
    fields["turns"] = [{"role": "<role>", "content": "<content>"}]
    return fields


def node_parts(graph: Graph, nid: str, judge: JudgeSetting | None,
               parents: Mapping[str, list[str]] | None = None) -> dict[str, str]:
    """The per-part hashes of one judge-asked node (see the module docstring)."""
    node = graph.nodes[nid]
    parents = parents if parents is not None else graph.parents()
    upstream = [p for p in parents.get(nid, []) if kind_of(graph.nodes[p]).extracts]
    own = {f.name: getattr(node, f.name) for f in dataclasses.fields(node)
           if f.name not in STRUCTURE}
    steps = getattr(node, "evaluation_steps", None) or ["<generated steps>"]
    prompt = build_prompt(graph, node, _placeholders(), {p: "<evidence>" for p in upstream},
                          steps=steps)
    verdicts = getattr(node, "verdicts", None) or []
    parts = {
        "criteria": own,
        "options": [[type(v.verdict).__name__, v.verdict] for v in verdicts],
        "params": [node.params, node.turn_window, graph.metric.multi_turn],
        "upstream": [graph.nodes[p].output_label for p in upstream],  # type: ignore[attr-defined]
        "prompt": [prompt.messages, prompt.schema, prompt.labels],
    }
    out = {k: short_hash(v) for k, v in parts.items()}
    if judge is not None:
        out["model"] = short_hash(getattr(node, "model", None) or judge.model)
        out["endpoint"] = short_hash(judge.endpoint)
        out["temperature"] = short_hash(judge.temperature)
    return out


def label_hashes(graph: Graph, nid: str, cases: Iterable[Any]) -> dict[str, str]:
    """case name -> hash of its label for `nid` (as the engine reads it), labelled cases only.
    Two cases of one name hash together (their labels in file order)."""
    from dagtui.labels.check import normalize_label

    node = graph.nodes[nid]
    by_case: dict[str, list[Any]] = {}
    for case in cases:
        expected = case.expected or {}
        if nid in expected:
            by_case.setdefault(case.name, []).append(normalize_label(node, expected[nid]))
    return {name: short_hash([[type(v).__name__, v] for v in labels])
            for name, labels in by_case.items()}


def graph_hash(graph: Graph) -> str:
    """Everything about the graph the end-to-end score depends on: every node, the roots and
    the threshold (the metric's name and its cases file are left out)."""
    nodes = {nid: dataclasses.asdict(node) for nid, node in graph.nodes.items()}
    metric = graph.metric
    return short_hash([nodes, metric.roots, metric.effective_threshold, metric.strict,
                       metric.multi_turn])


def expected_hashes(graph: Graph, cases: Iterable[Any]) -> dict[str, str]:
    """case name -> hash of what the end-to-end figures read of it besides the judged nodes'
    labels: its `expected_score` and its labels of nodes no judge answers (check nodes,
    whose labels steer the labels' path), for cases that give any."""
    asked = set(judged(graph))
    by_case: dict[str, list[Any]] = {}
    for case in cases:
        others = {k: v for k, v in (case.expected or {}).items() if k not in asked}
        if case.expected_score is not None or others:
            by_case.setdefault(case.name, []).append([case.expected_score, others])
    return {name: short_hash(items) for name, items in by_case.items()}


def provenance(graph: Graph, cases: Iterable[Any], judge: JudgeSetting) -> dict[str, Any]:
    """The record a calibration saves (its `provenance` key)."""
    cases = list(cases)
    parents = graph.parents()
    nodes: dict[str, Any] = {}
    for nid in judged(graph):
        labels = label_hashes(graph, nid, cases)
        nodes[nid] = {"parts": node_parts(graph, nid, judge, parents),
                      "labels": short_hash(sorted(labels.items())), "label_cases": labels}
    return {"version": VERSION, "judge": judge.shown(), "nodes": nodes,
            "graph": graph_hash(graph), "expected_cases": expected_hashes(graph, cases)}


# --------------------------------------------------------------------------- comparing


REASONS = {"criteria": "criteria changed", "options": "verdict options changed",
           "params": "params changed", "upstream": "upstream output labels changed",
           "prompt": "prompt changed", "model": "model changed",
           "endpoint": "endpoint changed", "temperature": "temperature changed"}


@dataclass
class NodeState:
    """One node's calibration: fresh, stale (with why) or missing (never calibrated)."""

    node: str
    status: str
    reasons: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "status": self.status, "reasons": self.reasons}


@dataclass
class Staleness:
    """The saved calibration against the graph, judge and labels of now."""

    file: str | None
    nodes: list[NodeState] = field(default_factory=list)
    #: why the end-to-end figures (pass/fail sensitivity, specificity) no longer hold,
    #: besides a stale node
    end_to_end: list[str] = field(default_factory=list)
    #: calibrated nodes the graph no longer has
    removed: list[str] = field(default_factory=list)
    no_fingerprint: bool = False

    @property
    def stale(self) -> list[NodeState]:
        return [n for n in self.nodes if n.status != "fresh"]

    @property
    def fresh(self) -> bool:
        return not self.no_fingerprint and not self.stale and not self.end_to_end

    @property
    def state(self) -> str:
        return "fresh" if self.fresh else "stale"

    def reasons_of(self, nid: str) -> list[str]:
        return next((n.reasons for n in self.nodes if n.node == nid and n.status != "fresh"),
                    [])

    def line(self) -> str:
        """One line for a summary: `fresh (FILE)` or `stale: 2 nodes (order: ...; ...)`."""
        if self.no_fingerprint:
            return f"stale: {NO_FINGERPRINT}"
        if self.fresh:
            return f"fresh ({self.file})" if self.file else "fresh"
        stale = self.stale
        parts = [f"{n.node}: {', '.join(n.reasons)}" for n in stale[:3]]
        if len(stale) > 3:
            parts.append(f"… and {len(stale) - 3} more")
        if self.end_to_end:
            parts.append(("end to end: " if stale else "") + ", ".join(self.end_to_end))
        head = f"{len(stale)} node{'s' if len(stale) != 1 else ''}" if stale else "end to end"
        return f"stale: {head} ({'; '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "file": self.file, "line": self.line(),
                "nodes": [n.to_dict() for n in self.nodes], "end_to_end": self.end_to_end,
                "removed": self.removed}


def _changed(before: Mapping[str, str], now: Mapping[str, str], one: str,
             many: str) -> str | None:
    """"3 labels changed" (added, removed or different), or None when none did."""
    count = sum(1 for k in set(before) | set(now) if before.get(k) != now.get(k))
    if not count:
        return None
    return f"{count} {one if count == 1 else many} changed"


def compare(saved: Mapping[str, Any], graph: Graph, cases: Iterable[Any] | None,
            judge: JudgeSetting | None, *, file: str | None = None) -> Staleness:
    """The saved calibration (`Calibration.to_dict()` as read back) against now.

    `cases`: the labelled cases of now (None: labels are not compared); `judge`: the judge of
    now (None: the judge's parts are not compared, as in the editor). A calibration saved
    before provenance existed reads as stale, `NO_FINGERPRINT`, never an error."""
    out = Staleness(file)
    record = saved.get("provenance")
    current = judged(graph)
    if not isinstance(record, dict) or record.get("version") != VERSION \
            or not isinstance(record.get("nodes"), dict):
        out.no_fingerprint = True
        out.nodes = [NodeState(nid, "stale", [NO_FINGERPRINT]) for nid in current]
        return out
    cases = list(cases) if cases is not None else None
    who = saved.get("annotator")
    if cases is not None and isinstance(who, str):  # compared with one person's labels
        from dagtui.run.cases import as_annotator

        cases = [as_annotator(c, who) for c in cases]
    parents = graph.parents()
    kept: dict[str, Any] = record["nodes"]
    for nid in current:
        entry = kept.get(nid)
        if not isinstance(entry, dict) or not isinstance(entry.get("parts"), dict):
            out.nodes.append(NodeState(nid, "missing", ["not calibrated"]))
            continue
        now = node_parts(graph, nid, judge, parents)
        before: dict[str, str] = entry["parts"]
        changed = [p for p in PARTS if p in now and before.get(p) != now[p]]
        if "prompt" in changed and set(changed) & set(PROMPT_PARTS):  # named already
            changed.remove("prompt")
        reasons = [REASONS[p] for p in changed]
        if cases is not None:
            counted = _changed(entry.get("label_cases") or {},
                               label_hashes(graph, nid, cases), "label", "labels")
            if counted:
                reasons.append(counted)
        out.nodes.append(NodeState(nid, "stale" if reasons else "fresh", reasons))
    out.removed = [nid for nid in kept if nid not in graph.nodes]
    if record.get("graph") != graph_hash(graph) and not out.stale:
        out.end_to_end.append("graph changed (scores, routes, checks or threshold)")
    if cases is not None:
        counted = _changed(record.get("expected_cases") or {}, expected_hashes(graph, cases),
                           "expected score or check label",
                           "expected scores or check labels")
        if counted:
            out.end_to_end.append(counted)
    return out
