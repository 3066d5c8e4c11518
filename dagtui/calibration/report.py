"""A calibration result as text: a terminal report and a Markdown report for a pull request.

Both say the same things in the same order (per-node table first, since that is what a
reviewer decides on; then the confusion matrices and the disagreeing cases; then the end-to-end
scores with blame; then stability across samples), so a CI log and a PR comment read alike.
Long lists are cut at `LIST_MAX` items with a count of the rest: the JSON has everything.
"""

from __future__ import annotations

from typing import Any

from dagtui.calibration.core import Calibration, NodeCalibration
from dagtui.text import counted, shorten
from dagtui.text import verdict_text as show

LIST_MAX = 10


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def num_text(value: float | None, digits: int = 2) -> str:
    """A figure as the report prints it (`-` when there is none; the calibration view too)."""
    return "-" if value is None else f"{value:.{digits}f}"


def _ci(nc: NodeCalibration) -> str:
    return "-" if nc.kappa_ci is None else f"[{nc.kappa_ci[0]:.2f}, {nc.kappa_ci[1]:.2f}]"


def _recall(nc: NodeCalibration) -> str:
    if not nc.items_labelled:
        return "-"
    return f"{nc.items_found}/{nc.items_labelled} ({nc.items_found / nc.items_labelled:.0%})"


def _headline(cal: Calibration) -> str:
    model = cal.judge.get("model") or cal.judge.get("name", "judge")
    cost = "-" if cal.cost is None else f"${cal.cost:.4f}"
    samples = f"{cal.samples} sample{'s' if cal.samples != 1 else ''}"
    temp = "" if cal.temperature is None else f" at temperature {cal.temperature:g}"
    return (f"{cal.graph}: calibration of {model} on {counted(cal.cases, 'case')} "
            f"({samples}{temp}) — "
            f"{cal.calls} calls (cache hits {cal.cache_hits}), cost {cost}, "
            f"wall {cal.wall_time:.2f}s")


def _rows(cal: Calibration) -> list[list[str]]:
    rows = []
    for nc in cal.nodes.values():
        if nc.type == "check":
            continue
        rows.append([nc.node, nc.type, str(nc.cases), _pct(nc.agreement), num_text(nc.kappa),
                     _ci(nc), _recall(nc) if nc.type == "task" else num_text(nc.mae),
                     str(nc.flipped)])
    return rows


HEAD = ["node", "type", "cases", "agree", "kappa", "95% CI", "recall / MAE", "flipped"]
SAMPLE_HEAD = ["node", "cases", "flip rate", "margin", "Fleiss κ", "close calls"]


HUMAN_HEAD = ["node", "judge kappa", "annotators", "both", "agree", "kappa", "95% CI",
              "unsure"]


def _pair_ci(ci: tuple[float, float] | None) -> str:
    return "-" if ci is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _compared_with(cal: Calibration) -> str:
    """Whose labels the judge's figures are measured against."""
    return (f"annotator {cal.annotator!r} (--annotator)" if cal.annotator is not None
            else "the adjudicated labels ('expected')")


def _human_rows(cal: Calibration) -> list[list[str]]:
    """Per judgement node and pair of annotators: the judge's kappa beside the people's."""
    rows = []
    for nid, pairs in cal.human_agreement.items():
        judge = cal.nodes[nid].kappa if nid in cal.nodes else None
        for p in pairs:
            rows.append([nid, num_text(judge), f"{p.first} / {p.second}", str(p.cases),
                         _pct(p.agreement), num_text(p.kappa), _pair_ci(p.kappa_ci),
                         str(p.unsure)])
    return rows


def _human_intro(cal: Calibration, head: str = "human–human agreement") -> str:
    return (f"{head} (the ceiling: cases both annotators labelled with a "
            f"verdict, unsure left out); the judge is compared with {_compared_with(cal)}")


def _sample_rows(cal: Calibration) -> list[list[str]]:
    return [[nc.node, str(nc.sampled_cases), _pct(nc.flip_rate), num_text(nc.margin),
             num_text(nc.fleiss), str(len(nc.close_calls))]
            for nc in cal.nodes.values() if nc.type != "check" and nc.sampled_cases]


def _table(head: list[str], rows: list[list[str]], indent: str = "  ",
           left: tuple[int, ...] = (0, 1)) -> list[str]:
    """Plain columns: text columns (`left`) left-aligned, figures right-aligned."""
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = [f"{{:{'<' if i in left else '>'}{w}}}" for i, w in enumerate(widths)]
    return [indent + "  ".join(f.format(c) for f, c in zip(fmt, row, strict=True)).rstrip()
            for row in [head, *rows]]


def _more(items: list[Any]) -> str:
    return f" … and {len(items) - LIST_MAX} more" if len(items) > LIST_MAX else ""


def _one_line(text: Any, limit: int = 60) -> str:
    return shorten(" / ".join(str(text or "").split("\n")), limit)


def _matrix(nc: NodeCalibration) -> tuple[list[str], list[list[str]]]:
    classes = list(nc.classes) or list(nc.confusion)
    seen = {v for row in nc.confusion.values() for v in row}
    classes += [c for c in seen if c not in classes]
    head = ["label ↓ / verdict →", *[show(c) for c in classes]]
    rows = [[show(lab), *[str(nc.confusion.get(lab, {}).get(v, 0)) for v in classes]]
            for lab in classes if lab in nc.confusion]
    return head, rows


def _outcome_rows(cal: Calibration) -> list[list[str]]:
    rows = []
    for o in [o for o in cal.outcomes if o.differs][:LIST_MAX]:
        judge = "error" if o.judge_score is None else f"{o.judge_score:.2f}"
        rows.append([o.case[:40], f"{o.human_score:.2f}", judge, o.blame or "-",
                     _one_line(o.why, 70)])
    return rows


def _end_to_end(cal: Calibration) -> str:
    c = cal.outcome_counts()
    rates = "".join(f", {name} {c[judged] / c[human]:.0%} ({c[judged]}/{c[human]})"
                    for name, judged, human in (("sensitivity", "judge_pass", "human_pass"),
                                                ("specificity", "judge_fail", "human_fail"))
                    if c[human])
    return (f"{counted(len(cal.scored), 'case')} scored: exact {_pct(cal.exact)}, pass/fail "
            f"{_pct(cal.pass_fail)}{rates}, mean absolute error {num_text(cal.mae, 3)}")


def _blame_line(cal: Calibration) -> str:
    parts = [f"{nc.node} {nc.flipped} ({nc.flipped_pass_fail} pass/fail)"
             for nc in cal.nodes.values() if nc.flipped]
    return ", ".join(parts) or "no outcome changed"


PROBE_HEAD = ["node", "type", "probe", "asked", "flipped", "flip rate", "agree", "kappa"]


def moved_text(before: float | None, after: float | None, fmt: Any) -> str:
    """`before → after` in `fmt`, `-` when either is missing (the calibration view too)."""
    return "-" if before is None or after is None else f"{fmt(before)} → {fmt(after)}"


def _probe_rows(cal: Calibration) -> list[list[str]]:
    """One row per node and probe that applied: what was compared, flipped, and how
    agreement moved (the skipped ones are `_skipped_lines`)."""
    rows = []
    for per in cal.probes.nodes.values():
        for r in per.values():
            if r.skipped:
                continue
            rows.append([r.node, r.type, f"{r.probe} ({', '.join(r.variants)})",
                         str(r.compared), str(r.flipped), _pct(r.flip_rate),
                         moved_text(r.agreement, r.agreement_probed, _pct),
                         moved_text(r.kappa, r.kappa_probed, num_text)])
    return rows


def _probe_intro(cal: Calibration) -> str:
    share = cal.probes.pad_share
    return (f"bias probes ({', '.join(cal.probes.probes)}; teacher forcing, sample 0): each "
            "verdict asked again with the options reordered (order) or the case text padded "
            f"with neutral filler, +{share:.0%} (padding), against the normal prompt's — "
            f"{cal.probes.calls} calls (cache hits {cal.probes.cache_hits})")


def _skipped_lines(cal: Calibration) -> list[str]:
    """`order skipped (binary: no options to reorder): present, ...`, one line per probe and
    reason."""
    skipped: dict[tuple[str, str], list[str]] = {}
    for per in cal.probes.nodes.values():
        for r in per.values():
            if r.skipped:
                skipped.setdefault((r.probe, r.skipped), []).append(r.node)
    return [f"{probe} skipped ({why}): {', '.join(nodes[:LIST_MAX])}{_more(nodes)}"
            for (probe, why), nodes in skipped.items()]


def _flip_text(f: dict[str, Any]) -> str:
    return f"{f['case']} ({f['variant']}: {f['normal']} → {f['probed']}, label {f['label']})"


def _item_lines(nc: NodeCalibration) -> list[str]:
    """A map node's per-case agreement (its kappa above is over items), and the unsure
    rate of a node whose judge may say "cannot tell"."""
    out = []
    if nc.type == "map":
        out.append(f"  {nc.node}: kappa over {counted(nc.cases, 'item')}; per case, the "
                   f"aggregate agrees in {_pct(nc.case_agreement)} of "
                   f"{counted(nc.item_cases, 'case')}")
    if nc.judge_unsure:
        out.append(f"  {nc.node}: the judge could not tell in {nc.judge_unsure} of "
                   f"{counted(nc.cases, 'item' if nc.type == 'map' else 'case')} "
                   f"({_pct(nc.judge_unsure / nc.cases if nc.cases else None)})")
    return out


def render_text(cal: Calibration) -> str:
    """The terminal report."""
    out = [_headline(cal), "", "teacher forcing: every node judged on the cases its labels "
           "reach (sample 0)"]
    out += _table(HEAD, _rows(cal))
    for nc in cal.nodes.values():
        if nc.confusion and nc.type != "task":
            out += ["", f"{nc.node}: confusion"]
            out += _table(*_matrix(nc), indent="    ", left=(0,))
        if nc.disagreements:
            out.append(f"  {nc.node} disagrees on {len(nc.disagreements)}: " + "; ".join(
                f"{d['case']} (label {d['label']}, judge {d['verdict']})"
                for d in nc.disagreements[:LIST_MAX]) + _more(nc.disagreements))
        if nc.dropped:
            out.append(f"  {nc.node} dropped items in {len(nc.dropped)}: " + "; ".join(
                f"{d['case']} (missing {', '.join(d['missing'])})"
                for d in nc.dropped[:LIST_MAX]) + _more(nc.dropped))
        if nc.errors:
            out.append(f"  {nc.node} judge errors in {len(nc.errors)}: " + "; ".join(
                f"{e['case']} ({e['kind']})" for e in nc.errors[:LIST_MAX]) + _more(nc.errors))
        if nc.unlabelled:
            out.append(f"  {nc.node} reached without a label in {len(nc.unlabelled)}: "
                       + ", ".join(nc.unlabelled[:LIST_MAX]) + _more(nc.unlabelled))
        if nc.unsure:
            out.append(f"  {nc.node} labelled unsure in {nc.unsure} (left out of kappa)"
                       + (f"; the judge could not tell either in {nc.unsure_both}"
                          if nc.unsure_both else ""))
        out += _item_lines(nc)
    if cal.human_agreement:
        out += ["", _human_intro(cal)]
        out += _table(HUMAN_HEAD, _human_rows(cal), left=(0, 2))
    elif cal.annotator is not None:
        out += ["", f"the judge is compared with {_compared_with(cal)}"]
    out += ["", "end to end (the judge's own path): " + _end_to_end(cal),
            "  outcomes flipped, by the first node that diverged: " + _blame_line(cal)]
    rows = _outcome_rows(cal)
    if rows:
        out += _table(["case", "expected", "judge", "blame", "why"], rows, left=(0, 3, 4))
    sample_rows = _sample_rows(cal)
    if sample_rows:
        out += ["", f"stability across {cal.samples} samples"]
        out += _table(SAMPLE_HEAD, sample_rows, left=(0,))
        for nc in cal.nodes.values():
            if nc.close_calls:
                out.append(f"  {nc.node} close calls: " + "; ".join(
                    f"{c['case']} ({', '.join(f'{k} {v}' for k, v in c['votes'].items())})"
                    for c in nc.close_calls[:LIST_MAX]) + _more(nc.close_calls))
    if cal.probes is not None:
        out += ["", _probe_intro(cal)]
        out += _table(PROBE_HEAD, _probe_rows(cal), left=(0, 1, 2, 6, 7))
        out += [f"  {line}" for line in _skipped_lines(cal)]
        for per in cal.probes.nodes.values():
            for r in per.values():
                if r.flips:
                    out.append(f"  {r.node} flipped under {r.probe} in {len(r.flips)}: "
                               + "; ".join(_flip_text(f) for f in r.flips[:LIST_MAX])
                               + _more(r.flips))
                if r.errors:
                    out.append(f"  {r.node} {r.probe}: judge errors in {len(r.errors)}: "
                               + "; ".join(f"{e['case']} {e['variant']} ({e['kind']})"
                                           for e in r.errors[:LIST_MAX]) + _more(r.errors))
    out += [f"note: {n}" for n in cal.notes]
    out += [f"label problem: {p}" for p in cal.label_problems[:LIST_MAX]]
    out += [f"label ignored: {p}" for p in cal.ignored_labels[:LIST_MAX]]
    return "\n".join(out) + "\n"


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(cell(h) for h in head) + " |",
             "|" + "|".join("---" if i < 2 else "---:" for i in range(len(head))) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def render_markdown(cal: Calibration, *, min_kappa: float | None = None,
                    max_flip: float | None = None) -> str:
    """A report fit for a pull-request comment (GitHub-flavoured Markdown)."""
    below = cal.below(min_kappa) if min_kappa is not None else []
    verdict = ""
    if min_kappa is not None:
        verdict = (f"**below the kappa floor {min_kappa:g}: {', '.join(below)}**" if below
                   else f"every node at or above the kappa floor {min_kappa:g}")
    out = [f"### Judge calibration: {cal.graph}", "", _headline(cal).split(": ", 1)[1], ""]
    if verdict:
        out += [verdict, ""]
    if max_flip is not None and cal.probes is not None:
        above = cal.probes.above(max_flip)
        out += [f"**above the flip ceiling {max_flip:g}: " + ", ".join(
            f"{n} ({probe} {rate:.0%})" for n, probe, rate in above) + "**" if above
            else f"every probed node at or below the flip ceiling {max_flip:g}", ""]
    out += ["**Per node** (teacher forcing: each node judged on the cases its labels reach)", ""]
    out += _md_table(HEAD, _rows(cal))
    if cal.human_agreement:
        out += ["", _human_intro(cal, "**Human–human agreement**"), ""]
        out += _md_table(HUMAN_HEAD, _human_rows(cal))
    elif cal.annotator is not None:
        out += ["", f"The judge is compared with {_compared_with(cal)}."]
    out += ["", f"**End to end** (the judge's own path): {_end_to_end(cal)}. Outcomes flipped, "
            f"by the first node that diverged: {_blame_line(cal)}.", ""]
    rows = _outcome_rows(cal)
    if rows:
        out += _md_table(["case", "expected", "judge", "blame", "why"], rows) + [""]
    sample_rows = _sample_rows(cal)
    if sample_rows:
        out += [f"**Stability across {cal.samples} samples**", ""]
        out += _md_table(SAMPLE_HEAD, sample_rows) + [""]
    if cal.probes is not None:
        out += [f"**Bias probes**: {_probe_intro(cal).split(': ', 1)[1]}", ""]
        out += _md_table(PROBE_HEAD, _probe_rows(cal)) + [""]
        out += [f"_{line}_" for line in _skipped_lines(cal)] + [""]
    details = []
    if cal.probes is not None:
        for per in cal.probes.nodes.values():
            for r in per.values():
                details += [f"- `{f['case']}`: {r.node} flipped under {r.probe} "
                            f"({f['variant']}): {f['normal']} → {f['probed']}, label "
                            f"{f['label']}" for f in r.flips[:LIST_MAX]]
        if details:
            details += [""]
    for nc in cal.nodes.values():
        if nc.confusion and nc.type != "task":
            details += [f"**{nc.node}**: confusion", ""] + _md_table(*_matrix(nc)) + [""]
        if nc.disagreements:
            details += [f"- `{d['case']}`: label {d['label']}, judge {d['verdict']} — "
                        f"{_one_line(d['reason'], 100)}" for d in nc.disagreements[:LIST_MAX]]
            details += [""]
        if nc.dropped:
            details += [f"- `{d['case']}`: {nc.node} dropped {', '.join(d['missing'])}"
                        for d in nc.dropped[:LIST_MAX]] + [""]
    if details:
        out += ["<details><summary>Confusion matrices and disagreeing cases</summary>", ""]
        out += details + ["</details>", ""]
    out += [f"> {n}" for n in cal.notes]
    return "\n".join(out).rstrip() + "\n"
