"""Sinks: what receives each case of a run the moment it finishes.

`dagtui.run.execute.execute` tells every sink of a run about each finished case (a `Done`)
in the order they are given, then drops the result's heavy text (prompts, requests, raw
answers: `dagtui.report.stream.slim`) when a sink said it keeps them on disk. The results
stream, the trace files and the labels' agreement live here; the progress lines and the
per-rule lines of a suite are the command line's (`dagtui.commands.run`), any other caller
(the API, a test) passes its own object with these three methods.

A failed write is kept in the sink's `error` and said by the caller after the run, never
raised into it (an hour of judge calls is not lost to a full disk at case 900).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from dagtui.graph.model import Graph
    from dagtui.report.trace import RunResult
    from dagtui.suite.model import Rule


@dataclass(frozen=True)
class Done:
    """One finished case: where it is in the dataset, the case, its result, the judge
    that answered and the graph it ran; for a suite, the rule and the case as that rule saw
    it (the labels test narrows `expected` to the rule's own labels)."""

    position: int | None
    case: Any
    result: RunResult
    judge: Any
    graph: Graph
    rule: Rule | None = None
    seen: Any = None


class Sink(Protocol):
    """Receives the finished cases of a run (`dagtui.run.execute.execute`)."""

    def starting(self, total: int, judges: list[Any]) -> None:
        """The run is about to start: `total` cases, answered by `judges` (a suite's are
        made as its rules first need them: the list grows)."""
        ...

    def finished(self, done: Done) -> bool:
        """Take one finished case; True when its details are now kept on disk (so the run
        may drop them from memory)."""
        ...

    def rule_done(self, stats: Any, note: str) -> None:
        """A suite's rule has finished its cases (`stats`: `dagtui.suite.gating.RuleStats`;
        `note`: what held calls back meanwhile, "rpm 60", or "")."""
        ...

    def close(self) -> None:
        """The run ended, however it ended."""
        ...


class BaseSink:
    """A sink that does nothing: a concrete sink overrides what it needs."""

    error: OSError | None = None

    def starting(self, total: int, judges: list[Any]) -> None:
        return None

    def finished(self, done: Done) -> bool:
        return False

    def rule_done(self, stats: Any, note: str) -> None:
        return None

    def close(self) -> None:
        return None


class StreamSink(BaseSink):
    """`--json out.json`'s `out.results.jsonl` (or the API's `stream=`): one JSON line per
    finished case (a suite's pair with its `rule` first). Opening raises OSError."""

    def __init__(self, path: str | Path) -> None:
        from dagtui.report.stream import ResultsStream

        self.stream = ResultsStream(path)

    @property
    def error(self) -> OSError | None:  # type: ignore[override]
        return self.stream.error

    def finished(self, done: Done) -> bool:
        head = {"rule": done.rule.id} if done.rule is not None else {}
        return self.stream.write_kept(done.result, **head)

    def close(self) -> None:
        self.stream.close()


class TraceSink(BaseSink):
    """`--trace-dir DIR`: one trace per finished case (`dagtui.report.trace.Trace`), named by
    its place in the dataset; for a suite, per evaluated (case, rule) pair
    (`dagtui.suite.traces.TraceWriter`, which needs the run's `cases` to number them: given
    them, the directory is made here, and OSError raised, before the run)."""

    def __init__(self, directory: str | Path, cases: Any = None) -> None:
        self.directory = Path(directory)
        self.cases = cases
        self._writer: Any = None
        if cases is not None:
            self.writer()

    def finished(self, done: Done) -> bool:
        if self.error is not None:
            return False
        try:
            if done.rule is None:
                from dagtui.report.trace import save_trace

                save_trace(self.directory, done.position or 0, done.graph, done.case,
                           done.judge, done.result)
            else:
                self.writer().write(done.rule, done.graph, done.case, done.judge,
                                    done.result, seen=done.seen)
        except OSError as exc:  # full disk, a directory removed meanwhile
            self.error = exc
        return False

    def writer(self) -> Any:
        """The suite's trace writer (made at the first pair, with the run's cases)."""
        if self._writer is None:
            from dagtui.suite.traces import TraceWriter

            self._writer = TraceWriter(self.directory, self.cases or [])
        return self._writer


class AgreementSink(BaseSink):
    """The labels' agreement of a graph run (`dagtui.calibration.summary.Agreement`):
    labelled cases say how far the judge agrees with them, at no extra call."""

    def __init__(self, graph: Graph) -> None:
        from dagtui.calibration.summary import Agreement

        self.agreement = Agreement(graph)

    def finished(self, done: Done) -> bool:
        self.agreement.add(done.position or 0, done.case, done.result)
        return False

    def lines(self) -> list[str]:
        return list(self.agreement.lines())


def first_error(sinks: list[Any]) -> OSError | None:
    """The first write a sink could not make, or None."""
    for sink in sinks:
        if getattr(sink, "error", None) is not None:
            return sink.error
    return None
