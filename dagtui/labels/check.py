"""Label checking, in one place: is every human label a case carries one the graph can use?

`calibrate`, `test`, `run` and the Python API read the same labels (a case's `expected`,
node id -> label, and its `expected_score`), and a bad one used to vanish quietly: a
misspelt node id labelled nothing, a verdict in the wrong case stopped the case's forced run,
a label below a gate the labels close was never looked at. Every command now asks this
module first, before any judge call, and a bad label is an error naming the cases file, the
line and the case (exit 2; `--lenient` turns each into a warning and drops the label). The
classes (`KINDS`):

- `unknown_node`: the label's key is no node of the graph (a difflib "did you mean");
- `not_a_verdict`: a judgement or check label that is none of the node's verdicts (the
  verdict it nearly matches: the same but for case or spacing, else the closest spelling);
- `wrong_shape`: a label of another node kind's shape: task items (a list or a
  `{contains, text}` table, `dagtui.calibration.items`) on a judgement, a verdict or a
  score on a task node, a verdict on a scored leaf, a malformed task table;
- `out_of_range`: a scored leaf's label outside 0..10, an `expected_score` outside 0..1
  (a cases file refuses the latter as it loads; a `Case` built in Python is checked here);
- `off_path`: a label on a node the case's own labels never lead to. The walk starts at the
  roots and follows the labelled verdict of each judgement and check node, as teacher
  forcing does (`dagtui.calibration.forcing`); a judgement without a usable label opens
  every branch (the run says the label is missing), so only a label no labelled path can
  reach is reported.

A label may also be `UNSURE` (the text "unsure": `dagtui label`'s `?`): the person looked and
could not tell. It is a label, kept in the file and never a problem on any node (unless the
node has a verdict spelt "unsure", which it then is), but it picks no verdict: the labelled
path opens every branch below it, as a missing label does, and calibration leaves it out of
agreement and kappa (`dagtui.calibration.annotators.certain`).

Each entry of a case's `annotations` (one annotator's labels, `dagtui.run.cases.Annotation`)
is checked the same way, against its own labelled path; its problems name the annotator.

The Python API (`dagtui.calibrate`, `dagtui.evaluate`) raises `LabelError` too, or with
`lenient=True` drops the labels with a `LabelWarning` each. `LabelChecker(graph).check(case)` checks one case (a streamed run checks each as it reads it);
`check_cases` a list, raising `LabelError` or, lenient, returning the cases without their bad
labels; `LenientCases` does the same to a cases file read per pass (`dagtui.run.case_stream`).
Textual-free and light: no engine, no judge.
"""

from __future__ import annotations

import dataclasses
import difflib
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dagtui.calibration.items import TaskLabelError, task_label
from dagtui.graph.compiled import CompiledGraph
from dagtui.graph.model import Graph, Judgement, Verdict
from dagtui.graph.unsure import UNSURE
from dagtui.kinds import find_kind
from dagtui.kinds.answers import is_score
from dagtui.kinds.kind import verdict_values
from dagtui.labels.map_labels import labelled_outcome, map_label_problem
from dagtui.run.cases import Case, CaseError
from dagtui.run.schedule import Progress
from dagtui.text import verdict_text

#: the classes of bad label, in the order a case's problems are listed
KINDS = ("unknown_node", "wrong_shape", "not_a_verdict", "out_of_range", "off_path")
#: how each class is counted in a summary ("3 labels ignored: 2 unknown nodes, ...")
KIND_NAMES = {"unknown_node": "unknown node", "wrong_shape": "wrong shape",
              "not_a_verdict": "not a verdict", "out_of_range": "out of range",
              "off_path": "off the labelled path"}
#: the key of the whole graph's score label
SCORE_KEY = "expected_score"
#: problems listed in one error message before "... and N more"
SHOWN = 20
#: entries each memo of a `LabelChecker` keeps (a dataset repeats a few labels and paths;
#: free-text labels must not make a streamed run's memory grow with the dataset)
MEMO = 4096
#: words a person may write for true and false (read for a hint, never accepted as labels)
_TRUE_WORDS = frozenset({"true", "yes", "y", "1", "pass", "passed"})
_FALSE_WORDS = frozenset({"false", "no", "n", "0", "fail", "failed"})


@dataclass(frozen=True)
class LabelProblem:
    """One bad label: the case, where it is (`file:line`), the label's key (a node id or
    `expected_score`), the class (one of `KINDS`) and what is wrong."""

    case: str
    where: str
    key: str
    kind: str
    message: str
    #: the annotator whose label it is (None: the case's adjudicated `expected`)
    annotator: str | None = None

    def format(self) -> str:
        """`file:line: case 'name': message` (the case alone when it has no file), with
        `annotator 'x': ` before the message for an annotation's label."""
        who = f"case {self.case!r}"
        message = self.message if self.annotator is None else \
            f"annotator {self.annotator!r}: {self.message}"
        return f"{who}: {message}" if self.where == who else \
            f"{self.where}: {who}: {message}"


class LabelError(CaseError):
    """Bad labels, found before any judge call (exit 2); `problems` lists every one."""

    def __init__(self, problems: Sequence[LabelProblem]) -> None:
        self.problems = list(problems)
        lines = [p.format() for p in self.problems[:SHOWN]]
        if len(self.problems) > SHOWN:
            lines.append(f"... and {len(self.problems) - SHOWN} more")
        count = len(self.problems)
        super().__init__(f"{count} bad label{'s' if count != 1 else ''} (--lenient ignores "
                         "them with a warning each):\n  " + "\n  ".join(lines))


class LabelWarning(UserWarning):
    """A bad label the Python API dropped because it was called with `lenient=True`."""


def warn_ignored(problems: Sequence[LabelProblem]) -> None:
    """One `LabelWarning` per dropped label (the API's lenient mode; the CLI prints its own)."""
    for p in problems:
        warnings.warn(p.format(), LabelWarning, stacklevel=3)


def normalize_label(node: Any, value: Any) -> Any:
    """A label as the engine compares it: "true"/"false" strings are bools on a binary node
    and on a check node whose verdicts are bools (the labels judge reads them the same way)."""
    if _boolean(node) and isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def check_agrees(answer: Any, label: Any) -> bool:
    """Whether a check node's code verdict is its label, read as `normalize_label` reads
    it ("true" for true), when only the answer is at hand (a trace step, not the node)."""
    if isinstance(answer, bool) and isinstance(label, str) and label.lower() in ("true",
                                                                                  "false"):
        label = label.lower() == "true"
    return bool(answer == label and type(answer) is type(label))


def _boolean(node: Any) -> bool:
    """Whether the node's verdicts are true and false, as its labels are read: a judge's
    when its kind says so (binary), a check's when every verdict it declares is a bool (a
    python check may declare labels, or true and false)."""
    kind = find_kind(node.type)
    if kind is None or not node.is_judgement:
        return False
    if kind.in_code:
        values = verdict_values(node)
        return bool(values) and all(isinstance(v, bool) for v in values)
    return kind.boolean_verdicts(node)


def is_unsure(node: Any, value: Any) -> bool:
    """Whether `value`, labelling `node`, is `UNSURE` rather than a verdict: exactly the text
    "unsure", on a node with no verdict of that spelling."""
    if not isinstance(value, str) or value != UNSURE:
        return False
    return not any(v.verdict == UNSURE for v in getattr(node, "verdicts", None) or [])


def verdict_of(node: Judgement, value: Any) -> Verdict | None:
    """The verdict (or routed unsure branch) a label picks on a judgement or check node
    (None: it picks none); a map node's item labels pick what they aggregate to."""
    kind = find_kind(node.type)  # type: ignore[attr-defined]
    if kind is not None and kind.per_item:
        return labelled_outcome(node, value)  # type: ignore[arg-type]
    return node.verdict_for(normalize_label(node, value))


# --------------------------------------------------------------------------- one case


class LabelChecker:
    """The label check of one graph, one case at a time (`check(case)`), for a list or a
    stream alike. What does not depend on the case is worked out once: the compiled edges,
    each (node, label) verdict — a dataset repeats a handful of labels — and each labelled
    path's walk, memoised by the verdicts it follows."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.compiled = CompiledGraph.of(graph)
        #: (node id, label type, label) -> (class, message) or None, for hashable labels
        self._labels: dict[tuple[str, type, Any], tuple[str, str] | None] = {}
        #: the verdicts a labelled path follows -> (nodes it may reach, the path as text)
        self._walks: dict[tuple[tuple[int, int], ...], tuple[frozenset[int], str]] = {}

    def check(self, case: Case) -> list[LabelProblem]:
        """Every bad label of one case, in `KINDS` order per label, off-path ones last; then
        those of each annotation, in the order the case lists them."""
        problems = self._labels_of(case, case.expected or {}, case.expected_score, None)
        for a in case.annotations:
            problems += self._labels_of(case, a.expected, a.expected_score, a.by)
        return problems

    def _labels_of(self, case: Case, expected: dict[str, Any], score: Any,
                   annotator: str | None) -> list[LabelProblem]:
        """The bad labels of one label set of `case` (its own, or one annotator's)."""
        problems: list[LabelProblem] = []

        def bad(key: str, kind: str, message: str) -> None:
            problems.append(LabelProblem(case.name, case.where, key, kind, message, annotator))

        usable: list[str] = []
        nodes = self.graph.nodes
        for key, value in expected.items():
            nid = str(key)
            node = nodes.get(nid)
            if node is None:
                bad(nid, "unknown_node", _unknown(self.graph, nid, value))
                continue
            found = None if is_unsure(node, value) else self._label(node, value)
            if found is None:
                usable.append(nid)
            else:
                bad(nid, *found)
        number = isinstance(score, int | float) and not isinstance(score, bool)
        if score is not None and not (number and 0 <= score <= 1):
            shown = f"{score:g}" if number else verdict_text(score, quote=True)
            bad(SCORE_KEY, "out_of_range", f"{SCORE_KEY} {shown} is outside 0..1 (the graph's "
                "score; a leaf's 0..10 score divided by 10)")
        if usable:
            reached, path = self._walk(expected, usable)
            index = self.compiled.index
            for nid in usable:
                if index[nid] not in reached:
                    bad(nid, "off_path", f"node {nid!r} is labelled "
                        f"{verdict_text(expected[nid], quote=True)}, but the case's own labels "
                        f"never reach it (their path: {path}); remove the label, or fix the "
                        "labels above it")
        return problems

    def _label(self, node: Any, value: Any) -> tuple[str, str] | None:
        if isinstance(value, list | dict):  # not hashable: judged afresh (rare, cheap)
            return _label_problem(node, value)
        key = (node.id, type(value), value)
        try:
            return self._labels[key]
        except KeyError:
            found = _label_problem(node, value)
            if len(self._labels) < MEMO:  # free-text task labels: the memo stays bounded
                self._labels[key] = found
            return found
        except TypeError:  # an unhashable value of some other type
            return _label_problem(node, value)

    def _walk(self, expected: dict[str, Any], usable: list[str]
              ) -> tuple[frozenset[int], str]:
        """(the nodes the labels' path may reach, that path as text): `dagtui.run.schedule`'s
        arrival rule over the compiled edges. A task arrives at its children, a judgement
        or check node with a usable label at its verdict's node, one without at every node
        its verdicts lead to, so the set holds every node a run that agrees with the labels
        may reach."""
        nodes, index = self.graph.nodes, self.compiled.index
        chosen: dict[int, int] = {}
        for nid in usable:
            node = nodes[nid]
            if isinstance(node, Judgement):
                verdict = verdict_of(node, expected[nid])
                if verdict is not None:
                    chosen[index[nid]] = node.branches().index(verdict)
        key = tuple(sorted(chosen.items()))
        walked = self._walks.get(key)
        if walked is None:
            walked = self._walk_from(chosen)
            if len(self._walks) < MEMO:
                self._walks[key] = walked
        return walked

    def _walk_from(self, chosen: dict[int, int]) -> tuple[frozenset[int], str]:
        compiled, nodes = self.compiled, self.graph.nodes
        progress = Progress(compiled)
        reached: set[int] = set()
        path: list[str] = []
        while progress.ready:
            i = progress.ready[0]
            progress.take(i)
            reached.add(i)
            node = nodes[compiled.ids[i]]
            arrivals: Iterable[int] = compiled.targets[i]
            if i in chosen and isinstance(node, Judgement):
                verdict = node.branches()[chosen[i]]
                path.append(f"{node.id}={verdict_text(verdict.verdict)}")
                target = compiled.index.get(verdict.then) if verdict.then else None
                arrivals = () if target is None else (target,)
            elif node.is_scored_leaf:
                arrivals = ()
            for t in arrivals:
                progress.arrive(t)
        return frozenset(reached), " → ".join(path) or "no labelled verdict"


def label_problems(graph: Graph, case: Case) -> list[LabelProblem]:
    """Every bad label of one case (a `LabelChecker` of `graph` checks many faster)."""
    return LabelChecker(graph).check(case)


def _unknown(graph: Graph, nid: str, value: Any) -> str:
    hint = nearest(nid, list(graph.nodes))
    known = ", ".join(list(graph.nodes)[:12]) + (", ..." if len(graph.nodes) > 12 else "")
    return (f"a label for {nid!r} ({verdict_text(value, quote=True)}), which is no node of the "
            "graph" + (f" (did you mean {hint!r}?)" if hint else f" (its nodes: {known})"))


def nearest(word: str, choices: list[str]) -> str | None:
    """The choice `word` nearly matches (None: none does): the same but for case and
    spacing, else difflib's closest spelling. The one "did you mean" of label messages."""
    folded = [c for c in choices if _fold(c) == _fold(word)]
    if folded:
        return folded[0]
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return close[0] if close else None


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def _label_problem(node: Any, value: Any) -> tuple[str, str] | None:
    """(class, message) when `value` cannot be `node`'s label, else None."""
    kind = find_kind(node.type)
    shown = verdict_text(value, quote=True)
    nid = node.id
    if kind is None or kind.answer is None and not node.is_judgement:
        return None  # a type nobody registered: nothing known about its labels
    if kind.per_item:  # one label per item (`dagtui.labels.map_labels`)
        return map_label_problem(node, value)
    if kind.extracts:  # a task: evidence text, items, or {contains, text}
        if isinstance(value, int | float):  # a bool is an int too
            what = "a verdict" if isinstance(value, bool) else "a score"
            return "wrong_shape", (f"task node {nid!r} is labelled {shown}, {what}; a task's "
                                   "label is its evidence text, a list of items, or "
                                   "{contains = [...], text = \"...\"}")
        try:
            task_label(value)
        except TaskLabelError as exc:
            return "wrong_shape", f"task node {nid!r}: {exc}"
        return None
    if kind.scored:  # a G-Eval or metric leaf: a 0..10 score
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "wrong_shape", (f"scored leaf {nid!r} is labelled {shown}; its label is a "
                                   "score from 0 to 10")
        if not is_score(value):
            return "out_of_range", f"scored leaf {nid!r}: the score {shown} is outside 0..10"
        return None
    if not node.is_judgement:
        return None
    if isinstance(value, list | dict):
        return "wrong_shape", (f"node {nid!r} is a {kind.type} judgement, labelled with task "
                               f"items {shown}; item lists and {{contains, text}} tables label "
                               "task nodes")
    if verdict_of(node, value) is not None:
        return None
    return "not_a_verdict", _not_a_verdict(node, value, shown)


def _not_a_verdict(node: Judgement, value: Any, shown: str) -> str:
    verdicts = [v.verdict for v in node.verdicts]
    allowed = ", ".join(verdict_text(v, quote=True) for v in verdicts)
    nid = getattr(node, "id", "?")
    head = f"node {nid!r}: {shown} is not one of its verdicts ({allowed})"
    if _boolean(node):
        if isinstance(value, str) and _fold(value) in _TRUE_WORDS | _FALSE_WORDS:
            return f"{head}; did you mean {'true' if _fold(value) in _TRUE_WORDS else 'false'}?"
        return head
    labels = [str(v) for v in verdicts]
    hint = nearest(str(value), labels) if isinstance(value, str) else None
    if hint is None:
        return head
    how = "it differs only in case or spacing" if _fold(hint) == _fold(str(value)) else \
        "the nearest spelling"
    return f"{head}; did you mean {verdict_text(hint, quote=True)} ({how})?"


# --------------------------------------------------------------------------- many cases


def without(case: Case, problems: Sequence[LabelProblem]) -> Case:
    """`case` without the labels `problems` name (the same object when there are none):
    from its own `expected` or from the annotation whose annotator a problem names."""
    if not problems:
        return case

    def kept(expected: dict[str, Any], score: float | None, who: str | None
             ) -> tuple[dict[str, Any], float | None]:
        keys = {p.key for p in problems if p.annotator == who}
        return ({k: v for k, v in (expected or {}).items() if str(k) not in keys},
                None if SCORE_KEY in keys else score)

    expected, score = kept(case.expected, case.expected_score, None)
    annotations = tuple(dataclasses.replace(a, expected=e, expected_score=sc)
                        for a in case.annotations
                        for e, sc in [kept(a.expected, a.expected_score, a.by)])
    return dataclasses.replace(case, expected=expected, expected_score=score,
                               annotations=annotations)


def check_cases(graph: Graph, cases: Iterable[Case], *, lenient: bool = False
                ) -> tuple[list[Case], list[LabelProblem]]:
    """(the cases, every bad label). Not lenient: `LabelError` when there is any. Lenient:
    each case comes back without its bad labels, and the problems are the warnings."""
    checker = LabelChecker(graph)
    out: list[Case] = []
    found: list[LabelProblem] = []
    for case in cases:
        problems = checker.check(case)
        found += problems
        out.append(without(case, problems))
    if found and not lenient:
        raise LabelError(found)
    return out, found


def scan(graph: Graph, cases: Iterable[Case]) -> list[LabelProblem]:
    """Every bad label of `cases` (read once, one case at a time: a stream stays lazy)."""
    checker = LabelChecker(graph)
    return [p for case in cases for p in checker.check(case)]


class LenientCases:
    """Cases read per pass (a `dagtui.run.case_stream.CaseStream`), each yielded without its
    bad labels: `--lenient` on a dataset that is never held in memory."""

    def __init__(self, graph: Graph, cases: Any) -> None:
        self.cases = cases
        self.checker = LabelChecker(graph)

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case]:
        for case in self.cases:
            yield without(case, self.checker.check(case))


def ignored_summary(problems: Sequence[LabelProblem]) -> str:
    """`3 labels ignored: 2 unknown node, 1 off the labelled path` ("" for none)."""
    if not problems:
        return ""
    counts = Counter(p.kind for p in problems)
    parts = ", ".join(f"{counts[k]} {KIND_NAMES[k]}" for k in KINDS if counts[k])
    n = len(problems)
    return f"{n} label{'s' if n != 1 else ''} ignored (--lenient): {parts}"
