"""The state of `dagtui label`: which case, which node next, what has been labelled.

A person labels a case by walking their own path through the graph: the verdict they give a
node decides which node comes next, as teacher forcing does in calibrate
(`dagtui.calibration.forcing`), so every node labelled is one calibration will compare with
the judge. The walk is the arrival rule of `dagtui.run.schedule.Progress` over the compiled
edges (the one `dagtui.labels.check` uses to find off-path labels): a task arrives at its
children, a labelled judgement or check node at its verdict's node, a scored leaf ends the
path, and an unlabelled node (or one the person was unsure of) stops its branch there.

Each label is written to the cases file as it is given (`dagtui.labels.write`). `?` marks a
node unsure: it is labelled `"unsure"` in the file and, picking no verdict, counts as unlabelled
everywhere (calibration's forced run stops before it, so it never enters a kappa). Resuming
starts at the first case with a reached node still unlabelled; `relabel` visits every node
again. Textual-free, so the whole flow is testable without a screen
(`dagtui.tui.label` draws it).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagtui.calibration.items import TaskLabelError, task_label
from dagtui.graph.model import Graph, Judgement, NodeBase
from dagtui.judges.prompts import MISSING, Prompt, build_prompt
from dagtui.kinds import find_kind, kind_of
from dagtui.kinds.kind import verdict_values as verdict_labels
from dagtui.labels.check import verdict_of
from dagtui.labels.write import LabelFile, Labels, case_labels
from dagtui.run.cases import Case
from dagtui.run.schedule import Progress, Topology
from dagtui.text import verdict_text

#: the orders cases are offered in (`--order`)
ORDERS = ("file", "uncertain", "disagreement")
#: the highest score a scored leaf takes
TOP_SCORE = 10

#: (node, its prompt) -> the judge's cached (answer, reason), or None (not asked yet)
JudgeLookup = Callable[[NodeBase, Prompt], "tuple[Any, str] | None"]


def label_kind(node: NodeBase) -> str:
    """How a node is labelled: "verdict" (a judgement or check: one of its verdicts),
    "task" (evidence text), "score" (a G-Eval or metric leaf: 0..10)."""
    kind = find_kind(node.type)
    if kind is not None and kind.extracts:
        return "task"
    if kind is not None and kind.scored:
        return "score"
    return "verdict"


def task_text(value: Any) -> str | None:
    """The evidence text a task label gives (None for an item list)."""
    try:
        return task_label(value).text
    except TaskLabelError:
        return None


@dataclass
class Walk:
    """One case's path as its labels lead: `path` the nodes reached in the order they are
    met (file order among the ready), `open` those of them still to be labelled."""

    path: list[str]
    open: list[str]


@dataclass
class NodeView:
    """What the screen shows for one node of one case: the request the judge is sent (its
    user message, without the closing answer line), and the judge's cached answer."""

    node: NodeBase
    kind: str
    material: str
    judge: tuple[Any, str] | None
    label: Any = None
    unsure: bool = False


@dataclass
class _Undo:
    case: int
    node: str
    before: Labels


@dataclass
class LabelSession:
    """Labelling `cases` of `graph` into `file` (None: nothing is written, tests only).

    `annotator`: whose labels (None: the adjudicated `expected`); `judge`: the cached
    judge answers, for `reveal` and `--order disagreement`; `order`: a list of case names
    to offer first (`--order uncertain`), else the file's order."""

    graph: Graph
    cases: list[Case]
    file: LabelFile | None = None
    annotator: str | None = None
    relabel: bool = False
    judge: JudgeLookup | None = None
    labels: list[Labels] = field(init=False)
    index: int = field(init=False, default=0)
    #: (case index, node) labelled (or marked unsure) in this session: `relabel` asks the
    #: rest again; (case, node) skipped with `s`: not asked again this session
    confirmed: set[tuple[int, str]] = field(init=False, default_factory=set)
    skipped: set[tuple[int, str]] = field(init=False, default_factory=set)
    history: list[_Undo] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.topo = Topology.of(self.graph)
        self.compiled = self.topo.compiled
        self.labels = [case_labels(c, self.annotator) for c in self.cases]
        self._walks: dict[int, Walk] = {}
        self.index = self.resume_index()

    # ------------------------------------------------------------------ the walk

    def walk(self, i: int) -> Walk:
        """Case `i`'s path as its labels lead (memoised until its labels change)."""
        found = self._walks.get(i)
        if found is None:
            found = self._walks[i] = self._walk(self.labels[i])
        return found

    def _walk(self, labels: Labels) -> Walk:
        compiled, nodes = self.compiled, self.graph.nodes
        progress = Progress(compiled)
        path: list[str] = []
        pending: list[str] = []
        unsure = set(labels.unsure or ())
        while progress.ready:
            i = progress.ready[0]
            progress.take(i)
            nid = compiled.ids[i]
            node = nodes[nid]
            path.append(nid)
            value = labels.expected.get(nid)
            arrivals: Sequence[int] = ()
            if nid in unsure:
                arrivals = compiled.targets[i] if kind_of(node).extracts else ()
            elif value is None:
                pending.append(nid)
            elif isinstance(node, Judgement):
                verdict = verdict_of(node, value)
                target = compiled.index.get(verdict.then) if verdict and verdict.then else None
                arrivals = () if target is None else (target,)
                if verdict is None:
                    pending.append(nid)  # not one of its verdicts: asked again
            elif not node.is_scored_leaf:
                arrivals = compiled.targets[i]
            for t in arrivals:
                progress.arrive(t)
        return Walk(path, pending)

    def is_open(self, i: int, nid: str) -> bool:
        """Whether node `nid` of case `i` is still to be labelled in this session."""
        if (i, nid) in self.skipped:
            return False
        if nid in self.walk(i).open:
            return True
        return self.relabel and (i, nid) not in self.confirmed

    def current(self, i: int | None = None) -> str | None:
        """The node to label next in case `i` (the current case): the first open node on
        its path, None when the case is done."""
        i = self.index if i is None else i
        return next((n for n in self.walk(i).path if self.is_open(i, n)), None)

    def resume_index(self) -> int:
        """The first case with a node to label (0 when every case is done, or relabelling)."""
        return next((i for i in range(len(self.cases)) if self.current(i) is not None), 0)

    # ------------------------------------------------------------------ what is shown

    @property
    def case(self) -> Case:
        return self.cases[self.index]

    def evidence(self, i: int, nid: str) -> dict[str, Any]:
        """The evidence `nid` is shown in case `i`: each task parent's label text, or the
        judge's cached extraction where the person has not labelled it."""
        out: dict[str, Any] = {}
        for parent in self.topo.parents.get(nid, ()):
            pnode = self.graph.nodes[parent]
            if not kind_of(pnode).extracts or parent not in self.walk(i).path:
                continue
            text = task_text(self.labels[i].expected.get(parent))
            if text is None:
                cached = self.judge_answer(i, parent)
                text = str(cached[0]) if cached else MISSING
            out[parent] = text
        return out

    def prompt(self, i: int, nid: str) -> Prompt | None:
        """The request the judge is sent for `nid` in case `i` (None: decided in code)."""
        node = self.graph.nodes[nid]
        if kind_of(node).request is None:
            return None
        steps = getattr(node, "evaluation_steps", None) or None
        return build_prompt(self.graph, node, self.cases[i].fields, self.evidence(i, nid),
                            steps=steps)

    def judge_answer(self, i: int, nid: str) -> tuple[Any, str] | None:
        """The judge's cached (answer, reason) for `nid` in case `i`, or None."""
        if self.judge is None:
            return None
        prompt = self.prompt(i, nid)
        return None if prompt is None else self.judge(self.graph.nodes[nid], prompt)

    def view(self, nid: str | None = None) -> NodeView | None:
        """What to show for `nid` (the current node) of the current case."""
        i = self.index
        nid = nid or self.current()
        if nid is None:
            return None
        node = self.graph.nodes[nid]
        prompt = self.prompt(i, nid)
        if prompt is None:
            material = _check_text(node)
        else:
            content = prompt.messages[-1]["content"]
            material = content.rsplit("\n\nAnswer with JSON", 1)[0]
        labels = self.labels[i]
        return NodeView(node, label_kind(node), material, self.judge_answer(i, nid),
                        labels.expected.get(nid), nid in (labels.unsure or ()))

    def progress(self) -> list[tuple[str, int, int]]:
        """(node, labelled, reached) for every node of the graph, in file order: reached
        counts the cases whose path meets the node, labelled those of them with its label."""
        out = []
        walks = [self.walk(i) for i in range(len(self.cases))]
        for nid in self.graph.nodes:
            reached = [i for i, w in enumerate(walks) if nid in w.path]
            labelled = sum(1 for i in reached if nid in self.labels[i].expected)
            out.append((nid, labelled, len(reached)))
        return out

    def done_cases(self) -> int:
        """Cases with no node left to label."""
        return sum(1 for i in range(len(self.cases)) if self.current(i) is None)

    # ------------------------------------------------------------------ labelling

    def label(self, value: Any) -> None:
        """Give the current node `value` (a verdict, a task's text, a 0..10 score) and write
        it; the next node follows from it."""
        nid = self.current()
        if nid is None:
            return
        self._change(nid, lambda labels: _with_label(labels, nid, value))

    def pick(self, n: int) -> bool:
        """Key `n`: the n-th verdict (1-based) of a verdict node, the score `n` of a scored
        leaf. False when `n` picks nothing there."""
        nid = self.current()
        if nid is None:
            return False
        node = self.graph.nodes[nid]
        kind = label_kind(node)
        if kind == "score" and 0 <= n <= TOP_SCORE:
            self.label(n)
            return True
        choices = verdict_labels(node)
        if kind == "verdict" and 1 <= n <= len(choices):
            self.label(choices[n - 1])
            return True
        return False

    def accept(self) -> bool:
        """A task node: its label is the judge's cached extraction. False when there is none."""
        nid = self.current()
        if nid is None or label_kind(self.graph.nodes[nid]) != "task":
            return False
        cached = self.judge_answer(self.index, nid)
        if cached is None:
            return False
        self.label(str(cached[0]))
        return True

    def unsure(self) -> None:
        """`?`: the person cannot say; kept in the file, never compared with a judge."""
        nid = self.current()
        if nid is not None:
            self._change(nid, lambda labels: _with_unsure(labels, nid))

    def skip(self) -> None:
        """`s`: leave the current node for now (not asked again this session)."""
        nid = self.current()
        if nid is not None:
            self.skipped.add((self.index, nid))
            self._advance()

    def undo(self) -> bool:
        """`u`: take back the last label (or unsure) given, in whichever case; False when
        nothing is left to undo."""
        if not self.history:
            return False
        last = self.history.pop()
        self.labels[last.case] = last.before
        self._walks.pop(last.case, None)
        self.confirmed.discard((last.case, last.node))
        self._write(last.case)
        self.index = last.case
        return True

    def go_to_node(self, nid: str) -> bool:
        """Start at the first case (from the current one on) where node `nid` is to be
        labelled next, so a person who asked for that node sees it first. False, and the
        session left where it was, when no case has it open."""
        n = len(self.cases)
        for k in range(n):
            j = (self.index + k) % n
            if self.current(j) == nid:
                self.index = j
                return True
        return False

    def move(self, step: int) -> None:
        """`n` / `p`: the next or previous case."""
        self.index = max(0, min(len(self.cases) - 1, self.index + step))

    def _change(self, nid: str, edit: Callable[[Labels], Labels]) -> None:
        i = self.index
        before = copy.deepcopy(self.labels[i])
        self.labels[i] = edit(copy.deepcopy(before))
        self._walks.pop(i, None)
        try:
            self._write(i)
        except BaseException:
            self.labels[i] = before
            self._walks.pop(i, None)
            raise
        self.history.append(_Undo(i, nid, before))
        self.confirmed.add((i, nid))
        self._advance()

    def _write(self, i: int) -> None:
        if self.file is not None:
            self.file.set(self.cases[i].name, self.labels[i], annotator=self.annotator)

    def _advance(self) -> None:
        """Once the current case has nothing left to label, on to the next that has."""
        if self.current() is not None:
            return
        n = len(self.cases)
        for k in range(1, n):
            j = (self.index + k) % n
            if self.current(j) is not None:
                self.index = j
                return


def _with_label(labels: Labels, nid: str, value: Any) -> Labels:
    labels.expected[nid] = value
    labels.unsure = [u for u in labels.unsure or () if u != nid]
    return labels


def _with_unsure(labels: Labels, nid: str) -> Labels:
    labels.expected.pop(nid, None)
    labels.unsure = [*[u for u in labels.unsure or () if u != nid], nid]
    return labels


def _check_text(node: NodeBase) -> str:
    """A check node's question: it is decided in code, so the person sees what it tests."""
    parts = [f"{node.type} check: {getattr(node, 'label', '') or node.id}"]
    for name in ("kind", "pattern", "function", "criteria"):
        value = getattr(node, name, None)
        if value:
            parts.append(f"{name}: {value}")
    return "\n".join(parts)


def show_label(value: Any) -> str:
    """A label as the screen and messages write it."""
    return verdict_text(value)


def order_cases(cases: list[Case], order: str, session_judge: JudgeLookup | None,
                graph: Graph, *, planned: list[str] | None = None) -> list[Case]:
    """`cases` in the order `--order` asks: "file"; "disagreement", the cases where the
    judge's cached verdict differs from a label first (then the rest, in file order);
    "uncertain", the names `planned` lists first (what to label next, from
    `calibrate --plan`), then the rest."""
    if order == "uncertain":
        rank = {name: k for k, name in enumerate(planned or [])}
        return sorted(cases, key=lambda c: rank.get(c.name, len(rank)))
    if order != "disagreement":
        return list(cases)
    probe = LabelSession(graph, cases, judge=session_judge)
    differs = []
    for i in range(len(cases)):
        count = 0
        for nid in probe.walk(i).path:
            label = probe.labels[i].expected.get(nid)
            if label is None or label_kind(graph.nodes[nid]) != "verdict":
                continue
            answer = probe.judge_answer(i, nid)
            node = graph.nodes[nid]
            if answer is not None and isinstance(node, Judgement) and \
                    verdict_of(node, answer[0]) != verdict_of(node, label):
                count += 1
        differs.append(count)
    return [c for _, c in sorted(enumerate(cases), key=lambda ic: (differs[ic[0]] == 0, ic[0]))]


def open_session(graph: Graph, path: str | Path, cases: list[Case] | None = None, *,
                 order: str = "file", judge: JudgeLookup | None = None,
                 planned: list[str] | None = None, only: Sequence[str] | None = None,
                 annotator: str | None = None, relabel: bool = False) -> LabelSession:
    """The labelling of cases file `path` (`dagtui.run.cases.cases_source` names it), as
    `dagtui label`, the editor and the calibration view open it: the file opened for writing
    (`LabelFile`), its cases (`cases`, when already loaded) in `order` (`order_cases`), and
    `only`: just the cases of those names, in that order (the calibration view's disagreeing
    cases). Raises CaseError, OSError or ValueError on a file it cannot read."""
    file = LabelFile(path)
    cases = file.cases() if cases is None else cases
    if only is not None:
        by_name = {c.name: c for c in cases}
        cases = [by_name[name] for name in dict.fromkeys(only) if name in by_name]
    ordered = order_cases(cases, order, judge, graph, planned=planned)
    return LabelSession(graph, ordered, file, annotator=annotator, relabel=relabel,
                        judge=judge)


def cached_judge(graph: Graph, *, model: str | None = None, api_base: str | None = None,
                 cache_dir: str | None = None) -> JudgeLookup:
    """The judge's answers as the cache holds them (`dagtui.judges.cache`), never a call:
    the request a run would send is built and only looked up (`LiteLLMJudge.cached_reply`),
    so what is shown is what `run` or `calibrate` was answered for exactly this prompt.
    A metric leaf (DeepEval asks) and a G-Eval leaf without written steps have none."""
    from dagtui.judges.factory import make_judge
    from dagtui.judges.litellm_judge import LiteLLMJudge

    judge = make_judge("litellm", graph, model=model, api_base=api_base,
                       cache=cache_dir if cache_dir else True)
    assert isinstance(judge, LiteLLMJudge)

    def lookup(node: NodeBase, prompt: Prompt) -> tuple[Any, str] | None:
        if kind_of(node).measured:
            return None
        reply = judge.cached_reply(prompt, getattr(node, "model", None))  # no call
        if reply is None:
            return None
        # the score the judge wrote, not its probability-weighted mean (a G-Eval leaf)
        return (reply.value if reply.sampled is None else reply.sampled), reply.reason

    return lookup
