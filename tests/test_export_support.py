"""Shared helpers for the export/import tests (no tests here): graph normalisation and
loading generated modules."""

from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

from dagtui.model import Graph, node_to_raw


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
