"""The user's key remaps: binding id -> key(s), from `DAGTUI_KEYS` or a keys file.

Every binding of the editor, the debugger and the suite view has an id (F1 and
`dagtui edit --list-keys` list them).
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

from dagtui.inputs import TOML_LIMIT, InputError, read_text

#: the command that lists every binding id and its key, named by the refusals below
LIST_KEYS = "dagtui edit --list-keys"


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


def conflicts(keymap: Mapping[str, str],
              scopes: Iterable[tuple[str, Mapping[str, str]]]) -> list[str]:
    """Two ids of one scope (keys that act together: a screen, a widget, a dialog) on one
    key once `keymap` is applied, at least one of them by the user's remap: only one of
    them could ever be pressed. `scopes`: (title, binding id -> default key(s)), keys
    comma-separated as Textual writes them. One line per clash, naming both ids."""
    out: list[str] = []
    for title, defaults in scopes:
        holder: dict[str, str] = {}
        for binding_id, default in defaults.items():
            for key in (k.strip() for k in keymap.get(binding_id, default).split(",")):
                other = holder.setdefault(key, binding_id)
                if other != binding_id and (other in keymap or binding_id in keymap):
                    out.append(f"{other} and {binding_id} are both on {key!r} ({title})")
    return list(dict.fromkeys(out))


def checked_keymap(known: Callable[[], Iterable[str]],
                   environ: Mapping[str, str] | None = None,
                   path: Path | None = None, *,
                   scopes: Callable[[], Iterable[tuple[str, Mapping[str, str]]]] | None = None,
                   ) -> dict[str, str]:
    """`load_keymap`, refusing ids that no screen has (with the closest id) and, given
    `scopes` (see `conflicts`), two bindings of one scope on one key. `known()` gives every
    screen's ids (the file is shared, so another screen's id is fine, just unused here); it
    and `scopes()` are called only when there are remaps, as collecting the ids imports
    every screen. The message names `dagtui edit --list-keys`, which prints the ids: the
    app that would show them (F1) is the one refusing to start."""
    from dagtui.text import suggest

    keymap = load_keymap(environ, path)
    if not keymap:
        return keymap
    ids = set(known())
    unknown = unknown_ids(keymap, ids)
    if unknown:
        named = ", ".join(f"{k}{suggest(k, ids)}" for k in unknown)
        raise KeymapError(f"unknown binding id(s) in the key remaps: {named} "
                          f"({LIST_KEYS} lists the ids)")
    clashes = conflicts(keymap, scopes()) if scopes is not None else []
    if clashes:
        raise KeymapError(f"conflicting key remaps: {'; '.join(clashes)}; only one of each "
                          f"could be pressed: give one of them another key ({LIST_KEYS} "
                          "lists every binding and its key)")
    return keymap
