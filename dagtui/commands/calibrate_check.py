"""`dagtui calibrate GRAPH --check [--min-kappa K]`: does the saved calibration still describe
this graph, this judge and these labels? No call is made and no judge client is imported.

Per judge-asked node: fresh, stale with the reasons ("criteria changed", "model changed",
"3 labels changed", ...) or missing (never calibrated); then the end-to-end figures (a
change of scores, routes, checks or threshold, or of `expected_score`s); then one summary
line, the one `dagtui run` prints. Exit 0 when everything is fresh (and at or above K),
1 when anything is stale, missing or below K, or no calibration was saved; 2 bad input.
The comparison is `dagtui.calibration.fingerprint.compare`.
"""

from __future__ import annotations

import argparse
from typing import Any

from dagtui.commands.run import err, refusal
from dagtui.exitcodes import ExitCode
from dagtui.text import say


def check(args: argparse.Namespace, checked: Any) -> int:
    from dagtui.calibration.fingerprint import JudgeSetting
    from dagtui.calibration.saved import read_saved, staleness
    from dagtui.judges.factory import model_for
    from dagtui.workdir import calibration_file

    code = refusal(checked)
    if code:
        return code
    graph = checked.require()
    where = args.calibration or str(calibration_file(graph.path or args.graph))
    saved = read_saved(where)
    if saved is None:
        if args.calibration:
            err(f"{where}: not a calibration result (dagtui calibrate --json FILE writes one)")
            return ExitCode.USAGE
        say(f"calibration: none (no {where}: run dagtui calibrate {args.graph})")
        return ExitCode.FAILURES
    judge = JudgeSetting(model_for(graph, args.model), args.api_base, args.temperature)
    state = staleness(saved, graph, judge, file=where, cases=args.cases)
    measured = saved.get("nodes") or {}
    width = max([len(n.node) for n in state.nodes] + [4])
    below: list[str] = []
    lines = [f"{graph.metric.name}: calibration {where}"]
    for n in state.nodes:
        kappa = (measured.get(n.node) or {}).get("kappa")
        figure = f"κ {kappa:.2f}" if isinstance(kappa, int | float) else ""
        if args.min_kappa is not None and isinstance(kappa, int | float) \
                and kappa < args.min_kappa:
            below.append(f"{n.node} ({kappa:.2f})")
            figure += f" below {args.min_kappa:g}"
        lines.append(f"  {n.node:{width}}  {n.status:7}  {figure:18}  "
                     f"{', '.join(n.reasons)}".rstrip())
    if state.removed:
        lines.append("  calibrated but no longer in the graph: " + ", ".join(state.removed))
    if state.end_to_end:
        lines.append("  end to end: stale (" + ", ".join(state.end_to_end) + ")")
    lines.append(f"calibration: {state.line()}")
    if below:
        lines.append(f"below --min-kappa {args.min_kappa:g}: " + ", ".join(below))
    say("\n".join(lines))
    return ExitCode.OK if state.fresh and not below else ExitCode.FAILURES
