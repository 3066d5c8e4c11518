"""The calibration `dagtui calibrate` keeps for a graph, read back: where it lives, whether
it still holds (`fingerprint.compare`), and what a run reports from it.

`dagtui calibrate` saves its latest result in the graph's `.dagtui/`
(`dagtui.workdir.calibration_file`, where the cache lives too); `dagtui calibrate --check`, `dagtui run`,
`dagtui.evaluate` and the editor read it from there (or from a file they are given). A file
that is missing or not a calibration result is no calibration ("none"), never an error; one
from before fingerprints existed is stale ("no fingerprint (recalibrate)").
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dagtui.calibration.correction import correct
from dagtui.calibration.fingerprint import JudgeSetting, Staleness, compare
from dagtui.graph.model import Graph
from dagtui.workdir import calibration_file


def read_saved(path: str | os.PathLike[str] | None) -> dict[str, Any] | None:
    """The calibration result in `path`, or None (missing, unreadable, not one)."""
    if path is None:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), dict):
        return None
    return data


def labelled_cases(saved: dict[str, Any],
                   cases: str | os.PathLike[str] | None = None) -> tuple[list[Any] | None, str]:
    """(the labelled cases to compare, why they could not be read or ""): `cases` when given,
    else the file the calibration was run on (its `cases_file`)."""
    from dagtui.run.cases import CaseError, load_cases

    source = cases if cases is not None else saved.get("cases_file")
    if not source:
        return None, "the calibration names no cases file: labels not compared"
    try:
        return load_cases(source), ""
    except CaseError as exc:
        return None, f"the labelled cases cannot be read ({exc}): labels not compared"


def staleness(saved: dict[str, Any], graph: Graph, judge: JudgeSetting | None, *,
              file: str | None = None, cases: str | os.PathLike[str] | None = None,
              loaded: list[Any] | None = None) -> Staleness:
    """`saved` against the graph, judge and labels of now; the labels are `loaded`, else
    read from `cases`, else from the calibration's own cases file. Labels that cannot be
    read make the calibration stale, with the reason."""
    problem = ""
    if loaded is None:
        loaded, problem = labelled_cases(saved, cases)
    out = compare(saved, graph, loaded, judge, file=file)
    if problem and not out.no_fingerprint:
        out.end_to_end.append(problem)
    return out


def run_calibration(graph: Graph, described: dict[str, Any], passed: int, failed: int, *,
                    path: str | os.PathLike[str] | None = None,
                    results: Iterable[Any] | None = None) -> dict[str, Any] | None:
    """What a run reports about its graph's saved calibration (`path`, else the one kept
    for the graph): its state and, when fresh, the pass rate corrected for the judge's
    measured errors (`correction`) and, given the run's `results`, its fragile outcomes
    (`fragile`). `described` is the run's judge (`Judge.describe()`); `passed` and
    `failed` its cases with a verdict. None when no calibration is saved (the report then
    says nothing of one, and a sharded run merges to the whole run's report)."""
    where = Path(path) if path is not None else calibration_file(graph.path or graph.metric.name)
    saved = read_saved(where)
    if saved is None:
        return None
    state = staleness(saved, graph, JudgeSetting.of(described), file=str(where))
    out = state.to_dict()
    out["corrected_pass_rate"] = None
    if state.fresh:
        counts = (saved.get("end_to_end") or {}).get("outcomes") or {}
        out["corrected_pass_rate"] = correct(
            passed, passed + failed, int(counts.get("judge_pass", 0)),
            int(counts.get("human_pass", 0)), int(counts.get("judge_fail", 0)),
            int(counts.get("human_fail", 0))).to_dict()
        if results is not None:
            from dagtui.calibration.fragile import fragile_outcomes

            out["fragile"] = fragile_outcomes(graph, saved, results).to_dict()
    return out


def summary_lines(calibration: dict[str, Any] | None) -> list[str]:
    """`calibration: ...` and, when fresh, the corrected pass rate and the fragile
    outcomes: a run's summary lines (`calibration: none` without one)."""
    if not calibration:
        return ["calibration: none"]
    lines = [f"calibration: {calibration.get('line', calibration.get('state'))}"]
    corrected = calibration.get("corrected_pass_rate")
    if corrected:
        lines.append(corrected_line(corrected))
    if calibration.get("fragile"):
        from dagtui.calibration.fragile import fragile_lines

        lines += fragile_lines(calibration["fragile"])
    return lines


def corrected_line(c: dict[str, Any]) -> str:
    """The corrected pass rate in one line (from `Corrected.to_dict()`)."""
    if c.get("unusable"):
        return f"corrected pass rate: unusable — {c['unusable']}"
    lo, hi = c["ci"]
    return (f"corrected pass rate: {c['estimate']:.0%} (95% CI {lo:.0%}–{hi:.0%}; judge's "
            f"raw {c['raw']:.0%}), from its sensitivity {c['sensitivity']:.2f} and "
            f"specificity {c['specificity']:.2f} on {c['calibration_pass']} + "
            f"{c['calibration_fail']} labelled cases")
