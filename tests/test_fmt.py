"""`dagtui fmt` and `format_text`: canonical layout, every comment kept, safe on bad input.

The layout rules (README `dagtui fmt`, issue 2): `[metric]` first, node keys in each node type's
canonical order, `key = value`, one blank line between tables, inline verdict arrays one
verdict per line, a trailing newline. Formatting is idempotent, never changes the data, and
never drops a comment. The command rewrites atomically, `--check` and `--diff` write nothing
and exit 1 when a file would change, and unreadable input is one line and exit 2.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from test_tomlio import graphs  # the same graph generator as the save tests

from dagtui.cli import main
from dagtui.graph.tomlio import FormatError, UnparsableError, format_text, render

MESSY = '# Messy but valid: a file written in a hurry.\n\n\n[nodes.gate]\nverdicts=[{verdict=true,then="tone"},{ score = 0, verdict = false }] # gate verdicts\ncriteria   =   "Is the refund within policy?"\ntype="binary"   # the gate\nparams = ["input", "context"]\n\n\n\n# tone below\n[nodes.tone]\nparams = ["actual_output"]\ntype = "geval"\nevaluation_steps = [\n  "Polite?",   # first step\n  "Clear?",\n]\nname = "Tone"\n# last words about tone\n\n[metric]   # settings\nthreshold=0.5\nname = "Support"\n[[nodes.other.verdicts]]\nscore = 1  # one\nverdict = true\n\n[[nodes.other.verdicts]]\nthen = "tone"\nverdict = false\n'

FORMATTED = '# Messy but valid: a file written in a hurry.\n\n[metric]   # settings\nname = "Support"\nthreshold = 0.5\n\n[nodes.gate]\ntype = "binary"   # the gate\ncriteria = "Is the refund within policy?"\nparams = ["input", "context"]\nverdicts = [\n  { verdict = true, then = "tone" },\n  { verdict = false, score = 0 },\n] # gate verdicts\n\n# tone below\n[nodes.tone]\ntype = "geval"\nname = "Tone"\nparams = ["actual_output"]\nevaluation_steps = [\n  "Polite?",   # first step\n  "Clear?",\n]\n# last words about tone\n\n[[nodes.other.verdicts]]\nverdict = true\nscore = 1  # one\n\n[[nodes.other.verdicts]]\nverdict = false\nthen = "tone"\n'

EXAMPLES = Path(__file__).resolve().parent.parent / "graphs"


def _comments(text: str) -> list[str]:
    """Comment texts, found by tokenising: a '#' outside strings starts a comment."""
    found = []
    for line in text.split("\n"):
        in_str, escaped = None, False
        for i, ch in enumerate(line):
            if in_str:
                if escaped:
                    escaped = False
                elif ch == "\\" and in_str == '"':
                    escaped = True
                elif ch == in_str:
                    in_str = None
            elif ch in "\"'":
                in_str = ch
            elif ch == "#":
                found.append(line[i:].strip())
                break
    return sorted(found)


def test_messy_file_gets_the_canonical_layout() -> None:
    assert format_text(MESSY) == FORMATTED


def test_formatting_keeps_every_comment_and_all_data() -> None:
    out = format_text(MESSY)
    assert _comments(out) == _comments(MESSY)
    assert len(_comments(MESSY)) == 8
    assert tomllib.loads(out) == tomllib.loads(MESSY)


def test_layout_rules() -> None:
    out = format_text(MESSY)
    assert out.startswith("# Messy") and out.index("[metric]") < out.index("[nodes.gate]")
    assert out.endswith("\n") and not out.endswith("\n\n")
    assert "\n\n\n" not in out  # never more than one blank line
    assert "criteria = " in out and "criteria   =" not in out and "threshold = 0.5" in out
    gate = out[out.index("[nodes.gate]"):out.index("# tone below")]
    keys = [ln.split(" = ")[0] for ln in gate.splitlines()[1:] if " = " in ln and
            not ln.startswith(" ")]
    assert keys == ["type", "criteria", "params", "verdicts"]
    assert "  { verdict = true, then = \"tone\" },\n  { verdict = false, score = 0 },\n]" in out


def test_formatting_is_idempotent() -> None:
    once = format_text(MESSY)
    assert format_text(once) == once


def test_examples_are_already_formatted() -> None:
    for path in sorted(EXAMPLES.glob("*.toml")):
        if path.stem in ("meeting_summary", "refund_policy", "code_review", "tool_selection"):
            text = path.read_text(encoding="utf-8")
            assert format_text(text) == text, path.name


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_any_graph_formats_stably_in_both_verdict_forms(graph) -> None:
    for text in (render(graph), tomli_w.dumps(graph.to_raw())):
        out = format_text(text)
        assert format_text(out) == out
        assert tomllib.loads(out) == tomllib.loads(text)


def test_format_text_refuses_what_it_cannot_do_safely() -> None:
    with pytest.raises(UnparsableError):
        format_text("[metric\n")
    with pytest.raises(FormatError, match="dotted key"):
        format_text('[nodes.a]\ntype = "task"\nextra.deep = 1\n')


# ------------------------------------------------------------------------------------------
# the command


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_fmt_rewrites_in_place(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path, "g.toml", MESSY)
    assert main(["fmt", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == FORMATTED
    assert "reformatted" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.toml"]  # no temp file left
    before = path.stat().st_mtime_ns
    assert main(["fmt", str(path)]) == 0  # already canonical: not rewritten
    assert path.stat().st_mtime_ns == before


def test_fmt_check_lists_files_and_writes_nothing(tmp_path: Path, capsys) -> None:
    messy = _write(tmp_path, "messy.toml", MESSY)
    clean = _write(tmp_path, "clean.toml", FORMATTED)
    assert main(["fmt", "--check", str(messy), str(clean)]) == 1
    out = capsys.readouterr().out
    assert str(messy) in out and str(clean) not in out
    assert messy.read_text(encoding="utf-8") == MESSY
    assert main(["fmt", "--check", str(clean)]) == 0


def test_fmt_diff_prints_a_unified_diff(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path, "g.toml", MESSY)
    assert main(["fmt", "--diff", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("--- ") and "\n+++ " in out and "\n@@ " in out
    assert "+[metric]   # settings" in out
    assert path.read_text(encoding="utf-8") == MESSY
    clean = _write(tmp_path, "clean.toml", FORMATTED)
    assert main(["fmt", "--diff", str(clean)]) == 0
    assert capsys.readouterr().out == ""


def test_fmt_walks_directories(tmp_path: Path) -> None:
    sub = tmp_path / "graphs"
    sub.mkdir()
    path = _write(sub, "g.toml", MESSY)
    assert main(["fmt", "--check", str(tmp_path)]) == 1
    assert main(["fmt", str(tmp_path)]) == 0
    assert path.read_text(encoding="utf-8") == FORMATTED


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"[metric\nname = 1\n", "DAG001"),
        (b'a = 1\na = 2\n', "DAG001"),
        (b"\x00\x01\x02garbage\xff", "DAG022"),
        (b"\xff\xfe not utf-8", "DAG022"),
        (b'[nodes.a]\ntype = "task"\nx.y = 1\n', "DAG001"),
    ],
)
def test_fmt_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys, content: bytes,
                                              code: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    assert main(["fmt", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{path}:") and f"error {code} " in err[0]
    assert path.read_bytes() == content


def test_fmt_syntax_error_has_line_and_column(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path, "bad.toml", '[metric]\nname = "x"\nthreshold = = 1\n')
    assert main(["fmt", "--check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:3:") and "error DAG001 TOML syntax" in err


def test_fmt_missing_file_and_empty_file(tmp_path: Path, capsys) -> None:
    assert main(["fmt", str(tmp_path / "nope.toml")]) == 2
    assert "no such file" in capsys.readouterr().err
    empty = _write(tmp_path, "empty.toml", "")
    assert main(["fmt", "--check", str(empty)]) == 0


def test_fmt_never_prints_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"\x00garbage")
    proc = subprocess.run(
        [sys.executable, "-m", "dagtui", "fmt", str(bad), str(tmp_path / "missing.toml"),
         str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 3


def test_crlf_file_keeps_its_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "g.toml"
    path.write_bytes(MESSY.replace("\n", "\r\n").encode())
    assert main(["fmt", str(path)]) == 0
    assert path.read_bytes() == FORMATTED.replace("\n", "\r\n").encode()
    assert main(["fmt", "--check", str(path)]) == 0


def test_cases_files_are_left_alone(tmp_path: Path, capsys) -> None:
    """A `[[cases]]` TOML file has no graph layout: a directory search skips it and a named
    one is skipped with a note, both untouched (the pre-commit hook relies on this)."""
    text = '[[cases]]\nname="a"\nactual_output="hi"\n'
    (tmp_path / "x.cases.toml").write_text(text)
    (tmp_path / "y.toml").write_text(text)
    assert main(["fmt", str(tmp_path)]) == 0
    assert main(["fmt", "--check", str(tmp_path / "y.toml")]) == 0
    assert "skipped: a cases file" in capsys.readouterr().err
    assert (tmp_path / "x.cases.toml").read_text() == text == (tmp_path / "y.toml").read_text()
