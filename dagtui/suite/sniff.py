"""What tells a suite file from a graph file, without loading either.

Its own module, importing nothing of dagtui but `inputs`: `dagtui edit` asks it of every file
before its first frame, and the suite loader (with the suite model and the check kinds
behind it, ~4 ms of imports) is needed only when the answer is yes.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path

from dagtui.inputs import TOML_LIMIT, InputError, read_text

#: the largest suite file read
MAX_BYTES = TOML_LIMIT

_SUITE_HEADER = re.compile(r"^\s*\[\s*(suite|rules)\s*[.\]]", re.MULTILINE)


def is_suite_file(path: str | Path) -> bool:
    """True when the file is a suite (top-level `[suite]` or `[rules]`), not a graph.

    Parses the TOML when it can; for a file with a syntax error it looks at table headers so
    a broken suite still routes to the suite validator (which then reports the syntax).
    """
    try:
        text = read_text(path, limit=MAX_BYTES, what="suite file")
    except InputError:
        return False
    return is_suite_text(text)


def is_suite_tables(raw: Mapping[str, object]) -> bool:
    """The rule that tells a suite from a graph, on a parsed file's top-level tables."""
    return ("suite" in raw or "rules" in raw) and "nodes" not in raw and "metric" not in raw


def is_suite_text(text: str) -> bool:
    """`is_suite_file` on a file's text."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return bool(_SUITE_HEADER.search(text)) and "[metric]" not in text
    except (RecursionError, ValueError):  # nesting too deep, an integer of 5,000 digits
        return False
    return is_suite_tables(raw)
