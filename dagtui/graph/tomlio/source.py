"""Reading the text a save merges into or `fmt` reformats: tomllib is the strict judge of
validity, tomlkit keeps the layout, and the result keeps the original's line endings."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import tomlkit

from dagtui.graph.loader import build_graph
from dagtui.graph.tomlio.errors import UnparsableError


def one_final_newline(text: str) -> bool:
    body = text.rstrip("\r\n")
    return text[len(body):] in ("\n", "\r\n")


def strict_parse(text: str) -> dict[str, Any]:
    """tomllib is the strict judge of validity: never merge into what it rejects."""
    try:
        return tomllib.loads(text.lstrip("\ufeff"))
    except Exception as exc:  # TOMLDecodeError, RecursionError on absurd nesting, ...
        raise UnparsableError(f"the original text is not valid TOML ({exc}); refusing to "
                              "overwrite what could not be parsed") from exc


def model_raw(data: dict[str, Any]) -> dict[str, Any]:
    """`to_raw()` of the model the loader builds from parsed data.

    Positions are not needed here, so the loader's position scan (the slow half of
    `load_text` on big files) is skipped.
    """
    return build_graph(data).to_raw()


def match_newlines(original: str, text: str) -> str:
    """Write CRLF when the original was CRLF throughout (TOML reads both the same, including
    inside multi-line strings, so this never changes a value)."""
    crlf = original.count("\r\n")
    if crlf and crlf == original.count("\n"):
        return re.sub(r"(?<!\r)\n", "\r\n", text)
    return text


def parse_or_refuse(text: str) -> tomlkit.TOMLDocument:
    """Parse with tomlkit, which keeps the layout (callers check validity with tomllib)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return tomlkit.parse(text)
    except Exception as exc:  # tomllib.TOMLDecodeError, tomlkit.exceptions.ParseError, ...
        raise UnparsableError(f"the original text is not valid TOML ({exc}); refusing to "
                              "overwrite what could not be parsed") from exc
