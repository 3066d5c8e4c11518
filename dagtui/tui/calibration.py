"""Calibration in the TUI: the kappa badge in the editor's tree, the text of the calibration
view (`screens/calibration.py`), and the human-label note in the debugger. No widgets here:
the tree imports this at startup.

The data is the JSON `dagtui calibrate` saves in the graph's `.dagtui/`
(`dagtui.workdir.calibration_file`, where the cache lives too) or a file named with
`--calibration`. It is read, never computed here: calibrating costs calls, and the editor
must open instantly. A file that is missing or not a calibration result simply shows nothing.
A node whose saved figures no longer describe it (its criteria, options, params or upstream
labels edited since, or its labels changed: `dagtui.calibration.fingerprint`) shows its badge
struck through and marked `stale`; the judge is not compared here (the editor does not know
which model a run will use: `dagtui calibrate --check` does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text

from dagtui.text import verdict_text

#: kappa at or above GOOD is green, at or above FAIR yellow, below red (Landis & Koch's
#: "substantial" and "moderate" bands, the usual reading of kappa)
GOOD, FAIR = 0.8, 0.6


def calibration_file(graph_path: str | Path) -> Path:
    """Where `dagtui calibrate` keeps the latest result for this graph."""
    from dagtui.workdir import calibration_file as saved_for

    return saved_for(graph_path)


def load_calibration(graph_path: str | Path | None,
                     explicit: str | Path | None = None) -> dict[str, Any] | None:
    """The saved calibration result for a graph, or None (missing, unreadable, not one).

    No saved result (the usual case) is known without importing `calibration.saved`, which
    brings the fingerprints and the prompt builder: ~20 ms of the editor's first frame."""
    path = Path(explicit) if explicit else (calibration_file(graph_path) if graph_path
                                            else None)
    if path is None or not path.is_file():
        return None
    from dagtui.calibration.saved import read_saved

    return read_saved(path)


def labelled(data: dict[str, Any] | None) -> list[Any] | None:
    """The labelled cases the calibration was run on, read once (None: none to compare,
    or a calibration without fingerprints, where labels do not matter)."""
    if not data or not isinstance(data.get("provenance"), dict):
        return None
    from dagtui.calibration.saved import labelled_cases

    return labelled_cases(data)[0]


def stale_nodes(data: dict[str, Any] | None, graph: Any,
                cases: list[Any] | None) -> dict[str, list[str]]:
    """node -> why its saved figures are stale, for the calibrated nodes that are (the
    graph and labels compared, not the judge)."""
    if not data:
        return {}
    from dagtui.calibration.fingerprint import compare

    state = compare(data, graph, cases, None)
    return {n.node: n.reasons for n in state.nodes
            if n.status != "fresh" and n.node in (data.get("nodes") or {})}


def kappa_style(kappa: float) -> str:
    return "bold green" if kappa >= GOOD else "bold yellow" if kappa >= FAIR else "bold red"


def badge(data: dict[str, Any] | None, node_id: str,
          stale: list[str] | None = None) -> Text | None:
    """The tree's badge for a node: `κ 0.85` (coloured), `recall 93%` for a task node with
    item labels, None when the result says nothing about it. `stale` (the reasons the
    figure no longer holds): the figure struck through and dimmed, then `stale`."""
    node = (data or {}).get("nodes", {}).get(node_id)
    if not isinstance(node, dict):
        return None
    kappa = node.get("kappa")
    recall = node.get("recall")
    if isinstance(kappa, int | float):
        text = Text(f"κ {kappa:.2f}", style=kappa_style(float(kappa)))
    elif isinstance(recall, int | float):
        text = Text(f"recall {recall:.0%}", style=kappa_style(float(recall)))
    else:
        return None
    if stale:
        text.stylize("dim strike")
        text.append(" stale", style="bold yellow")
    return text


def close_call(data: dict[str, Any] | None, node_id: str, case: str) -> dict[str, Any] | None:
    """The close call recorded for this node and case (samples split), if any."""
    node = (data or {}).get("nodes", {}).get(node_id) or {}
    for call in node.get("close_calls") or []:
        if call.get("case") == case:
            return call
    return None


def label_note(expected: dict[str, Any] | None, node_id: str, answer: Any,
               calibration: dict[str, Any] | None = None, case: str | None = None) -> Text:
    """`label true ✔`, `label false ✖ mismatch`, plus `≈ close call` when the saved samples
    split on this case: what the debugger shows beside a verdict."""
    out = Text()
    if expected and node_id in expected:
        label = expected[node_id]
        shown = _show(label)
        if isinstance(label, str) and isinstance(answer, bool) \
                and label.lower() in ("true", "false"):
            label = label.lower() == "true"
        out.append(f"label {shown}")
        if answer is not None and not isinstance(label, dict | list):
            same = label == answer and type(label) is type(answer)
            out.append(" ✔" if same else " ✖ mismatch", style="green" if same else "bold red")
    if case is not None and close_call(calibration, node_id, case) is not None:
        out.append(("  " if out.plain else "") + "≈ close call", style="bold yellow")
    return out


def _show(value: Any) -> str:
    """A label as written in TOML (true/false), an item list as its items."""
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(map(str, value.get("contains") or [])) or str(value.get("text", ""))
    return verdict_text(value)


def pct(value: Any) -> str:
    return f"{value:.0%}" if isinstance(value, int | float) else "-"


def matrix_text(nid: str, node: dict[str, Any]) -> Text:
    text = Text.assemble((f"{nid}", "bold"), f" · {node.get('type')} · "
                         f"{node.get('cases', 0)} cases")
    kappa = node.get("kappa")
    if isinstance(kappa, int | float):
        ci = node.get("kappa_ci") or [None, None]
        text.append(f" · agreement {pct(node.get('agreement'))} · ")
        text.append(f"κ {kappa:.2f}", style=kappa_style(kappa))
        if ci[0] is not None:
            text.append(f" [{ci[0]:.2f}, {ci[1]:.2f}]")
    if isinstance(node.get("recall"), int | float):
        text.append(f" · recall {node['items_found']}/{node['items_labelled']}")
    if node.get("flip_rate") is not None:
        text.append(f" · flip rate {pct(node['flip_rate'])}")
    confusion = node.get("confusion") or {}
    if confusion:
        classes = list(node.get("classes") or confusion)
        width = max(len(c) for c in [*classes, "label ↓"]) + 2
        text.append("\n\n" + "label ↓".ljust(width) + "".join(c[:14].rjust(16) for c in classes))
        for lab in classes:
            if lab in confusion:
                row = confusion[lab]
                text.append("\n" + lab.ljust(width) + "".join(
                    str(row.get(c, 0)).rjust(16) for c in classes))
    return text


def probe_text(data: dict[str, Any] | None, node_id: str) -> Text | None:
    """The bias probes' results for a node (`dagtui calibrate --probes` saves them in the
    calibration's `probes`): per probe the share of verdicts that flipped and how agreement
    and kappa with the labels moved, normal → probed; None when no probe ran on it."""
    probes = (data or {}).get("probes")
    per = ((probes or {}).get("nodes") or {}).get(node_id) if isinstance(probes, dict) \
        else None
    if not isinstance(per, dict) or not per:
        return None
    from dagtui.calibration.report import moved_text, num_text  # the report's own wording

    text = Text("bias probes", style="bold")
    for name, r in per.items():
        if not isinstance(r, dict):
            continue
        if r.get("skipped"):
            text.append(f"\n  {name}: skipped ({r['skipped']})", style="dim")
            continue
        variants = ", ".join(r.get("variants") or [])
        text.append(f"\n  {name} ({variants}): ")
        flip = r.get("flip_rate")
        text.append(f"flipped {r.get('flipped', 0)}/{r.get('compared', 0)} ({pct(flip)})",
                    style="bold red" if isinstance(flip, int | float) and flip > 0
                    else "green")
        agreement = moved_text(r.get("agreement"), r.get("agreement_probed"), pct)
        text.append(f" · agreement {agreement}"
                    f" · κ {moved_text(r.get('kappa'), r.get('kappa_probed'), num_text)}")
        if r.get("errors"):
            text.append(f" · {len(r['errors'])} failed calls", style="yellow")
    return text


def _kappa(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "-"


def _interval(ci: Any) -> str:
    return f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else ""


def node_diff(before: dict[str, Any], after: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The node's fields that an alignment changes, as diff lines (`-`/`+`, the line):
    each changed field before and after, as TOML-like `key = value`."""
    import json

    out: list[tuple[str, str]] = []
    if after is None:
        return out
    for key in [*before, *[k for k in after if k not in before]]:
        if before.get(key) != after.get(key):
            for sign, table in (("-", before), ("+", after)):
                if key in table:
                    out.append((sign, f"{key} = {json.dumps(table[key], ensure_ascii=False)}"))
    return out


def align_text(result: Any, status: str = "") -> Text:
    """An alignment (`dagtui.calibration.align.Alignment`) for the calibration view: the
    split, each candidate's train kappa (the best marked), the winner's held-out kappa and
    agreement before → after with their intervals, the verdict, and the node's diff. With
    `status` only (a running alignment): that line."""
    text = Text("alignment", style="bold")
    if result is None:
        text.append(f" · {status}", style="yellow")
        return text
    from dagtui.calibration.align_report import verdict_line

    split = result.split
    text.append(f" · seed {split.seed}: {len(split.train)} train, {len(split.held_out)} "
                f"held-out · {result.calls} calls, {result.cache_hits} cached")
    text.append("\ncandidates on train (κ):")
    for c in result.candidates:
        f = c.train.figures if c.train is not None else None
        best = result.winner is c
        text.append(f"\n  {c.name[:20]:20} {_kappa(f.kappa if f else None):>6}",
                    style="bold green" if best else "")
        if best:
            text.append("  ← best", style="bold green")
    if result.before is not None and result.after is not None:
        b, a = result.before.figures, result.after.figures
        text.append("\nheld-out κ ")
        text.append(f"{_kappa(b.kappa)}{_interval(b.kappa_ci)} → {_kappa(a.kappa)}"
                    f"{_interval(a.kappa_ci)}", style="bold")
        text.append(f" · agreement {pct(b.agreement)} → {pct(a.agreement)}")
        if result.p_value is not None:
            text.append(f" · McNemar p {result.p_value:.2g}")
    text.append(f"\n{verdict_line(result)}",
                style="bold green" if result.improved else "bold yellow")
    diff = node_diff(result.node_before, result.node_after)
    if diff:
        text.append(f"\n{result.node} with {result.winner.name}:")
        for sign, line in diff:
            text.append(f"\n{sign} {line}", style="red" if sign == "-" else "green")
    for note in result.notes:
        text.append(f"\nnote: {note}", style="dim")
    return text


def remeasure_text(data: dict[str, Any] | None, node_id: str, measure: Any) -> Text:
    """The criteria loop's line beside the field: the saved calibration's kappa for the
    node → the kappa of its wording now, on its labelled cases (`align.a_remeasure`)."""
    saved = ((data or {}).get("nodes") or {}).get(node_id) or {}
    now = measure.figures.kappa
    text = Text(f"κ {_kappa(saved.get('kappa'))} calibrated → ")
    style = kappa_style(now) if isinstance(now, int | float) else "bold"
    text.append(f"{_kappa(now)} now", style=style)
    text.append(f" on {measure.figures.items} labelled · {measure.calls} calls, "
                f"{measure.cache_hits} cached", style="dim")
    return text


def forced_overrides(graph: Any, case: Any, node_id: str) -> dict[str, Any]:
    """Teacher forcing in the debugger: every labelled judgement and check node but
    `node_id` answers with its label, so the run follows the labels' path to `node_id` and
    the judge is asked there (task nodes still ask the judge: their evidence is real)."""
    from dagtui.calibration.core import normalize_label
    from dagtui.graph.model import BinaryNode, CheckNode, NonBinaryNode

    expected = getattr(case, "expected", None) or {}
    return {nid: normalize_label(node, expected[nid]) for nid, node in graph.nodes.items()
            if nid != node_id and nid in expected
            and isinstance(node, BinaryNode | NonBinaryNode | CheckNode)}
