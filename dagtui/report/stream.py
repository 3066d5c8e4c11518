"""Results written as cases finish: `--json out.json` also writes `out.results.jsonl`.

A run over a large dataset can take hours; its JSON summary is written at the end. Beside it,
each case's result (with its steps, as in the summary's `results`) is written as one JSON
line the moment the case ends, and flushed. Lines are in the order cases finish, not the
dataset's; text is made writable as in every report (`dagtui.report.outputs.safe_json`).

The file is written like every file dagtui writes (`dagtui.safewrite.atomic_writer`): a FIFO,
a directory or a read-only file there is refused before the run starts (a symlink is
followed), and the lines go to a temp file beside it (`.NAME.dagtui-PID.tmp`, which a consumer
can follow) that replaces `NAME` when the run ends, or is stopped with Ctrl-C: every finished
case is kept, and a previous run's file is never left half overwritten. A failure while the
file is put in place (a full disk) is kept in `error`, as a failed line is, and said once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, Any

from dagtui.report.outputs import results_path

__all__ = ["Finished", "ResultLog", "ResultsStream", "results_path", "slim"]


class ResultsStream:
    """One JSON line per finished case, flushed as it is written; put in place by `close`.

    Opening raises `OSError` (`dagtui.safewrite.WriteRefused` for a FIFO or a read-only
    file) before anything is written."""

    def __init__(self, path: str | Path) -> None:
        from dagtui.safewrite import atomic_writer

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer: AbstractContextManager[IO[Any]] | None = atomic_writer(self.path)
        self._file = self._writer.__enter__()  # the refusals are raised here
        self.written = 0
        #: the write that failed (`write_kept`, or putting the file in place); nothing is
        #: written after it
        self.error: OSError | None = None

    def write(self, result: Any, **head: Any) -> None:
        """`result`'s line, after the fields of `head` (a suite's `rule`)."""
        from dagtui.report.outputs import safe_json

        self._file.write(safe_json({**head, **result.to_dict()}, indent=None) + "\n")
        self._file.flush()
        self.written += 1

    def write_kept(self, result: Any, **head: Any) -> bool:
        """`write`, a failure kept in `error` (and no line written after it) rather than
        raised into the run; True when the line was written."""
        if self.error is not None:
            return False
        try:
            self.write(result, **head)
        except OSError as exc:  # full disk, a directory removed meanwhile
            self.error = exc
            return False
        return True

    def close(self) -> None:
        """Put the lines written so far in place of the file, whether the run ended or was
        stopped (a KeyboardInterrupt on its way up): each finished case is kept. A failure
        (full disk on the last flush) leaves the old file untouched and is kept in `error`
        for the caller to say, never raised."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        try:
            writer.__exit__(None, None, None)
        except OSError as exc:
            if self.error is None:
                self.error = exc

    def __enter__(self) -> ResultsStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def slim(result: Any) -> None:
    """Drop, in place, what makes a finished case heavy in memory: each step's prompt,
    request and raw answer (and each call's). Called once the case is in the results stream
    (and its trace written), which keep them; the run's summary needs none of them, so a
    large dataset keeps ~5x less per case in memory."""
    for step in result.steps:
        step.prompt = step.request = step.raw = None
        for call in step.calls:
            call.request = {}
            call.raw = None


class Finished:
    """What `dagtui run` does with each case the moment it ends: its line in the results
    stream, its trace (`--trace-dir`), its labels' agreement counted, the progress line,
    then `slim` when the stream holds the details. A failed write is kept (`error`) and
    said after the run, not raised into it. Called as `on_case(position, case, result)`."""

    def __init__(self, stream: ResultsStream | None, progress: Any, *,
                 traces: Any = None, agreement: Any = None) -> None:
        self.stream = stream
        self.progress = progress
        #: (position, case, result) -> None writing the case's trace, or None without
        #: --trace-dir
        self.traces = traces
        #: a `dagtui.calibration.summary.Agreement` to count the case in, or None
        self.agreement = agreement
        self.error: OSError | None = None

    def __call__(self, position: int, case: Any, result: Any) -> None:
        if self.error is None:
            try:
                if self.stream is not None:
                    self.stream.write(result)
                if self.traces is not None:
                    self.traces(position, case, result)
            except OSError as exc:  # full disk, a directory removed meanwhile
                self.error = exc
        if self.agreement is not None:
            self.agreement.add(position, case, result)
        if self.stream is not None and self.error is None:
            slim(result)
        self.progress.add(result)


class ResultLog:
    """A run's results in dataset order, kept in a temporary file instead of memory.

    `add(position, result)` takes each case as it finishes (in any order), counts it in
    `tally` and writes it as one JSON line; reading (`dicts()`, iteration) gives the
    results back in dataset order. Text is written ASCII-escaped, so any string a result
    holds (a lone surrogate included) comes back exactly as it was. Memory: the tally and
    8 bytes a case."""

    def __init__(self) -> None:
        import tempfile
        from array import array

        from dagtui.run.tally import Tally

        self.tally = Tally()
        self._file = tempfile.TemporaryFile("w+b")  # noqa: SIM115 - open for the run
        self._offsets = array("q")

    def add(self, position: int, result: Any) -> None:
        import json

        while len(self._offsets) <= position:
            self._offsets.append(-1)
        self._file.seek(0, 2)
        self._offsets[position] = self._file.tell()
        self._file.write(json.dumps(result.to_dict(), default=str).encode("ascii") + b"\n")
        self.tally.add(position, result)

    def __len__(self) -> int:
        return self.tally.cases

    def __bool__(self) -> bool:
        return self.tally.cases > 0

    def dicts(self) -> Iterator[dict[str, Any]]:
        """Each result's `to_dict()`, in dataset order."""
        import json

        for offset in self._offsets:
            if offset < 0:
                continue
            self._file.seek(offset)
            yield json.loads(self._file.readline())

    def __iter__(self) -> Iterator[Any]:
        from dagtui.report.trace import RunResult

        for data in self.dicts():
            yield RunResult.from_dict(data)

    def close(self) -> None:
        self._file.close()
