"""dagtui's working directory, `.dagtui/`: the judge cache, the calibration results and the
traces the debugger saves live there, never loose in a repository.

It belongs to the graph, not to the directory a command happens to run from
(`workdir_for`): the nearest `.dagtui/` in the graph's folder or above it, else one beside
the graph. So `dagtui run graphs/g.toml` from the repository root and `dagtui run g.toml`
from graphs/ share one cache, and the editor's calibration view finds what `dagtui
calibrate` saved wherever each was started. A calibration file is named by the graph's path
relative to the folder holding `.dagtui/` (`calibration_file`), so `a/g.toml` and
`b/g.toml` keep their own. The search stops at a repository root (a folder holding `.git`)
and at the home directory, and never uses a shared, world-writable folder such as /tmp (a
`.dagtui/` there belongs to no project, and anyone could have made it). `DAGTUI_DIR` names
one directory for every graph instead (a CI job's cache; each test's own folder).
docs/files.md says the same for users.

Whoever creates it (the cache, the debugger) goes through `ensure_workdir`, so the directory
always holds a `.gitignore` of `*`: what dagtui writes there is machine state (a cache, run
traces) that must not be committed by a `git add .`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

#: the directory's name
DEFAULT_DIR = ".dagtui"
#: the environment variable that names the one working directory of every graph
ENV = "DAGTUI_DIR"
#: what the `.gitignore` inside it says: ignore everything, itself included
GITIGNORE = "*\n"


def ensure_workdir(directory: str | Path | None = None) -> Path:
    """Create `directory` (default `./.dagtui`) if missing and return it. A directory dagtui
    creates, or any directory named `.dagtui`, gets a `.gitignore` of `*` when it has none
    (a `--cache-dir` the user made is left as it is). Raises OSError when it cannot."""
    base = Path(directory) if directory is not None else Path.cwd() / DEFAULT_DIR
    created = not base.is_dir()
    base.mkdir(parents=True, exist_ok=True)
    ignore = base / ".gitignore"
    if (created or base.name == DEFAULT_DIR) and not ignore.exists():
        # a read-only place still works as a cache; only the hint is lost
        with contextlib.suppress(OSError):
            ignore.write_text(GITIGNORE, encoding="utf-8")
    return base


def workdir_for(target: str | os.PathLike[str] | None) -> Path:
    """The `.dagtui/` of the graph (or any file) at `target`, not created: see
    `workdir_from` on its folder. `target` None (a graph with no file): `./.dagtui`.
    `DAGTUI_DIR`, when set, is the answer for every target."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    if target is None or not str(target):
        return Path.cwd() / DEFAULT_DIR
    return workdir_from(_folder_of(target))


def workdir_from(folder: str | os.PathLike[str]) -> Path:
    """The nearest existing `.dagtui/` from `folder` upwards (stopping after a repository
    root or the home directory, and before a world-writable folder), else the one in
    `folder`; not created. `DAGTUI_DIR`, when set, is the answer for every folder."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    start = Path(os.path.abspath(folder)).resolve()
    home = _home()
    for place in (start, *start.parents):
        if _shared(place):
            break
        candidate = place / DEFAULT_DIR
        if candidate.is_dir():
            return candidate
        if place == home or (place / ".git").exists():
            break
    return start / DEFAULT_DIR


def _folder_of(target: str | os.PathLike[str]) -> Path:
    """The folder of the file at `target`, symbolic links in it resolved (the file's own
    name kept: a linked graph is keyed where the link is)."""
    return Path(os.path.abspath(target)).parent.resolve()


def calibration_file(graph_path: str | os.PathLike[str]) -> Path:
    """Where `dagtui calibrate` keeps the latest result for the graph at `graph_path` and
    the editor reads it: `calibration/<path relative to the .dagtui's folder>.json` in the
    graph's `.dagtui/` (`graphs/g.toml` -> `.dagtui/calibration/graphs/g.json`)."""
    base = workdir_for(graph_path)
    graph = _folder_of(graph_path) / Path(graph_path).name
    try:
        relative = graph.relative_to(base.parent)
    except ValueError:  # a DAGTUI_DIR elsewhere: the whole path keeps graphs apart
        relative = graph.relative_to(graph.anchor)
    return base / "calibration" / relative.with_suffix(".json")


def traces_dir(graph_path: str | os.PathLike[str] | None = None) -> Path:
    """`traces/` in the graph's `.dagtui/` (`./.dagtui` without a graph), created: where the
    debugger and the test integrations save traces by default."""
    path = ensure_workdir(workdir_for(graph_path)) / "traces"
    path.mkdir(exist_ok=True)
    return path


def shown_path(path: str | os.PathLike[str]) -> str:
    """`path` as a message shows it: relative to the current directory when below it (the
    `.dagtui/` of a graph may now be anywhere), else as given."""
    p = Path(path)
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return p.as_posix()


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, OSError):  # no home directory known
        return None


def _shared(folder: Path) -> bool:
    """World-writable (like /tmp): no project's folder, and not to be trusted."""
    try:
        mode = folder.stat().st_mode
    except OSError:
        return True
    return bool(mode & stat.S_IWOTH)


def prepare_output(path: str | Path) -> None:
    """Before writing `path`: when it lies inside a `.dagtui` directory, create that
    directory through `ensure_workdir` (so it gets its `.gitignore`) and the rest of the
    parents; elsewhere nothing (the writer creates plain parents itself)."""
    p = Path(path)
    for parent in reversed(p.parents):
        if parent.name == DEFAULT_DIR:
            ensure_workdir(parent)
            p.parent.mkdir(parents=True, exist_ok=True)
            return
