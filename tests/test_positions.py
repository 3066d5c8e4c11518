"""The position scanner must point at the exact key or value a diagnostic talks about."""

from __future__ import annotations

import tomllib

from dagtui.graph.positions import locate

TEXT = '''# comment with [brackets] and "quotes"
[metric]
name = "A # not a comment"
threshold = 0.5

[nodes.extract]
type = "task"
instructions = """multi
line = "still string"
"""
children = [
  "present",   # trailing comment
  'order',
]

[nodes.present]
type = "binary"
verdicts = [
  { verdict = false, score = 0 },
  { verdict = true, then = "order" },
]

[[nodes.order.verdicts]]
verdict = "Correct order"
score = 10

[[nodes.order.verdicts]]
verdict = "Swapped"
then = "x"

[nodes."quoted id"]
type = "geval"
'''


def test_text_is_valid_toml() -> None:
    tomllib.loads(TEXT)


def test_table_and_key_positions() -> None:
    pos = locate(TEXT)
    assert pos.keys[("metric",)] == (2, 1)
    assert pos.keys[("metric", "threshold")] == (4, 1)
    assert pos.values[("metric", "threshold")] == (4, 13)
    assert pos.keys[("nodes", "extract")] == (6, 1)


def test_multiline_string_does_not_confuse_keys() -> None:
    pos = locate(TEXT)
    # the `line = ...` inside the multi-line string is not a key
    assert ("nodes", "extract", "line") not in pos.keys
    assert pos.keys[("nodes", "extract", "children")] == (11, 1)
    assert pos.values[("nodes", "extract", "children", 1)] == (13, 3)


def test_inline_verdict_positions() -> None:
    pos = locate(TEXT)
    assert pos.values[("nodes", "present", "verdicts", 1)] == (20, 3)
    assert pos.keys[("nodes", "present", "verdicts", 1, "then")] == (20, 21)
    assert pos.values[("nodes", "present", "verdicts", 1, "then")] == (20, 28)


def test_array_of_tables_positions() -> None:
    pos = locate(TEXT)
    assert pos.keys[("nodes", "order", "verdicts", 0)] == (23, 1)
    assert pos.keys[("nodes", "order", "verdicts", 1, "then")] == (29, 1)


def test_quoted_table_name_and_fallback_lookup() -> None:
    pos = locate(TEXT)
    assert pos.keys[("nodes", "quoted id")] == (31, 1)
    # an unknown deeper path falls back to the closest known ancestor
    assert pos.key(("nodes", "quoted id", "criteria")) == (31, 1)
