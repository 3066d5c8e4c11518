"""Nothing a user can type breaks loading or validation.

The editor re-validates on every keystroke, so half-typed files are the normal case. These
property tests take the real example graphs, damage them the way editing does (lines deleted,
duplicated or swapped, characters dropped or inserted, the file cut short, random bytes) and
require that `check_text` / `check_file` always return a report: a graph, diagnostics, or
both, each diagnostic with a known code and a sane position. Never an exception.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dagtui.diagnostics import CODES
from dagtui.graph.validate import ValidationResult, check_file, check_text

ROOT = Path(__file__).resolve().parent.parent


def _example_texts() -> list[str]:
    texts = []
    for f in sorted((ROOT / "graphs").rglob("*.toml")):
        text = f.read_text(encoding="utf-8")
        if "[nodes." in text:
            texts.append(text)
    texts.append(
        '[metric]\nname = "x"\nmodel = "m"\nroots = ["c"]\n\n[nodes.c]\ntype = "check"\n'
        'check = "length"\nunit = "words"\nmin = 1\nmax = 5\nparam = "actual_output"\n\n'
        '[[nodes.c.verdicts]]\nverdict = true\nthen = "g"\n\n[[nodes.c.verdicts]]\n'
        'verdict = false\nscore = 0\n\n[nodes.g]\ntype = "geval"\nname = "Tone"\n'
        'params = ["actual_output"]\nevaluation_steps = ["a", "b"]\nturn_window = [0, 1]\n'
    )
    return texts


EXAMPLES = _example_texts()
TOML_CHARS = list('[]{}=",\'\n#.-_ 0123456789truefalsxyz\\"') + [
    "\u00e9", "\u2192", "\t", '"""', "\'\'\'", "[[", "]]",
    # numbers at the edges: huge integers, exponents, inf and nan
    "9" * 40, "-" + "9" * 400, "1e400", "inf", "-inf", "nan", "0x7f", "1_000",
]


def _check_report(report: ValidationResult) -> None:
    assert isinstance(report, ValidationResult)
    assert report.load.graph is not None or report.diagnostics
    for d in report.diagnostics:
        assert d.code in CODES, d
        assert d.line >= 0 and d.col >= 0
        assert d.message
        d.format()
        d.github()
    if report.paths is not None:
        report.paths.calls_text()


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(EXAMPLES))
    for _ in range(draw(st.integers(1, 4))):
        lines = text.split("\n")
        op = draw(st.sampled_from(
            ["del_line", "dup_line", "swap_line", "del_char", "ins_char", "rep_char", "cut"]))
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        if op == "del_line" and lines:
            del lines[i]
            text = "\n".join(lines)
        elif op == "dup_line" and lines:
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        elif op == "swap_line" and lines:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        else:
            k = draw(st.integers(0, max(len(text) - 1, 0)))
            if op == "del_char":
                text = text[:k] + text[k + 1:]
            elif op == "ins_char":
                text = text[:k] + draw(st.sampled_from(TOML_CHARS)) + text[k:]
            elif op == "rep_char":
                text = text[:k] + draw(st.sampled_from(TOML_CHARS)) + text[k + 1:]
            else:
                text = text[:k]
    return text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_graph_text_never_raises(text: str) -> None:
    _check_report(check_text(text, "mutated.toml"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(EXAMPLES), st.binary(min_size=1, max_size=64), st.integers(0, 5000))
def test_random_bytes_in_a_file_never_raise(text: str, junk: bytes, at: int) -> None:
    data = text.encode("utf-8")
    at = min(at, len(data))
    data = data[:at] + junk + data[at:]
    fd, name = tempfile.mkstemp(suffix=".toml")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        _check_report(check_file(name))
    finally:
        os.unlink(name)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text_never_raises(text: str) -> None:
    _check_report(check_text(text))


def test_examples_exist_and_are_valid() -> None:
    assert len(EXAMPLES) >= 2
    for text in EXAMPLES:
        report = check_text(text, "example.toml")
        assert report.ok, [d.format() for d in report.errors]


def test_wrong_shapes_give_diagnostics() -> None:
    for text in ("nodes = 3", "[nodes]\nx = 1", "metric = 1", "[nodes.a]\ntype = 5",
                 "[nodes.a]\ntype = \"binary\"\nverdicts = 3",
                 "[nodes.a]\ntype = \"binary\"\nverdicts = [1, {score = 2}]",
                 "[nodes.a]\ntype = \"task\"\nchildren = \"b\"",
                 "[metric]\nroots = \"a\"", "[metric]\nthreshold = nan"):
        report = check_text(text, "shape.toml")
        assert report.errors, text
        _check_report(report)
