"""Why a save or a `dagtui fmt` was refused (the file on disk is never touched then)."""

from __future__ import annotations


class SaveError(Exception):
    """A save was refused; the file on disk was not touched."""


class UnparsableError(SaveError):
    """The text to merge into (or format) is not valid TOML: never overwrite it."""


class FormatError(Exception):
    """`format_text` could not reformat the text without changing its meaning."""
