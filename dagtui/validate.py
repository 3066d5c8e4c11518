"""The validator: everything that makes a loaded graph unable to run, or likely to run wrong.

The loader (`dagtui.loader`) reports what does not fit the file format (syntax, unknown keys,
wrong types). This module reports what does not make sense as a rubric (docs/format.md lists
the codes): missing fields, dangling references, cycles, malformed verdicts, bad check
settings, and, from path analysis (`dagtui.paths`), every verdict combination that ends at no
leaf or at two. Its warnings are DeepEval's silent failures (tests/test_silent_failures.py)
made loud: a judgement that sees no evidence, a node that never runs, a threshold no path can
fail, and so on.

Every diagnostic names the node and field and points at the offending key or value in the
TOML text, so the CLI prints `file:line:col` and the editor can jump there.

`check_text` is what the editor calls on every keystroke: load + validate + paths, in one
`Report`. It is written to stay fast on big graphs (see tests/benchmarks/bench_validate.py).
"""

from __future__ import annotations

import functools
import json
import os
import re
import traceback
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from .diagnostics import (
    Diagnostic,
    Severity,
    escape_controls,
    is_unsafe_char,
    severity_of,
    sort_key,
    unreadable,
)
from .inputs import JSON_LIMIT, InputError, read_text
from .loader import Collector, LoadResult, load_file, load_text, suggest
from .model import (
    CHECK_KINDS,
    MULTI_TURN_PARAMS,
    SINGLE_TURN_PARAMS,
    BinaryNode,
    CheckNode,
    GEvalNode,
    Graph,
    MetricNode,
    NodeBase,
    NonBinaryNode,
    TaskNode,
    Verdict,
)
from .paths import (
    PathInfo,
    PathReport,
    analyze,
    describe_choices,
    describe_leaf,
    show_number,
    show_verdict,
)
from .positions import Path, Positions
from .schedule import Topology

#: what path analysis looks like to the validator (`paths.analyze` or a memo of it)
Analyzer = Callable[[Graph, Topology], PathReport]

#: errors that change the graph's shape: path analysis on top of them would only repeat them
#: (a dangling `then` makes every run through it "reach no leaf"), so path-derived
#: diagnostics wait until these are fixed
STRUCTURAL = frozenset({
    "DAG001", "DAG002", "DAG004", "DAG005", "DAG008", "DAG009", "DAG010", "DAG012",
    "DAG014", "DAG017", "DAG018", "DAG019", "DAG022",
})
#: how many gates (judgement or check nodes) one path may pass before DAG110
MAX_GATE_DEPTH = 4
#: at most this many DAG015/DAG016 diagnostics each; the rest are counted in the last one
MAX_PATH_DIAGNOSTICS = 5

#: the regex flag letters the check engine (`dagtui.checks`) understands, in either case
REGEX_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}
CONTAINS_MODES = ("any", "all")
TOOLS_MODES = ("subset", "exact", "ordered")
LENGTH_UNITS = ("chars", "words", "sentences")
_FUNCTION_REF = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*$")


# --------------------------------------------------------------------------------------------
# public API


@dataclass
class Report:
    """Load + validate + path analysis of one graph text, for the CLI and the editor."""

    load: LoadResult
    diagnostics: list[Diagnostic] = field(default_factory=list)
    paths: PathReport | None = None

    @property
    def graph(self) -> Graph | None:
        return self.load.graph

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]

    @property
    def notes(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.INFO]

    @property
    def ok(self) -> bool:
        """True when the graph can run (warnings allowed)."""
        return not self.errors

    @property
    def unreadable(self) -> bool:
        """True when the input could not be read or parsed (DAG022, DAG001): exit 2, as in
        every command."""
        return unreadable(self.diagnostics)


def validate(
    graph: Graph,
    positions: Positions | None = None,
    *,
    file: str | None = None,
    base_dir: str | None = None,
    raw: dict[str, Any] | None = None,
) -> list[Diagnostic]:
    """Semantic errors and warnings of `graph` (docs/format.md lists the codes), sorted.

    `positions` (from the loader) place each diagnostic at its key or value; `raw` (the
    parsed TOML, `LoadResult.raw`) lets the validator skip what the loader already reported
    and map verdict numbers to the file. `base_dir` resolves json_schema files (default: the
    graph file's directory).
    """
    diags, _ = _run(graph, positions, file=file, base_dir=base_dir, raw=raw)
    return sorted(_dedupe(diags), key=sort_key)


def check_graph(
    graph: Graph,
    positions: Positions | None = None,
    *,
    file: str | None = None,
    base_dir: str | None = None,
    raw: dict[str, Any] | None = None,
    analyzer: Analyzer | None = None,
) -> Report:
    """Validate an in-memory graph (as edited) and keep the path report: `validate` plus
    `Report.paths` in one pass, for callers that have a graph rather than text.

    `analyzer` replaces `paths.analyze` (the editor passes a memo that reuses the last
    report while only text changed)."""
    file = file if file is not None else graph.path
    diags, paths = _run(graph, positions, file=file, base_dir=base_dir, raw=raw,
                        analyzer=analyzer)
    load = LoadResult(graph, [], positions=positions, raw=raw, file=file)
    return Report(load, sorted(_dedupe(diags), key=sort_key), paths)


def check_text(text: str, file: str | None = None, *, base_dir: str | None = None) -> Report:
    """Load and validate TOML text: what the editor calls on every keystroke."""
    return check_load(load_text(text, file), base_dir=base_dir)


def check_file(path: str | os.PathLike[str]) -> Report:
    """Load and validate a graph file. Unreadable input is a DAG022 diagnostic, not an error.
    A graph file on disk is also checked for its `[metric].cases` file (DAG113)."""
    report = check_load(load_file(path))  # a FIFO or device is refused unread (dagtui.inputs)
    missing = missing_cases_file(report.load)
    if missing:
        report.diagnostics = sorted([*report.diagnostics, *missing], key=sort_key)
    return report


def missing_cases_file(load: LoadResult) -> list[Diagnostic]:
    """DAG113 when `[metric].cases` names no file beside the graph: a typo there otherwise
    surfaced only when `run` or `test` failed to open it. Checked for files on disk (what
    `validate` and every command read), not on the editor's every keystroke, where the
    problems are about the graph itself."""
    cases = load.graph.metric.cases if load.graph is not None else None
    if not load.file or not isinstance(cases, str) or not cases.strip():
        return []
    target = FsPath(os.path.dirname(load.file)) / cases
    if target.exists():
        return []
    sink = Collector(load.file, load.positions)
    sink.add("DAG113", f"cases file '{cases}' does not exist (looked in {target.parent}); "
             "paths are relative to the graph file, and `run` / `test` / `step` need it "
             "unless given --cases", ("metric", "cases"), fld="cases", at_value=True)
    return sink.diags


def check_load(load: LoadResult, *, base_dir: str | None = None) -> Report:
    """Validate what the loader produced (text already parsed): loader and semantic
    diagnostics together, plus the path report."""
    diags = list(load.diagnostics)
    paths: PathReport | None = None
    if load.graph is not None:
        semantic, paths = _run(
            load.graph, load.positions, file=load.file, base_dir=base_dir, raw=load.raw,
            prior=load.diagnostics,
        )
        # a more specific explanation replaces the loader's generic "unknown key"
        specific = {(d.node, d.field) for d in semantic if d.code == "DAG019"}
        diags = [d for d in diags if not (d.code == "DAG002" and (d.node, d.field) in specific)]
        diags.extend(semantic)
    return Report(load, sorted(_dedupe(diags), key=sort_key), paths)


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[Any, ...]] = set()
    out = []
    for d in diags:
        key = (d.code, d.line, d.col, d.node, d.field, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _run(
    graph: Graph,
    positions: Positions | None,
    *,
    file: str | None,
    base_dir: str | None,
    raw: dict[str, Any] | None,
    prior: list[Diagnostic] | tuple[Diagnostic, ...] = (),
    analyzer: Analyzer | None = None,
) -> tuple[list[Diagnostic], PathReport | None]:
    file = file if file is not None else graph.path
    if base_dir is None:
        base_dir = os.path.dirname(file) if file else os.getcwd()
    checker = _Checker(graph, positions or Positions(), file, base_dir, raw, analyzer or analyze)
    try:
        return checker.run(prior)
    except Exception as exc:  # a validator bug must not take the editor or CI down with it
        where = traceback.extract_tb(exc.__traceback__)[-1]
        diag = Diagnostic(
            "DAG023", severity_of("DAG023"),
            f"the validator itself failed ({type(exc).__name__}: {exc} at "
            f"{os.path.basename(where.filename)}:{where.lineno}); this is a dagtui bug, please "
            "report it with the graph file. The checks before the failure are shown.",
            file, 1, 1,
        )
        return [*checker.diags, diag], None


# --------------------------------------------------------------------------------------------
# helpers


#: the loader's "did you mean" (one wording everywhere); options may be any iterable
_suggest = suggest


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | tuple | dict):
        return len(value) == 0
    return False


def _norm_label(label: str) -> str:
    return " ".join(label.split()).casefold()


# criteria that a deterministic check could settle (DAG109): pattern -> (kind, hint)
_NUMBER = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|hundred)"
_CHECKABLE: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"\bjson\s+schema\b", re.I), "json_schema",
     'check = "json_schema" (schema inline or in a file)'),
    (re.compile(r"\b(valid|well[- ]formed|parse(s|able)?(\s+as)?|proper|is)\s+json\b|"
                r"\bjson\b[^.?!]{0,30}\b(valid|parses?)\b", re.I),
     "json", 'check = "json" (does it parse)'),
    (re.compile(rf"\b(at\s+most|no\s+more\s+than|fewer\s+than|less\s+than|under|at\s+least|"
                rf"more\s+than|no\s+fewer\s+than|maximum\s+of|minimum\s+of|exceeds?|"
                rf"longer\s+than|shorter\s+than)\s+{_NUMBER}\s+"
                rf"(sentences?|words?|characters?|chars?)\b", re.I),
     "length", 'check = "length" (unit, min, max)'),
    (re.compile(r"\b(contains?|includes?|mentions?)\s+(the\s+(exact\s+)?(word|phrase|string|"
                r"text|keyword|term)\s+)?[\"'\u201c\u2018][^\"'\u201d\u2019]{1,60}"
                r"[\"'\u201d\u2019]", re.I),
     "contains", 'check = "contains" (values = [...])'),
    (re.compile(r"\b(regex|regular\s+expression|matches\s+the\s+pattern|"
                r"(starts?|begins?|ends?)\s+with\s+[\"'\u201c\u2018]|iso[- ]?8601|"
                r"valid\s+email\s+address|valid\s+url)\b", re.I),
     "regex", 'check = "regex" (a pattern)'),
)


def checkable_hint(criteria: str) -> tuple[str, str] | None:
    """(check kind, how to write it) when `criteria` reads like something code can check."""
    for pattern, kind, hint in _CHECKABLE:
        if pattern.search(criteria):
            return kind, hint
    return None



@functools.cache
def deepeval_installed() -> bool:
    """Whether DeepEval can be imported here, found without importing it (that takes
    seconds, and validate runs on every keystroke in the editor); looked up once."""
    import importlib.util

    try:
        return importlib.util.find_spec("deepeval") is not None
    except (ImportError, ValueError):
        return False

class _Checker:
    """One validation pass over one graph: collects positioned diagnostics."""

    def __init__(
        self,
        graph: Graph,
        positions: Positions,
        file: str | None,
        base_dir: str,
        raw: dict[str, Any] | None,
        analyzer: Analyzer = analyze,
    ) -> None:
        self.graph = graph
        self.analyzer = analyzer
        self.sink = Collector(file, positions, top_fallback=True)
        self.diags = self.sink.diags
        self.add = self.sink.add
        self.file = file
        self.base_dir = base_dir
        self.raw = raw if isinstance(raw, dict) else None
        raw_nodes = self.raw.get("nodes") if self.raw else None
        self.raw_nodes: dict[str, Any] = raw_nodes if isinstance(raw_nodes, dict) else {}
        self.multi = bool(graph.metric.multi_turn)
        self.mode_params = MULTI_TURN_PARAMS if self.multi else SINGLE_TURN_PARAMS
        self.other_params = SINGLE_TURN_PARAMS if self.multi else MULTI_TURN_PARAMS
        self.parents = graph.parents()
        #: dead nodes a DAG015 message already explains (no separate DAG102 for them)
        self.explained_dead: set[str] = set()
        self.dead: set[str] = set()
        self.topology_roots: tuple[str, ...] = ()
        self.topo_order: list[str] = []
        self.verdict_index: dict[str, list[int]] = {}
        #: nodes whose verdict list the loader had to shorten (count checks would mislead)
        self.lossy_verdicts: set[str] = set()
        self._map_verdicts()

    # -- reporting: `self.add` is the shared Collector's (placed at path) ------------
    def vpath(self, nid: str, i: int, *rest: str) -> Path:
        """File path of model verdict #i of `nid` (the loader may have skipped bad ones)."""
        index = self.verdict_index.get(nid)
        raw_i = index[i] if index and i < len(index) else i
        return ("nodes", nid, "verdicts", raw_i, *rest)

    def _map_verdicts(self) -> None:
        for nid, node in self.graph.nodes.items():
            if not hasattr(node, "verdicts"):
                continue
            raw_node = self.raw_nodes.get(nid)
            raw_vs = raw_node.get("verdicts") if isinstance(raw_node, dict) else None
            if not isinstance(raw_vs, list):
                continue
            kept = [
                i for i, item in enumerate(raw_vs)
                if isinstance(item, dict) and "verdict" in item
                and isinstance(item["verdict"], bool | str)
            ]
            self.verdict_index[nid] = kept
            if len(kept) != len(raw_vs):
                self.lossy_verdicts.add(nid)

    def raw_has(self, nid: str, key: str) -> bool:
        raw_node = self.raw_nodes.get(nid)
        return isinstance(raw_node, dict) and key in raw_node

    def missing(self, nid: str, key: str, value: Any) -> bool:
        """True when a required field is absent or empty (not when the loader dropped a
        wrongly typed value: that already has its own DAG004)."""
        if not _blank(value):
            return False
        if self.raw is not None and self.raw_has(nid, key):
            raw_value = self.raw_nodes[nid][key]
            return _blank(raw_value)
        return True

    # -- the pass ---------------------------------------------------------------------------
    def run(
        self, prior: list[Diagnostic] | tuple[Diagnostic, ...]
    ) -> tuple[list[Diagnostic], PathReport | None]:
        graph = self.graph
        self.check_metric()
        self.check_ids()
        if not graph.nodes:
            if not any(d.is_error for d in prior):
                empty = self.raw is not None and not self.raw
                self.add("DAG018", ("the file holds no graph" if empty else "the graph has no "
                         "nodes") + "; add [metric] and at least one [nodes.<id>] table (for "
                         "example a task that extracts evidence and a binary judgement that "
                         "scores it)", ("nodes",))
            return self.diags, None
        for nid, node in graph.nodes.items():
            self.check_node(nid, node)
        self.check_roots()
        acyclic = self.check_cycles()
        self.check_gate_depth(acyclic)
        report: PathReport | None = None
        blocked = any(d.code in STRUCTURAL for d in (*prior, *self.diags))
        try:
            report = self.analyzer(graph, self.topology())
        except Exception:  # pragma: no cover - analysis must never break validation
            report = None
        if report is not None and not blocked:
            self.check_paths(report)
        return self.diags, report

    def topology(self) -> Topology:
        """`Topology.of(graph)`, reusing the parents this pass already computed."""
        topo = Topology.of(self.graph, self.parents)
        self.topology_roots = topo.roots
        return topo

    # -- metric ---------------------------------------------------------------------------
    def check_metric(self) -> None:
        m = self.graph.metric
        if not 0.0 <= m.threshold <= 1.0:
            self.add("DAG021", f"threshold {m.threshold:g} is outside 0..1; a run passes when "
                     "its score (0..1, the leaf's 0..10 divided by 10) is at least the "
                     "threshold", ("metric", "threshold"), fld="threshold", at_value=True)
        uses_judge = any(node.uses_llm for node in self.graph.nodes.values())
        if not (m.model and m.model.strip()) and uses_judge:
            self.add("DAG108", "no judge model is pinned in [metric] (model = \"...\"); the "
                     "model then comes from --model or DAGTUI_MODEL, and a silent model change "
                     "is a silent change of the rubric", ("metric",), fld="model")
        if m.roots is not None:
            if not m.roots:
                self.add("DAG018", "roots = [] declares no root, so nothing would run; name "
                         "the first node(s) or delete the line to use the nodes nothing points "
                         "to", ("metric", "roots"), fld="roots", at_value=True)
            for k, r in enumerate(m.roots):
                if r not in self.graph.nodes and r not in self.raw_nodes:
                    self.add("DAG008", f"roots names '{r}', which is not a node"
                             f"{_suggest(r, self.graph.nodes)}", ("metric", "roots", k),
                             fld="roots", at_value=True)

    def check_ids(self) -> None:
        """Node ids reach terminals, prompts and file names: refuse characters that are
        invisible or drive the terminal (DAG024), and warn when two ids differ only in case
        or Unicode form, so they print alike but are different nodes (DAG112)."""
        seen: dict[str, str] = {}
        for nid in self.graph.nodes:
            bad = sorted({ch for ch in nid if is_unsafe_char(ch)})
            if bad:
                shown = ", ".join(f"U+{ord(ch):04X}" for ch in bad)
                self.add("DAG024", f"node id '{escape_controls(nid)}' contains {shown}: "
                         "control, zero-width and bidi characters are invisible or move the "
                         "cursor, so the id would not print as it is; rename the node",
                         ("nodes", nid), node=nid)
            key = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", nid).casefold())
            if key in seen:
                self.add("DAG112", f"node ids '{escape_controls(seen[key])}' and "
                         f"'{escape_controls(nid)}' differ only in case or Unicode form; they "
                         "read as one node but are two; rename one", ("nodes", nid), node=nid)
            else:
                seen[key] = nid

    def check_roots(self) -> None:
        m = self.graph.metric
        if m.roots is not None:
            for k, r in enumerate(m.roots):
                if r in self.graph.nodes and self.parents.get(r):
                    who = ", ".join(self.parents[r])
                    self.add("DAG019", f"'{r}' is declared a root but {who} points at it; a "
                             "root runs first and must have no parents", ("metric", "roots", k),
                             node=r, fld="roots", at_value=True)
        elif all(self.parents[nid] for nid in self.graph.nodes):
            self.add("DAG018", "every node has a parent, so no node can start the run; one "
                     "node must be a root (nothing points at it), or list them in [metric] "
                     "roots", ("nodes",))

    # -- nodes ----------------------------------------------------------------------------
    def check_node(self, nid: str, node: NodeBase) -> None:
        self.check_params(nid, node)
        if node.turn_window is not None:
            if not self.multi:
                self.add("DAG111", "turn_window only applies to multi-turn graphs; set "
                         "multi_turn = true in [metric] or remove it", ("nodes", nid,
                         "turn_window"), node=nid, fld="turn_window")
            else:
                start, end = node.turn_window
                if start > end or start < 0:
                    self.add("DAG004", f"turn_window [{start}, {end}] must be [start, end] "
                             "with 0 <= start <= end", ("nodes", nid, "turn_window"), node=nid,
                             fld="turn_window", at_value=True)
        if isinstance(node, TaskNode):
            self.check_task(nid, node)
        elif isinstance(node, CheckNode):
            self.check_check(nid, node)
        elif isinstance(node, BinaryNode | NonBinaryNode):
            self.check_judgement(nid, node)
        elif isinstance(node, GEvalNode):
            self.check_geval(nid, node)
        elif isinstance(node, MetricNode):
            self.check_metric_leaf(nid, node)

    def check_params(self, nid: str, node: NodeBase) -> None:
        for k, p in enumerate(node.params):
            if not isinstance(p, str) or p in self.mode_params:
                continue
            self.add("DAG006", self.param_problem(p), ("nodes", nid, "params", k), node=nid,
                     fld="params", at_value=True)

    def param_problem(self, p: str) -> str:
        if p in self.other_params:
            if self.multi:
                return (f"'{p}' is a single-turn param, but this graph is multi-turn "
                        f"(multi_turn = true); use one of: {', '.join(self.mode_params)}")
            return (f"'{p}' is a multi-turn param; set multi_turn = true in [metric] or use "
                    f"one of: {', '.join(self.mode_params)}")
        return (f"unknown param '{p}'{_suggest(p, self.mode_params)}; use one of: "
                f"{', '.join(self.mode_params)}")

    def require(self, nid: str, node: NodeBase, key: str, why: str) -> None:
        value = getattr(node, "schema_" if key == "schema" else key, None)
        if self.missing(nid, key, value):
            state = "is empty" if self.raw_has(nid, key) else "is missing"
            self.add("DAG003", f"'{key}' {state}: {why}", ("nodes", nid, key), node=nid,
                     fld=key, at_value=self.raw_has(nid, key))

    def no_input(self, nid: str, node: NodeBase) -> bool:
        """True when the node would be prompted with nothing but its own text."""
        return not node.params and not any(
            isinstance(self.graph.nodes.get(p), TaskNode) for p in self.parents.get(nid, ())
        )

    def check_task(self, nid: str, node: TaskNode) -> None:
        if self.raw_has(nid, "verdicts"):
            self.add("DAG019", "a task node has no verdicts: it extracts evidence for its "
                     "children; put the verdicts on a binary or non_binary child and list it "
                     "in children", ("nodes", nid, "verdicts"), node=nid, fld="verdicts")
        self.require(nid, node, "instructions", "tell the judge what to extract")
        self.require(nid, node, "output_label", "it names the evidence in its children's "
                     "prompts (for example \"Summary headings\")")
        listed: set[str] = set()  # a set: rescanning children[:k] is O(k²) at 100,000 children
        for k, child in enumerate(node.children):
            path = ("nodes", nid, "children", k)
            target = self.graph.nodes.get(child)
            if child in listed:
                self.add("DAG019", f"'{child}' is listed twice in children; list each child "
                         "once", path, node=nid, fld="children", at_value=True)
                continue
            listed.add(child)
            if target is None:
                if child not in self.raw_nodes:
                    self.add("DAG008", f"children names '{child}', which is not a node"
                             f"{_suggest(child, self.graph.nodes)}", path, node=nid,
                             fld="children", at_value=True)
            elif target.is_scored_leaf:
                what = "a G-Eval leaf" if isinstance(target, GEvalNode) else "a metric leaf"
                self.add("DAG019", f"'{child}' is {what}, which cannot receive a "
                         "task's evidence; point a verdict at it (then = "
                         f"\"{child}\") instead", path, node=nid, fld="children",
                         at_value=True)
        if not node.children and not self.missing(nid, "instructions", node.instructions):
            self.add("DAG103", f"task '{nid}' has no children, so the evidence it extracts "
                     "is shown to nobody (a judge call for nothing); add the nodes that "
                     "should read it to children", ("nodes", nid), node=nid, fld="children")
        if self.no_input(nid, node):
            self.add("DAG101", f"task '{nid}' has no params and no task parent, so its prompt "
                     "holds nothing but its instructions; add params (for example "
                     "[\"actual_output\"])", ("nodes", nid), node=nid, fld="params")

    def check_judgement(self, nid: str, node: BinaryNode | NonBinaryNode) -> None:
        self.require(nid, node, "criteria", "it is the question the judge answers")
        if not self.missing(nid, "criteria", node.criteria) and self.no_input(nid, node):
            self.add("DAG101", f"'{nid}' has no params and no task parent, so the judge sees "
                     "only the criteria and answers anyway (DeepEval's silent failure); add "
                     "params or make it a child of a task that extracts the evidence",
                     ("nodes", nid), node=nid, fld="params")
        if isinstance(node, BinaryNode) and node.criteria:
            hint = checkable_hint(node.criteria)
            if hint:
                kind, how = hint
                self.add("DAG109", f"these criteria look checkable in code: a check node "
                         f"with {how} answers this for free, instantly and the same way "
                         "every time; keep the judge for what needs judgement",
                         ("nodes", nid, "criteria"), node=nid, fld="criteria", at_value=True)
        self.check_verdicts(nid, node, binary=isinstance(node, BinaryNode))

    def check_geval(self, nid: str, node: GEvalNode) -> None:
        self.require(nid, node, "name", "G-Eval reports its score under this name")
        self.require(nid, node, "params", "the test-case fields G-Eval scores (for example "
                     "[\"actual_output\"])")
        has_steps = bool(node.evaluation_steps) and any(
            isinstance(s, str) and s.strip() for s in node.evaluation_steps or []
        )
        has_criteria = bool(node.criteria and node.criteria.strip())
        if not has_steps and not has_criteria:
            if not (self.raw_has(nid, "evaluation_steps") and node.evaluation_steps is None) \
                    and not (self.raw_has(nid, "criteria") and node.criteria is None):
                self.add("DAG003", "a G-Eval leaf needs evaluation_steps (preferred) or "
                         "criteria", ("nodes", nid), node=nid, fld="evaluation_steps")
        elif has_criteria and not has_steps:
            self.add("DAG107", "this G-Eval leaf has criteria but no evaluation_steps: every "
                     "run pays an extra call to invent steps, and they change from run to run; "
                     "write the steps down", ("nodes", nid, "criteria"), node=nid,
                     fld="evaluation_steps")

    def check_metric_leaf(self, nid: str, node: MetricNode) -> None:
        """A DeepEval metric leaf: a class name and keyword arguments that can be written as
        Python (the export writes `Class(key=value)`), and DeepEval to run it (DAG116)."""
        self.require(nid, node, "metric", "the DeepEval metric class, for example "
                     "\"AnswerRelevancyMetric\"")
        if node.metric and not node.metric.isidentifier():
            self.add("DAG004", f"metric '{escape_controls(node.metric)}' is not a class name; "
                     "write the name of a class in deepeval.metrics, for example "
                     "\"AnswerRelevancyMetric\"", ("nodes", nid, "metric"), node=nid,
                     fld="metric", at_value=True)
        for key in node.args:
            if not key.isidentifier() or key in ("model", "self"):
                why = ("the judge model is the node's `model` (or the run's), not an argument"
                       if key == "model" else "keys are the metric's keyword arguments")
                self.add("DAG004", f"args key '{escape_controls(key)}' cannot be passed to "
                         f"the metric: {why}", ("nodes", nid, "args", key), node=nid,
                         fld="args", at_value=True)
        if node.metric and not deepeval_installed():
            self.add("DAG116", f"metric leaf '{nid}' runs DeepEval's {node.metric}, and "
                     "DeepEval is not installed here (pip install deepeval); run, test and "
                     "step fail at this node until it is", ("nodes", nid, "metric"), node=nid,
                     fld="metric", at_value=True)

    # -- verdicts -------------------------------------------------------------------------
    def check_verdicts(self, nid: str, node: Any, *, binary: bool | None) -> None:
        """Shared verdict rules. `binary` True: exactly one true and one false; False: distinct
        labels; None: decide from the values (python checks may return either)."""
        verdicts: list[Verdict] = node.verdicts
        lossy = nid in self.lossy_verdicts
        if not verdicts:
            if not lossy and not (self.raw_has(nid, "verdicts") and
                                  not isinstance(self.raw_nodes[nid]["verdicts"], list)):
                self.add("DAG014", f"'{nid}' has no verdicts, so a run that reaches it cannot "
                         "go on; add verdicts like { verdict = true, score = 10 } and "
                         "{ verdict = false, score = 0 }", ("nodes", nid, "verdicts"),
                         node=nid, fld="verdicts")
            return
        for i, v in enumerate(verdicts):
            self.check_verdict_target(nid, i, v)
        if binary is None:
            binary = all(isinstance(v.verdict, bool) for v in verdicts)
            if not binary and any(isinstance(v.verdict, bool) for v in verdicts):
                first = next(i for i, v in enumerate(verdicts) if isinstance(v.verdict, bool))
                self.add("DAG017", "a python check returns either true/false or labels; "
                         "this one mixes both", self.vpath(nid, first, "verdict"), node=nid,
                         fld="verdicts", at_value=True)
                return
        kind_word = "binary node" if isinstance(node, BinaryNode) else (
            f"{node.check} check" if isinstance(node, CheckNode) else "node")
        if binary:
            wrong = [i for i, v in enumerate(verdicts) if not isinstance(v.verdict, bool)]
            for i in wrong:
                self.add("DAG017", f"a {kind_word} answers true or false, but verdict "
                         f"#{i + 1} is the label {verdicts[i].verdict!r}; write verdict = true "
                         "or verdict = false (use type = \"non_binary\" for labels)",
                         self.vpath(nid, i, "verdict"), node=nid, fld="verdicts",
                         at_value=True)
            if wrong or lossy:
                return
            trues = sum(1 for v in verdicts if v.verdict is True)
            falses = sum(1 for v in verdicts if v.verdict is False)
            if trues != 1 or falses != 1:
                self.add("DAG010", f"a {kind_word} needs exactly one true and one false "
                         f"verdict; it has {trues} true and {falses} false",
                         ("nodes", nid, "verdicts"), node=nid, fld="verdicts")
            return
        wrong = [i for i, v in enumerate(verdicts) if not isinstance(v.verdict, str)]
        for i in wrong:
            self.add("DAG017", f"a non-binary node picks a label, but verdict #{i + 1} is "
                     f"{show_verdict(verdicts[i].verdict)}; write a label string (use type = "
                     "\"binary\" for true/false)", self.vpath(nid, i, "verdict"), node=nid,
                     fld="verdicts", at_value=True)
        labels = [(i, v.verdict) for i, v in enumerate(verdicts) if isinstance(v.verdict, str)]
        seen: dict[str, int] = {}
        seen_norm: dict[str, tuple[int, str]] = {}
        for i, label in labels:
            if not label.strip():
                self.add("DAG017", f"verdict #{i + 1} has an empty label; the judge needs a "
                         "name to pick", self.vpath(nid, i, "verdict"), node=nid,
                         fld="verdicts", at_value=True)
                continue
            if label in seen:
                self.add("DAG011", f"label {label!r} appears twice (verdicts #{seen[label] + 1} "
                         f"and #{i + 1}); the judge could not tell them apart",
                         self.vpath(nid, i, "verdict"), node=nid, fld="verdicts",
                         at_value=True)
                continue
            seen[label] = i
            norm = _norm_label(label)
            if norm in seen_norm:
                j, other = seen_norm[norm]
                self.add("DAG106", f"labels {other!r} and {label!r} differ only in case or "
                         "spacing; the judge sees two options that mean the same",
                         self.vpath(nid, i, "verdict"), node=nid, fld="verdicts",
                         at_value=True)
            else:
                seen_norm[norm] = (i, label)
        if len(verdicts) == 1 and not wrong and not lossy:
            self.add("DAG105", f"'{nid}' has a single label, so the judge has no choice to "
                     "make (a call for nothing); add the other labels, or score directly",
                     ("nodes", nid, "verdicts"), node=nid, fld="verdicts")

    def check_verdict_target(self, nid: str, i: int, v: Verdict) -> None:
        has_score = v.score is not None
        has_then = v.then is not None
        name = show_verdict(v.verdict)
        if has_score and has_then:
            self.add("DAG012", f"verdict {name} has both score and then; keep score to end the "
                     "path here, or then to continue at another node",
                     self.vpath(nid, i), node=nid, fld="verdicts", at_value=True)
        elif not has_score and not has_then:
            raw_item = self._raw_verdict(nid, i)
            if raw_item is not None and ("score" in raw_item or "then" in raw_item):
                pass  # the loader already reported the unusable value
            else:
                self.add("DAG012", f"verdict {name} has neither score nor then; add score = "
                         "0..10 to end the path here, or then = \"<node>\" to continue",
                         self.vpath(nid, i), node=nid, fld="verdicts", at_value=True)
        if has_score:
            s = v.score
            if not 0 <= s <= 10:  # type: ignore[operator]  # NaN fails this too
                self.add("DAG013", f"verdict {name}: score {show_number(s)} must be a number from 0 "
                         "to 10, like 7 or 7.5 (the final score is score/10)",
                         self.vpath(nid, i, "score"),
                         node=nid, fld="verdicts", at_value=True)
        if has_then and v.then not in self.graph.nodes and v.then not in self.raw_nodes:
            self.add("DAG008", f"verdict {name}: then = '{v.then}' is not a node"
                     f"{_suggest(v.then or '', self.graph.nodes)}", self.vpath(nid, i, "then"),
                     node=nid, fld="verdicts", at_value=True)

    def _raw_verdict(self, nid: str, i: int) -> dict[str, Any] | None:
        index = self.verdict_index.get(nid)
        raw_node = self.raw_nodes.get(nid)
        if index is None or i >= len(index) or not isinstance(raw_node, dict):
            return None
        item = raw_node["verdicts"][index[i]]
        return item if isinstance(item, dict) else None

    # -- checks ---------------------------------------------------------------------------
    def check_check(self, nid: str, node: CheckNode) -> None:
        kind = node.check
        if self.missing(nid, "check", kind):
            self.add("DAG003", f"'check' is missing: name the kind of check, one of "
                     f"{', '.join(CHECK_KINDS)}", ("nodes", nid, "check"), node=nid, fld="check",
                     at_value=self.raw_has(nid, "check"))
        elif kind not in CHECK_KINDS:
            self.add("DAG007", f"unknown check kind '{kind}'{_suggest(kind, CHECK_KINDS)}; use "
                     f"one of: {', '.join(CHECK_KINDS)}", ("nodes", nid, "check"), node=nid,
                     fld="check", at_value=True)
        self.check_check_input(nid, node)
        if kind in CHECK_KINDS:
            self.check_kind_settings(nid, node, kind)
        self.check_verdicts(nid, node, binary=None if kind == "python" else True)

    def check_check_input(self, nid: str, node: CheckNode) -> None:
        if node.param is None and node.evidence is None and node.check == "tools":
            return  # a tools check reads tools_called unless told otherwise
        if node.param is None and node.evidence is None:
            self.add("DAG020", "a check reads one thing: set param = \"actual_output\" (a "
                     "test-case field) or evidence = \"<task id>\" (a task parent's output)",
                     ("nodes", nid), node=nid, fld="param")
            return
        if node.param is not None and node.evidence is not None:
            self.add("DAG020", "a check reads one thing: keep either param or evidence, not "
                     "both", ("nodes", nid, "evidence"), node=nid, fld="evidence")
            return
        if node.param is not None:
            if node.param not in self.mode_params:
                self.add("DAG006", self.param_problem(node.param), ("nodes", nid, "param"),
                         node=nid, fld="param", at_value=True)
            return
        ev = node.evidence or ""
        target = self.graph.nodes.get(ev)
        path = ("nodes", nid, "evidence")
        if target is None:
            if ev not in self.raw_nodes:
                self.add("DAG008", f"evidence names '{ev}', which is not a node"
                         f"{_suggest(ev, self.graph.nodes)}", path, node=nid, fld="evidence",
                         at_value=True)
        elif not isinstance(target, TaskNode):
            self.add("DAG020", f"evidence must name a task node, and '{ev}' is a "
                     f"{target.type} node", path, node=nid, fld="evidence", at_value=True)
        elif nid not in target.children:
            self.add("DAG020", f"evidence names task '{ev}', but '{nid}' is not among its "
                     f"children, so it never receives that output; add \"{nid}\" to "
                     f"{ev}.children", path, node=nid, fld="evidence", at_value=True)

    def check_kind_settings(self, nid: str, node: CheckNode, kind: str) -> None:
        own = CheckNode.KIND_FIELDS.get(kind, ())
        every = {f for fields in CheckNode.KIND_FIELDS.values() for f in fields}
        for f in sorted(every - set(own)):
            value = getattr(node, "schema_" if f == "schema" else f, None)
            if value is not None:
                users = [k for k, fs in CheckNode.KIND_FIELDS.items() if f in fs]
                hint = _suggest(f, own)
                self.add("DAG002", f"'{f}' has no meaning for a {kind} check{hint}; it "
                         f"belongs to {' / '.join(users)} checks", ("nodes", nid, f),
                         node=nid, fld=f)
        for f in CheckNode.KIND_REQUIRED.get(kind, ()):
            self.require(nid, node, f, f"a {kind} check needs it")
        path = ("nodes", nid)
        if kind == "regex":
            flags = 0
            for ch in (node.flags or "").lower():
                if ch not in REGEX_FLAGS:
                    self.add("DAG020", f"unknown regex flag '{ch}'; flags are letters from "
                             f"'{''.join(REGEX_FLAGS)}' (i ignore case, m multiline, s dot "
                             "matches newline, x verbose)", path + ("flags",),
                             node=nid, fld="flags", at_value=True)
                    break
                flags |= REGEX_FLAGS[ch]
            if node.pattern:
                try:
                    re.compile(node.pattern, flags)
                except (re.error, OverflowError, ValueError) as exc:
                    self.add("DAG020", f"the regex pattern does not compile: {exc}",
                             path + ("pattern",), node=nid, fld="pattern", at_value=True)
        elif kind == "json_schema":
            self.check_schema(nid, node)
        elif kind == "length":
            # no unit means chars (dagtui.checks): it runs, so it is not an error
            if node.min is None and node.max is None:
                self.add("DAG020", "a length check needs min, max or both", path, node=nid,
                         fld="max")
            for f in ("min", "max"):
                value = getattr(node, f)
                if value is not None and value < 0:
                    self.add("DAG020", f"{f} = {value} is negative", path + (f,), node=nid,
                             fld=f, at_value=True)
            if node.min is not None and node.max is not None and node.min > node.max:
                self.add("DAG020", f"min = {node.min} is larger than max = {node.max}, so no "
                         "text can pass", path + ("max",), node=nid, fld="max", at_value=True)
        elif kind == "contains":
            if node.mode is not None and node.mode not in CONTAINS_MODES:
                self.add("DAG020", f"mode = '{node.mode}' for a contains check must be "
                         "\"any\" or \"all\"", path + ("mode",), node=nid, fld="mode",
                         at_value=True)
        elif kind == "tools":
            if node.mode is not None and node.mode not in TOOLS_MODES:
                self.add("DAG020", f"mode = '{node.mode}' for a tools check must be one of "
                         f"{', '.join(TOOLS_MODES)}", path + ("mode",), node=nid, fld="mode",
                         at_value=True)
        elif kind == "python" and node.function and not _FUNCTION_REF.match(node.function):
            self.add("DAG020", f"function = '{node.function}' must look like "
                     "\"package.module:function\"", path + ("function",), node=nid,
                     fld="function", at_value=True)
        elif kind == "python" and node.function:
            self.check_python_module(nid, node.function)

    def check_python_module(self, nid: str, function: str) -> None:
        """A python check runs code (DAG114), and only a module file beside the graph (or
        in DAGTUI_PYTHON_PATH) can be loaded (DAG115): say so before anyone runs it."""
        from .checks import HOW_TO_ALLOW, PATH_ENV, env_python_dirs, module_file, search_dirs

        module, _, name = function.partition(":")
        dirs = search_dirs(self.base_dir or ".", env_python_dirs())
        found = module_file(module, dirs)
        where = ("nodes", nid, "function")
        if found is None:
            self.add("DAG115", f"no module file '{module}' beside the graph ({dirs[0]}): "
                     f"python checks load only files from the graph's folder (or --python-path "
                     f"/ {PATH_ENV}), never installed or standard-library modules, so "
                     f"{function} is refused when it runs", where, node=nid, fld="function",
                     at_value=True)
            return
        self.add("DAG114", f"python check '{nid}' runs code: {module}:{name} from {found}; "
                 f"it runs only if the user allows it ({HOW_TO_ALLOW}), never because the "
                 "graph asks", where, node=nid, fld="function", at_value=True)

    def check_schema(self, nid: str, node: CheckNode) -> None:
        schema = node.schema_
        path = ("nodes", nid, "schema")
        if schema is None:
            return
        if isinstance(schema, dict):
            return
        if not schema.strip():
            return  # reported as missing
        target = FsPath(self.base_dir) / schema
        try:
            text = read_text(target, limit=JSON_LIMIT, what="JSON Schema file")
        except InputError as exc:
            if exc.kind == "missing":
                self.add("DAG020", f"schema file '{schema}' does not exist (looked in "
                         f"{target.parent}); paths are relative to the graph file", path,
                         node=nid, fld="schema", at_value=True)
            else:
                self.add("DAG020", f"schema file '{schema}' cannot be read: {exc.message}",
                         path, node=nid, fld="schema", at_value=True)
            return
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            self.add("DAG020", f"schema file '{schema}' is not valid JSON: {exc}", path,
                     node=nid, fld="schema", at_value=True)
            return
        if not isinstance(data, dict | bool):
            self.add("DAG020", f"schema file '{schema}' must hold a JSON object (a JSON "
                     "Schema)", path, node=nid, fld="schema", at_value=True)

    # -- graph shape ----------------------------------------------------------------------
    def edges(self) -> dict[str, list[tuple[str, Path]]]:
        """node -> [(target, path of the key/value that makes the edge)], known targets only."""
        out: dict[str, list[tuple[str, Path]]] = {}
        for nid, node in self.graph.nodes.items():
            items: list[tuple[str, Path]] = []
            if isinstance(node, TaskNode):
                for k, c in enumerate(node.children):
                    if c in self.graph.nodes:
                        items.append((c, ("nodes", nid, "children", k)))
            for i, v in enumerate(getattr(node, "verdicts", []) or []):
                if v.then is not None and v.then in self.graph.nodes:
                    items.append((v.then, self.vpath(nid, i, "then")))
            out[nid] = items
        return out

    def topological_order(self) -> list[str]:
        """Kahn's order over all edges; shorter than the node list when there is a cycle."""
        nodes = self.graph.nodes
        indeg = {n: len(p) for n, p in self.parents.items()}
        children: dict[str, list[str]] = {n: [] for n in nodes}
        for n, ps in self.parents.items():
            for p in ps:
                children[p].append(n)
        ready = [n for n in nodes if indeg[n] == 0]
        order: list[str] = []
        while ready:
            n = ready.pop()
            order.append(n)
            for c in children[n]:
                indeg[c] -= 1
                if indeg[c] == 0:
                    ready.append(c)
        return order

    def check_cycles(self) -> bool:
        """Report one cycle per strongly connected group. Returns True when acyclic."""
        self.topo_order = self.topological_order()
        if len(self.topo_order) == len(self.graph.nodes):
            return True  # the common case: no need to look for the groups
        edges = self.edges()
        order = list(self.graph.nodes)
        index_of: dict[str, int] = {}
        low: dict[str, int] = {}
        on_stack: set[str] = set()
        stack: list[str] = []
        groups: list[list[str]] = []
        counter = 0
        for start in order:
            if start in index_of:
                continue
            work: list[tuple[str, int]] = [(start, 0)]
            while work:
                v, pi = work.pop()
                if pi == 0:
                    index_of[v] = low[v] = counter
                    counter += 1
                    stack.append(v)
                    on_stack.add(v)
                succ = edges[v]
                if pi < len(succ):
                    work.append((v, pi + 1))
                    w = succ[pi][0]
                    if w not in index_of:
                        work.append((w, 0))
                    elif w in on_stack:
                        low[v] = min(low[v], index_of[w])
                    continue
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
                if low[v] == index_of[v]:
                    group = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        group.append(w)
                        if w == v:
                            break
                    if len(group) > 1 or any(t == v for t, _ in edges[v]):
                        groups.append(group)
        for group in groups:
            self.report_cycle(group, edges, order)
        return not groups

    def report_cycle(self, group: list[str], edges: dict[str, list[tuple[str, Path]]],
                     order: list[str]) -> None:
        members = set(group)
        start = min(group, key=order.index)
        # shortest way back to `start` inside the group (breadth first)
        prev: dict[str, tuple[str, Path]] = {}
        queue = [start]
        closing: tuple[str, Path] | None = None
        while queue and closing is None:
            nxt = []
            for v in queue:
                for w, p in edges[v]:
                    if w == start:
                        closing = (v, p)
                        break
                    if w in members and w not in prev:
                        prev[w] = (v, p)
                        nxt.append(w)
                if closing:
                    break
            queue = nxt
        if closing is None:  # pragma: no cover - a strongly connected group always closes
            return
        last, path = closing
        chain = [last]
        while chain[-1] != start:
            chain.append(prev[chain[-1]][0])
        chain.reverse()
        shown = " → ".join([*chain, start])
        self.add("DAG009", f"cycle {shown}: these nodes wait for each other, so none of them "
                 "can ever run; remove one of the edges", path, node=last,
                 fld="children" if path[2] == "children" else "verdicts", at_value=True)

    def check_gate_depth(self, acyclic: bool) -> None:
        """DAG110: more than MAX_GATE_DEPTH judgement/check nodes one after another."""
        if not acyclic:
            return
        nodes = self.graph.nodes
        depth: dict[str, int] = {}
        best_parent: dict[str, str | None] = {}
        # the longest chain of gates into each node, in topological order: a node runs only
        # after every parent, so the deepest parent counts
        for n in self.topo_order:
            own = 1 if nodes[n].is_judgement else 0
            best, arg = 0, None
            for p in self.parents[n]:
                if depth.get(p, 0) > best:
                    best, arg = depth[p], p
            depth[n] = best + own
            best_parent[n] = arg
        too_deep = [n for n in nodes if depth.get(n, 0) > MAX_GATE_DEPTH
                    and nodes[n].is_judgement]
        if not too_deep:
            return
        position = {n: k for k, n in enumerate(nodes)}
        first = min(too_deep, key=lambda n: (depth[n], position[n]))
        chain = [first]
        while best_parent.get(chain[-1]):
            chain.append(best_parent[chain[-1]])  # type: ignore[arg-type]
        gates = [n for n in reversed(chain) if nodes[n].is_judgement]
        more = (f" ({len(too_deep) - 1} more node(s) sit deeper than that)"
                if len(too_deep) > 1 else "")
        self.add("DAG110", f"'{first}' is gate number {depth[first]} on the path "
                 f"{' → '.join(gates)}; one early wrong verdict misroutes everything below "
                 f"it, so keep gates at most {MAX_GATE_DEPTH} deep (flatten, or settle rules in "
                 f"code checks){more}", ("nodes", first), node=first)

    # -- path analysis ----------------------------------------------------------------------
    def check_paths(self, report: PathReport) -> None:
        if not report.proven:
            self.add("DAG201", f"path analysis gave up ({report.reason}); only the "
                     "structural checks ran: dead nodes are estimated and the verdict "
                     "combinations were not proven to end at exactly one leaf", ("nodes",))
        else:
            self.dead = set(report.dead_nodes)
            self.report_bad_paths(report)
        self.report_dead(report)
        self.check_threshold(report)

    def report_bad_paths(self, report: PathReport) -> None:
        graph = self.graph
        none_groups: dict[tuple[str, Any], list[PathInfo]] = {}
        many_groups: dict[tuple[str, ...], list[PathInfo]] = {}
        for p in report.bad_paths:
            if not p.leaves:
                key = p.choices[-1] if p.choices else (p.nodes_run[-1] if p.nodes_run else "", None)
                none_groups.setdefault(key, []).append(p)
            else:
                many_groups.setdefault(tuple(lf.node for lf in p.leaves), []).append(p)
        for n, group in enumerate(none_groups.values()):
            if n >= MAX_PATH_DIAGNOSTICS:
                break
            p = group[0]
            others = f" (and {len(group) - 1} more combination(s) ending the same way)" \
                if len(group) > 1 else ""
            rest = len(none_groups) - MAX_PATH_DIAGNOSTICS
            tail = f"; {rest} more dead end(s) not shown" if n == MAX_PATH_DIAGNOSTICS - 1 \
                and rest > 0 else ""
            where, path, fld = self.dead_end(p)
            self.add("DAG015", f"under {describe_choices(p.choices)} the run reaches no leaf "
                     f"and has no score: {where}{others}{tail}", path, node=fld[0],
                     fld=fld[1], at_value=True)
        for n, (_, group) in enumerate(many_groups.items()):
            if n >= MAX_PATH_DIAGNOSTICS:
                break
            p = group[0]
            ends = " and ".join(
                f"{describe_leaf(lf)} from {lf.node}" + ("" if lf.is_geval else
                                                     f"={show_verdict(lf.verdict)}")  # type: ignore[arg-type]
                for lf in p.leaves
            )
            others = f" (and {len(group) - 1} more combination(s) like it)" \
                if len(group) > 1 else ""
            last = p.leaves[-1]
            path: Path = ("nodes", last.node)
            if not last.is_geval:
                node = graph.nodes[last.node]
                for i, v in enumerate(getattr(node, "verdicts", [])):
                    if v.verdict == last.verdict and v.score is not None:
                        path = self.vpath(last.node, i, "score")
                        break
            self.add("DAG016", f"under {describe_choices(p.choices)} the run reaches "
                     f"{len(p.leaves)} leaves ({ends}); a run must end at exactly one leaf, "
                     f"otherwise the last one to finish wins{self.fan_out_hint(p)}{others}",
                     path,
                     node=last.node, fld=None if last.is_geval else "verdicts", at_value=True)

    def fan_out_hint(self, p: PathInfo) -> str:
        """Why a run forks: several roots, or one node feeding several nodes that all run."""
        roots = self.topology_roots
        if len(roots) > 1:
            return (f"; the graph has {len(roots)} roots ({', '.join(roots)}) and a run follows "
                    "every one of them")
        ran = set(p.nodes_run)
        for nid in p.nodes_run:
            node = self.graph.nodes[nid]
            if isinstance(node, TaskNode):
                fed = [c for c in dict.fromkeys(node.children) if c in ran]
                if len(fed) > 1:
                    return (f"; task '{nid}' feeds {', '.join(fed)}, and each of them runs on "
                            "its own branch")
        return ""

    def dead_end(self, p: PathInfo) -> tuple[str, Path, tuple[str | None, str | None]]:
        """Explain where a no-leaf run stops, and where to point at."""
        graph = self.graph
        if p.choices:
            nid, value = p.choices[-1]
            node = graph.nodes[nid]
            for i, v in enumerate(getattr(node, "verdicts", [])):
                if v.verdict == value and type(v.verdict) is type(value):
                    if v.then is not None:
                        missing = self.missing_arrivals(v.then, p)
                        never = ""
                        if v.then in self.dead:
                            never = " (no combination starts it: it can never run)"
                            self.explained_dead.add(v.then)
                        why = (f"'{v.then}' also waits for {', '.join(missing)}, which "
                               f"did not lead to it in this run, so '{v.then}' never "
                               f"starts{never}"
                               if missing else f"'{v.then}' does not lead on to a leaf")
                        return (f"{nid}={show_verdict(value)} leads to '{v.then}', but {why}"
                                if missing else f"{nid}={show_verdict(value)} leads on, but {why}",
                                self.vpath(nid, i, "then"), (nid, "verdicts"))
                    return (f"{nid}={show_verdict(value)} has no score",
                            self.vpath(nid, i), (nid, "verdicts"))
        last = p.nodes_run[-1] if p.nodes_run else None
        if last and isinstance(graph.nodes[last], TaskNode):
            return (f"the last node to run is task '{last}', and a task produces evidence, "
                    "not a score", ("nodes", last), (last, None))
        if last:
            return f"the run stops after '{last}'", ("nodes", last), (last, None)
        return "nothing runs", ("nodes",), (None, None)

    def missing_arrivals(self, target: str, p: PathInfo) -> list[str]:
        """Parents of `target` that did not arrive in run `p` (so `target` never started)."""
        chosen = dict(p.choices)
        ran = set(p.nodes_run)
        out = []
        for q in self.parents.get(target, ()):
            node = self.graph.nodes[q]
            led_here = q in ran and (q not in chosen or any(
                v.then == target and v.verdict == chosen[q]
                and type(v.verdict) is type(chosen[q])
                for v in getattr(node, "verdicts", [])
            ))
            if not led_here:
                out.append(q)
        return out

    def report_dead(self, report: PathReport) -> None:
        dead = set(report.dead_nodes)
        if not dead:
            return
        for nid in self.graph.nodes:
            if nid not in dead or nid in self.explained_dead:
                continue
            parents = self.parents.get(nid, [])
            if parents and all(p in dead for p in parents):
                continue  # below another dead node: that one is reported
            below = self._count_below(nid, dead)
            extra = f" ({below} node(s) below it never run either)" if below else ""
            if not parents:
                why = ("nothing points at it and [metric] roots does not list it"
                       if self.graph.metric.roots is not None else "nothing points at it")
            elif report.proven:
                why = (f"it waits for all of {', '.join(parents)}, and no combination of "
                       "verdicts brings them all")
                if len(parents) == 1:
                    why = f"it waits for {parents[0]}, which never leads to it"
            else:
                why = f"it waits for {', '.join(p for p in parents if p in dead)}"
            self.add("DAG102", f"'{nid}' can never run: {why}{extra}. In DeepEval such a node "
                     "is silently skipped", ("nodes", nid), node=nid)

    def _count_below(self, nid: str, dead: set[str]) -> int:
        seen: set[str] = set()
        todo = [nid]
        while todo:
            v = todo.pop()
            for t in self.graph.nodes[v].targets():
                if t in dead and t not in seen and t != nid:
                    seen.add(t)
                    todo.append(t)
        return len(seen)

    def check_threshold(self, report: PathReport) -> None:
        """DAG104: every reachable leaf passes, or every one fails."""
        m = self.graph.metric
        threshold = m.effective_threshold
        if not 0.0 <= m.threshold <= 1.0:
            return
        if report.proven:
            if report.geval_leaves or not report.reachable_scores:
                return
            scores = report.reachable_scores
        else:
            dead = set(report.dead_nodes)
            scores = []
            for nid, node in self.graph.nodes.items():
                if nid in dead:
                    continue
                if node.is_scored_leaf:
                    return
                for v in getattr(node, "verdicts", []):
                    if v.then is None and isinstance(v.score, int | float) and 0 <= v.score <= 10:
                        scores.append(v.score / 10)
            if not scores:
                return
        shown = ", ".join(f"{s:g}" for s in sorted(set(scores)))
        strict = " (strict = true makes it 1.0)" if m.strict else ""
        if all(s >= threshold for s in scores):
            self.add("DAG104", f"every reachable score ({shown}) passes the threshold "
                     f"{threshold:g}{strict}, so the metric can never fail",
                     ("metric", "threshold"), fld="threshold", at_value=True)
        elif all(s < threshold for s in scores):
            self.add("DAG104", f"every reachable score ({shown}) is below the threshold "
                     f"{threshold:g}{strict}, so the metric can never pass",
                     ("metric", "threshold"), fld="threshold", at_value=True)
