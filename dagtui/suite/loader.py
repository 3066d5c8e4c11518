"""Read a suite file into the model and check it, every problem a positioned diagnostic.

`load_suite_file` never raises on bad input: like the graph loader, it returns whatever
suite could be built plus diagnostics (`SUI0xx` errors, `SUI1xx` warnings, and the errors of
any rule graph, reported in that graph's own file). It also loads each rule's graph (inline
checks become a one-node graph) because the checks that matter most need them: is the file
there, is it valid, can its score ever exceed 0 (else every dependent rule is dead), how many
judge calls can one case take (for budgets), is it a code or an LLM rule.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagtui.diagnostics import Diagnostic, unreadable
from dagtui.graph.checks import find_check
from dagtui.graph.loader import Collector, LoadResult
from dagtui.graph.model import CHECK_KINDS, SINGLE_TURN_PARAMS, CheckNode, Graph, Metric, Verdict
from dagtui.graph.positions import KeyPath, Positions, locate
from dagtui.inputs import InputError, parser_gave_up, read_text
from dagtui.suite.codes import suite_diag
from dagtui.suite.model import FILTER_OPS, STATUSES, FilterCond, Rule, Sample, Suite, SuiteMeta
from dagtui.suite.sniff import MAX_BYTES
from dagtui.text import suggest

if TYPE_CHECKING:
    from dagtui.graph.paths import PathAnalysis

TOP_KEYS = ("suite", "rules")
SUITE_KEYS = ("name", "cases", "labels", "concurrency", "description")
RULE_KEYS = (
    "label", "description", "graph", "check", "depends_on", "filter", "sample", "max_calls",
    "rpm", "status",
)
SAMPLE_KEYS = ("rate", "seed")
FILTER_KEYS = ("field", "op", "value")
#: inline-check keys: a check node's settings minus what a rule decides itself
CHECK_KEYS = tuple(
    k for k in CheckNode.FIELDS if k not in ("type", "label", "evidence", "verdicts")
)
#: a suite file larger than this is refused before reading (see `dagtui.inputs`)
#: the seed's advice: two to three levels is usually enough
MAX_LEVELS = 3


@dataclass
class RuleFacts:
    """What the suite needs to know about a rule's graph."""

    kind: str  # "code" | "LLM" | "?"
    can_pass: bool  # some reachable score is > 0
    worst_calls: int  # judge calls one case can take at most (0 for code rules)


@dataclass
class SuiteLoad:
    """What loading produced. `suite` is None only when the file could not be parsed."""

    suite: Suite | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    text: str | None = None
    positions: Positions | None = None
    raw: dict[str, Any] | None = None
    file: str | None = None
    #: rule id -> its graph (inline checks as a one-node graph); missing when unusable
    graphs: dict[str, Graph] = field(default_factory=dict)
    facts: dict[str, RuleFacts] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.suite is not None and not any(d.is_error for d in self.diagnostics)

    @property
    def kinds(self) -> dict[str, str]:
        return {rid: f.kind for rid, f in self.facts.items()}


class SuiteError(Exception):
    """Raised by the library API when a suite has errors; carries the diagnostics."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.is_error] or diagnostics
        lines = "\n".join(d.format() for d in errors[:20])
        super().__init__(f"suite has {len(errors)} error(s):\n{lines}")


class _Ctx(Collector):
    """The shared diagnostic collector, with the rule id named `rule` (it is the node slot)."""

    def add(self, code: str, message: str, path: KeyPath = (), *, node: str | None = None,
            fld: str | None = None, at_value: bool = False, rule: str | None = None) -> None:
        super().add(code, message, path, node=rule if rule is not None else node, fld=fld,
                    at_value=at_value)


# -- loading ----------------------------------------------------------------------------------
def load_suite_file(path: str | Path, *, check_graphs: bool = True,
                    read: LoadResult | None = None) -> SuiteLoad:
    """Load and validate a suite file (see module doc). Never raises on bad input.
    `read`: the file as a command already read (and parsed) it, as a graph, to learn it is
    a suite: its text and parse are used instead of reading and parsing again."""
    file = str(path)
    if read is not None and read.text is not None:
        return load_suite_text(read.text, file, check_graphs=check_graphs, raw=read.raw)
    try:
        text = read_text(path, limit=MAX_BYTES, what="suite file")
    except InputError as exc:
        return _fail(file, exc.message, exc.line, exc.col)
    return load_suite_text(text, file, check_graphs=check_graphs)


def _fail(file: str, message: str, line: int = 0, col: int = 0) -> SuiteLoad:
    return SuiteLoad(None, [suite_diag("SUI017", message, file, line, col)], file=file)


_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")


def load_suite_text(text: str, file: str | None = None, *, check_graphs: bool = True,
                    raw: dict[str, Any] | None = None) -> SuiteLoad:
    """Parse suite TOML text; graph paths resolve against `file`'s folder (or the cwd).
    `raw`: the text already parsed (by `dagtui run`, which read the file to learn it is a
    suite), so it is not parsed again."""
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        if raw is None:
            raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_POS.search(str(exc))
        line, col = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        msg = _TOML_POS.sub("", str(exc)).strip()
        diag = suite_diag("SUI001", f"TOML syntax: {msg}", file, line, col)
        return SuiteLoad(None, [diag], text=text, file=file)
    except (RecursionError, ValueError) as exc:  # deep nesting, a 5,000-digit integer
        message, line = parser_gave_up(exc, text)
        diag = suite_diag("SUI001", f"TOML syntax: {message}", file, line, 1 if line else 0)
        return SuiteLoad(None, [diag], text=text, file=file)
    positions = locate(text)
    ctx = _Ctx(file, positions)
    suite = _build_suite(raw, ctx)
    suite.path = file
    load = SuiteLoad(suite, ctx.diags, text, positions, raw, file)
    _check_references(suite, ctx)
    if check_graphs:
        _load_rule_graphs(load, ctx)
        _check_gates(load, ctx)
    return load


def _build_suite(raw: dict[str, Any], ctx: _Ctx) -> Suite:
    for key in raw:
        if key not in TOP_KEYS:
            ctx.add("SUI002", f"unknown top-level key '{key}'{suggest(key, TOP_KEYS)}; a suite "
                    "file has [suite] and [rules.<name>] tables", (key,), fld=key)
    meta = _build_meta(raw.get("suite", {}), ctx)
    suite = Suite(meta=meta)
    rules = raw.get("rules", {})
    if not isinstance(rules, dict):
        ctx.add("SUI004", "'rules' must be a table of rule tables ([rules.<name>])", ("rules",))
        return suite
    for rid, data in rules.items():
        rule = _build_rule(rid, data, ctx)
        if rule is not None:
            suite.rules[rid] = rule
    if not suite.rules:
        ctx.add("SUI015", "the suite has no rules; add a [rules.<name>] table with a graph or "
                "a check", ("rules",) if "rules" in raw else ())
    return suite


def _build_meta(data: Any, ctx: _Ctx) -> SuiteMeta:
    meta = SuiteMeta()
    if not isinstance(data, dict):
        ctx.add("SUI004", "'suite' must be a table ([suite])", ("suite",))
        return meta
    for key, value in data.items():
        path = ("suite", key)
        if key not in SUITE_KEYS:
            ctx.add("SUI002", f"unknown key '{key}' in [suite]{suggest(key, SUITE_KEYS)}", path,
                    fld=key)
        elif key == "concurrency":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                ctx.add("SUI004", f"'concurrency' must be a positive integer (got {value!r})",
                        path, fld=key, at_value=True)
            else:
                meta.concurrency = value
        elif not isinstance(value, str):
            ctx.add("SUI004", f"'{key}' must be a string (got {value!r})", path, fld=key,
                    at_value=True)
        else:
            setattr(meta, key, value)
    return meta


def _build_rule(rid: str, data: Any, ctx: _Ctx) -> Rule | None:
    base: KeyPath = ("rules", rid)
    if not isinstance(data, dict):
        ctx.add("SUI004", f"rule '{rid}' must be a table ([rules.{rid}])", base, rule=rid)
        return None
    rule = Rule(id=rid)
    for key, value in data.items():
        path = base + (key,)
        if key not in RULE_KEYS:
            hint = suggest(key, RULE_KEYS)
            extra = ""
            if not hint and key in CHECK_KEYS:
                extra = f"; check settings go inside the inline table: check = {{ {key} = ... }}"
            ctx.add("SUI002", f"unknown key '{key}' in rule '{rid}'{hint}{extra}", path,
                    rule=rid, fld=key)
        elif key in ("label", "description", "graph"):
            if isinstance(value, str):
                setattr(rule, key, value)
            else:
                ctx.add("SUI004", f"'{key}' must be a string (got {value!r})", path, rule=rid,
                        fld=key, at_value=True)
        elif key == "check":
            if isinstance(value, dict):
                rule.check = dict(value)
            else:
                ctx.add("SUI004", "'check' must be an inline table like "
                        '{ check = "regex", param = "actual_output", pattern = "..." }', path,
                        rule=rid, fld=key, at_value=True)
        elif key == "depends_on":
            if isinstance(value, str):
                value = [value]
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                rule.depends_on = list(dict.fromkeys(value))
            else:
                ctx.add("SUI004", "'depends_on' must be a list of rule names", path, rule=rid,
                        fld=key, at_value=True)
        elif key == "status":
            if value in STATUSES:
                rule.status = value
            else:
                ctx.add("SUI014", f"status {value!r} is not one of: {', '.join(STATUSES)}"
                        f"{suggest(str(value), STATUSES)}", path, rule=rid, fld=key,
                        at_value=True)
        elif key == "max_calls":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                ctx.add("SUI013", f"'max_calls' must be a whole number of judge calls, 0 or "
                        f"more (got {value!r})", path, rule=rid, fld=key, at_value=True)
            else:
                rule.max_calls = value
        elif key == "rpm":
            from dagtui.judges.health import RPM_MAX, RPM_MIN

            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not RPM_MIN <= value <= RPM_MAX:  # NaN too
                ctx.add("SUI018", f"'rpm' must be a number of judge requests a minute from "
                        f"{RPM_MIN:g} to {RPM_MAX:,.0f} (got {value!r})", path, rule=rid,
                        fld=key, at_value=True)
            else:
                rule.rpm = value
        elif key == "sample":
            rule.sample = _build_sample(rid, value, ctx)
        elif key == "filter":
            rule.filter = _build_filter(rid, value, ctx)
    if rule.graph is not None and rule.check is not None:
        ctx.add("SUI003", f"rule '{rid}' has both 'graph' and 'check'; keep one", base + ("check",),
                rule=rid)
    elif rule.graph is None and rule.check is None and not _had_bad(data):
        ctx.add("SUI003", f"rule '{rid}' has neither 'graph' nor 'check': give it a graph file "
                "(graph = \"x.toml\") or an inline check (check = { check = \"length\", ... })",
                base, rule=rid)
    return rule


def _had_bad(data: dict[str, Any]) -> bool:
    """A rule whose graph/check was present but mistyped already has a diagnostic."""
    return "graph" in data or "check" in data


def _build_sample(rid: str, value: Any, ctx: _Ctx) -> Sample | None:
    path: KeyPath = ("rules", rid, "sample")
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = {"rate": value}
    if not isinstance(value, dict):
        ctx.add("SUI012", "'sample' must be { rate = 0.5, seed = 7 } (or just a rate)", path,
                rule=rid, fld="sample", at_value=True)
        return None
    for key in value:
        if key not in SAMPLE_KEYS:
            ctx.add("SUI002", f"unknown key '{key}' in sample{suggest(key, SAMPLE_KEYS)}",
                    path + (key,), rule=rid, fld="sample")
    rate = value.get("rate", 1.0)
    seed = value.get("seed", 0)
    ok = True
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= 1:
        ctx.add("SUI012", f"sample rate must be a number above 0 and at most 1 (got {rate!r})",
                path + ("rate",), rule=rid, fld="sample", at_value=True)
        ok = False
    if isinstance(seed, bool) or not isinstance(seed, int):
        ctx.add("SUI012", f"sample seed must be an integer (got {seed!r})", path + ("seed",),
                rule=rid, fld="sample", at_value=True)
        ok = False
    return Sample(float(rate), int(seed)) if ok else None


def _build_filter(rid: str, value: Any, ctx: _Ctx) -> list[FilterCond]:
    base: KeyPath = ("rules", rid, "filter")
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        ctx.add("SUI011", "'filter' must be a list of { field = ..., op = ..., value = ... }",
                base, rule=rid, fld="filter", at_value=True)
        return []
    out: list[FilterCond] = []
    for i, item in enumerate(value):
        path = base + (i,)
        if not isinstance(item, dict):
            ctx.add("SUI011", f"filter #{i + 1} must be a table like "
                    '{ field = "metadata.kind", op = "eq", value = "chat" }', path, rule=rid,
                    fld="filter", at_value=True)
            continue
        for key in item:
            if key not in FILTER_KEYS:
                ctx.add("SUI002", f"unknown key '{key}' in filter #{i + 1}"
                        f"{suggest(key, FILTER_KEYS)}", path + (key,), rule=rid, fld="filter")
        problem = filter_problem(item)
        if problem is not None:
            key, message = problem
            ctx.add("SUI011", f"filter #{i + 1}: {message}", path + (key,), rule=rid,
                    fld="filter", at_value=True)
            continue
        out.append(FilterCond(item["field"], item.get("op", "eq"), item.get("value")))
    return out


def filter_problem(item: dict[str, Any]) -> tuple[str, str] | None:
    """(key, message) for a condition that cannot be evaluated, or None when it is fine."""
    fld = item.get("field")
    if not isinstance(fld, str) or not fld.strip():
        return "field", "needs a 'field' (a dotted path into the case, e.g. \"metadata.kind\")"
    op = item.get("op", "eq")
    if not isinstance(op, str) or op not in FILTER_OPS:
        ops = sorted(set(FILTER_OPS.values()))
        return "op", f"unknown op {op!r}{suggest(str(op), list(FILTER_OPS))}; use one of: " + \
            ", ".join(ops)
    canon = FILTER_OPS[op]
    value = item.get("value")
    if canon != "exists" and "value" not in item:
        return "op", f"op '{op}' needs a 'value'"
    if canon in ("in", "not_in") and not isinstance(value, list):
        return "value", f"op '{op}' needs a list value (got {value!r})"
    if canon in ("lt", "le", "gt", "ge") and (
        isinstance(value, bool) or not isinstance(value, int | float)
    ):
        return "value", f"op '{op}' compares numbers; value must be a number (got {value!r})"
    if canon == "regex":
        if not isinstance(value, str):
            return "value", f"op 'regex' needs a pattern string (got {value!r})"
        try:
            re.compile(value)
        except re.error as exc:
            return "value", f"invalid regular expression {value!r}: {exc}"
    if canon == "exists" and value is not None and not isinstance(value, bool):
        return "value", "op 'exists' takes value = true or false (or no value)"
    return None


# -- references and structure -------------------------------------------------------------
def _check_references(suite: Suite, ctx: _Ctx) -> None:
    for rid, rule in suite.rules.items():
        for i, dep in enumerate(list(rule.depends_on)):
            path = ("rules", rid, "depends_on", i)
            if dep == rid:
                ctx.add("SUI006", f"rule '{rid}' depends on itself", path, rule=rid,
                        fld="depends_on", at_value=True)
            elif dep not in suite.rules:
                ctx.add("SUI005", f"rule '{rid}' depends on unknown rule '{dep}'"
                        f"{suggest(dep, list(suite.rules))}", path, rule=rid, fld="depends_on",
                        at_value=True)
    cycle = suite.find_cycle(skip_self=True)  # a self-loop is SUI006 already
    if cycle:
        first = cycle[0]
        idx = suite.rules[first].depends_on.index(cycle[1])
        ctx.add("SUI007", "dependency cycle: " + " -> ".join(cycle) + " (each rule depends on "
                "the next; no rule in a cycle can ever run)",
                ("rules", first, "depends_on", idx), rule=first, fld="depends_on",
                at_value=True)
    elif suite.find_cycle() is None:
        levels = suite.levels()
        if len(levels) > MAX_LEVELS:
            deep = levels[-1][0]
            ctx.add("SUI103", f"rule '{deep}' sits at level {len(levels) - 1}: {len(levels)} "
                    f"levels of dependencies; each level waits for the one before, two or "
                    "three are usually enough", ("rules", deep), rule=deep)


# -- rule graphs ------------------------------------------------------------------------------
def check_graph(rule: Rule) -> tuple[Graph | None, list[tuple[str, str]]]:
    """An inline check as a one-node graph scoring 1 when the check holds, 0 when not.

    Returns (graph, problems) with problems as (key, message); the graph is None when the
    check cannot be built. One-node graphs let the engine run checks exactly as it runs any
    graph, and the editor show them like any rule.
    """
    data = dict(rule.check or {})
    problems: list[tuple[str, str]] = []
    for key in list(data):
        if key not in CHECK_KEYS:
            problems.append((key, f"unknown check setting '{key}'{suggest(key, CHECK_KEYS)}"))
            del data[key]
    kind = data.get("check")
    if not isinstance(kind, str) or kind not in CHECK_KINDS:
        return None, problems + [(
            "check", f"unknown check kind {kind!r}{suggest(str(kind), CHECK_KINDS)}; use one "
            f"of: {', '.join(CHECK_KINDS)}")]
    found = find_check(kind)
    for key in found.settings.required if found else ():
        if key not in data:
            problems.append(("check", f"a '{kind}' check needs '{key}'"))
    if not (found and found.reads) and "param" not in data:
        problems.append(("check", f"a '{kind}' check needs 'param' (the case field it reads, "
                         "e.g. \"actual_output\")"))
    param = data.get("param")
    if param is not None and param not in SINGLE_TURN_PARAMS:
        problems.append(("param", f"unknown param {param!r}{suggest(str(param), SINGLE_TURN_PARAMS)}"))
    if kind == "regex" and isinstance(data.get("pattern"), str):
        try:
            re.compile(data["pattern"])
        except re.error as exc:
            problems.append(("pattern", f"invalid regular expression: {exc}"))
    node, wrong = CheckNode.from_toml({"type": "check", **data})
    if node is None or wrong:
        return None, problems + [(p.key, p.message) for p in wrong]
    node.id = rule.id
    node.verdicts = [Verdict(verdict=True, score=10), Verdict(verdict=False, score=0)]
    graph = Graph(metric=Metric(name=rule.display_name, threshold=1.0), nodes={rule.id: node})
    return graph, problems


def resolve_graph_path(suite: Suite, rule: Rule) -> Path:
    base = Path(suite.path).parent if suite.path else Path(".")
    return base / (rule.graph or "")


def _load_rule_graphs(load: SuiteLoad, ctx: _Ctx) -> None:
    suite = load.suite
    assert suite is not None
    for rid, rule in suite.rules.items():
        if rule.check is not None and rule.graph is None:
            graph, problems = check_graph(rule)
            for key, message in problems:
                ctx.add("SUI010", f"rule '{rid}': {message}", ("rules", rid, "check", key),
                        rule=rid, fld="check", at_value=True)
            if graph is not None and not problems:
                graph.path = suite.path  # python checks find their module beside the suite
                load.graphs[rid] = graph
                load.facts[rid] = RuleFacts("code", True, 0)
        elif rule.graph is not None:
            _load_graph_rule(load, ctx, rule)
    for key, use in (("cases", "run"), ("labels", "test")):
        name = getattr(suite.meta, key)
        cases = Path(suite.path).parent / name if name and suite.path else None
        if cases is not None and not cases.exists():
            ctx.add("SUI104", f"default {key} file '{name}' not found (next to the suite "
                    f"file); pass --cases FILE to {use}", ("suite", key), fld=key,
                    at_value=True)


def _load_graph_rule(load: SuiteLoad, ctx: _Ctx, rule: Rule) -> None:
    suite = load.suite
    assert suite is not None
    path = resolve_graph_path(suite, rule)
    where = ("rules", rule.id, "graph")
    if not path.exists():  # a FIFO or device is there: the loader says what it is (SUI009)
        ctx.add("SUI008", f"rule '{rule.id}': graph file '{rule.graph}' not found"
                f" (looked for {path})", where, rule=rule.id, fld="graph", at_value=True)
        return
    graph, diags, paths = _graph_with_diagnostics(path)
    errors = [d for d in diags if d.is_error]
    if errors or graph is None:
        first = errors[0].format() if errors else "it could not be loaded"
        ctx.add("SUI009", f"rule '{rule.id}': graph '{rule.graph}' has {len(errors)} error(s); "
                f"first: {first}", where, rule=rule.id, fld="graph", at_value=True)
        ctx.diags.extend(errors)
        return
    load.graphs[rule.id] = graph
    load.facts[rule.id] = graph_facts(graph, paths)


def _graph_with_diagnostics(path: Path) -> tuple[Graph | None, list[Diagnostic],
                                                 PathAnalysis | None]:
    """The graph, its full diagnostics and its path report: the graph validator's
    (references, cycles, paths), else, should the validator itself fail, the loader's shape
    checks and no path report."""
    from dagtui.graph.validate import check_file

    try:
        report = check_file(path)
        return report.graph, list(report.diagnostics), report.paths
    except Exception:  # a validator bug must not hide the suite's own diagnostics
        pass
    from dagtui.graph.loader import load_file

    result = load_file(path)
    return result.graph, list(result.diagnostics), None


def graph_facts(graph: Graph, paths: PathAnalysis | None = None) -> RuleFacts:
    """Kind, whether any reachable score exceeds 0, and the worst-case calls per case.

    Path analysis (`dagtui.graph.paths.analyze`) is exact when it completes; otherwise a
    structural bound: a score > 0 on any verdict or a G-Eval leaf may pass, and every LLM
    node running once is the most calls a case can take. `paths`: the report the graph's
    validation already made (a rule graph is analysed once per load), else analysed here.
    """
    llm_nodes = [n for n in graph.nodes.values() if n.uses_llm]
    kind = "LLM" if llm_nodes else "code"
    can_pass = any(n.is_scored_leaf for n in graph.nodes.values()) or any(
        isinstance(v.score, int | float) and v.score > 0
        for n in graph.nodes.values() for v in getattr(n, "verdicts", [])
    )
    worst = len(llm_nodes)
    report: Any = paths
    if report is None:
        from dagtui.graph.paths import analyze

        try:
            report = analyze(graph)
        except Exception:
            return RuleFacts(kind, can_pass, worst)
    if not getattr(report, "complete", False):
        return RuleFacts(kind, can_pass, worst)
    scores = list(getattr(report, "reachable_scores", []) or [])
    exact_pass = bool(getattr(report, "geval_leaves", None)) or any(s > 0 for s in scores)
    max_calls = getattr(report, "max_calls", None)
    if isinstance(max_calls, int):
        worst = max_calls
    return RuleFacts(kind, exact_pass, worst)


def _check_gates(load: SuiteLoad, ctx: _Ctx) -> None:
    """Dependencies that can never let a case through, and budgets too small for one case."""
    suite = load.suite
    assert suite is not None
    for rid, rule in suite.rules.items():
        for i, dep in enumerate(rule.depends_on):
            target = suite.rules.get(dep)
            if target is None or dep == rid:
                continue
            path = ("rules", rid, "depends_on", i)
            facts = load.facts.get(dep)
            if facts is not None and not facts.can_pass:
                ctx.add("SUI016", f"rule '{rid}' depends on '{dep}', whose score can never "
                        f"exceed 0 (no reachable leaf scores above 0), so '{rid}' never runs",
                        path, rule=rid, fld="depends_on", at_value=True)
            if not target.active:
                ctx.add("SUI101", f"rule '{rid}' depends on paused rule '{dep}': it is skipped "
                        "on every case until that rule is active", path, rule=rid,
                        fld="depends_on", at_value=True)
        facts = load.facts.get(rid)
        if rule.max_calls is not None and facts is not None and facts.worst_calls > rule.max_calls:
            ctx.add("SUI102", f"rule '{rid}': max_calls = {rule.max_calls} is less than the "
                    f"{facts.worst_calls} judge calls one case can take, so no case is ever "
                    "evaluated", ("rules", rid, "max_calls"), rule=rid, fld="max_calls",
                    at_value=True)


def validate_suite_file(path: str | Path, *, read: LoadResult | None = None
                        ) -> list[Diagnostic]:
    """Every diagnostic for a suite file (suite codes plus its graphs' errors), sorted.
    `read`: the file already read, as for `load_suite_file`."""
    from dagtui.diagnostics import sort_key

    return sorted(load_suite_file(path, read=read).diagnostics, key=sort_key)


def check_suite_file(path: str | Path, *, read: LoadResult | None = None) -> Any:
    """A suite's diagnostics as a `dagtui.graph.validate.ValidationResult`, so `dagtui validate` prints,
    counts and JSON-encodes a suite exactly like a graph (no path table: suites have none).
    `unreadable` is true for SUI017 and SUI001, as DAG022 and DAG001 are for graphs.
    `read`: the file as `dagtui validate` read it to learn it is a suite (not read again)."""
    from dagtui.graph.validate import ValidationResult

    class SuiteReport(ValidationResult):
        @property
        def unreadable(self) -> bool:
            return unreadable(self.diagnostics)

    return SuiteReport(LoadResult(None, file=str(path)), validate_suite_file(path, read=read))
