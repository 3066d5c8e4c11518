"""Results written as cases finish: `--json out.json` also writes `out.results.jsonl`.

A run over a large dataset can take hours; its JSON summary is written at the end. Beside it,
each case's result (with its steps, as in the summary's `results`) is appended as one JSON
line the moment the case ends, and flushed: a run that is stopped or dies still leaves every
finished case on disk, and a consumer can follow the file while the run goes on. Lines are in
the order cases finish, not the dataset's; text is made writable as in every report
(`dagtui.outputs.safe_json`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def results_path(json_out: str | Path) -> Path:
    """`out.json` -> `out.results.jsonl` (any other name gets `.results.jsonl` added)."""
    path = Path(json_out)
    stem = path.name[:-5] if path.name.endswith(".json") else path.name
    return path.with_name(stem + ".results.jsonl")


class ResultsStream:
    """One JSON line per finished case, flushed as it is written."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", encoding="utf-8")
        self.written = 0

    def write(self, result: Any) -> None:
        from .outputs import safe_json

        self._file.write(safe_json(result.to_dict(), indent=None) + "\n")
        self._file.flush()
        self.written += 1

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> ResultsStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
