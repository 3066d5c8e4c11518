"""`dagtui label`: three cases labelled with keys through a two-gate graph, each label
written as it is given (the file compared whole: other JSONL lines byte-identical, a TOML
file's comments kept), resuming where labelling stopped, unsure kept out of kappa, and the
screen's look at 120x36 and 80x24."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dagtui.graph.analysed import CheckedGraph
from dagtui.labels.session import LabelSession
from dagtui.labels.write import LabelFile
from dagtui.tui.app import label_app
from dagtui.tui.label import LabelScreen

pytestmark = pytest.mark.timeout(120)

GRAPH = """\
[metric]
name = "Doc"
threshold = 0.5
cases = "doc.cases.jsonl"

[nodes.present]
type = "binary"
criteria = "Does the document have headings?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "order" }]

[nodes.order]
type = "non_binary"
criteria = "Are the headings in a sensible order?"
params = ["actual_output"]
verdicts = [{ verdict = "Correct order", score = 10 }, { verdict = "Two headings swapped", score = 4 }]
"""

JSONL = (
    '{"name": "intro", "actual_output": "# Intro\\n# Body\\n# End"}\n'
    '{"name": "plain",  "actual_output": "no headings at all"}\n'
    '// kept as written\n'
    '{"name": "swapped", "actual_output": "# End\\n# Intro", "tags": ["x"]}\n'
)

TOML = """\
# the doc cases, labelled by hand
[[cases]]
name = "intro"  # three headings
actual_output = "# Intro\\n# Body\\n# End"

# no headings
[[cases]]
name = "plain"
actual_output = "no headings at all"

[[cases]]
name = "swapped"
actual_output = "# End\\n# Intro"
"""


def session_for(tmp_path: Path, cases_name: str, text: str, **kw: Any) -> LabelSession:
    (tmp_path / "doc.toml").write_text(GRAPH)
    cases = tmp_path / cases_name
    cases.write_text(text)
    graph = CheckedGraph.read(str(tmp_path / "doc.toml")).require()
    file = LabelFile(cases)
    return LabelSession(graph, file.cases(), file, **kw)


async def label_with(session: LabelSession, keys: list[str], size: tuple[int, int] = (120, 36),
                     **kw: Any) -> dict[str, str]:
    """Press `keys` on the screen over `session`; the text each part showed at the end."""
    app = label_app(session, title="doc.toml", **kw)
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert isinstance(screen, LabelScreen)
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.pause()
        return {w.id: str(w.render()) for w in screen.query("Static") if w.id}


async def test_three_cases_jsonl(tmp_path: Path) -> None:
    session = session_for(tmp_path, "doc.cases.jsonl", JSONL)
    # intro: present = true (2), order = Correct order (1); plain: false (1);
    # swapped: true (2), then "Two headings swapped" (2)
    await label_with(session, ["2", "1", "1", "2", "2"])
    assert (tmp_path / "doc.cases.jsonl").read_text() == (
        '{"name": "intro", "actual_output": "# Intro\\n# Body\\n# End", '
        '"expected": {"present": true, "order": "Correct order"}}\n'
        '{"name": "plain",  "actual_output": "no headings at all", '
        '"expected": {"present": false}}\n'
        '// kept as written\n'
        '{"name": "swapped", "actual_output": "# End\\n# Intro", "tags": ["x"], '
        '"expected": {"present": true, "order": "Two headings swapped"}}\n')
    assert session.progress() == [("present", 3, 3), ("order", 2, 2)]


async def test_three_cases_toml_comments_kept(tmp_path: Path) -> None:
    session = session_for(tmp_path, "doc.cases.toml", TOML)
    await label_with(session, ["2", "1", "1", "2", "2"])
    assert (tmp_path / "doc.cases.toml").read_text() == TOML.replace(
        '# Body\\n# End"\n',
        '# Body\\n# End"\nexpected = {present = true, order = "Correct order"}\n').replace(
        'actual_output = "no headings at all"\n',
        'actual_output = "no headings at all"\nexpected = {present = false}\n') + \
        'expected = {present = true, order = "Two headings swapped"}\n'


async def test_undo_skip_and_resume(tmp_path: Path) -> None:
    session = session_for(tmp_path, "doc.cases.jsonl", JSONL)
    # intro: true, then undo it (the file is as it was), true again, order skipped;
    # then plain: false, and stop
    await label_with(session, ["2", "u", "2", "s", "1"])
    cases = LabelFile(tmp_path / "doc.cases.jsonl").cases()
    assert [c.expected for c in cases] == [{"present": True}, {"present": False}, {}]
    # a new session resumes at the first case with a reached node unlabelled: intro's order
    again = session_for(tmp_path, "doc.cases.jsonl",
                        (tmp_path / "doc.cases.jsonl").read_text())
    assert (again.index, again.current()) == (0, "order")
    # --relabel starts at the top and asks every node again
    over = session_for(tmp_path, "doc.cases.jsonl",
                       (tmp_path / "doc.cases.jsonl").read_text(), relabel=True)
    assert (over.index, over.current()) == (0, "present")


async def test_unsure_kept_and_unlabelled(tmp_path: Path) -> None:
    """`?` labels the node `"unsure"`: no verdict, so calibration's forced run stops there
    and the node never enters a kappa."""
    from dagtui.labels.check import label_problems

    session = session_for(tmp_path, "doc.cases.jsonl", JSONL)
    await label_with(session, ["2", "question_mark"])
    case = LabelFile(tmp_path / "doc.cases.jsonl").cases()[0]
    assert case.expected == {"present": True, "order": "unsure"}
    assert label_problems(session.graph, case) == []
    assert session.progress() == [("present", 1, 3), ("order", 0, 1)]
    assert session.index == 1  # on to the next case


async def test_judge_answer_hidden_until_revealed(tmp_path: Path) -> None:
    session = session_for(tmp_path, "doc.cases.jsonl", JSONL,
                          judge=lambda node, prompt: (True, "it has headings"))
    shown = await label_with(session, [])
    assert "hidden" in shown["label-judge"] and "it has headings" not in shown["label-judge"]
    shown = await label_with(session, ["r"])
    assert "judge: true — it has headings" in shown["label-judge"]


@pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["120x36", "80x24"])
def test_label_screen_snapshot(tmp_path: Path, snap_compare: Any,
                               size: tuple[int, int]) -> None:
    """Case 1 labelled `present = true`, now at `order`: the request, the choices, the
    hidden judge answer, the path and the progress."""
    session = session_for(tmp_path, "doc.cases.jsonl", JSONL,
                          judge=lambda node, prompt: ("Correct order", "in order"))
    session.pick(2)

    app = label_app(session, title="doc.toml · doc.cases.jsonl")
    assert snap_compare(app, terminal_size=size)
