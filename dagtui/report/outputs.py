"""Where a run's reports go, checked before the first judge call, and text made safe to write.

A run can take an hour of paid judge calls; a `--json` that names a directory, a `--junit`
under a regular file or a `--trace-dir` in a read-only place must not be found out after it.
`check_file_target` / `check_dir_target` say what is wrong (naming the flag and the path)
before the run, so `dagtui run` exits 2 before it starts: they create missing directories
(the run would) and prove the directory takes a file by making and removing one. Reports are
then written with `write_report`, atomically.

Report text comes from users and from judges: case names, reasons, raw replies. A lone
surrogate (JSON allows `"\\udc80"`) cannot be encoded as UTF-8 at all, and NUL or an escape
byte is not allowed in XML 1.0. `safe_text` writes each such character as its visible escape
(`\\udc80`, `\\x00`, `\\x1b`), so the JSON is UTF-8 and the JUnit XML is well-formed whatever
the cases held, and nothing in a report can drive a terminal that prints it. Text for the
terminal itself has its own rule and home, dagtui/text.py (`say`).
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from dagtui.inputs import file_type
from dagtui.text import visible_escape

#: characters a report must not carry raw: C0 controls but tab, newline and carriage
#: return; DEL and the C1 controls; lone surrogates (not encodable); U+FFFE/U+FFFF (not XML)
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    return visible_escape(m.group())


def safe_text(text: str) -> str:
    """`text` with every character a report cannot hold raw written as its escape (see the
    module doc); tab and line breaks are kept. For a report, not a terminal: text shown
    there goes through `dagtui.text.say`, which also escapes bidi and zero-width ones."""
    return _UNSAFE.sub(_escape, text)


def results_path(json_out: str | Path) -> Path:
    """`out.json` -> `out.results.jsonl` (any other name gets `.results.jsonl` added): the
    file `dagtui.report.stream.ResultsStream` writes beside a `--json` report."""
    path = Path(json_out)
    stem = path.name[:-5] if path.name.endswith(".json") else path.name
    return path.with_name(stem + ".results.jsonl")


def safe_json(data: Any, *, indent: int | None = 2) -> str:
    """`data` as JSON that always encodes as UTF-8: control characters are escaped by JSON
    itself, and a lone surrogate becomes the visible text `\\udc80` rather than a character
    no UTF-8 file can hold (or a `\\udc80` escape strict JSON readers reject)."""
    text = json.dumps(data, indent=indent, ensure_ascii=False, default=str)
    return _SURROGATE.sub(lambda m: f"\\\\u{ord(m.group()):04x}", text)


def _mode(path: Path) -> int | None:
    """The file type bits of `path`, None when nothing is there (not even a parent)."""
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None


def _blocking_ancestor(path: Path) -> str | None:
    """When a missing `path` cannot be created because an ancestor is not a directory,
    say which one it is."""
    for parent in path.parents:
        mode = _mode(parent)
        if mode is not None:
            if stat.S_ISDIR(mode):
                return None
            return f"{parent} is {file_type(mode) or 'a regular file'}, not a directory"
    return None


def _writable_dir(directory: Path, flag: str, shown: str) -> str | None:
    """Create `directory` (and its parents) if missing, then prove files can be made in it
    by making one: permission bits say nothing when running as root, and a read-only mount
    or /proc refuses root too."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".dagtui-probe-", suffix=".tmp", dir=directory)
    except OSError as exc:
        return f"{flag} {shown}: cannot write in {directory}: {exc.strerror or exc}"
    os.close(fd)
    os.unlink(probe)
    return None


def check_file_target(path: str | os.PathLike[str], flag: str) -> str | None:
    """None when a report can be written to `path`: a regular file (not read-only) or none
    yet, in a directory files can be made in (created with its parents if missing); a
    character device such as `/dev/null` is accepted too. Else the message to print, naming
    `flag` and the path. Writes nothing but missing directories and a removed probe file."""
    return _check_target(path, flag, directory=False)


def check_dir_target(path: str | os.PathLike[str], flag: str) -> str | None:
    """None when files can be written in the directory `path` (created with its parents if
    missing); else the message to print, naming `flag` and the path."""
    return _check_target(path, flag, directory=True)


def _check_target(path: str | os.PathLike[str], flag: str, *, directory: bool) -> str | None:
    p = Path(path)
    if not str(path).strip():
        return f"{flag}: an empty path names no {'directory' if directory else 'file'}"
    try:
        mode = _mode(p)
    except OSError as exc:
        return f"{flag} {path}: {exc.strerror or exc}"
    if mode is None:
        blocked = _blocking_ancestor(p)
        if blocked:
            return f"{flag} {path}: {blocked}"
    elif directory:
        if not stat.S_ISDIR(mode):
            return (f"{flag} {path}: is {file_type(mode) or 'a regular file'}; a directory "
                    "is expected")
    elif stat.S_ISCHR(mode):
        return None if os.access(p, os.W_OK) else f"{flag} {path}: not writable"
    elif not stat.S_ISREG(mode):
        return f"{flag} {path}: is {file_type(mode)}; a file is expected"
    elif not mode & 0o222 or not os.access(p, os.W_OK):
        return f"{flag} {path}: the file is read-only"
    where = p if directory else p.parent  # a bare name's parent is "."
    return _writable_dir(where, flag, str(path))


def report_target_problems(*, json_out: str | None = None, junit: str | None = None,
                           trace_dir: str | None = None,
                           files: Mapping[str, str | None] | None = None,
                           inputs: Mapping[str, str | os.PathLike[str] | None] | None = None,
                           results_file: bool = False) -> list[str]:
    """What is wrong with a run's `--json`, `--junit` and `--trace-dir`, and any other
    report file in `files` (flag -> path); unset ones are skipped. `results_file`: `--json`
    also writes its `.results.jsonl` (`dagtui.report.stream`), checked as a report of its own.
    `inputs` (what it is -> path: the graph, the cases file) are files the command reads:
    an output that is one of them, or that another output also names, is refused
    (`clashes`). One message per bad flag, empty when every report can be written."""
    wanted: dict[str, str | None] = {"--json": json_out, "--junit": junit, **(files or {})}
    if results_file and json_out is not None:
        wanted["--json's results file"] = str(results_path(json_out))
    problems = [check_file_target(path, flag) for flag, path in wanted.items()
                if path is not None]
    if trace_dir is not None:
        problems.append(check_dir_target(trace_dir, "--trace-dir"))
    return [p for p in problems if p] + clashes(wanted, inputs or {})


def clashes(outputs: Mapping[str, str | os.PathLike[str] | None],
            inputs: Mapping[str, str | os.PathLike[str] | None]) -> list[str]:
    """An output (flag -> path) that is the same file as an input (what -> path) or as an
    earlier output, one message each: `--json cases.jsonl` must not overwrite the cases it
    reads, nor `--json X --junit X` one report with the other. The same file means the same
    inode where both exist (a symlink, a hard link, `./x` and `x`), else the same resolved
    path. A character device (`/dev/null`) may take several outputs."""
    problems: list[str] = []
    seen: list[tuple[str, str | os.PathLike[str]]] = []
    known = [(what, path) for what, path in inputs.items() if path is not None]
    for flag, path in outputs.items():
        if path is None or not str(path).strip() or _is_device(path):
            continue
        for what, other in known:
            if same_file(path, other):
                problems.append(f"{flag} {path}: is the {what} ({other}) this command reads; "
                                "not overwriting it")
                break
        else:
            for earlier, other in seen:
                if same_file(path, other):
                    problems.append(f"{flag} {path}: is the same file as {earlier} {other}; "
                                    "each output needs a file of its own")
                    break
        seen.append((flag, path))
    return problems


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """True when `a` and `b` name one file: the same inode when both exist, else the
    same path once symlinks and `..` are resolved."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.realpath(a) == os.path.realpath(b)


def _is_device(path: str | os.PathLike[str]) -> bool:
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def write_report(path: str | os.PathLike[str], text: str | Iterable[str]) -> None:
    """Write a report (JSON, JUnit, a trace): missing parents created, a regular file
    replaced atomically, a character device (`/dev/null`, `/dev/stdout`) written to.
    `text` may come in pieces (`json_document_parts`, `dagtui.report.junit.junit_parts`): they are written as they come, so a
    report of 100,000 cases is never one string in memory. Raises `OSError` when it cannot."""
    p = Path(path)
    try:
        is_device = stat.S_ISCHR(os.stat(p).st_mode)
    except FileNotFoundError:
        is_device = False
    parts = [text] if isinstance(text, str) else text
    if is_device:
        with open(p, "w", encoding="utf-8") as fh:
            fh.writelines(parts)
        return
    p.parent.mkdir(parents=True, exist_ok=True)
    from dagtui.safewrite import atomic_writer

    with atomic_writer(p) as fh:
        fh.writelines(parts)


def json_document_parts(head: Mapping[str, Any],
                        streamed: Mapping[str, Callable[[], Iterable[Any]]] | None = None,
                        ) -> Iterator[str]:
    """The one JSON report writer: `head` as `safe_json(head)` writes it, except that each
    key of `streamed` has its list written one item at a time from the callable (the value
    `head` holds for it is a placeholder). A run of many cases is then never held as one
    tree of dicts (that tree, not the text, is what made a large run's memory peak at the
    end); the text is the same as `safe_json` of the whole."""
    streamed = streamed or {}
    yield "{\n"
    for n, (key, value) in enumerate(head.items()):
        yield (",\n" if n else "") + f"  {safe_json(key)}: "
        items = streamed.get(key)
        if items is None:
            yield safe_json(value).replace("\n", "\n  ")
            continue
        empty = True
        for item in items():
            yield ("[\n" if empty else ",\n") + "    " + safe_json(item).replace("\n", "\n    ")
            empty = False
        yield "[]" if empty else "\n  ]"
    yield "\n}" if head else "}"


def write_document(path: str | Path, text: str) -> None:
    """`text` written atomically to `path` (`write_report`), a `.dagtui/` it creates given
    its `.gitignore` as the cache's is (`dagtui.workdir.prepare_output`): the one writer of
    the calibration, align and plan JSON files."""
    from dagtui.workdir import prepare_output

    prepare_output(Path(path))
    write_report(path, text)
