"""Shared helpers for the export/import tests (no tests here): graph normalisation and
loading generated modules."""

from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

from dagtui.graph.model import Graph, node_to_raw

#: a small conversational graph DeepEval can express (role and content on the G-Eval leaf)
MULTI_TURN = """
[metric]
name = "Greeting"
multi_turn = true
model = "gpt-4.1-mini"

[nodes.opening]
type = "task"
instructions = "Quote the assistant's first message."
output_label = "Opening"
params = ["role", "content"]
turn_window = [0, 1]
children = ["greets"]

[nodes.greets]
type = "binary"
criteria = "Does the opening greet the user?"
params = ["scenario"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "warmth" }]

[nodes.warmth]
type = "geval"
name = "Warmth"
params = ["role", "content"]
evaluation_steps = ["Judge how warm the assistant is."]
"""


def canonical_ids(graph: Graph) -> dict[str, str]:
    """Rename nodes by where they sit (breadth first from the roots, children and verdicts in
    declared order), so two graphs that differ only in ids compare equal."""
    names: dict[str, str] = {}
    queue = list(graph.roots())
    while queue:
        nid = queue.pop(0)
        if nid in names or nid not in graph.nodes:
            continue
        names[nid] = f"n{len(names)}"
        queue.extend(graph.nodes[nid].targets())
    for nid in graph.nodes:
        names.setdefault(nid, f"unreached:{nid}")
    return names


def normalise(graph: Graph) -> dict[str, Any]:
    """What DeepEval's DAG can carry, with ids made canonical: node fields, edges, verdicts,
    and whether the graph is multi-turn. Metric settings and G-Eval labels are not part of
    DeepEval's JSON, so they are left out."""
    names = canonical_ids(graph)
    nodes: dict[str, Any] = {}
    for nid, node in graph.nodes.items():
        raw = node_to_raw(node)
        if node.type == "geval":
            raw.pop("label", None)
        if "children" in raw:
            raw["children"] = [names.get(c, c) for c in raw["children"]]
        for verdict in raw.get("verdicts", []):
            if "then" in verdict:
                verdict["then"] = names.get(verdict["then"], verdict["then"])
        raw.setdefault("params", [])
        nodes[names[nid]] = raw
    return {"multi_turn": graph.metric.multi_turn, "nodes": nodes}


def load_module(source: str, directory: Path) -> ModuleType:
    """Import generated Python source as a fresh module (written to `directory`)."""
    name = f"dagtui_export_{uuid.uuid4().hex}"
    path = directory / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


# -- a hypothesis strategy for plausible graphs (acyclic by construction) -----------------

def dag_graphs():
    """Graphs built front to back (edges only point forward, so no cycles) that are mostly
    valid for DeepEval, with the mistakes DeepEval cannot take mixed in at a low rate:
    several roots, nodes behind two judgements, G-Eval behind a data edge, empty params."""
    from hypothesis import strategies as st

    from dagtui.graph.model import BinaryNode, GEvalNode, Metric, NonBinaryNode, TaskNode, Verdict

    params = st.lists(st.sampled_from(["input", "actual_output", "expected_output", "context"]),
                      min_size=1, max_size=3, unique=True)

    @st.composite
    def build(draw: st.DrawFn) -> Graph:
        count = draw(st.integers(1, 6))
        kinds = [draw(st.sampled_from(["task", "binary", "non_binary"]))]
        kinds += [draw(st.sampled_from(["task", "binary", "non_binary", "geval"]))
                  for _ in range(count - 1)]
        ids = [f"n{i}" for i in range(count)]
        nodes: dict[str, Any] = {}

        def outcome(i: int) -> dict[str, Any]:
            later = ids[i + 1:]
            if later and draw(st.booleans()):
                return {"then": draw(st.sampled_from(later))}
            return {"score": draw(st.integers(0, 10))}

        for i, (nid, kind) in enumerate(zip(ids, kinds, strict=True)):
            if kind == "task":
                later = ids[i + 1:]
                children = draw(st.lists(st.sampled_from(later), unique=True, max_size=2)) \
                    if later else []
                node: Any = TaskNode(instructions=f"do {nid}", output_label=f"out {nid}",
                                     params=draw(params), children=children)
            elif kind == "binary":
                node = BinaryNode(criteria=f"is {nid}?", params=draw(params | st.just([])),
                                  verdicts=[Verdict(verdict=True, **outcome(i)),
                                            Verdict(verdict=False, **outcome(i))])
            elif kind == "non_binary":
                labels = draw(st.lists(st.sampled_from(["A", "B", "C"]), min_size=1,
                                       max_size=3, unique=True))
                node = NonBinaryNode(criteria=f"which {nid}?", params=draw(params | st.just([])),
                                     verdicts=[Verdict(verdict=lab, **outcome(i))
                                               for lab in labels])
            else:
                steps = draw(st.booleans())
                node = GEvalNode(name=f"G {nid}", params=draw(params),
                                 criteria=None if steps else f"rate {nid}",
                                 evaluation_steps=[f"step {nid}"] if steps else None)
            node.id = nid
            nodes[nid] = node
        return Graph(metric=Metric(name="generated", model="gpt-4.1-mini"), nodes=nodes)

    return build()
