"""Import DeepEval's DAG JSON (`dag_to_json`) as a dagtui graph with readable ids.

DeepEval writes random uuids as ids and makes every verdict a node of its own. The importer
folds verdict nodes back into their judgement's `verdicts = [...]`, turns G-Eval children into
`geval` nodes and other DeepEval metrics (`{"type": "metric", "metric_class": ...}`) into
`metric` nodes, and names nodes after what they say: their label, a task's output label, or
the first meaningful words of the criteria / instructions / G-Eval name. Ids that are already
readable (e.g. from `dagtui export --to deepeval-json`) are kept, so an export imports back
with the same ids.

Input that is not a DAG document raises `ImportFailed(usage=True)` (exit 2); a valid DeepEval
document holding something dagtui cannot express (a G-Eval rubric, a verdict shared by two
judgements) raises `ImportFailed(usage=False)` naming every node
(exit 1). Nothing is guessed or silently dropped that would change a score.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

from dagtui.export.naming import is_bare_id, slug
from dagtui.graph.model import (
    MULTI_TURN_PARAMS,
    SINGLE_TURN_PARAMS,
    BinaryNode,
    GEvalNode,
    Graph,
    Metric,
    MetricNode,
    NodeBase,
    NonBinaryNode,
    TaskNode,
    Verdict,
)
from dagtui.inputs import parser_gave_up
from dagtui.kinds.builtin import BINARY, NON_BINARY, TASK
from dagtui.text import verdict_text

#: DeepEval's class of a task node, and of each judgement with the node class it becomes
_TASK = str(TASK.deepeval)
_JUDGEMENTS: dict[str, type[BinaryNode] | type[NonBinaryNode]] = {
    str(BINARY.deepeval): BinaryNode, str(NON_BINARY.deepeval): NonBinaryNode}
_KNOWN_TYPES = (_TASK, *_JUDGEMENTS, "VerdictNode")
_MULTI_ONLY = set(MULTI_TURN_PARAMS) - set(SINGLE_TURN_PARAMS)
_SINGLE_ONLY = set(SINGLE_TURN_PARAMS) - set(MULTI_TURN_PARAMS)


class ImportFailed(Exception):
    """The document could not be imported. `usage` is True when it is not a DeepEval DAG
    document at all (bad JSON, wrong shape), False when it is one dagtui cannot express."""

    def __init__(self, message: str, *, usage: bool) -> None:
        self.usage = usage
        super().__init__(message)


def import_deepeval_json(
    text: str, *, name: str | None = None, multi_turn: bool | None = None
) -> Graph:
    """Parse DeepEval DAG JSON text into a graph (see the module doc for the rules)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFailed(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", usage=True
        ) from None
    except (ValueError, RecursionError) as exc:  # deep nesting, a 5,000-digit integer
        message, line = parser_gave_up(exc, text)
        raise ImportFailed(f"not usable JSON: {message}" + (f" (line {line})" if line else ""),
                           usage=True) from None
    return import_deepeval_dict(data, name=name, multi_turn=multi_turn)


def import_deepeval_dict(
    data: Any, *, name: str | None = None, multi_turn: bool | None = None
) -> Graph:
    return _Importer(data, name, multi_turn).run()


class _Importer:
    def __init__(self, data: Any, name: str | None, multi_turn: bool | None) -> None:
        self.specs = _shape(data)
        self.name = name
        self.multi_turn = multi_turn
        self.problems: list[str] = []
        #: JSON id -> dagtui id of every non-verdict node
        self.ids: dict[str, str] = {}
        #: verdict JSON id -> the JSON id of the (first) judgement that owns it
        self.owner: dict[str, str] = {}

    def run(self) -> Graph:
        specs = self.specs
        verdict_ids = [k for k, s in specs.items() if s["type"] == "VerdictNode"]
        node_ids = [k for k, s in specs.items() if s["type"] != "VerdictNode"]
        ids = self.ids = self._name_nodes(node_ids)
        self._check_ownership(verdict_ids, node_ids)
        multi = self._mode(node_ids)
        gevals: dict[tuple, Any] = {}
        geval_ids = _Names(ids.values())
        nodes: dict[str, NodeBase] = {}
        for jid in node_ids:
            spec = specs[jid]
            node = self._node(jid, spec, ids, gevals, geval_ids, multi)
            if node is not None:
                node.id = ids[jid]
                nodes[node.id] = node
        for geval in gevals.values():
            nodes[geval.id] = geval
        if self.problems:
            raise ImportFailed("\n".join(self.problems), usage=False)
        metric = Metric(name=self.name or "Imported DeepEval DAG", multi_turn=multi)
        return Graph(metric=metric, nodes=nodes)

    # -- structure -----------------------------------------------------------------------
    def _check_ownership(self, verdict_ids: list[str], node_ids: list[str]) -> None:
        """Each verdict belongs to exactly one judgement; children have the right kinds."""
        owners: dict[str, list[str]] = {v: [] for v in verdict_ids}
        for nid in node_ids:
            spec = self.specs[nid]
            for child in _children(nid, spec):
                if child not in self.specs:
                    raise ImportFailed(f"node {nid!r} refers to unknown node {child!r}",
                                       usage=True)
                child_is_verdict = self.specs[child]["type"] == "VerdictNode"
                if spec["type"] == _TASK and child_is_verdict:
                    self.problems.append(f"task node {self.ids.get(nid, nid)!r} has "
                                         f"{self._vname(child)} as a child; DeepEval refuses "
                                         "this too")
                elif spec["type"] != _TASK and not child_is_verdict:
                    self.problems.append(f"judgement {self.ids.get(nid, nid)!r} has node "
                                         f"{self.ids.get(child, child)!r} as a child; a "
                                         "judgement's children must be verdicts")
                elif child_is_verdict and nid not in owners[child]:
                    owners[child].append(nid)
                    self.owner.setdefault(child, nid)
        for vid in verdict_ids:
            target = self.specs[vid].get("child")
            if isinstance(target, dict) and target.get("type") == "node":
                ref = target.get("ref")
                if not isinstance(ref, str) or ref not in self.specs:
                    raise ImportFailed(f"{self._vname(vid)} refers to unknown node {ref!r}",
                                       usage=True)
                if self.specs[ref]["type"] == "VerdictNode":
                    self.problems.append(f"{self._vname(vid)} leads to another verdict "
                                         f"{self._vname(ref)}; dagtui verdicts lead to nodes")
        for vid, who in owners.items():
            if not who:
                self.problems.append(f"{self._vname(vid)} belongs to no judgement node")
            elif len(who) > 1:
                names = ", ".join(repr(self.ids.get(w, w)) for w in who)
                self.problems.append(f"{self._vname(vid)} is shared by judgement nodes "
                                     f"{names}; dagtui verdicts belong to one judgement "
                                     "(copy it into each)")

    def _vname(self, vid: str) -> str:
        """A verdict as its author knows it: the id its judgement gets and its label
        (`judgement 'order', verdict 'Correct'`), not the JSON's uuid; that only when no
        judgement owns it."""
        spec = self.specs.get(vid)
        value = spec.get("verdict") if isinstance(spec, dict) else None
        shown = verdict_text(value, quote=True)
        owner = self.owner.get(vid)
        if owner is None:
            return f"verdict {shown} (JSON id {vid!r})"
        return f"judgement {self.ids.get(owner, owner)!r}, verdict {shown}"

    def _mode(self, node_ids: list[str]) -> bool:
        if self.multi_turn is not None:
            return self.multi_turn
        params: set[str] = set()
        windows = False
        for nid in node_ids:
            spec = self.specs[nid]
            values = spec.get("evaluation_params") or []
            if isinstance(values, list):
                params.update(v for v in values if isinstance(v, str))
            windows = windows or spec.get("turn_window") is not None
            for vid in _children(nid, spec):
                child = self.specs.get(vid, {}).get("child")
                if isinstance(child, dict) and isinstance(child.get("evaluation_params"), list):
                    params.update(v for v in child["evaluation_params"] if isinstance(v, str))
        return windows or bool(params & _MULTI_ONLY and not params & _SINGLE_ONLY)

    def _name_nodes(self, node_ids: list[str]) -> dict[str, str]:
        taken = _Names()
        ids: dict[str, str] = {}
        for nid in node_ids:
            if is_bare_id(nid):
                ids[nid] = taken.unique(nid)
        for nid in node_ids:
            if nid not in ids:
                ids[nid] = taken.unique(_derive_id(self.specs[nid]))
        return ids

    # -- nodes ---------------------------------------------------------------------------
    def _node(
        self,
        jid: str,
        spec: dict[str, Any],
        ids: dict[str, str],
        gevals: dict[tuple, Any],
        taken: _Names,
        multi: bool,
    ) -> NodeBase | None:
        common: dict[str, Any] = {
            "label": self._text(jid, spec, "label", optional=True),
            "params": self._params(f"node {self.ids.get(jid, jid)!r}",
                                   spec.get("evaluation_params"), multi),
        }
        window = spec.get("turn_window")
        if window is not None:
            if (not isinstance(window, list) or len(window) != 2
                    or not all(isinstance(w, int) and not isinstance(w, bool) for w in window)):
                raise ImportFailed(f"node {jid!r}: turn_window must be two integers", usage=True)
            common["turn_window"] = tuple(window)
        if spec["type"] == _TASK:
            return TaskNode(
                instructions=self._text(jid, spec, "instructions"),
                output_label=self._text(jid, spec, "output_label"),
                children=[ids[c] for c in _children(jid, spec)
                          if self.specs[c]["type"] != "VerdictNode"],
                **common,
            )
        verdicts = [
            v for vid in _children(jid, spec)
            if self.specs[vid]["type"] == "VerdictNode"
            and (v := self._verdict(vid, self.specs[vid], ids, gevals, taken, multi)) is not None
        ]
        cls = _JUDGEMENTS[spec["type"]]
        return cls(criteria=self._text(jid, spec, "criteria"), verdicts=verdicts, **common)

    def _verdict(
        self,
        vid: str,
        spec: dict[str, Any],
        ids: dict[str, str],
        gevals: dict[tuple, Any],
        taken: _Names,
        multi: bool,
    ) -> Verdict | None:
        value = spec.get("verdict")
        where = self._vname(vid)
        if not isinstance(value, bool | str):
            raise ImportFailed(f"{where}: 'verdict' must be true/false or a label",
                               usage=True)
        score = spec.get("score")
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, int | float):
                raise ImportFailed(f"{where}: score must be a number", usage=True)
            if not math.isfinite(score):  # JSON's NaN / Infinity, or 1e400 read as inf
                raise ImportFailed(f"{where}: score {score} is not a finite number (NaN, "
                                   "Infinity, or too large like 1e400); a score is a number "
                                   "from 0 to 10", usage=True)
            if not 0 <= score <= 10:
                self.problems.append(f"{where}: score {score!r} is outside 0..10 (DeepEval "
                                     "refuses it too)")
                return None
            # a fraction is kept exactly (7.5, 6.66); a whole number is an integer (4.0 -> 4)
            if isinstance(score, float) and score.is_integer():
                score = int(score)
            return Verdict(verdict=value, score=score)
        child = spec.get("child")
        if not isinstance(child, dict) or "type" not in child:
            raise ImportFailed(f"{where} needs a 'score' or a 'child' object", usage=True)
        kind = child["type"]
        if kind == "node":
            ref = child.get("ref")
            if not isinstance(ref, str) or ref not in ids:
                return None  # already reported (a verdict leading to a verdict)
            return Verdict(verdict=value, then=ids[ref])
        if kind == "geval":
            geval = self._geval(vid, child, gevals, taken, multi)
            return None if geval is None else Verdict(verdict=value, then=geval.id)
        if kind == "metric":
            leaf = self._metric(where, child, gevals, taken)
            return None if leaf is None else Verdict(verdict=value, then=leaf.id)
        raise ImportFailed(f"{where}: unknown child type {kind!r} "
                           "(expected node, geval or metric)", usage=True)

    def _geval(
        self,
        vid: str,
        child: dict[str, Any],
        gevals: dict[tuple, Any],
        taken: _Names,
        multi: bool,
    ) -> GEvalNode | None:
        where = f"G-Eval after {self._vname(vid)}"
        name = child.get("name")
        if not isinstance(name, str):
            raise ImportFailed(f"{where}: 'name' must be a string", usage=True)
        if child.get("rubric"):
            self.problems.append(f"{where} ({name!r}) has a rubric; dagtui G-Eval leaves have "
                                 "no rubric, and dropping it would change the score")
            return None
        criteria = child.get("criteria")
        steps = child.get("evaluation_steps")
        if criteria is not None and not isinstance(criteria, str):
            raise ImportFailed(f"{where}: 'criteria' must be a string", usage=True)
        if steps is not None and (
            not isinstance(steps, list) or not all(isinstance(s, str) for s in steps)
        ):
            raise ImportFailed(f"{where}: 'evaluation_steps' must be a list of strings",
                               usage=True)
        if criteria:
            steps = None  # DeepEval's DAG runs a G-Eval leaf on its criteria alone
        params = self._params(where, child.get("evaluation_params"), multi)
        if not params:
            self.problems.append(f"{where} ({name!r}) has no evaluation_params; dagtui "
                                 "G-Eval leaves name the params they read")
            return None
        model = child.get("model") if isinstance(child.get("model"), str) else None
        key = (name, tuple(params), criteria or None, tuple(steps or ()), model)
        if key not in gevals:
            nid = taken.unique(slug(name) or "geval")
            node = GEvalNode(name=name, params=params, criteria=criteria or None,
                             evaluation_steps=steps or None, model=model)
            node.id = nid
            gevals[key] = node
        return gevals[key]

    def _metric(
        self, where: str, child: dict[str, Any], leaves: dict[tuple, Any], taken: _Names
    ) -> MetricNode | None:
        """A DeepEval metric child as a `metric` leaf; the same metric with the same
        arguments behind several verdicts is one node."""
        name = child.get("metric_class")
        if not isinstance(name, str) or not name.isidentifier():
            raise ImportFailed(f"metric after {where}: 'metric_class' must be a class name",
                               usage=True)
        kwargs = child.get("kwargs") or {}
        if not isinstance(kwargs, dict):
            raise ImportFailed(f"metric after {where}: 'kwargs' must be an object", usage=True)
        # DeepEval writes every constructor argument it can; None is each one's default
        # (and TOML has no null). A model name becomes the node's model.
        args = {k: v for k, v in kwargs.items() if v is not None and k != "model"}
        model = kwargs.get("model") if isinstance(kwargs.get("model"), str) else None
        key = ("metric", name, json.dumps(args, sort_keys=True), model)
        if key not in leaves:
            base = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
            base = base.removesuffix("_metric") or "metric"
            node = MetricNode(metric=name, args=args, model=model)
            node.id = taken.unique(slug(base) or "metric")
            leaves[key] = node
        return leaves[key]

    # -- fields --------------------------------------------------------------------------
    def _text(self, jid: str, spec: dict[str, Any], key: str, *, optional: bool = False) -> Any:
        value = spec.get(key)
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise ImportFailed(f"node {jid!r}: {key!r} must be a string", usage=True)
        return value

    def _params(self, where: str, values: Any, multi: bool) -> list[str]:
        if values is None:
            return []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ImportFailed(f"{where}: evaluation_params must be a list of strings",
                               usage=True)
        allowed = MULTI_TURN_PARAMS if multi else SINGLE_TURN_PARAMS
        bad = [v for v in values if v not in allowed]
        if bad:
            kind = "multi-turn" if multi else "single-turn"
            self.problems.append(f"{where}: evaluation_params {', '.join(map(repr, bad))} "
                                 f"are not {kind} params dagtui supports")
        return [v for v in values if v in allowed]


class _Names:
    """Ids handed out so far, and `naming.unique`'s choice for the next one in O(1).

    `unique(base, taken)` tries `base`, `base_2`, `base_3`... from the start every time, so
    100,000 judgements that all say "Is it correct?" cost 5e9 tries. Ids are only ever
    added, so a suffix below the last one given for a base is still taken: each base
    resumes where it stopped, and the ids are exactly `unique`'s.
    """

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken = set(taken)
        self.next: dict[str, int] = {}

    def unique(self, base: str) -> str:
        taken = self.taken
        name = base
        if name in taken:
            n = self.next.get(base, 2)
            name = f"{base}_{n}"
            while name in taken:
                n += 1
                name = f"{base}_{n}"
            self.next[base] = n + 1
        taken.add(name)
        return name


def _shape(data: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), dict):
        raise ImportFailed("not a DeepEval DAG document: expected an object with a 'nodes' "
                           "object (what deepeval's dag_to_json writes)", usage=True)
    specs = data["nodes"]
    if not specs:
        raise ImportFailed("the DAG document has no nodes", usage=True)
    for nid, spec in specs.items():
        if not isinstance(spec, dict) or spec.get("type") not in _KNOWN_TYPES:
            got = spec.get("type") if isinstance(spec, dict) else type(spec).__name__
            raise ImportFailed(f"node {nid!r} has unknown type {got!r}; expected one of "
                               f"{', '.join(_KNOWN_TYPES)}", usage=True)
        children = spec.get("children")
        if children is not None and (
            not isinstance(children, list) or not all(isinstance(c, str) for c in children)
        ):
            raise ImportFailed(f"node {nid!r}: 'children' must be a list of node ids",
                               usage=True)
    return specs


def _children(nid: str, spec: dict[str, Any]) -> list[str]:
    return list(spec.get("children") or [])


def _derive_id(spec: dict[str, Any]) -> str:
    """A readable id from what the node says (label first: it is the author's own name)."""
    for key, words in (("label", None), ("output_label", None), ("criteria", 4),
                       ("instructions", 4)):
        value = spec.get(key)
        if isinstance(value, str) and (candidate := slug(value, words=words)):
            if candidate[0].isdigit():
                candidate = f"n_{candidate}"
            return candidate
    return "task" if spec["type"] == _TASK else "judge"
