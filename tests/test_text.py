"""`dagtui.text`: the one verdict-to-text, shortener and "did you mean" every message uses."""

from __future__ import annotations

import pytest

from dagtui.text import shorten, suggest, verdict_text


@pytest.mark.parametrize(("value", "plain", "quoted"), [
    (True, "true", "true"),
    (False, "false", "false"),
    ("Two swapped", "Two swapped", "'Two swapped'"),
    (7, "7", "7"),
    (2.5, "2.5", "2.5"),
])
def test_verdict_text_writes_booleans_as_toml_and_quotes_labels_only_when_asked(
        value: object, plain: str, quoted: str) -> None:
    assert verdict_text(value) == plain
    assert verdict_text(value, quote=True) == quoted


def test_shorten_keeps_the_width_it_is_given() -> None:
    assert shorten("abcdef", 4) == "abc…" and shorten("abc", 4) == "abc"
    assert len(shorten("x" * 500, 300)) == 300


def test_shorten_puts_text_on_one_line_when_asked() -> None:
    assert shorten("a\nb", 10) == "a\nb"  # a drawing's label: as given
    assert shorten("a\nb", 10, flat="mark") == "a ⏎ b"  # evidence: where lines broke
    assert shorten("  a \n\t b  ", 10, flat="squash") == "a b"  # labels, errors: one space
    assert shorten("word word", 6, flat="squash") == "word…"  # no space before the mark


def test_suggest_has_one_wording_and_takes_abbreviations_only_when_asked() -> None:
    assert suggest("concurency", ["concurrency", "cases"]) == " (did you mean 'concurrency'?)"
    assert suggest("zzz", ["concurrency"]) == ""
    assert suggest("--con", ["--concurrency", "--cases"]) == ""
    assert (suggest("--con", ["--concurrency", "--cases"], abbreviations=True)
            == " (did you mean '--concurrency'?)")
    # two options start so: the closest spelling, as without abbreviations
    assert (suggest("--c", ["--concurrency", "--cases"], abbreviations=True)
            == suggest("--c", ["--concurrency", "--cases"]))


def test_say_keeps_lines_unless_one_line_is_asked() -> None:
    import io

    from dagtui.text import say

    out = io.StringIO()
    say("a\nb\x1b\u202e", file=out)
    say("path\nx\t", file=out, one_line=True)  # a log line a path must not split
    assert out.getvalue() == "a\nb\\x1b\\u202e\npath\\nx\\t\n"


def test_reports_and_terminals_escape_a_character_alike() -> None:
    from dagtui.report.outputs import safe_text
    from dagtui.text import escape_controls

    for ch in ("\x00", "\x1b", "\x7f", "\x85", "\udc80"):
        assert safe_text(ch) == escape_controls(ch)
    # a report keeps bidi and zero-width characters (valid XML/UTF-8); a terminal does not
    assert safe_text("\u202e\u200b") == "\u202e\u200b"
    assert escape_controls("\u202e\u200b") == "\\u202e\\u200b"
