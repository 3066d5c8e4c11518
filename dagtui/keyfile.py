"""The user's key remaps: binding id -> key(s), from `DAGTUI_KEYS` or a keys file.

Every binding of the editor, the debugger and the suite view has an id (F1 lists them).
`dagtui edit` and `dagtui step` read remaps from the environment variable `DAGTUI_KEYS`
(`editor.rename=n;editor.save=ctrl+w`) and from `$XDG_CONFIG_HOME/dagtui/keys.toml` (default
`~/.config/dagtui/keys.toml`), a flat table of `"editor.rename" = "n"` lines; the variable
wins. One file serves every screen, so an id is checked against the ids of all of them: a
typo is refused before the UI opens instead of silently doing nothing. Tests and screenshots
never read either, so pictures do not depend on the machine.

This module is the part the commands run before any UI exists, so it never imports Textual
or the TUI; the table of binding ids lives in `dagtui.tui.keys`.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from .inputs import TOML_LIMIT, InputError, read_text


class KeymapError(ValueError):
    """A remap that cannot be used (the message says which part)."""


def keys_file() -> Path:
    """Where the keys file is looked for (it need not exist)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "dagtui" / "keys.toml"


def parse_env(value: str) -> dict[str, str]:
    """`id=key;id=key` (whitespace ignored)."""
    out: dict[str, str] = {}
    for part in value.split(";"):
        part = part.strip()
        if not part:
            continue
        binding_id, sep, key = part.partition("=")
        if not sep or not binding_id.strip() or not key.strip():
            raise KeymapError(f"DAGTUI_KEYS: {part!r} is not id=key")
        out[binding_id.strip()] = key.strip()
    return out


def load_keymap(environ: Mapping[str, str] | None = None, path: Path | None = None,
                ) -> dict[str, str]:
    """The user's remaps (empty when there are none), unchecked."""
    environ = os.environ if environ is None else environ
    path = keys_file() if path is None else path
    keymap: dict[str, str] = {}
    if path.exists():  # a FIFO, a directory or a device there is refused, not skipped
        try:
            data = tomllib.loads(read_text(path, limit=TOML_LIMIT, what="key map"))
        except InputError as exc:
            raise KeymapError(str(exc)) from None
        except (OSError, ValueError, RecursionError) as exc:  # TOMLDecodeError is a ValueError
            raise KeymapError(f"{path}: {exc}") from None
        for binding_id, key in data.items():
            if not isinstance(key, str):
                raise KeymapError(f"{path}: {binding_id} must be a key string like \"n\"")
            keymap[binding_id] = key
    if environ.get("DAGTUI_KEYS"):
        keymap.update(parse_env(environ["DAGTUI_KEYS"]))
    return keymap


def unknown_ids(keymap: Mapping[str, str], known: Iterable[str]) -> list[str]:
    """The remapped ids that no binding has, sorted."""
    known = set(known)
    return sorted(k for k in keymap if k not in known)


def checked_keymap(known: Callable[[], Iterable[str]],
                   environ: Mapping[str, str] | None = None,
                   path: Path | None = None) -> dict[str, str]:
    """`load_keymap`, refusing ids that no screen has. `known()` gives every screen's ids
    (the file is shared, so another screen's id is fine, just unused here); it is called
    only when there are remaps, as collecting the ids imports every screen."""
    keymap = load_keymap(environ, path)
    unknown = unknown_ids(keymap, known()) if keymap else []
    if unknown:
        raise KeymapError(f"unknown binding id(s) in the key remaps: {', '.join(unknown)} "
                          "(F1 lists the ids)")
    return keymap
