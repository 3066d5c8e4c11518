"""Diagnostics from path analysis (`dagtui.graph.paths`): verdict combinations that end at no leaf
(DAG015) or at two (DAG016), nodes that never run (DAG102), a threshold no path can fail
(DAG104), and analysis that gave up (DAG201)."""

from __future__ import annotations

from typing import Any

from dagtui.graph.model import TaskNode
from dagtui.graph.paths import PathAnalysis, PathInfo, describe_choices, describe_leaf
from dagtui.graph.positions import KeyPath
from dagtui.graph.validate.base import CheckerBase
from dagtui.text import verdict_text

#: at most this many DAG015/DAG016 diagnostics each; the rest are counted in the last one
MAX_PATH_DIAGNOSTICS = 5


class PathChecks(CheckerBase):
    """What path analysis found, reported at the keys that cause it."""

    def check_paths(self, report: PathAnalysis) -> None:
        if not report.proven:
            self.add("DAG201", f"path analysis gave up ({report.reason}); only the "
                     "structural checks ran: dead nodes are estimated and the verdict "
                     "combinations were not proven to end at exactly one leaf", ("nodes",))
        else:
            self.dead = set(report.dead_nodes)
            self.report_bad_paths(report)
        self.report_dead(report)
        self.check_threshold(report)

    def report_bad_paths(self, report: PathAnalysis) -> None:
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
                                                     f"={verdict_text(lf.verdict, quote=True)}")
                for lf in p.leaves
            )
            others = f" (and {len(group) - 1} more combination(s) like it)" \
                if len(group) > 1 else ""
            last = p.leaves[-1]
            path = ("nodes", last.node)
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

    def dead_end(self, p: PathInfo) -> tuple[str, KeyPath, tuple[str | None, str | None]]:
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
                        return (f"{nid}={verdict_text(value, quote=True)} leads to '{v.then}', but {why}"
                                if missing else
                                f"{nid}={verdict_text(value, quote=True)} leads on, but {why}",
                                self.vpath(nid, i, "then"), (nid, "verdicts"))
                    return (f"{nid}={verdict_text(value, quote=True)} has no score",
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

    def report_dead(self, report: PathAnalysis) -> None:
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

    def check_threshold(self, report: PathAnalysis) -> None:
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
