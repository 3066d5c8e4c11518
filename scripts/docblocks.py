"""The generated blocks of the docs pages, for the scripts that write them.

A table a script writes sits between `<!-- KIND: NAME -->` and `<!-- /KIND: NAME -->` in a
page under docs/ (scripts/gen_format_docs.py writes the `fields` blocks of docs/format.md,
scripts/gen_keys_docs.py the `keys` blocks of the editor, debugger and suite pages); the
prose around it is written by hand. Finding and replacing a block, and writing a table
cell, live here so both scripts read and write the markers alike.
"""

from __future__ import annotations

import re


def cell(text: str) -> str:
    """`text` as a Markdown table cell: a `|` escaped, line breaks made spaces."""
    return text.replace("|", "\\|").replace("\n", " ")


def replace_block(text: str, kind: str, name: str, block: str) -> str:
    """`text` with its block `name` of `kind` (markers included) replaced by `block`;
    ValueError naming the block when the page has none."""
    start, end = f"<!-- {kind}: {name} -->", f"<!-- /{kind}: {name} -->"
    pattern = re.compile(f"{re.escape(start)}.*?{re.escape(end)}", re.S)
    if not pattern.search(text):
        raise ValueError(f"no {start} ... {end} block")
    return pattern.sub(lambda _m: block, text, count=1)
