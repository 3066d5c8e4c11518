"""The debugger's state, kept apart from the widgets (no Textual import here).

`DebugRun` wraps one engine `Session` for one case and adds what a person stepping through a
graph needs on top of the engine: breakpoints, what-if overrides that survive a restart,
the records of the previous run (so an edited node can be re-run with everything upstream
reused, no new judge calls), the node being asked right now, and a read-only mode showing a
saved trace. The screen asks it for each node's status and for the result, and renders.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.checks import PythonConsent
from dagtui.graph.model import Graph, Judgement, NodeBase
from dagtui.graph.paths import show_number
from dagtui.judges.base import Judge
from dagtui.kinds import extracts, kind_of, scores
from dagtui.report.trace import RunResult, StepRecord, Trace
from dagtui.run.cases import Case, CaseError
from dagtui.run.engine import Engine, Session
from dagtui.run.schedule import Reach, Topology, run_order
from dagtui.text import verdict_text

#: statuses a node can have in the path tree
PENDING, NEXT, RUNNING, DONE, SKIPPED, FAILED = (
    "pending", "next", "running", "done", "skipped", "failed")

_SERIALS = itertools.count(1)

@dataclass
class NodeStatus:
    """How one node stands in the current run."""

    status: str
    record: StepRecord | None = None
    breakpoint: bool = False
    overridden: bool = False


class _RecordIndex:
    """The latest record of each node and running totals, over an append-only list of
    records (a session's, or a trace's steps).

    The screen asks for every node's status after every step; finding a node's record by
    scanning the records made a 5,000-node graph cost O(nodes × steps) per redraw. The
    list only grows, so each record is indexed once, when it first appears.
    """

    def __init__(self, source: list[StepRecord]) -> None:
        self.source = source
        self.seen = 0
        self.latest: dict[str, StepRecord] = {}
        self.calls = 0
        self.tokens = 0
        self.cost: float | None = None
        self.overridden = False

    def update(self) -> _RecordIndex:
        source = self.source
        for rec in source[self.seen:]:
            self.latest[rec.node] = rec
            self.calls += rec.calls_made
            self.tokens += rec.prompt_tokens + rec.completion_tokens
            if rec.cost is not None:
                self.cost = (self.cost or 0.0) + rec.cost
            self.overridden = self.overridden or rec.source == "override"
        self.seen = len(source)
        return self


def show_value(value: Any) -> str:
    """A verdict or answer as a person reads it (true/false, labels, scores)."""
    if isinstance(value, float):
        return show_number(value)  # 6.66 and 3.3333333333333335 as written, 7.0 as 7
    return "" if value is None else verdict_text(value)


def answer_summary(record: StepRecord) -> str:
    """One short phrase for the tree: the verdict, the evidence size, the score, the error."""
    if record.error is not None:
        return f"error: {record.error_kind or 'failed'}"
    if extracts(record.node_type):
        text = record.answer if isinstance(record.answer, str) else show_value(record.answer)
        return f"evidence {len(text)} chars"
    if scores(record.node_type):
        return f"score {show_value(record.answer)}"
    return show_value(record.answer)


def allowed_answers(node: NodeBase) -> list[Any]:
    """The verdicts a person may pick for a node (empty: free text or a score)."""
    if isinstance(node, Judgement):
        return [v.verdict for v in node.verdicts]
    return []


def editable_field(node: NodeBase) -> str | None:
    """Which text field `e` edits for this node (None: nothing textual to edit), as its
    kind says (a geval leaf with evaluation steps is judged by the steps, not the criteria,
    so the steps are what an edit must change)."""
    return kind_of(node).editable(node)


def field_as_text(node: NodeBase, name: str) -> str:
    """A node's editable field as the text shown in the edit dialog (steps one per line)."""
    value = getattr(node, name, None)
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return value or ""


def field_from_text(name: str, text: str) -> Any:
    """The dialog's text back as the field's value (steps: one per non-empty line)."""
    if name == "evaluation_steps":
        return [line.strip() for line in text.splitlines() if line.strip()]
    return text


def with_field(graph: Graph, node_id: str, name: str, value: Any) -> Graph:
    """A copy of `graph` with one node field changed (the original is left alone)."""
    nodes = dict(graph.nodes)
    node = nodes[node_id]
    nodes[node_id] = node.replace(**{node.attr_for(name): value})
    return graph.replace(nodes=nodes)


class DebugRun:
    """One case stepped through one graph, with breakpoints and what-ifs.

    Either live (`engine`, `case`) or read-only over a saved `trace`. `python` is the
    consent for python checks; the screen keeps one for its session and hands it to every
    run it makes, so an answer to its question holds across restarts and judge switches.
    """

    def __init__(self, graph: Graph, judge: Judge | None, case: Case | None = None, *,
                 trace: Trace | None = None, python: PythonConsent | None = None,
                 checked: CheckedGraph | None = None) -> None:
        self.graph = graph
        self.judge = judge
        self.python = python if python is not None else PythonConsent.from_env()
        #: `graph`'s check, validated when the engine is built (`checked`: an earlier run's,
        #: so another judge on the same graph does not validate it again)
        self.checked = checked if checked is not None else CheckedGraph.of_graph(graph)
        self.engine: Engine | None = (self._engine_for(self.checked)
                                      if judge is not None else None)
        self.topo = self.engine.topo if self.engine else Topology.of(graph)
        self.case = case
        self.trace = trace
        self.breakpoints: set[str] = set()
        self.overrides: dict[str, Any] = {}
        self.previous: dict[str, StepRecord] = {}
        self.session: Session | None = None
        self.running: str | None = None
        self.problem: str | None = None  # why the case cannot run (missing params, ...)
        self._index: _RecordIndex | None = None
        self._reach: Reach | None = None
        self._order: list[str] | None = None
        #: bumped whenever the run is replaced (new case, graph or session), so a view can
        #: tell a new run from more steps of the same one (`view_key`)
        self._serial = next(_SERIALS)
        self._generation = 0

    # ------------------------------------------------------------------ setup

    @property
    def read_only(self) -> bool:
        return self.trace is not None

    @property
    def order(self) -> list[str]:
        """The nodes in the order runs take them (`schedule.run_order`): a parent above its
        children whatever order the file has them in, and a run's steps top to bottom."""
        if self._order is None:
            self._order = [n for n in run_order(self.topo.compiled) if n in self.graph.nodes]
        return self._order

    def missing(self) -> list[str]:
        """What the case lacks for nodes it could reach: shown before the first call."""
        if self.engine is None or self.case is None:
            return []
        return self.engine.missing_inputs(self.case)

    def set_case(self, case: Case) -> None:
        self._generation += 1
        self.case = case
        self.previous = {}
        self.session = None

    def _engine_for(self, checked: CheckedGraph) -> Engine:
        """The engine a run of `checked` gets (`dagtui.run.execute.build_engine`, the run
        pipeline's), on this debugger's judge; stepped node by node here."""
        from dagtui.run.execute import build_engine
        from dagtui.run.spec import RunSpec

        return build_engine(checked, RunSpec(judge=self.judge, python=self.python))

    def set_graph(self, graph: Graph) -> None:
        """Swap in an edited graph (validated by the engine; raises GraphError)."""
        assert self.judge is not None
        checked = CheckedGraph.of_graph(graph)
        engine = self._engine_for(checked)
        self.checked = checked
        self.graph, self.engine, self.topo = graph, engine, engine.topo
        self._order = None
        self._generation += 1

    def restart(self, *, reuse: Iterable[StepRecord] | Mapping[str, StepRecord] | None = None,
                fresh: Iterable[str] = ()) -> Session | None:
        """A new session from the first node; None (and `problem` set) if it cannot run."""
        self._generation += 1
        self.running = None
        self.session = None
        self.problem = None
        if self.engine is None or self.case is None:
            self.problem = "no case chosen" if self.case is None else "read-only trace"
            return None
        try:
            self.session = self.engine.session(self.case, overrides=self.overrides,
                                               reuse=reuse, fresh=fresh)
        except CaseError as exc:
            self.problem = str(exc)
            return None
        return self.session

    def keep_records(self) -> None:
        """Remember this run's successful steps for the next run's reuse."""
        if self.session is not None:
            for rec in self.session.records:
                if rec.error is None and rec.source in ("judge", "reused"):
                    self.previous[rec.node] = rec

    def set_override(self, node_id: str, value: Any) -> None:
        self.overrides[node_id] = value

    def clear_override(self, node_id: str) -> None:
        self.overrides.pop(node_id, None)

    def toggle_breakpoint(self, node_id: str) -> bool:
        """Flip the breakpoint on a node; True when it is now set."""
        if node_id in self.breakpoints:
            self.breakpoints.discard(node_id)
            return False
        self.breakpoints.add(node_id)
        return True

    # ------------------------------------------------------------------ inspection

    @property
    def records(self) -> list[StepRecord]:
        if self.trace is not None:
            return list(self.trace.steps)
        return list(self.session.records) if self.session else []

    def _records_index(self) -> _RecordIndex:
        """The index over the shown records, rebuilt only when the run is replaced."""
        if self.trace is not None:
            source = self.trace.steps
        else:
            source = self.session.records if self.session is not None else []
        index = self._index
        if index is None or index.source is not source:
            index = self._index = _RecordIndex(source)
        return index.update()

    def record(self, node_id: str) -> StepRecord | None:
        """The node's latest record (O(1))."""
        return self._records_index().latest.get(node_id)

    def view_key(self) -> tuple[int, int, bool]:
        """Equal between two calls only while the same run goes on (more steps, marks
        moving); a view redraws everything when it changes."""
        return self._serial, self._generation, self.finished

    def record_count(self) -> int:
        return self._records_index().seen

    def nodes_recorded_since(self, count: int) -> list[str]:
        """The nodes of the records after the first `count` (what a redraw must relabel)."""
        index = self._records_index()
        return [r.node for r in index.source[count:]]

    def marks(self) -> set[tuple[str, str]]:
        """The per-node marks a node's label shows besides its record: the next node, the
        one being asked, breakpoints and overrides (a redraw relabels the ones that moved)."""
        out = {("bp", n) for n in self.breakpoints} | {("override", n) for n in self.overrides}
        nxt = self.next_node()
        if nxt is not None:
            out.add(("next", nxt))
        if self.running is not None:
            out.add(("running", self.running))
        return out

    def totals(self) -> tuple[int, int, float | None]:
        """(calls, tokens, cost or None) of the records so far, kept as they come."""
        index = self._records_index()
        return index.calls, index.tokens, index.cost

    @property
    def finished(self) -> bool:
        if self.trace is not None:
            return True
        return self.session is not None and self.session.done

    @property
    def started(self) -> bool:
        return self._records_index().seen > 0

    def next_node(self) -> str | None:
        if self.session is None or self.trace is not None:
            return None
        return self.session.peek()

    def preview(self, node_id: str) -> list[dict[str, str]] | None:
        """The messages the next step will send for `node_id`, before it is sent.

        The engine builds it (`Session.preview`, the code path that sends it), so it is
        byte-identical to the request. None when the node is not next, is answered by a
        what-if override (nothing will be sent), decides in code, or is a geval leaf whose
        evaluation steps are generated by a call first.
        """
        if self.session is None or self.next_node() != node_id \
                or node_id in self.session.overrides:
            return None
        try:
            prompt = self.session.preview(node_id)
        except Exception:  # noqa: BLE001 - a preview must never break the screen
            return None
        return prompt.messages if prompt is not None else None

    def status(self, node_id: str) -> NodeStatus:
        rec = self.record(node_id)
        bp = node_id in self.breakpoints
        over = node_id in self.overrides or (rec is not None and rec.source == "override")
        if rec is not None:
            return NodeStatus(FAILED if rec.error else DONE, rec, bp, over)
        if node_id == self.running:
            return NodeStatus(RUNNING, None, bp, over)
        if self.finished:
            return NodeStatus(SKIPPED, None, bp, over)
        if node_id == self.next_node():
            return NodeStatus(NEXT, None, bp, over)
        return NodeStatus(PENDING, None, bp, over)

    def result(self) -> RunResult | None:
        """The result once the run ended (error results included); None while running."""
        if self.trace is not None:
            return self.trace.result
        if self.session is None or not self.session.done:
            return None
        return self.session.result()

    def progress(self) -> tuple[int, int]:
        """(steps done, steps the run can take at most from here).

        A node that has not run is still possible while it is reachable from the ready set
        along any verdict; `schedule.Reach` keeps that set as nodes finish (O(edges) over
        the whole run, not a walk of the graph per redraw)."""
        index = self._records_index()
        done = index.seen
        if self.finished:
            return done, done
        could = 0
        if self.session is not None:
            reach = self._reach
            if reach is None or reach.state is not self.session.state:
                reach = self._reach = Reach(self.session.state)
            # every node that ran has left the set: what is left has not run
            could = len(reach.update())
        return done, done + could

    @property
    def overridden(self) -> bool:
        return self._records_index().overridden

    def to_trace(self) -> Trace:
        """The current run as a trace (`dagtui.report.trace.Trace`: every step kept, nothing summarised)."""
        if self.trace is not None:
            return self.trace
        assert self.session is not None and self.case is not None
        return Trace.of(self.graph, self.case, self.judge, self.session.result())
