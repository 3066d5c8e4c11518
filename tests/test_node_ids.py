"""Node ids and labels never reach a terminal raw (issue #11 part 6).

An id holding a control, zero-width or bidi character is refused (DAG024); two ids equal
after case folding and NFKC normalisation are a warning (DAG112); every diagnostic line,
GitHub annotation and `dagtui test` report shows such characters escaped. Also the one
`.dagtui/` maker (`dagtui.workdir`) the cache and the debugger share.
"""

from __future__ import annotations

import json

import pytest

from dagtui.cli import main
from dagtui.graph.validate import check_text
from dagtui.judges.cache import Cache
from dagtui.text import escape_controls, is_unsafe_char
from dagtui.workdir import ensure_workdir, prepare_output

HEAD = '[metric]\nname = "t"\nmodel = "gpt-4.1-mini"\n'


def judge(key: str, *, score_true: str = "score = 10", label: str | None = None) -> str:
    """A binary node table (or non-binary with one odd label) under TOML key `key`."""
    if label is None:
        return (f'\n[nodes.{key}]\ntype = "binary"\ncriteria = "Is the answer polite?"\n'
                f'params = ["actual_output"]\nverdicts = [\n  {{ verdict = true, '
                f'{score_true} }},\n  {{ verdict = false, score = 0 }},\n]\n')
    return (f'\n[nodes.{key}]\ntype = "non_binary"\ncriteria = "Classify the tone."\n'
            f'params = ["actual_output"]\nverdicts = [\n  {{ verdict = "{label}", score = 10 '
            '},\n  { verdict = "Rude", score = 0 },\n]\n')


def raw_unsafe(text: str) -> list[str]:
    """The unsafe characters `text` carries raw (newlines between lines are fine)."""
    return [ch for ch in text if is_unsafe_char(ch) and ch != "\n"]


UNSAFE = ["\x1b", "\x07", "\n", "\r", "\x7f", "\x9b", "\u200b", "\u200c", "\u200d",
          "\ufeff", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067",
          "\u2068", "\u2069"]


@pytest.mark.parametrize("ch", UNSAFE, ids=[f"U+{ord(c):04X}" for c in UNSAFE])
def test_unsafe_character_in_an_id_is_dag024(ch: str) -> None:
    key = json.dumps(f"a{ch}b")  # a TOML basic string: escapes as JSON writes them
    report = check_text(HEAD + judge(key), "g.toml")
    codes = [d.code for d in report.diagnostics]
    assert codes == ["DAG024"], [d.format() for d in report.diagnostics]
    (d,) = report.diagnostics
    assert d.node == f"a{ch}b" and not report.ok
    assert (d.line, d.col) == (5, 1)  # the table header, though the key is escaped
    assert f"U+{ord(ch):04X}" in d.message
    assert raw_unsafe(d.format()) == [] and raw_unsafe(d.github()) == []
    assert repr(ch)[1:-1] in d.format()


def test_plain_unicode_ids_are_fine() -> None:
    report = check_text(HEAD + judge('"café"') + judge('"naïve_日本"'), "g.toml")
    assert not [d for d in report.diagnostics if d.code in ("DAG024", "DAG112")]


@pytest.mark.parametrize("first, second", [
    ("Order", "order"),
    ("STRASSE", "straße"),                   # case folding: ß folds to ss
    ("ﬁx", "fix"),                           # NFKC: the fi ligature
    ("ｏｒｄｅｒ", "order"),                   # NFKC: full-width letters
])
def test_look_alike_ids_are_dag112(first: str, second: str) -> None:
    def key(nid: str) -> str:
        return json.dumps(nid, ensure_ascii=False)

    then = f"then = {key(second)}"  # one path through both: no other problem
    text = HEAD + judge(key(first), score_true=then) + judge(key(second))
    report = check_text(text, "g.toml")
    hits = [d for d in report.diagnostics if d.code == "DAG112"]
    assert len(hits) == 1 and report.ok, [d.format() for d in report.diagnostics]
    assert hits[0].line > 0 and "differ only in case or Unicode form" in hits[0].message


def test_validate_cli_prints_no_control_characters(tmp_path, capsys) -> None:
    path = tmp_path / "g.toml"
    path.write_text(HEAD + judge('"x\\u001b]0;pwned\\u0007"') + judge('"y\\u202ez"'),
                    encoding="utf-8")
    for fmt in ("text", "github"):
        code = main(["validate", "--format", fmt, str(path)])
        out, err = capsys.readouterr()
        assert code == 1
        assert raw_unsafe(out + err) == [], fmt
        assert "\\x1b]0;pwned\\x07" in out and "\\u202e" in out


def test_paths_named_on_the_command_line_print_escaped(tmp_path, capsys) -> None:
    folder = tmp_path / "x\x1b[2Jy"
    folder.mkdir()
    code = main(["validate", str(folder)])
    out, err = capsys.readouterr()
    assert code == 2 and raw_unsafe(out + err) == []
    assert "x\\x1b[2Jy: error DAG022 no graph files" in err


def test_labels_with_control_characters_print_escaped(tmp_path, capsys) -> None:
    graph = tmp_path / "g.toml"
    graph.write_text(HEAD.replace('model', 'cases = "g.cases.jsonl"\nmodel')
                     + judge("tone", label="Kind\\u001b[2J"), encoding="utf-8")
    case = {"name": "c\u202e1", "actual_output": "hi", "expected": {"tone": "Kind\x1b[2J"},
            "expected_score": 0.0}  # wrong on purpose: the failure lines print the path
    (tmp_path / "g.cases.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    code = main(["test", str(graph)])
    out, err = capsys.readouterr()
    assert code == 1
    assert raw_unsafe(out + err) == []
    assert "tone=Kind\\x1b[2J" in out and "c\\u202e1" in out


def test_escape_controls_keeps_what_is_asked() -> None:
    assert escape_controls("a\nb\x1b") == "a\\nb\\x1b"
    assert escape_controls("a\nb\x1b", keep="\n") == "a\nb\\x1b"
    assert escape_controls("plain é 日本") == "plain é 日本"


# -- .dagtui/: one maker, always git-ignored ---------------------------------------------


def test_workdir_is_created_with_a_gitignore(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    base = ensure_workdir()
    assert base == tmp_path / ".dagtui"
    assert (base / ".gitignore").read_text() == "*\n"
    (base / ".gitignore").write_text("*\n!keep\n")
    ensure_workdir()  # an existing .gitignore is the user's: left alone
    assert (base / ".gitignore").read_text() == "*\n!keep\n"


def test_cache_creates_dagtui_through_the_same_helper(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Cache()
    assert (tmp_path / ".dagtui" / ".gitignore").read_text() == "*\n"
    assert (tmp_path / ".dagtui" / "cache.sqlite").exists()


def test_existing_user_cache_dir_gets_no_gitignore(tmp_path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    Cache(mine)
    assert not (mine / ".gitignore").exists()
    Cache(tmp_path / "new")  # one dagtui creates is its own
    assert (tmp_path / "new" / ".gitignore").exists()


def test_calibrate_save_makes_dagtui_through_the_same_helper(tmp_path, monkeypatch) -> None:
    from dagtui.commands.calibrate import save_latest

    monkeypatch.chdir(tmp_path)
    assert save_latest("g.toml", "{}") is not None
    assert (tmp_path / ".dagtui" / ".gitignore").read_text() == "*\n"


def test_prepare_output_only_acts_under_dagtui(tmp_path) -> None:
    prepare_output(tmp_path / ".dagtui" / "traces" / "t.json")
    assert (tmp_path / ".dagtui" / ".gitignore").exists()
    assert (tmp_path / ".dagtui" / "traces").is_dir()
    prepare_output(tmp_path / "elsewhere" / "t.json")
    assert not (tmp_path / "elsewhere").exists()
