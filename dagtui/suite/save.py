"""Write suite edits back into the file the user wrote, comments and order intact.

The TUI edits a suite in three ways only (delete a rule, change a rule's dependencies,
pause or resume a rule), so saving is a targeted tomlkit edit of those keys, not a
re-render: every other byte of the file stays as written. The result is re-read and
compared with the suite; if it means anything else, saving is refused.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomlkit

from dagtui.suite.model import Suite


class SuiteSaveError(Exception):
    """The file could not be updated safely; nothing was written."""


def render_suite(suite: Suite, original: str) -> str:
    """`original` with the suite's rule deletions, depends_on and status applied."""
    try:
        doc = tomlkit.parse(original)
    except Exception as exc:  # tomlkit raises several types for bad input
        raise SuiteSaveError(f"the file on disk is not valid TOML ({exc}); not overwriting it"
                             ) from None
    rules: Any = doc.get("rules")
    if rules is None:
        raise SuiteSaveError("the file has no [rules] table")
    for rid in [k for k in rules if k not in suite.rules]:
        del rules[rid]
    for rid, rule in suite.rules.items():
        table = rules.get(rid)
        if table is None:
            raise SuiteSaveError(f"rule '{rid}' is not in the file; adding rules is done by hand")
        current = list(table.get("depends_on", []) or [])
        if current != rule.depends_on:
            if rule.depends_on:
                arr = tomlkit.array()
                arr.extend(rule.depends_on)
                table["depends_on"] = arr
            elif "depends_on" in table:
                del table["depends_on"]
        status = table.get("status", "active")
        if status != rule.status:
            if rule.status == "active":
                del table["status"]
            else:
                table["status"] = rule.status
    text = tomlkit.dumps(doc)
    _check_same(suite, text)
    return text


def _check_same(suite: Suite, text: str) -> None:
    data = tomllib.loads(text)
    rules = data.get("rules", {})
    if list(rules) != list(suite.rules):
        raise SuiteSaveError("saving would change the rules in an unexpected way")
    for rid, rule in suite.rules.items():
        if list(rules[rid].get("depends_on", [])) != rule.depends_on or \
                rules[rid].get("status", "active") != rule.status:
            raise SuiteSaveError(f"saving would not record rule '{rid}' correctly")


def save_suite(suite: Suite, path: str | Path) -> str:
    """Apply the suite's edits to the file at `path` atomically; returns the new text.

    The edits are applied to the file as it is now, so changes made on disk since the suite
    was opened are kept; one made between this read and the write is refused
    (`safewrite.ChangedOnDisk`), as is a read-only file (`safewrite.ReadOnlyFile`).
    """
    from dagtui.inputs import InputError
    from dagtui.safewrite import atomic_write, read_text

    try:
        original, stamp = read_text(path)
    except (InputError, UnicodeDecodeError) as exc:  # no longer a readable suite file
        raise SuiteSaveError(f"cannot read the file to update it: {exc}") from None
    text = render_suite(suite, original)
    atomic_write(path, text, expected=stamp)
    return text
