"""Writing graphs back to TOML without wrecking the file a human wrote.

The TOML file is the source of truth (README "The editor"): people edit it by hand and in the
TUI, so a save must look like a careful person made the edit. `render` therefore works in two
modes:

* no original text: a canonical layout (metric first, nodes in model order, keys in each node
  type's `FIELDS` order, verdicts one per line) emitted by the small writer in `writer`;
* with the original text: a three-way merge. The original is loaded into the model again
  (the *base*), compared with the graph being saved, and only the differences are applied
  to the tomlkit document, so every untouched key, comment, blank line and ordering survives
  byte for byte, even keys the model never understood (they stay for the validator to flag).

Every merged result is reloaded and compared with the graph; if tomlkit produced something
that means anything else, the canonical text is returned instead (correct beats pretty).

`format_text` (for `dagtui fmt`, in `fmt`) reorders a parsed
document into the canonical layout while carrying every comment along with the key it sits
above, and refuses (FormatError) rather than change what the file means.

The package holds one module per job: `writer` (the canonical layout and TOML spellings),
`source` (parsing the text saved into), `merge` (the three-way merge behind `render`), `save`
(render, then write with `dagtui.safewrite`), `document` (the tomlkit edits the merge makes,
layout kept), `fmt` (`format_text`) and `errors`.
"""

from __future__ import annotations

from dagtui.graph.tomlio.errors import FormatError, SaveError, UnparsableError
from dagtui.graph.tomlio.fmt import format_text
from dagtui.graph.tomlio.merge import render
from dagtui.graph.tomlio.save import save_graph
from dagtui.graph.tomlio.writer import (
    METRIC_ORDER,
    VERDICT_ORDER,
    canonical_text,
    key_value_text,
    node_table_text,
    toml_key,
    toml_string,
    toml_value,
)
from dagtui.safewrite import atomic_write  # re-exported: callers save and write through one module

__all__ = [
    "METRIC_ORDER",
    "VERDICT_ORDER",
    "FormatError",
    "SaveError",
    "UnparsableError",
    "atomic_write",
    "canonical_text",
    "format_text",
    "key_value_text",
    "node_table_text",
    "render",
    "save_graph",
    "toml_key",
    "toml_string",
    "toml_value",
]
