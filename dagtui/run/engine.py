"""The executor: one engine for the debugger, `dagtui run`, `dagtui test` and the Python API.

It walks a graph for one case with `dagtui.run.schedule.RunState` (the same state machine path
analysis uses), asking the judge for each node as it becomes ready and yielding a
`StepRecord` as each node completes. Where DeepEval is quietly wrong, this is loud:

- a graph with validation errors is refused before anything runs;
- a case missing a param that any reachable node needs is refused before any call, with the
  case, the node and the param named (DeepEval sends `Expected Output: None`);
- a run that reaches no leaf, or two, ends with an error naming the nodes (DeepEval returns
  None, or lets the last write win);
- a judgement node that receives neither evidence nor params gets a visible note.

`Engine.steps(case)` is an async generator for the debugger (one node at a time, file
order); `Engine.session(case)` exposes the same walk with hooks: peek at what runs next
(breakpoints), override a node's verdict (what-if), and reuse earlier steps whose prompt is
unchanged (edit a node and re-run from it). `Engine.run(case)` drains a session running
independent ready nodes concurrently.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.checks import CheckError, PythonConsent
from dagtui.graph.loader import GraphError
from dagtui.graph.model import GEvalNode, Graph, Judgement, NodeBase, Verdict
from dagtui.graph.unsure import CANNOT_TELL
from dagtui.judges.base import Ask, Judge, JudgeError, Reply
from dagtui.judges.prompts import Prompt, build_prompt, geval_steps_prompt
from dagtui.kinds import extracts, kind_of
from dagtui.kinds.answers import is_score
from dagtui.report.trace import PathStep, RunResult, StepRecord
from dagtui.run.cases import Case, CaseError, case_from_dict
from dagtui.run.map_run import judge_items
from dagtui.run.schedule import RunState, Topology
from dagtui.text import closest

MULTI_TURN_TURN_PARAMS = ("role", "content")


# --------------------------------------------------------------------------- the engine


class Engine:
    """Runs one graph with one judge.

    Built from a `CheckedGraph` (`dagtui.graph.analysed`), it trusts that check: a graph that
    cannot run raises GraphError, and nothing is validated again. A bare `Graph` is
    validated here first (its errors raise GraphError); `validate=False` skips that (tests
    of runtime guards only). `python` is the user's consent for python check nodes (None:
    only what DAGTUI_ALLOW_PYTHON says); the graph itself can never grant it.
    """

    def __init__(self, graph: Graph | CheckedGraph, judge: Judge, *, validate: bool = True,
                 python: PythonConsent | None = None, person: Judge | None = None) -> None:
        topo: Topology | None = None
        if isinstance(graph, CheckedGraph):
            topo = graph.topology  # compiled once, by the check it trusts
            graph = graph.require()
        elif validate:
            checked = CheckedGraph.of_graph(graph)
            if checked.errors:
                raise GraphError(checked.errors)
            topo = checked.topology
        self.graph = graph
        self.judge = judge
        #: who decides when a node's judge cannot tell and its `unsure` is "human" (the
        #: debugger's person); None: nobody is asked, the case is unscored (a run, CI)
        self.person = person
        self.python = python if python is not None else PythonConsent.from_env()
        self.topo = topo or Topology.of(graph)
        self.task_parents: dict[str, list[str]] = {
            nid: [p for p in self.topo.parents[nid] if kind_of(graph.nodes[p]).extracts]
            for nid in graph.nodes
        }
        self.reachable = self._reachable()
        self._needs: list[tuple[str, tuple[str, ...]]] | None = None
        self._need_set: set[str] = set()
        self._geval_steps: dict[tuple[str, str, str], list[str]] = {}
        self._steps_lock: asyncio.Lock | None = None

    def _reachable(self) -> list[str]:
        """Nodes some run may execute (reachable from the roots along any edge), file order."""
        compiled = self.topo.compiled
        return compiled.names(compiled.reachable(compiled.roots))

    def _needed_params(self) -> list[tuple[str, tuple[str, ...]]]:
        """(node, params it needs from a case) for every reachable node that needs any;
        worked out once per engine, so checking a case does not walk the graph."""
        out: list[tuple[str, tuple[str, ...]]] = []
        for nid in self.reachable:
            node = self.graph.nodes[nid]
            needed: list[str] = []
            inputs = kind_of(node).inputs
            if inputs is not None:  # decided in code: what the code reads, whatever the judge
                needed.extend(inputs(node))
            elif self.judge.needs_params:
                needed.extend(node.params)
            if needed:
                out.append((nid, tuple(dict.fromkeys(needed))))
        return out

    # ------------------------------------------------------------------ preflight

    def missing_inputs(self, case: Case) -> list[str]:
        """What the case lacks for the nodes it could reach (empty when it can run).

        The distinct params are checked first (a handful, whatever the graph's size); the
        nodes are listed only when something is missing."""
        if self._needs is None:
            self._needs = self._needed_params()
            self._need_set = {p for _, ps in self._needs for p in ps}
        multi = self.graph.metric.multi_turn

        def lacks(p: str) -> bool:
            if multi and p in MULTI_TURN_TURN_PARAMS:
                return not case.turns
            return not case.has(p)

        if not any(lacks(p) for p in self._need_set):
            return []
        problems: list[str] = []
        for nid, needed in self._needs:
            for p in needed:
                if multi and p in MULTI_TURN_TURN_PARAMS:
                    if not case.turns:
                        problems.append(f"node '{nid}' needs the conversation turns ('{p}'), "
                                        "and the case has no 'turns'")
                elif not case.has(p):
                    near = closest(p, case.fields)  # `actual_ouput` for `actual_output`
                    problems.append(f"node '{nid}' needs '{p}', which the case does not provide"
                                    + (f" (it has '{near}': misspelt?)" if near else ""))
        return problems

    def preflight(self, case: Case) -> None:
        """Raise CaseError (case, node, param named) if the case cannot run at all."""
        problems = self.missing_inputs(case)
        if problems:
            raise CaseError(f"case {case.name!r} cannot run: " + "; ".join(problems),
                            case.file, case.line)

    # ------------------------------------------------------------------ entry points

    def session(
        self,
        case: Case | Mapping[str, Any],
        *,
        overrides: Mapping[str, Any] | None = None,
        reuse: Iterable[StepRecord] | Mapping[str, StepRecord] | None = None,
        fresh: Iterable[str] = (),
        sample: int = 0,
        check: bool = True,
    ) -> Session:
        """A paused run of `case`; nothing is called until `step()` or `run_all()`."""
        if not isinstance(case, Case):
            case = case_from_dict(dict(case))
        if check:
            self.preflight(case)
        return Session(self, case, overrides=overrides, reuse=reuse, fresh=fresh, sample=sample)

    async def steps(self, case: Case | Mapping[str, Any], **kwargs: Any) -> AsyncIterator[StepRecord]:
        """Yield one StepRecord per node as it completes, in file order (debugger mode)."""
        session = self.session(case, **kwargs)
        while True:
            record = await session.step()
            if record is None:
                return
            yield record

    async def run(self, case: Case | Mapping[str, Any], **kwargs: Any) -> RunResult:
        """Run a case to the end (independent ready nodes run concurrently)."""
        session = self.session(case, **kwargs)
        await session.run_all(concurrent=True)
        return session.result()

    def run_sync(self, case: Case | Mapping[str, Any], **kwargs: Any) -> RunResult:
        return asyncio.run(self.run(case, **kwargs))

    # ------------------------------------------------------------------ one node

    async def execute(self, session: Session, nid: str) -> StepRecord:
        """Run node `nid` of `session`; always returns a record (errors are recorded)."""
        node = self.graph.nodes[nid]
        evidence = self.evidence_for(session, nid)
        rec = StepRecord(nid, node.type, index=session.next_index(), judge=self.judge.name,
                         evidence_from=list(evidence))
        start = time.perf_counter()
        try:
            item_overrides = session.item_overrides(nid)
            if item_overrides is not None:  # a what-if on some items of a map node
                await judge_items(self, session, rec, node, evidence,  # type: ignore[arg-type]
                                  item_overrides)
            elif nid in session.overrides:
                rec.prompt = self._skipped_prompt(session, node, evidence)
                self._apply_override(rec, node, session.overrides[nid])
            elif (run := kind_of(node).run) is not None:  # decided in code: no judge
                result = await run(node, self.graph, session.case.fields, evidence, self.python)
                rec.source, rec.judge = "check", "check"
                rec.answer, rec.reason = result.value, result.reason
            elif kind_of(node).per_item:  # a map node: one call per item of its list
                await judge_items(self, session, rec, node, evidence)  # type: ignore[arg-type]
            else:
                await self._ask_judge(session, rec, node, evidence)
                await self.ask_person_if_unsure(session, rec, node, evidence)
            if rec.error is None:
                verdict = self._follow(rec, node)
                if verdict is not None:  # matched once here; the session follows it
                    session.verdicts[nid] = verdict
        except JudgeError as err:
            rec.error, rec.error_kind = str(err), err.kind
            if err.raw is not None and rec.raw is None:
                rec.raw = err.raw
            rec.calls.extend(c for c in err.calls if c not in rec.calls)
        except CheckError as err:
            rec.error, rec.error_kind, rec.source = str(err), "check", "check"
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - a bug must show up in the step, not kill a batch
            rec.error, rec.error_kind = f"{type(err).__name__}: {err}", "other"
        self._totals(rec)
        rec.latency = time.perf_counter() - start
        return rec

    async def _ask_judge(self, session: Session, rec: StepRecord, node: NodeBase,
                         evidence: dict[str, Any]) -> None:
        steps: list[str] | None = None
        if kind_of(node).steps:
            # a kind with evaluation steps is a G-Eval leaf
            steps = await self._geval_steps_for(session, rec, node)  # type: ignore[arg-type]
        prompt = self.prompt_for(session, node, evidence, steps)
        rec.prompt = prompt.messages
        if (node.is_judgement and not evidence and not node.params):
            rec.notes.append("this node received no evidence and has no params: the judge "
                             "sees only its criteria (DAG101)")
        previous = session.reuse.get(node.id)
        if (previous is not None and node.id not in session.fresh and previous.error is None
                and previous.prompt == prompt.messages and previous.source in ("judge", "reused")):
            rec.source = "reused"
            rec.judge = previous.judge
            rec.request, rec.raw = previous.request, previous.raw
            rec.answer, rec.reason = previous.answer, previous.reason
            rec.method, rec.sampled = previous.method, previous.sampled
            rec.notes.append(f"reused from an earlier run (step {previous.index})")
            return
        # a node that names its own `model` (a leaf, a judgement, a map) is judged by it
        model = getattr(node, "model", None) or None
        ask = Ask(self.graph, node, prompt, session.case, evidence, session.sample, model)
        reply: Reply = await self.judge.answer(ask)
        rec.calls.extend(reply.calls)
        rec.request = reply.calls[-1].request if reply.calls else None
        rec.raw = reply.raw
        rec.answer, rec.reason = reply.value, reply.reason
        rec.method, rec.sampled = reply.method, reply.sampled

    async def ask_person_if_unsure(self, session: Session, rec: StepRecord, node: NodeBase,
                                   evidence: dict[str, Any]) -> None:
        """The judge could not tell and the node says `unsure = "human"`: the person
        (`person`) answers the same request instead; without one the case stays unscored."""
        rule = _unsure_rule(node)
        if self.person is None or rule is None or rule.mode != "human" or rec.answer != CANNOT_TELL:
            return
        prompt = self.prompt_for(session, node, evidence)
        reply = await self.person.answer(Ask(self.graph, node, prompt, session.case, evidence,
                                             session.sample))
        rec.unsure = True
        rec.notes.append("the judge could not tell; a person answered (unsure = \"human\")")
        rec.answer, rec.reason = reply.value, reply.reason or rec.reason

    # ------------------------------------------------------------------ prompts

    def evidence_for(self, session: Session, nid: str) -> dict[str, Any]:
        """The outputs of `nid`'s task parents that ran in `session` (what its prompt shows)."""
        outputs = session.outputs
        return {p: outputs[p] for p in self.task_parents[nid] if p in outputs}

    def prompt_for(self, session: Session, node: NodeBase, evidence: dict[str, Any],
                   steps: list[str] | None = None) -> Prompt:
        """The prompt for `node` in `session`: the one builder both `execute` and
        `Session.preview` go through, so a preview is byte-identical to what is sent."""
        return build_prompt(self.graph, node, session.case.fields, evidence, steps=steps)

    def known_geval_steps(self, node: GEvalNode) -> list[str] | None:
        """A geval leaf's evaluation steps if they are known without a call (written in the
        graph, the non-LLM default, or generated earlier); None while a call is still needed."""
        if node.evaluation_steps:
            return list(node.evaluation_steps)
        if not self.judge.llm:
            return [f"Judge the test case against the criteria: {node.criteria or ''}".strip()]
        return self._geval_steps.get(self._steps_key(node))

    @staticmethod
    def _steps_key(node: GEvalNode) -> tuple[str, str, str]:
        return (node.id, node.criteria or "", node.model or "")

    def _prompt_if_known(self, session: Session, node: NodeBase,
                         evidence: dict[str, Any]) -> Prompt | None:
        """The prompt `node` would be sent now, or None (decided in code, steps not
        generated)."""
        kind = kind_of(node)
        if kind.request is None:
            return None
        steps = None
        if kind.steps:
            steps = self.known_geval_steps(node)  # type: ignore[arg-type]  # a G-Eval leaf
            if steps is None:
                return None
        return self.prompt_for(session, node, evidence, steps)

    def _skipped_prompt(self, session: Session, node: NodeBase,
                        evidence: dict[str, Any]) -> list[dict[str, str]] | None:
        """What the judge would have been asked for an overridden node, so the what-if
        shows what it skipped; never a reason for the override itself to fail."""
        try:
            prompt = self._prompt_if_known(session, node, evidence)
        except Exception:  # noqa: BLE001 - the record is only informative here
            return None
        return prompt.messages if prompt is not None else None

    async def _geval_steps_for(self, session: Session, rec: StepRecord,
                               node: GEvalNode) -> list[str]:
        known = self.known_geval_steps(node)
        if known is not None:
            return known
        key = self._steps_key(node)
        if self._steps_lock is None:
            self._steps_lock = asyncio.Lock()
        async with self._steps_lock:
            if key not in self._geval_steps:
                prompt = geval_steps_prompt(node, reasons=self.graph.metric.include_reason)
                ask = Ask(self.graph, node, prompt, session.case, {}, 0, node.model)
                reply = await self.judge.answer(ask)
                rec.calls.extend(reply.calls)
                rec.notes.append("evaluation steps generated from criteria (one extra call, "
                                 "cached)")
                self._geval_steps[key] = list(reply.value)
        return self._geval_steps[key]

    def _apply_override(self, rec: StepRecord, node: NodeBase, value: Any) -> None:
        rec.source, rec.judge = "override", "override"
        rec.reason = "verdict overridden (what-if)"
        answer = kind_of(node).answer
        if answer is not None:  # "true" typed for a binary node is the verdict true
            value = answer.coerce(value)
        if node.is_scored_leaf and not (value == CANNOT_TELL and _unsure_rule(node) is not None):
            if not is_score(value):
                raise JudgeError("out_of_set", f"override for {node.id!r} must be a score "
                                 f"0..10, got {value!r}")
            rec.method = "override"
        rec.answer = value

    def _follow(self, rec: StepRecord, node: NodeBase) -> Verdict | None:
        """Resolve a judgement's answer to its verdict: where it leads or what it scores.
        Returns that verdict (None for a node without verdicts, or for an unsure answer
        that ends the case unscored)."""
        rule = _unsure_rule(node)
        if rule is not None and rec.answer == CANNOT_TELL:
            rec.unsure = True
            if rule.ends_unscored:  # "human" too: no person is asked here
                rec.unscored = True
                rec.notes.append(f"the judge could not tell; unsure = \"{rule.mode}\" ends "
                                 "the case unscored")
                return None
            rec.notes.append(f"the judge could not tell; unsure: {rule.describe()}")
        if isinstance(node, Judgement) and not node.is_scored_leaf:
            verdict = node.verdict_for(rec.answer)
            if verdict is None:
                allowed = [v.verdict for v in node.verdicts]
                raise JudgeError("out_of_set", f"node {node.id!r}: answer {rec.answer!r} is "
                                 f"not one of its verdicts {allowed}",
                                 raw=rec.raw if rec.raw is not None else repr(rec.answer))
            rec.answer = verdict.verdict
            rec.then = verdict.then
            rec.leaf_score = float(verdict.score) if verdict.score is not None else None
            return verdict
        if node.is_scored_leaf:
            if rec.unsure and rule is not None:  # `{ score = N }` on a fraction leaf
                rec.leaf_score = float(rule.score or 0)
            else:
                rec.leaf_score = float(rec.answer)
        return None

    @staticmethod
    def _totals(rec: StepRecord) -> None:
        rec.prompt_tokens = sum(c.prompt_tokens for c in rec.calls if not c.cache_hit)
        rec.completion_tokens = sum(c.completion_tokens for c in rec.calls if not c.cache_hit)
        costs = [c.cost for c in rec.calls if c.cost is not None and not c.cache_hit]
        rec.cost = sum(costs) if costs else None
        rec.retries = sum(c.retries for c in rec.calls)
        rec.cache_hit = bool(rec.calls) and all(c.cache_hit for c in rec.calls)


def _unsure_rule(node: NodeBase) -> Any:
    """The node's `unsure` rule (`dagtui.graph.unsure.Unsure`), None when it has none."""
    return getattr(node, "unsure_rule", None)


# --------------------------------------------------------------------------- a session


class Session:
    """One case's walk through the graph, advanced by `step()` or `run_all()`.

    Hooks for the debugger:
    - `pending()` / `peek()`: the nodes that would run next (stop here for a breakpoint);
    - `override(node, value)`: answer a node yourself (what-if); also `overrides=` up front;
    - `reuse=`: earlier StepRecords; a node whose prompt is byte-identical reuses its answer
      (edit a node and re-run: upstream steps are reused, the edited one and what follows
      are asked again); `fresh=` forces nodes to be asked again anyway.
    """

    def __init__(
        self,
        engine: Engine,
        case: Case,
        *,
        overrides: Mapping[str, Any] | None = None,
        reuse: Iterable[StepRecord] | Mapping[str, StepRecord] | None = None,
        fresh: Iterable[str] = (),
        sample: int = 0,
    ) -> None:
        self.engine = engine
        self.case = case
        self.state = RunState.start(engine.graph, engine.topo)
        self.overrides: dict[str, Any] = dict(overrides or {})
        if reuse is None:
            self.reuse: dict[str, StepRecord] = {}
        elif isinstance(reuse, Mapping):
            self.reuse = dict(reuse)
        else:
            self.reuse = {r.node: r for r in reuse}
        self.fresh = set(fresh)
        self.sample = sample
        self.records: list[StepRecord] = []
        self.outputs: dict[str, Any] = {}
        self.failed: StepRecord | None = None
        #: the step whose unsure answer ended the case unscored (no error, no score)
        self.unscored: StepRecord | None = None
        #: each judgement's verdict as `Engine.execute` matched it, until `_apply` follows it
        self.verdicts: dict[str, Verdict] = {}
        self._index = 0
        self._start = time.perf_counter()
        self._end: float | None = None

    def next_index(self) -> int:
        self._index += 1
        return self._index

    # ---- inspection

    @property
    def halted(self) -> bool:
        """The run stopped before its end: a step failed, or ended the case unscored."""
        return self.failed is not None or self.unscored is not None

    def pending(self) -> list[str]:
        """Nodes ready to run now, in file order (empty once finished, failed or
        unscored)."""
        if self.halted:
            return []
        return self.state.ready()

    def peek(self) -> str | None:
        """The node `step()` runs next (O(1): no list of the ready set is built)."""
        if self.halted:
            return None
        return self.state.first_ready()

    def is_pending(self, node_id: str) -> bool:
        """Whether `node_id` is ready to run now (without listing the ready set)."""
        return not self.halted and self.state.is_ready(node_id)

    def preview(self, node_id: str) -> Prompt | None:
        """The exact prompt the engine would send for `node_id` if it ran now.

        Built by the same code `execute` uses (same evidence, same builder), so a debugger can
        show it before the call and it matches the bytes sent. None when nothing is
        computable yet: the node is not ready (its evidence is not settled), it is a check
        node (decided in code), or it is a geval leaf whose evaluation steps still need
        their generation call. An override does not change the answer: this is what the
        judge would be asked.
        """
        engine = self.engine
        if node_id not in engine.graph.nodes or not self.is_pending(node_id):
            return None
        return engine._prompt_if_known(self, engine.graph.nodes[node_id],
                                       engine.evidence_for(self, node_id))

    @property
    def done(self) -> bool:
        return self.halted or self.state.finished

    def item_overrides(self, node: str) -> dict[int, Any] | None:
        """A map node's what-if on some of its items (`override(node, {index: value})`),
        else None (a whole-node override, or none)."""
        value = self.overrides.get(node)
        if isinstance(value, dict) and kind_of(self.engine.graph.nodes[node]).per_item:
            return {int(k): v for k, v in value.items()}
        return None

    def override(self, node: str, value: Any) -> None:
        """Answer `node` with `value` instead of asking the judge (before it runs); for a
        map node, `{index: value}` answers those items (0-based) and asks the rest."""
        if node not in self.engine.graph.nodes:
            raise KeyError(f"no node {node!r}")
        self.overrides[node] = value

    # ---- advancing

    async def step(self, node: str | None = None) -> StepRecord | None:
        """Run one ready node (the first in file order unless named); None when done."""
        if self.done:
            return None
        nid = node or self.state.first_ready()
        if nid is None or not self.state.is_ready(nid):
            raise ValueError(f"node {nid!r} is not ready (ready: {self.pending()})")
        record = await self.engine.execute(self, nid)
        self._apply(record)
        return record

    async def run_all(self, concurrent: bool = True) -> None:
        """Run to the end; with `concurrent`, independent ready nodes run at the same time."""
        if not concurrent:
            while await self.step() is not None:
                pass
            return
        running: dict[asyncio.Task[StepRecord], str] = {}
        started: set[str] = set()
        # Per completion, O(1): only the nodes that became ready since the last look are
        # new (listing the ready set costs O(ready)), and each task reports its own end on a
        # queue (asyncio.wait hooks and unhooks every running task on each call: O(running),
        # which a task with 5,000 children keeps in flight at once).
        ended: asyncio.Queue[asyncio.Task[StepRecord]] = asyncio.Queue()
        self.state.take_new_ready()
        fresh = self.state.ready()
        try:
            while True:
                if not self.halted:
                    for nid in fresh:
                        if nid not in started and self.state.is_ready(nid):
                            started.add(nid)
                            task = asyncio.ensure_future(self.engine.execute(self, nid))
                            task.add_done_callback(ended.put_nowait)
                            running[task] = nid
                if not running:
                    break
                finished = [await ended.get()]
                while not ended.empty():
                    finished.append(ended.get_nowait())
                for task in finished:
                    running.pop(task)
                    self._apply(task.result())
                fresh = self.state.take_new_ready()
                if self.halted:
                    for task in running:
                        task.cancel()
                    await asyncio.gather(*running, return_exceptions=True)
                    running.clear()
                    break
        finally:
            for task in running:
                task.cancel()
        self._end = time.perf_counter()

    def _apply(self, record: StepRecord) -> None:
        self.records.append(record)
        if record.error is not None:
            self.failed = record
            self._end = time.perf_counter()
            return
        if record.unscored:
            self.unscored = record
            self._end = time.perf_counter()
            return
        nid = record.node
        node = self.engine.graph.nodes[nid]
        if kind_of(node).extracts:
            self.outputs[nid] = record.answer
            self.state.finish_task(nid)
        elif node.is_scored_leaf:
            self.state.finish_geval(nid)
        else:
            self.state.choose(nid, self.verdicts.pop(nid))  # matched by _follow
        if self.state.finished:
            self._end = time.perf_counter()

    # ---- the outcome

    def result(self) -> RunResult:
        """The run's result so far (an error result if it failed or has not finished)."""
        metric = self.engine.graph.metric
        threshold = metric.effective_threshold
        wall = (self._end or time.perf_counter()) - self._start
        res = RunResult(self.case.name, threshold=threshold, steps=list(self.records),
                        wall_time=wall, expected_score=self.case.expected_score)
        res.path = [PathStep(r.node, None if extracts(r.node_type) else r.answer, r.then,
                             r.leaf_score) for r in self.records if r.error is None]
        if self.failed is not None:
            rec = self.failed
            named = f"node '{rec.node}'"  # once: a judge's own message may start with it
            error = str(rec.error)
            res.error = error if error.startswith(named) else f"{named}: {error}"
            res.error_kind, res.error_node = rec.error_kind, rec.node
            return res
        if self.unscored is not None:
            rec = self.unscored
            res.unscored = f"node '{rec.node}': the judge could not tell" + (
                f" ({rec.reason})" if rec.reason else "")
            res.unscored_node = rec.node
            return res
        if not self.state.finished:
            res.error, res.error_kind = "the run has not finished", "other"
            return res
        leaves = self.state.leaves
        if len(leaves) != 1:
            res.error_kind = "graph"
            if not leaves:
                last = self.records[-1].node if self.records else "(nothing ran)"
                never = [n for n in self.engine.reachable if not self.state.is_done(n)]
                res.error = (f"no leaf reached: the path ended at '{last}' without a score"
                             + (f"; nodes that never became ready: {never}" if never else ""))
            else:
                shown = ", ".join(f"{lf.node} ({lf.describe()})" for lf in leaves)
                res.error = f"more than one leaf reached: {shown}"
            return res
        leaf = leaves[0]
        rec = next(r for r in reversed(self.records) if r.node == leaf.node)
        raw_score = rec.leaf_score if rec.leaf_score is not None else 0.0
        res.score = round(raw_score / 10.0, 6)
        res.success = res.score + 1e-9 >= threshold
        res.leaf = leaf.node
        # include_reason = false: the judge was not asked; drop whatever it volunteered
        res.reason = rec.reason if metric.include_reason else ""
        return res
