"""`dagtui fmt GRAPH.toml...`: rewrite graph files in the canonical layout, comments kept.

Like `gofmt`/`black` for rubrics: `[metric]` first, node keys in canonical order, verdicts one
per line. Files are replaced atomically and only when the layout actually changes. `--check`
lists what would change and exits 1 (for CI); `--diff` prints a unified diff instead of
writing (and also exits 1 when there is a difference). A file that does not parse is reported as `file:line:col: error DAG001 ...` and left
untouched (exit 2). A read-only file, or one changed on disk while it was being
formatted, is not written either (exit 2; see `dagtui.safewrite`). No input produces a
traceback.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dagtui.exitcodes import ExitCode
from dagtui.text import counted, say

if TYPE_CHECKING:
    from dagtui.graph.loader import LoadResult
    from dagtui.safewrite import Stamp


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fmt",
        help="rewrite graph files in the canonical layout (comments kept)",
        description="Rewrite graph files in the canonical layout, keeping every comment. "
        "Exit 0 when nothing needed changing (or it was rewritten), 1 with --check/--diff "
        "when a file would change, 2 when a file cannot be read or parsed.",
    )
    p.add_argument("paths", nargs="+", metavar="GRAPH.toml",
                   help="graph files, or directories (their *.toml files, recursively)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; list files that would change and exit 1 if any")
    p.add_argument("--diff", action="store_true",
                   help="write nothing; print a unified diff of the changes")
    p.set_defaults(func=run)


def _files(paths: list[str]) -> list[tuple[Path, LoadResult | None]]:
    """Graph and suite files to format, each with what reading it to know its kind loaded
    (None when it was not read: the format reads it). Cases files (`[[cases]]` TOML) have
    no canonical graph layout, so a directory search skips them and a named one is skipped
    with a note, as `validate` does (`dagtui.commands.validate.file_kind` decides)."""
    from dagtui.commands.validate import file_kind
    from dagtui.graph.analysed import CheckedGraph

    out: list[tuple[Path, LoadResult | None]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():  # a FIFO named *.toml is reported, never opened (it would block)
            from dagtui.inputs import regular_files

            found = regular_files(p.rglob("*.toml"), lambda line: say(line, file=sys.stderr))
            for f in found:
                checked = CheckedGraph.read(f)
                if file_kind(f, checked) != "cases":
                    out.append((f, checked.load))
        elif p.is_file():
            checked = CheckedGraph.read(p)
            if file_kind(p, checked) == "cases":
                say(f"{p}: skipped: a cases file (fmt formats graph and suite files)",
                    file=sys.stderr)
            else:
                out.append((p, checked.load))
        else:
            out.append((p, None))
    return out


def _error(path: Path, message: str, line: int = 0, col: int = 0, code: str = "DAG022") -> None:
    where = f"{path}:{line}:{col}" if line else f"{path}"
    say(f"{where}: error {code} {message}", file=sys.stderr)


def _read(path: Path, result: LoadResult | None) -> tuple[str, Stamp] | None:
    """The file's text and the stamp of what was read (the write refuses if the file
    changes meanwhile), or None after printing why it cannot be formatted. `result`: the
    file as `_files` loaded it (None: loaded here)."""
    from dagtui.graph.loader import load_file
    from dagtui.safewrite import read_text

    result = result or load_file(path)
    if result.text is None or not result.parsed:
        for d in result.diagnostics:
            if d.is_error:
                _error(path, d.message, d.line, d.col, d.code)
                break
        else:
            _error(path, "cannot be read as a graph file")
        return None
    # the loader strips a BOM; keep the raw text so an unchanged file stays byte-identical
    try:
        return read_text(path, universal_newlines=False)  # keep CRLF line endings as they are
    except (OSError, ValueError) as exc:  # pragma: no cover - raced with a change (a FIFO
        # swapped in: dagtui.inputs.InputError; not UTF-8: UnicodeDecodeError, both ValueError)
        _error(path, f"cannot read file: {exc}")
        return None


def _as_loaded(text: str) -> str:
    """`text` as the loader keeps it (no BOM, LF line ends), to compare with what it read."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def run(args: argparse.Namespace) -> int:
    from dagtui.graph.tomlio import FormatError, SaveError, atomic_write, format_text

    status = ExitCode.OK
    changed: list[Path] = []
    files = _files(args.paths)
    for path, loaded in files:
        read = _read(path, loaded)
        if read is None:
            status = ExitCode.USAGE
            continue
        text, stamp = read
        # the data the kind check parsed, when the text is still what it parsed
        same = loaded is not None and loaded.text == _as_loaded(text)
        try:
            formatted = format_text(text, data=loaded.raw if same and loaded else None)
        except (FormatError, SaveError) as exc:
            _error(path, f"not formatted: {exc}", code="DAG001")
            status = ExitCode.USAGE
            continue
        except (Exception, RecursionError) as exc:  # never a traceback, whatever the input
            _error(path, f"not formatted: {type(exc).__name__}: {exc}", code="DAG001")
            status = ExitCode.USAGE
            continue
        if formatted == text:
            continue
        changed.append(path)
        if args.diff:
            sys.stdout.writelines(difflib.unified_diff(
                text.splitlines(keepends=True), formatted.splitlines(keepends=True),
                fromfile=f"{path} (original)", tofile=f"{path} (formatted)"))
        elif args.check:
            say(f"would reformat {path}")
        else:
            try:
                atomic_write(path, formatted, expected=stamp)
            except OSError as exc:  # read-only, or changed on disk meanwhile (WriteRefused)
                _error(path, f"cannot write: {exc.strerror or exc}")
                status = ExitCode.USAGE
                continue
            say(f"reformatted {path}")
    if status == ExitCode.OK and changed and (args.check or args.diff):
        status = ExitCode.FAILURES
    if status == ExitCode.OK and not changed and files:  # say so: silence reads as "did not run"
        print(f"ok: {counted(len(files), 'file')} already formatted",
              file=sys.stderr if args.diff else sys.stdout)  # a diff stays a diff
    return status
