"""Reading an input file without trusting what the path names.

Every file dagtui reads — a graph, a suite, a cases file, a trace, a DeepEval document, a JSON
Schema, the key map — comes through `read_text` (or `read_bytes`), because a path on a command
line can name anything: a FIFO that never delivers (reading it blocks forever), `/dev/zero`
(endless bytes: memory grows until the machine gives up), a directory, a socket, or a regular
file of a gigabyte that would be read whole only to be refused. So the path is `stat`ed first
and only a regular file goes on; the size is checked against the kind's limit before a byte is
read; the file is opened with `O_NONBLOCK`, so a path swapped for a FIFO between the `stat` and
the `open` cannot block (the opened descriptor is checked again); and at most limit + 1 bytes
are read, so a file that grows under us is still refused. Problems raise `InputError`, which
callers turn into their own diagnostic (DAG022, SUI017, `CaseError`): a message naming the
file, and the line when there is one, and exit 2 on the command line.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

MiB = 1024 * 1024

#: Graph and suite files, and the key map: a rubric is a few KB of TOML; 4 MiB is hundreds of
#: nodes' worth of prose, and anything bigger is a wrong path, not a graph.
TOML_LIMIT = 4 * MiB
#: DeepEval DAG documents and JSON Schema files: JSON is wordier than TOML (uuid ids, nested
#: children), so four times the TOML limit.
JSON_LIMIT = 16 * MiB
#: Saved traces: every prompt and raw reply of one case, with its contexts repeated per node;
#: long retrieval contexts on a deep graph reach tens of MB, so 256 MiB leaves headroom.
TRACE_LIMIT = 256 * MiB
#: Cases files: a dataset carries whole outputs and retrieval contexts for thousands of
#: cases, so hundreds of MB are real; the file is held in memory as text and as parsed cases
#: (a few times its size), so past 512 MiB it is refused rather than risking the machine.
CASES_LIMIT = 512 * MiB

_READ_CHUNK = 4 * MiB
#: O_NONBLOCK: a path swapped for a FIFO after the stat cannot block the open
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) \
    | getattr(os, "O_CLOEXEC", 0)


class InputError(ValueError):
    """A file cannot be used as input. `message` is the bare reason; `str()` adds
    `file:line:` (or `file:`) in front, so it can be printed as is. `kind` lets a caller
    word a case its own way: "missing", "special" (FIFO, device, directory, socket),
    "too_large", "unreadable" or "not_utf8"."""

    def __init__(self, message: str, file: str | None = None, line: int = 0, col: int = 0,
                 *, kind: str = "unreadable") -> None:
        self.message = message
        self.kind = kind
        self.file = file
        self.line = line
        self.col = col
        where = f"{file}:{line}: " if file and line else (f"{file}: " if file else "")
        super().__init__(f"{where}{message}")


def file_type(mode: int) -> str | None:
    """What a non-regular file is, in words ("a FIFO (named pipe)", ...); None for a regular
    file, the only kind dagtui reads."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def regular_files(paths: Iterable[Path], report: Callable[[str], None]) -> list[Path]:
    """The regular files among `paths` (found by a directory walk), sorted. A FIFO, socket
    or device among them is never opened (a FIFO would block the walk for good): `report`
    gets one line naming it and what it is. Directories and broken links drop out quietly,
    as `Path.is_file` has always dropped them."""
    out: list[Path] = []
    for p in sorted(paths):
        try:
            mode = os.stat(p).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode):
            out.append(p)
        elif not stat.S_ISDIR(mode):
            report(f"{p}: skipped: is {file_type(mode)}, not a regular file")
    return out


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n} bytes"


def _limit(n: int) -> str:
    return f"{n // MiB} MiB" if n >= MiB else f"{n} bytes"


def read_bytes(path: str | os.PathLike[str], *, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them (see module doc).

    `what` names the expected kind in messages ("graph file", "cases file").
    """
    return read_bytes_stat(path, limit=limit, what=what)[0]


def read_bytes_stat(path: str | os.PathLike[str], *, limit: int, what: str = "file",
                    ) -> tuple[bytes, os.stat_result]:
    """`read_bytes`, with the `fstat` of the file as opened (for a caller that stamps what
    it read, to notice a later change)."""
    file = os.fspath(path)
    fd, st = open_checked(file, limit=limit, what=what)
    try:
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, _READ_CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file) from None
    finally:
        os.close(fd)
    if left <= 0:
        raise InputError(f"grew past the {_limit(limit)} limit for a {what} while being read",
                         file, kind="too_large")
    return b"".join(chunks), st


def open_checked(path: str | os.PathLike[str], *, limit: int, what: str = "file",
                 ) -> tuple[int, os.stat_result]:
    """A read-only descriptor on the regular file at `path` and its `fstat`, refused (an
    `InputError`) before a byte is read when the file is missing, not a regular file, or
    over `limit` (see module doc). For a reader that goes through the file in its own way
    (`dagtui.run.case_stream`, line by line); the caller closes the descriptor."""
    file = os.fspath(path)
    try:
        check_stat(os.stat(file), file, limit, what)
        fd = os.open(file, _OPEN_FLAGS)
    except FileNotFoundError:
        raise InputError("no such file", file, kind="missing") from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file) from None
    try:
        st = os.fstat(fd)
        check_stat(st, file, limit, what)  # the path may have been swapped since the stat
    except OSError as exc:
        os.close(fd)
        raise InputError(f"cannot read: {exc.strerror or exc}", file) from None
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def check_stat(st: os.stat_result, file: str, limit: int, what: str) -> None:
    """Refuse (`InputError`) what a `stat` says must not be read: anything but a regular
    file (a FIFO would block, a device never ends), or a file over `limit` bytes; `what`
    names the expected kind in the message."""
    kind = file_type(st.st_mode)
    if kind:
        raise InputError(f"is {kind}, not a regular file (a {what} was expected)", file,
                         kind="special")
    if st.st_size > limit:
        raise InputError(f"file is {_size(st.st_size)}; a {what} is limited to {_limit(limit)}",
                         file, kind="too_large")


def decode(data: bytes, file: str | None = None, what: str = "file", *, offset: int = 0,
           line: int = 1) -> str:
    """UTF-8 text, or an `InputError` naming the line and column of the first bad byte.

    `offset` and `line`: where `data` starts in its file, for a reader that decodes a file
    piece by piece (`dagtui.run.case_stream`), so the error names the same place as decoding
    the whole file would."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line += data.count(b"\n", 0, exc.start)
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(f"{what} is not UTF-8 text (bad byte 0x{data[exc.start]:02x} at "
                         f"offset {offset + exc.start})", file, line, col,
                         kind="not_utf8") from None


def read_text(path: str | os.PathLike[str], *, limit: int, what: str = "file") -> str:
    """The UTF-8 text of the regular file at `path` (see `read_bytes`); line endings and a
    BOM are kept as they are."""
    return decode(read_bytes(path, limit=limit, what=what), os.fspath(path), what)



#: Python refuses to turn more digits than this into an int (`sys.get_int_max_str_digits`)
_MAX_DIGITS = sys.get_int_max_str_digits() or 4300
_LONG_NUMBER = re.compile(rf"[0-9][0-9_]{{{_MAX_DIGITS},}}")


def parser_gave_up(exc: BaseException, text: str) -> tuple[str, int]:
    """(message, line) for the two ways a JSON or TOML parser fails outside its own error
    type: `RecursionError` on nesting thousands deep, and `ValueError` on an integer longer
    than Python converts (4,300 digits). The line is where the nesting passes a depth no real
    document has, or where the long number starts (0 when it cannot be found)."""
    if isinstance(exc, RecursionError):
        return "nesting too deep (more than a few hundred levels of [ or {)", _deep_line(text)
    m = _LONG_NUMBER.search(text)
    line = text.count("\n", 0, m.start()) + 1 if m else 0
    digits = sum(ch.isdigit() for ch in m.group()) if m else 0
    what = f"a number of {digits:,} digits" if digits else "a number too long to read"
    return f"{what} (Python reads at most {_MAX_DIGITS:,})", line


def _deep_line(text: str, depth: int = 500) -> int:
    """The line where bracket nesting first exceeds `depth` (0 when it never does)."""
    return next((line for _, level, line in open_brackets(text) if level > depth), 0)


def open_brackets(text: str) -> Iterator[tuple[str, int, int]]:
    """(bracket, depth it opens, line) for each `[` or `{` outside strings of JSON or TOML
    text: a scan that needs no parser, so it works on text a parser gave up on."""
    level = 0
    line = 1
    in_str = escape = False
    quote = ""
    for ch in text:
        if ch == "\n":
            line += 1
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote:
                in_str = False
            continue
        if ch in "\"'":
            in_str, quote = True, ch
        elif ch in "[{":
            level += 1
            yield ch, level, line
        elif ch in "]}":
            level -= 1
