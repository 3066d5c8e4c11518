"""dagtui's working directory, `.dagtui/` under the current directory: the judge cache and
the traces the debugger saves live there, never loose in a repository.

Whoever creates it (the cache, the debugger) goes through `ensure_workdir`, so the directory
always holds a `.gitignore` of `*`: what dagtui writes there is machine state (a cache, run
traces) that must not be committed by a `git add .`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

#: the directory's name, under the current working directory
DEFAULT_DIR = ".dagtui"
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


def traces_dir() -> Path:
    """`./.dagtui/traces`, created: where the debugger saves traces by default."""
    path = ensure_workdir() / "traces"
    path.mkdir(exist_ok=True)
    return path


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
