"""`dagtui merge`: the JSON reports of a sharded run (`--shard I/N`) put back together.

A CI matrix runs shard 1/N ... N/N of one dataset on N machines; each writes its own JSON
report. Merging rebuilds the report the whole run would have written — every case's result
(with its steps, so per-node counts, tokens, costs and latencies are recomputed, not added up
from rounded summaries), in the dataset's order (each shard records the positions of its
cases), with the same summary, JUnit and exit code. Graph reports (`dagtui run GRAPH`) and
suite reports (`dagtui run SUITE`) are both understood; mixing them, or reports of different
graphs, suites or shard counts, is refused, and so is a shard given twice or missing (a lost
CI artifact must not turn into a green merge).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagtui.inputs import TRACE_LIMIT, InputError, read_text

if TYPE_CHECKING:
    from dagtui.report.outcome import RunOutcome
    from dagtui.run.batch import BatchResult


class MergeError(ValueError):
    """The reports cannot be merged; the message names the file and why."""


@dataclass
class Loaded:
    """One report file: its path, its JSON and what kind of report it is."""

    path: str
    data: dict[str, Any]
    kind: str  # "graph" | "suite"
    shard: dict[str, Any] = field(default_factory=dict)


def load_report(path: str) -> Loaded:
    """Read one JSON report written by `dagtui run --json` (graph or suite)."""
    try:
        text = read_text(path, limit=TRACE_LIMIT, what="report")
    except InputError as exc:
        raise MergeError(str(exc)) from None
    except OSError as exc:
        raise MergeError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise MergeError(f"{path}: not JSON: {exc}") from None
    if isinstance(data, dict) and "metric" in data and isinstance(data.get("results"), list):
        kind = "graph"
    elif isinstance(data, dict) and "suite" in data and isinstance(data.get("rules"), list):
        kind = "suite"
    else:
        raise MergeError(f"{path}: not a dagtui run report (written by `dagtui run --json`)")
    problem = report_problem(data, kind)
    if problem:
        raise MergeError(f"{path}: not a report `dagtui run --json` writes: {problem}")
    shard = data["shard"] if isinstance(data.get("shard"), dict) else {}
    return Loaded(path, data, kind, shard)


# ------------------------------------------------------------------ the shape of a report


def report_problem(data: dict[str, Any], kind: str) -> str | None:
    """What in a report is not what `dagtui run --json` writes (`results[3].score: should
    be a number, got 'x'`), None when it is. Checked before merging, so a damaged shard is
    one message naming the file and the place, not a traceback. A graph report is checked
    whole against its JSON Schema's model (`dagtui.report.documents`, strictly: a number written
    as text is wrong); a suite report field by field, each case's result by the model."""
    if kind == "graph":
        return _model_problem(_models().report, data)
    return _suite_problem(data)


def _models() -> Any:
    from dagtui.report.documents import models

    return models()


def _model_problem(model: Any, data: Any, where: str = "") -> str | None:
    from pydantic import ValidationError

    try:
        model.model_validate(data, strict=True)
    except ValidationError as exc:
        errors = [e for e in exc.errors() if e["type"] != "none_required"]  # X | None
        first = (errors or exc.errors())[0]
        places = {_place(e["loc"]) for e in errors}
        loc = where + _place(first["loc"]) if where else _place(first["loc"]).lstrip(".")
        more = f" (and {len(places) - 1} more)" if len(places) > 1 else ""
        got = _brief(first.get("input"))
        msg = str(first["msg"])
        return f"{loc or 'the report'}: {msg[:1].lower() + msg[1:]}, got {got}{more}"
    return None


def _place(loc: tuple[Any, ...]) -> str:
    """pydantic's error location as `.results[0].score`, without the union members it
    names on the way (`list[Step]`, `Shard`): field names are lower-case."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc
                   if isinstance(p, int) or (p.isidentifier() and not p[0].isupper()))


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_NUMBER = (int, float)
_KINDS: dict[Any, str] = {int: "a whole number", _NUMBER: "a number", str: "text",
                          bool: "true or false", dict: "an object", list: "a list"}


def _wrong(value: Any, types: Any, where: str, *, none: bool = True) -> str | None:
    """`where: should be ..., got ...` when `value` is not of `types` (a bool is not a
    number here, as in JSON), None when it is (or is null and `none` allows it)."""
    if value is None and none:
        return None
    is_bool = isinstance(value, bool)
    if isinstance(value, types) and (not is_bool or types is bool):
        return None
    return f"{where}: should be {_KINDS[types]}, got {_brief(value)}"


def _suite_problem(data: dict[str, Any]) -> str | None:
    found = [_wrong(data.get("levels"), list, "levels"),
             _wrong(data.get("totals"), dict, "totals"), _shard_problem(data.get("shard"))]
    totals: dict[str, Any] = data["totals"] if isinstance(data.get("totals"), dict) else {}
    found += [_wrong(totals.get("wall_time"), _NUMBER, "totals.wall_time"),
              _wrong(totals.get("ungated_calls"), int, "totals.ungated_calls")]
    for i, level in enumerate(data.get("levels") or [] if isinstance(data.get("levels"), list)
                              else []):
        found.append(_wrong(level, list, f"levels[{i}]", none=False))
    for i, rule in enumerate(data["rules"]):
        found.append(_rule_problem(rule, f"rules[{i}]"))
    return next((f for f in found if f), None)


def _rule_problem(rule: Any, at: str) -> str | None:
    if not isinstance(rule, dict):
        return f"{at}: should be an object, got {_brief(rule)}"
    found = [_wrong(rule.get("rule"), str, f"{at}.rule", none=False),
             _wrong(rule.get("level"), int, f"{at}.level"),
             _wrong(rule.get("cost"), _NUMBER, f"{at}.cost"),
             _wrong(rule.get("ungated_calls"), int, f"{at}.ungated_calls"),
             _wrong(rule.get("saved_by"), dict, f"{at}.saved_by"),
             _wrong(rule.get("cases"), list, f"{at}.cases")]
    from dagtui.suite.gating import RuleStats

    found += [_wrong(rule.get(k), int, f"{at}.{k}") for k in RuleStats.COUNTED]
    saved = rule.get("saved_by")
    found += [_wrong(n, int, f"{at}.saved_by.{k}", none=False)
              for k, n in (saved.items() if isinstance(saved, dict) else ())]
    cases = rule.get("cases")
    found += [_record_problem(rec, f"{at}.cases[{j}]")
              for j, rec in enumerate(cases if isinstance(cases, list) else [])]
    return next((f for f in found if f), None)


def _record_problem(rec: Any, at: str) -> str | None:
    if not isinstance(rec, dict):
        return f"{at}: should be an object, got {_brief(rec)}"
    found = [_wrong(rec.get(k), kind, f"{at}.{k}") for k, kind in (
        ("case", str), ("state", str), ("reason", str), ("score", _NUMBER), ("calls", int),
        ("cost", _NUMBER), ("error", str), ("success", bool))]
    if "result" in rec:
        found.append(_model_problem(_field_model(_models().report, "results"), rec["result"],
                                    f"{at}.result"))
    return next((f for f in found if f), None)


def _shard_problem(shard: Any) -> str | None:
    if shard is None:
        return None
    return _model_problem(_field_model(_models().report, "shard"), shard, "shard")


def _field_model(model: Any, name: str) -> Any:
    """The model class a field of `model` holds (`results` -> one result, `shard` -> the
    shard), found inside its annotation (`list[X]`, `X | None`)."""
    import typing

    todo = [model.model_fields[name].annotation]
    while todo:
        hint = todo.pop(0)
        if isinstance(hint, type) and hasattr(hint, "model_validate"):
            return hint
        todo += list(typing.get_args(hint))
    raise LookupError(name)


def _check_set(reports: list[Loaded]) -> None:
    """Same kind, same graph or suite, and shards that are exactly 1..N once each."""
    first = reports[0]
    for r in reports[1:]:
        if r.kind != first.kind:
            raise MergeError(f"{r.path} is a {r.kind} report, {first.path} a {first.kind} "
                             "report: merge the shards of one run")
        key = "metric" if r.kind == "graph" else "suite"
        if r.data.get(key) != first.data.get(key):
            raise MergeError(f"{r.path} is of {key} {r.data.get(key)!r}, {first.path} of "
                             f"{first.data.get(key)!r}: merge the shards of one run")
    sharded = [r for r in reports if r.shard]
    if not sharded:
        return
    counts: set[Any] = {r.shard.get("count") for r in sharded}  # as the JSON has them
    if len(counts) > 1 or len(sharded) != len(reports):
        shown = ", ".join(f"{r.path} ({_shown(r)})" for r in reports)
        raise MergeError(f"the reports are not shards of one split: {shown}")
    count = int(next(iter(counts)))
    seen: dict[int, str] = {}
    for r in reports:
        i = int(r.shard.get("index", 0))
        if i in seen:
            raise MergeError(f"shard {i}/{count} given twice: {seen[i]} and {r.path}")
        seen[i] = r.path
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if missing:
        raise MergeError(f"shard(s) {', '.join(missing)} missing: give every shard's report")


def _shown(r: Loaded) -> str:
    return f"shard {r.shard['index']}/{r.shard['count']}" if r.shard else "not sharded"


def _in_order(reports: list[Loaded], items_of: Any) -> list[Any]:
    """Every report's items, in the dataset's order when each shard recorded its cases'
    positions, else report after report."""
    lists = [items_of(r) for r in reports]
    positions: list[Any] = [r.shard.get("positions") for r in reports]
    if not all(isinstance(p, list) and len(p) == len(items)
               for p, items in zip(positions, lists, strict=True)):
        return [item for items in lists for item in items]
    pairs = [(int(pos), item) for p, items in zip(positions, lists, strict=True)
             for pos, item in zip(p, items, strict=True)]
    pairs.sort(key=lambda pair: pair[0])
    return [item for _, item in pairs]


def merge_graph_reports(reports: list[Loaded]) -> BatchResult:
    """One `dagtui.run.batch.BatchResult` from graph reports, as the whole run would have made it."""
    from dagtui.report.trace import RunResult
    from dagtui.run.batch import BatchResult

    first = reports[0].data
    results = [RunResult.from_dict(r) for r in _in_order(reports, lambda r: r.data["results"])]
    names: dict[str, str] = {}
    for rep in reports:
        for r in rep.data["results"]:
            case = str(r.get("case", ""))
            if case in names and names[case] != rep.path:
                raise MergeError(f"case {case!r} is in {names[case]} and in {rep.path}: "
                                 "these are not disjoint shards")
            names.setdefault(case, rep.path)
    order = list(first.get("nodes") or {})
    for rep in reports[1:]:
        order += [n for n in rep.data.get("nodes") or {} if n not in order]
    return BatchResult(str(first.get("metric", "")), float(first.get("threshold", 0.5)),
                  results=results,
                  wall_time=max(float(r.data.get("wall_time") or 0.0) for r in reports),
                  judge=dict(first.get("judge") or {}), node_order=order)


def merge_suite_reports(reports: list[Loaded]) -> RunOutcome:
    """One suite run (`dagtui.suite.report.SuiteOutcome`) from suite reports."""
    from dagtui.report.trace import RunResult
    from dagtui.suite.gating import CaseRecord, RuleOutcome, RuleStats, SuiteResult

    first = reports[0].data
    rule_ids = [str(r.get("rule")) for r in first["rules"]]
    for rep in reports[1:]:
        ids = [str(r.get("rule")) for r in rep.data["rules"]]
        if ids != rule_ids:
            raise MergeError(f"{rep.path} has rules {ids}, {reports[0].path} {rule_ids}: "
                             "merge the shards of one run of one suite")
    rules: dict[str, RuleStats] = {}
    for k, rid in enumerate(rule_ids):
        parts = [rep.data["rules"][k] for rep in reports]
        head = parts[0]
        st = RuleStats(rid, int(head.get("level", 0)), str(head.get("status", "active")),
                       str(head.get("kind", "?")))
        for name in RuleStats.COUNTED:
            setattr(st, name, sum(int(p.get(name) or 0) for p in parts))
        costs = [p.get("cost") for p in parts]
        st.cost_known = all(c is not None for c in costs)
        st.cost = sum(float(c) for c in costs if c is not None)
        ungated = [p.get("ungated_calls") for p in parts]
        st.ungated_calls = sum(ungated) if all(u is not None for u in ungated) else None
        for p in parts:
            for state, n in (p.get("saved_by") or {}).items():
                st.saved_by[state] = st.saved_by.get(state, 0) + int(n)
        for rec in _in_order(reports, lambda r, k=k: r.data["rules"][k].get("cases") or []):
            st.records.append(_record(rec, CaseRecord, RuleOutcome, RunResult))
        rules[rid] = st
    names = [rec.case for rec in next(iter(rules.values())).records] if rules else []
    if len(set(names)) != len(names):
        raise MergeError("a case is in more than one report: these are not disjoint shards")
    totals = [rep.data.get("totals") or {} for rep in reports]
    result = SuiteResult(str(first.get("suite", "")), [list(lv) for lv in first.get("levels")
                                                       or []], rules, names,
                         wall_time=max(float(t.get("wall_time") or 0.0) for t in totals))
    ungated_total: list[Any] = [t.get("ungated_calls") for t in totals]
    if all(u is not None for u in ungated_total):
        result.ungated_calls = sum(int(u) for u in ungated_total)
        methods = {t.get("ungated_method") for t in totals}
        result.ungated_method = "measured" if methods == {"measured"} else "estimated"
    from dagtui.suite.report import SuiteOutcome

    return SuiteOutcome(result)


def _record(rec: dict[str, Any], record_cls: Any, outcome_cls: Any, result_cls: Any) -> Any:
    """A suite report's per-case entry back as a `CaseRecord`."""
    outcome = None
    if "score" in rec or "error" in rec or "calls" in rec:
        detail = rec.get("result")
        outcome = outcome_cls(
            score=rec.get("score"), categorical=rec.get("categorical"),
            calls=int(rec.get("calls") or 0), cost=rec.get("cost"), error=rec.get("error"),
            success=rec.get("success"), error_kind=rec.get("error_kind"),
            detail=result_cls.from_dict(detail) if isinstance(detail, dict) else None,
            not_run=rec.get("state") == "not_run")
    return record_cls(str(rec.get("case", "")), str(rec.get("state", "")),
                      str(rec.get("reason") or ""), outcome)


def merge_files(paths: list[str]) -> tuple[RunOutcome, list[Loaded]]:
    """(the merged run, graph or suite, the reports read)."""
    if not paths:
        raise MergeError("no reports given")
    reports = [load_report(p) for p in paths]
    _check_set(reports)
    kind = reports[0].kind
    merged = merge_graph_reports(reports) if kind == "graph" else merge_suite_reports(reports)
    return merged, reports


def shard_info(shard: Any, positions: list[int]) -> dict[str, Any]:
    """What a shard's JSON report records about its part of the split."""
    return {**shard.to_dict(), "positions": positions}


def describe(reports: list[Loaded]) -> str:
    """"merged 2 reports (shards 1/2, 2/2)" for the summary."""
    shards = [_shown(r) for r in sorted(reports, key=lambda r: r.shard.get("index", 0))
              if r.shard]
    names = ", ".join(Path(r.path).name for r in reports) if not shards else ", ".join(
        s.removeprefix("shard ") for s in shards)
    return f"merged {len(reports)} report(s) ({'shards ' if shards else ''}{names})"
