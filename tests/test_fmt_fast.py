"""`fmt`'s direct reading of a graph file (`dagtui.graph.tomlio.fastfmt`) agrees with tomlkit's.

For every text the direct reader accepts, the blocks it makes must equal those the tomlkit
flattener makes (headers, key order, values as written, verdicts one per line, every
comment where tomlkit puts it), so `format_text` gives the same output whichever read the
file. Texts outside its subset must be refused (None), never read differently.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from test_tomlio import graphs  # the same graph generator as the save tests

from dagtui.graph.tomlio import format_text, render
from dagtui.graph.tomlio.fastfmt import flatten
from dagtui.graph.tomlio.fmt import _Block, _Entry, _Flattener, _order_of
from dagtui.graph.tomlio.source import parse_or_refuse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from bench_validate import generate  # noqa: E402  # the validate benchmark's big graphs

AWKWARD = [
    # comments everywhere, blank-line runs, a comment directly above a header, indentation
    '# top\n\n\n# second\n[metric]  # settings\nname = "M"\t# tab before\nthreshold = 0.5\n'
    '\n\n# about x, set off\n\n# just above x\n[nodes.x]\n  type = "binary"\ncriteria = "c"\n'
    'verdicts = [  # opening\n  # above first\n  { score = 1, verdict = true },   # one\n'
    '  {verdict=false,score=0}, # two\n  # after the last\n]  # closing\n# tail of x\n',
    # a verdict array on one line, a plain array over lines with comments, a date
    '[metric]\nname = "M"\n\n[nodes.a]\ntype = "non_binary"\ncriteria = "c"\n'
    'labels = [\n  "A",  # first\n  # between\n  "B"\n]\n'
    'verdicts = [{ verdict = "A", score = 1 }, { verdict = "B", then = "b" }]\n'
    'when = 1979-05-27 07:32:00\n\n[nodes.b]\ntype = "task"\ninstructions = \'lit # not a comment\'\n'
    'output_label = "o \\" # still a string"\n',
    # root keys before any table, empty arrays, an array of only comments
    'x = 1\ny = []  # empty\n\n[metric]\nname = "M"\nz = [\n  # nothing yet\n]\n'
    '[nodes.c]\ntype = "binary"\nverdicts = []\n',
    # a file without a final newline, a comment at the very end
    '[metric]\nname = "M"\n# the end',
]

REFUSED = [
    '[metric]\nname = """multi\nline"""\n',  # multi-line string
    '[metric]\na.b = 1\n',  # dotted key
    '[nodes]\n[nodes.a]\ntype = "task"\n',  # a parent with its own header
    '[nodes.a]\ntype = "task"\n[metric]\nname = "M"\n[nodes.b]\ntype = "task"\n',  # split
    '[[nodes.a.verdicts]]\nverdict = true\n',  # array of tables
    '[metric]\r\nname = "M"\r\n',  # CR line ends
    '[metric]\n"quoted key" = 1\n',  # quoted key
    '[nodes.a]\nverdicts = [{ verdict = true, x = { y = 1 } }]\n',  # nested inline table
]


def _state(flat: Any) -> Any:
    def entry(e: Any) -> Any:
        return (e.key, e.name, e.value, e.comment, list(e.above), sorted(e.inner))

    return (list(flat.preamble), [entry(e) for e in flat.root_entries],
            [(b.header, b.path, list(b.above), b.comment, tuple(b.order),
              [entry(e) for e in b.entries], list(b.trailing)) for b in flat.blocks])


def _agree(text: str) -> bool:
    """True when the direct reader took `text` (and then read it as tomlkit does)."""
    fast = flatten(text, _Flattener(), _Block, _Entry, _order_of)
    if fast is None:
        return False
    slow = _Flattener().run(parse_or_refuse(text))
    assert _state(fast) == _state(slow), text
    return True


def _corpus() -> list[str]:
    texts = [p.read_text() for p in sorted(ROOT.glob("graphs/*.toml"))]
    texts += [generate(n, seed=s) for n in (10, 60) for s in (1, 2)]
    texts += AWKWARD
    return texts + [format_text(t) for t in texts]


@pytest.mark.parametrize("text", _corpus())
def test_the_direct_reading_is_tomlkits(text: str) -> None:
    assert _agree(text)  # taken, and read alike


@pytest.mark.parametrize("path", sorted(ROOT.glob("graphs/suites/*.toml")), ids=str)
def test_suite_files_are_read_alike_or_refused(path: Path) -> None:
    _agree(path.read_text())  # a nested array in an inline table: refused, and that is fine


@pytest.mark.parametrize("text", REFUSED)
def test_layouts_outside_the_subset_are_left_to_tomlkit(text: str) -> None:
    assert flatten(text, _Flattener(), _Block, _Entry, _order_of) is None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_saved_graphs_read_alike(graph) -> None:
    text = render(graph)
    if _agree(text):  # refused ones are tomlkit's alone: nothing to compare
        _agree(format_text(text))
