"""`dagtui calibrate GRAPH --plan [--target-width W]`: what to label next, with no call.

Reads the saved calibration (or `--calibration FILE`) and the judge cache the last run left
(`--cache-dir`, else the graph's `.dagtui/`), and prints per judgement node the labelled
cases, the kappa interval's width and the labels still needed to narrow it to W, then the
unlabelled cases to label first (`dagtui.calibration.plan`). The judge is the one a run
would use (`--model`, `--api-base`), at the calibration's temperature, so its cache keys are
the last run's; it is only ever read from the cache. `--json FILE` writes the whole plan.
Exit 0; 2 bad input (a graph that does not read, bad labels, a bad file).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from dagtui.commands.run import err
from dagtui.exitcodes import ExitCode
from dagtui.run.spec import RunSpec
from dagtui.text import say


def plan_judge(graph: Any, saved: dict[str, Any] | None, cache: Any, *, model: str | None,
               api_base: str | None, temperature: float | None) -> Any:
    """The judge a run would use, at the saved calibration's temperature (so its cache keys
    are the last run's), over `cache` only; None without a cache. `dagtui label --order
    uncertain` follows the plan through the same judge."""
    if cache is None:
        return None
    from dagtui.judges.factory import make_judge, model_for

    saved_t = (saved or {}).get("temperature")
    return make_judge(model_for(graph, model), graph, api_base=api_base, cache=cache,
                      temperature=saved_t if isinstance(saved_t, int | float) else temperature)


def plan_command(args: argparse.Namespace, spec: RunSpec, graph: Any, cases: list[Any]) -> int:
    """The plan of `graph` on its loaded, label-checked `cases`, printed (exit 0). `spec`
    is the command's run settings (`dagtui.commands.flags.run_spec`): the judge's model,
    endpoint and temperature, and the cache."""
    from dagtui.calibration.plan import DEFAULT_TARGET_WIDTH, plan, render
    from dagtui.calibration.saved import read_saved
    from dagtui.report.outputs import safe_json
    from dagtui.run.execute import open_run_cache
    from dagtui.workdir import calibration_file

    where = args.calibration or str(calibration_file(graph.path or args.graph))
    saved = read_saved(where)
    if saved is None and args.calibration:
        err(f"{where}: not a calibration result (dagtui calibrate --json FILE writes one)")
        return ExitCode.USAGE
    # read what the last run left: a plan asks nothing, so `--refresh` has nothing to redo
    cache = open_run_cache(spec.replace(refresh=False), args.graph)
    judge = plan_judge(graph, saved, cache, model=spec.model, api_base=spec.api_base,
                       temperature=spec.temperature)
    result = plan(graph, saved or {}, cases, judge,
                  target_width=args.target_width or DEFAULT_TARGET_WIDTH)
    if saved is None:
        result.notes.insert(0, f"no calibration saved ({where}): every node counts as never "
                               f"measured; run dagtui calibrate {args.graph} first")
    if cache is None:
        result.notes.append("--no-cache: no case placed by the judge's path")
    say(render(result), end="")  # case names and node ids: shown, never obeyed
    if args.json_out:
        from dagtui.report.outputs import write_document

        write_document(Path(args.json_out), safe_json(result.to_dict()) + "\n")
    return ExitCode.OK
