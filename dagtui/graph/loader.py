"""Read a graph file into the model, turning every unusable piece into a positioned diagnostic.

Loading never raises for bad input: it returns a `LoadResult` holding whatever graph could be
built (possibly None), the diagnostics, and the text and key positions the validator and the
editor need. Shape problems (syntax, unknown keys, wrong types, unknown node types) are found
here; meaning problems (references, cycles, paths) are `dagtui.graph.validate`'s.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from dagtui.diagnostics import Diagnostic, severity_of
from dagtui.graph.fieldtypes import short_repr
from dagtui.graph.model import (
    NODE_CLASSES,
    NODE_TYPES,
    CheckNode,
    Graph,
    Metric,
    NodeBase,
    TomlRecord,
    Verdict,
)
from dagtui.graph.positions import KeyPath, Positions, locate
from dagtui.inputs import TOML_LIMIT, InputError, decode, parser_gave_up, read_bytes
from dagtui.record import Record
from dagtui.text import suggest, verdict_text

#: a graph file larger than this is refused before reading (see `dagtui.inputs.TOML_LIMIT`)
MAX_BYTES = TOML_LIMIT

TOP_LEVEL_KEYS = ("metric", "nodes")
METRIC_KEYS = Metric.toml_keys()
VERDICT_KEYS = ("verdict", "score", "then")


@dataclass(eq=False, repr=False)
class LoadResult(Record):
    """What loading produced. `graph` is None only when nothing usable could be read."""

    graph: Graph | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    text: str | None = None
    positions: Positions | None = None
    raw: dict[str, Any] | None = None
    file: str | None = None

    @property
    def parsed(self) -> bool:
        """True when the text was valid TOML (so the editor may save over it)."""
        return self.raw is not None


class GraphError(Exception):
    """Raised by the library API when a graph has errors; carries the diagnostics."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.is_error] or diagnostics
        lines = "\n".join(d.format() for d in errors[:20])
        more = f"\n... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"graph has {len(errors)} error(s):\n{lines}{more}")


class Collector:
    """Collects one file's diagnostics, each placed at the key or value its path names.

    Shared by the loader (shape problems) and the validator (meaning problems) so both place
    a problem the same way. With `top_fallback`, a graph-level problem with no position
    (say, a missing table) points at line 1 rather than nowhere.
    """

    def __init__(
        self, file: str | None, positions: Positions | None = None, *, top_fallback: bool = False
    ) -> None:
        self.file = file
        self.positions = positions or Positions()
        self.top_fallback = top_fallback
        self.diags: list[Diagnostic] = []

    def add(
        self,
        code: str,
        message: str,
        path: KeyPath = (),
        *,
        node: str | None = None,
        fld: str | None = None,
        at_value: bool = False,
    ) -> None:
        pos = self.positions.value(path) if at_value else self.positions.key(path)
        line, col = pos or (0, 0)
        if self.top_fallback and not line and not node:
            line, col = 1, 1
        self.diags.append(
            Diagnostic(code, severity_of(code), message, self.file, line, col, node, fld)
        )


_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")
_TOML_END = re.compile(r"\(at end of document\)")


def load_file(path: str | os.PathLike[str]) -> LoadResult:
    """Load a graph file. Unreadable input becomes a DAG022 diagnostic, never an exception."""
    file = str(path)
    ctx = Collector(file)
    try:
        data = read_bytes(path, limit=MAX_BYTES, what="graph file")
    except InputError as exc:
        return _unreadable(ctx, exc)
    if b"\x00" in data:
        ctx.add("DAG022", "file looks binary (contains NUL bytes), not TOML text")
        return LoadResult(None, ctx.diags, file=file)
    try:
        text = decode(data, file)
    except InputError as exc:
        return _unreadable(ctx, exc)
    result = load_text(text, file)
    if result.graph is not None:
        result.graph.path = file
    return result


def _unreadable(ctx: Collector, exc: InputError) -> LoadResult:
    """The DAG022 diagnostic for a file that could not be read, at its line when known."""
    ctx.diags.append(Diagnostic("DAG022", severity_of("DAG022"), exc.message, ctx.file,
                                exc.line, exc.col))
    return LoadResult(None, ctx.diags, file=ctx.file)


#: the message for a DeepEval DAG document given where a graph file is expected
DEEPEVAL_JSON = ("this is DeepEval JSON, not a dagtui graph: `dagtui import` it first "
                 "(dagtui import FILE.json -o GRAPH.toml)")


def is_deepeval_json(text: str) -> bool:
    """True for DeepEval's `dag_to_json` document (a JSON object whose `nodes` are objects
    with a DeepEval node `type`), which people hand to every command before `import`."""
    if not text.lstrip().startswith("{"):
        return False
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    nodes = data.get("nodes") if isinstance(data, dict) else None
    return isinstance(nodes, dict) and any(
        isinstance(spec, dict) and str(spec.get("type", "")).endswith("Node")
        for spec in nodes.values())


def load_text(text: str, file: str | None = None) -> LoadResult:
    """Parse TOML text into a graph plus shape diagnostics."""
    ctx = Collector(file)
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        if is_deepeval_json(text):  # the commonest wrong file: say what to do with it
            ctx.add("DAG022", DEEPEVAL_JSON)
            return LoadResult(None, ctx.diags, text=text, file=file)
        msg = str(exc)
        m = _TOML_POS.search(msg)
        if m:
            line, col = int(m.group(1)), int(m.group(2))
        elif _TOML_END.search(msg):
            line = text.count("\n") + 1
            col = len(text.rsplit("\n", 1)[-1]) + 1
        else:
            line, col = 0, 0
        clean = _TOML_POS.sub("", _TOML_END.sub("", msg)).strip()
        ctx.diags.append(
            Diagnostic("DAG001", severity_of("DAG001"), f"TOML syntax: {clean}", file, line, col)
        )
        return LoadResult(None, ctx.diags, text=text, file=file)
    except (RecursionError, ValueError) as exc:  # deep nesting, a 5,000-digit integer
        message, line = parser_gave_up(exc, text)
        ctx.diags.append(Diagnostic("DAG001", severity_of("DAG001"), f"TOML syntax: {message}",
                                    file, line, 1 if line else 0))
        return LoadResult(None, ctx.diags, text=text, file=file)
    positions = locate(text, lazy=True)  # scanned only if a diagnostic needs a position
    ctx.positions = positions
    graph = build_graph(raw, ctx)
    if graph is not None:
        graph.path = file
    return LoadResult(graph, ctx.diags, text=text, positions=positions, raw=raw, file=file)


def build_graph(raw: dict[str, Any], ctx: Collector | None = None) -> Graph:
    """Build the model from parsed TOML, reporting (and skipping) what does not fit.

    Without `ctx` the diagnostics are discarded (callers that only need the model, such as
    the save merge, skip the position scan this way).
    """
    ctx = ctx or Collector(None)
    for key in raw:
        if key not in TOP_LEVEL_KEYS:
            ctx.add("DAG002", f"unknown top-level key '{key}'{suggest(key, TOP_LEVEL_KEYS)}; "
                    "a graph file has [metric] and [nodes.<id>] tables", (key,), fld=key)
    metric = _build_metric(raw.get("metric", {}), ctx)
    graph = Graph(metric=metric)
    nodes_raw = raw.get("nodes", {})
    if not isinstance(nodes_raw, dict):
        ctx.add("DAG004", "'nodes' must be a table of node tables ([nodes.<id>])", ("nodes",),
                fld="nodes")
        return graph
    for nid, data in nodes_raw.items():
        node = _build_node(nid, data, ctx)
        if node is not None:
            graph.nodes[nid] = node
    return graph


def _build_metric(data: Any, ctx: Collector) -> Metric:
    if not isinstance(data, dict):
        ctx.add("DAG004", "'metric' must be a table ([metric])", ("metric",), fld="metric")
        return Metric()
    clean: dict[str, Any] = {}
    for key, value in data.items():
        if key not in METRIC_KEYS:
            ctx.add("DAG002", f"unknown key '{key}' in [metric]{suggest(key, METRIC_KEYS)}",
                    ("metric", key), fld=key)
            continue
        clean[key] = value
    metric = _build_record(Metric, clean, ctx, ("metric",), None)
    return metric if metric is not None else Metric()


def _build_node(nid: str, data: Any, ctx: Collector) -> NodeBase | None:
    path: KeyPath = ("nodes", nid)
    if not isinstance(data, dict):
        ctx.add("DAG004", f"node '{nid}' must be a table ([nodes.{nid}])", path, node=nid)
        return None
    ntype = data.get("type")
    if ntype is None:
        ctx.add("DAG003", f"node '{nid}' has no 'type'; use one of: {', '.join(NODE_TYPES)}",
                path, node=nid, fld="type")
        return None
    if not isinstance(ntype, str):  # a table or a list cannot name a type (nor be hashed)
        ctx.add("DAG004", f"'type' must be a string, one of: {', '.join(NODE_TYPES)} (got "
                f"{short_repr(ntype)})", path + ("type",), node=nid, fld="type", at_value=True)
        return None
    if ntype not in NODE_CLASSES:
        ctx.add("DAG005", f"unknown node type {ntype!r}{suggest(str(ntype), NODE_TYPES)}; "
                f"use one of: {', '.join(NODE_TYPES)}", path + ("type",), node=nid, fld="type",
                at_value=True)
        return None
    cls = NODE_CLASSES[ntype]
    allowed = cls.FIELDS
    clean: dict[str, Any] = {}
    for key, value in data.items():
        if key not in allowed:
            hint = suggest(key, allowed)
            where = _owner_of(key)
            extra = f"; '{key}' belongs to {where} nodes" if where and not hint else ""
            ctx.add("DAG002", f"unknown key '{key}' for a {ntype} node{hint}{extra}",
                    path + (key,), node=nid, fld=key)
            continue
        clean[key] = value
    verdicts_raw = clean.pop("verdicts", None)
    node = _build_record(cls, clean, ctx, path, nid)
    if node is None:
        return None
    node.id = nid
    if verdicts_raw is not None and hasattr(node, "verdicts"):
        node.verdicts = _build_verdicts(nid, verdicts_raw, ctx)
    return node


def _owner_of(key: str) -> str:
    owners = [t for t, c in NODE_CLASSES.items() if key in c.FIELDS]
    return " or ".join(owners)


def _build_verdicts(nid: str, data: Any, ctx: Collector) -> list[Verdict]:
    base: KeyPath = ("nodes", nid, "verdicts")
    if not isinstance(data, list):
        ctx.add("DAG004", "'verdicts' must be a list of { verdict = ..., score = N } or "
                "{ verdict = ..., then = \"node\" } tables", base, node=nid, fld="verdicts")
        return []
    out: list[Verdict] = []
    for i, item in enumerate(data):
        path = base + (i,)
        if not isinstance(item, dict):
            ctx.add("DAG004", f"verdict #{i + 1} must be a table like "
                    "{ verdict = true, score = 10 }", path, node=nid, fld="verdicts",
                    at_value=True)
            continue
        for key in item:
            if key not in VERDICT_KEYS:
                ctx.add("DAG002", f"unknown key '{key}' in verdict #{i + 1}"
                        f"{suggest(key, VERDICT_KEYS)}; a verdict has verdict, score, then",
                        path + (key,), node=nid, fld="verdicts")
        if "verdict" not in item:
            ctx.add("DAG003", f"verdict #{i + 1} has no 'verdict' value", path, node=nid,
                    fld="verdicts")
            continue
        value = item["verdict"]
        if not isinstance(value, bool | str):
            ctx.add("DAG017", f"verdict #{i + 1}: {value!r} is neither true/false nor a "
                    "label string", path + ("verdict",), node=nid, fld="verdicts",
                    at_value=True)
            continue
        score = item.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            ctx.add("DAG013", f"verdict {verdict_text(value, quote=True)}: score {score!r} is not a number; use "
                    "a number from 0 to 10 (7, 7.5)", path + ("score",), node=nid, fld="verdicts",
                    at_value=True)
            score = None
        then = item.get("then")
        if then is not None and not isinstance(then, str):
            ctx.add("DAG004", f"verdict {verdict_text(value, quote=True)}: 'then' must be a node id string",
                    path + ("then",), node=nid, fld="verdicts", at_value=True)
            then = None
        out.append(Verdict(verdict=value, score=score, then=then))
    return out


def _build_record(
    cls: type[TomlRecord], data: dict[str, Any], ctx: Collector, path: KeyPath, nid: str | None
) -> Any:
    """Build `cls` from `data`, leaving out each value of the wrong type and reporting it
    (DAG004) at the value, so the rest of the node stays usable while the bad value is shown."""
    record, problems = cls.from_toml(data)
    for problem in problems:
        ctx.add("DAG004", problem.message, path + (problem.key,), node=nid, fld=problem.key,
                at_value=True)
    return record


def is_check_kind_field(key: str) -> bool:
    return key in CheckNode.FIELDS
