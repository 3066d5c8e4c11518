"""`dagtui align`'s reports: the text printed, the Markdown for a pull-request comment, and
the node's entry in a saved calibration replaced by the aligned figures."""

from __future__ import annotations

from typing import Any

from dagtui.calibration.align_measure import Alignment, Figures, Row
from dagtui.calibration.report import num_text  # figures as `dagtui calibrate` prints them


def _ci(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def figure_line(name: str, before: Figures, after: Figures) -> str:
    """`kappa 0.00 [0.00, 0.00] -> 1.00 [1.00, 1.00]; agreement ...` for one node."""
    return (f"{name}: kappa {num_text(before.kappa)}{_ci(before.kappa_ci)} -> "
            f"{num_text(after.kappa)}{_ci(after.kappa_ci)}; agreement {num_text(before.agreement)}"
            f"{_ci(before.agreement_ci)} -> {num_text(after.agreement)}{_ci(after.agreement_ci)}"
            f" ({after.items} held-out decisions)")


def _split_line(a: Alignment) -> str:
    per = ", ".join(f"{k} {t}/{h}" for k, (t, h) in a.split.classes.items())
    return (f"split (seed {a.split.seed}, holdout {a.split.holdout:g}): {len(a.split.train)} "
            f"train, {len(a.split.held_out)} held-out; per label train/held-out: {per}")


def _change_lines(a: Alignment) -> list[str]:
    if a.winner is None:
        return []
    lines = []
    if a.winner.text is not None:
        lines.append(f"{a.wording} -> {a.winner.text!r}")
    if a.winner.examples is not None:
        lines.append(f"examples -> {len(a.winner.examples)} worked example(s) from the train "
                     "cases: " + ", ".join(repr(e.reason) for e in a.winner.examples))
    return lines


def verdict_line(a: Alignment) -> str:
    """The alignment's outcome in one line (the text, the Markdown, the calibration view)."""
    if a.budget_spent:
        return "not finished: the budget was spent before the search ended"
    if a.winner is None:
        return "not improved: no candidate beat the node as it is on the train cases"
    if a.improved:
        return "improved on the held-out cases"
    if a.worse_nodes:
        return "not improved: worse on held-out at " + ", ".join(a.worse_nodes)
    return "not improved: held-out kappa did not go up"


def render_text(a: Alignment) -> str:
    lines = [f"{a.graph}: align node {a.node} ({a.node_type})", "  " + _split_line(a),
             "  candidates on train (kappa, agreement):"]
    for c in a.candidates:
        f = c.train.figures if c.train else Figures()
        mark = " <- best" if a.winner is c else ""
        lines.append(f"    {c.name}: {num_text(f.kappa)}, {num_text(f.agreement)}{mark}")
    if a.winner is not None and a.before is not None and a.after is not None:
        lines += ["  change: " + line for line in _change_lines(a)]
        lines.append("  held-out " + figure_line("pooled" if len(a.after.nodes) > 1 else a.node,
                                                 a.before.figures, a.after.figures))
        if len(a.after.nodes) > 1:
            lines += ["    " + figure_line(n, a.before.nodes[n], f)
                      for n, f in a.after.nodes.items()]
        lines.append(f"  McNemar exact p = {a.p_value:.4g} ({a.better_items} now agree, "
                     f"{a.worse_items} now disagree)")
    lines.append(f"  {verdict_line(a)}")
    lines += [f"  note: {n}" for n in a.notes]
    lines.append(f"  {a.calls} call(s), {a.cache_hits} cache hit(s), {a.wall_time:.1f}s")
    return "\n".join(lines) + "\n"


def _row_cell(row: Row) -> str:
    return f"| {row.case} | {row.node} | {row.label!s} | "


def render_markdown(a: Alignment) -> str:
    """For a pull-request comment: what changed, the split, the figures with intervals, the
    cases that now agree and those that now disagree."""
    out = [f"## dagtui align: `{a.node}` in {a.graph}", "", f"**{verdict_line(a)}**", ""]
    if a.winner is not None:
        out += ["### What changed", ""]
        out += [f"- `{line}`" for line in _change_lines(a)]
        out.append("")
    out += ["### Split", "", _split_line(a), "", "### Candidates on train", "",
            "| candidate | method | kappa | agreement |", "|---|---|---|---|"]
    for c in a.candidates:
        f = c.train.figures if c.train else Figures()
        out.append(f"| {c.name}{' (best)' if a.winner is c else ''} | {c.method} | "
                   f"{num_text(f.kappa)} | {num_text(f.agreement)} |")
    if a.before is not None and a.after is not None:
        out += ["", "### Held-out (95 % bootstrap intervals)", "",
                "| node | kappa before | kappa after | agreement before | agreement after |",
                "|---|---|---|---|---|"]
        rows = [("pooled" if len(a.after.nodes) > 1 else a.node, a.before.figures,
                 a.after.figures)]
        if len(a.after.nodes) > 1:
            rows += [(n, a.before.nodes[n], f) for n, f in a.after.nodes.items()]
        for name, b, f in rows:
            out.append(f"| {name} | {num_text(b.kappa)}{_ci(b.kappa_ci)} | {num_text(f.kappa)}"
                       f"{_ci(f.kappa_ci)} | {num_text(b.agreement)}{_ci(b.agreement_ci)} | "
                       f"{num_text(f.agreement)}{_ci(f.agreement_ci)} |")
        out += ["", f"Exact McNemar test of the change: p = {a.p_value:.4g}.", ""]
        for title, pairs in (("Now agree", a.now_agree()), ("Now disagree", a.now_disagree())):
            out += [f"### {title} ({len(pairs)})", ""]
            if pairs:
                out += ["| case | node | label | before | after |", "|---|---|---|---|---|"]
                out += [f"{_row_cell(b)}{b.error or b.verdict!s} | {x.error or x.verdict!s} |"
                        for b, x in pairs]
            out.append("")
    out += [f"{a.calls} call(s), {a.cache_hits} cache hit(s)."]
    return "\n".join(out) + "\n"


def replace_in_calibration(saved: dict[str, Any], a: Alignment) -> dict[str, Any]:
    """A saved calibration (`dagtui calibrate`'s JSON) with N's entry (and, for a task
    node, the nodes below it) replaced by the aligned node's figures on all its labelled
    cases (train and held-out), and a note saying so."""
    from dagtui.calibration import stats
    from dagtui.text import verdict_text as show

    assert a.winner is not None and a.after is not None and a.winner.train is not None
    rows = [*a.winner.train.rows, *a.after.rows]
    nodes = dict(saved.get("nodes") or {})
    for nid in {r.node for r in rows}:
        mine = [r for r in rows if r.node == nid]
        labels = [r.label for r in mine]
        verdicts = [("(error)", r.error) if r.error else r.verdict for r in mine]
        entry = dict(nodes.get(nid) or {"node": nid})
        confusion = stats.confusion(labels, verdicts)
        entry.update({
            "cases": len(mine), "agreement": stats.raw_agreement(labels, verdicts),
            "kappa": stats.cohen_kappa(labels, verdicts),
            "kappa_ci": list(stats.bootstrap_kappa(labels, verdicts) or ()) or None,
            "confusion": {show(k): {show(v): n for v, n in row.items()}
                          for k, row in confusion.items()},
            "disagreements": [{"case": r.case, "label": show(r.label),
                               "verdict": show(r.verdict), "reason": r.reason}
                              for r in mine if not r.agrees],
            "aligned": {"winner": a.winner.name, "held_out": a.after.figures.to_dict()},
        })
        nodes[nid] = entry
    notes = [*saved.get("notes", []),
             f"node {a.node} was changed by dagtui align; its figures are the aligned node's "
             "(the free run and the blame are from before the change)"]
    return {**saved, "nodes": nodes, "notes": notes}
