"""Output to a reader that went away (`dagtui validate bad.toml | head -1`) must not change
the exit code a command gives.

Python ignores SIGPIPE, so a write to a pipe whose reader has closed raises
BrokenPipeError wherever the command happens to be. Caught at the top, the command's own
answer (1: the graph has errors) would be lost, and a CI line like `set -o pipefail;
dagtui validate g.toml | head` would see whatever the catcher chose. `PipeGuard` stands in
for `sys.stdout` / `sys.stderr` while a command runs: after the first broken write it drops
the rest of the output (and points the file descriptor at the null device, so the
interpreter's last flush of buffered bytes cannot fail either), the command finishes as it
would have with its output read to the end, and its exit code reaches the shell.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO


class PipeGuard:
    """A text stream that forwards to `stream` until a write or flush meets a closed
    pipe, and from then on drops what it is given (`broken` says it happened)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._drop()
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._drop()

    def _drop(self) -> None:
        self.broken = True
        with contextlib.suppress(OSError, ValueError, AttributeError):
            fd = self._stream.fileno()  # a real pipe: the null device takes its place
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)
        with contextlib.suppress(OSError, ValueError):
            self._stream.flush()  # what was buffered now goes nowhere, quietly

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, buffer, ...
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_output() -> Iterator[None]:
    """`sys.stdout` and `sys.stderr` behind a `PipeGuard` while the block runs, restored
    after. A terminal is left as it is (it never raises BrokenPipeError, and the editor
    takes the terminal over)."""
    saved = sys.stdout, sys.stderr
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not _is_terminal(stream):
            setattr(sys, name, PipeGuard(stream))
    try:
        yield
    finally:
        for guard in (sys.stdout, sys.stderr):
            if isinstance(guard, PipeGuard):
                guard.flush()
        sys.stdout, sys.stderr = saved


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
