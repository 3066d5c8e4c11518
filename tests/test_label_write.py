"""`dagtui.labels.write`: one case's labels written into its cases file, nothing else changed.

Each test writes labels and compares the whole file with the exact text expected: the other
lines of a JSONL file byte-identical, a JSON file's layout kept, a TOML file's comments kept.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dagtui.labels.write import LabelFile, Labels, case_labels
from dagtui.run.cases import CaseError, load_cases
from dagtui.safewrite import ChangedOnDisk

JSONL = (
    '{"name": "a", "input": "x",  "actual_output": "y"}\n'
    "// a comment line\n"
    '{"name":"b","input":"é","expected":{"present":false}}\r\n'
    "\n"
    '{"id": 3, "input": "q", "expected": {"present": true}, "expected_score": 0.5}\n'
)


def test_jsonl_only_the_case_line_changes(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(JSONL.encode())
    f = LabelFile(path)
    f.set("a", Labels({"present": True, "order": "Correct order"}))
    f.set("b", Labels({"present": True}))
    f.set("3", Labels({}, unsure=["present"]))
    assert path.read_bytes().decode() == (
        '{"name": "a", "input": "x",  "actual_output": "y", '
        '"expected": {"present": true, "order": "Correct order"}}\n'
        "// a comment line\n"
        '{"name":"b","input":"é","expected":{"present": true}}\r\n'
        "\n"
        '{"id": 3, "input": "q", "expected": {"present": "unsure"}}\n'
    )
    cases = load_cases(path)
    assert [c.expected for c in cases] == [{"present": True, "order": "Correct order"},
                                           {"present": True}, {"present": "unsure"}]
    assert case_labels(cases[2]) == Labels({}, None, ["present"])
    assert cases[2].expected_score is None


def test_jsonl_annotator_entry(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"name": "a", "expected": {"present": true}}\n{"name": "b"}\n')
    f = LabelFile(path)
    f.set("a", Labels({"present": False}), annotator="ana")
    f.set("a", Labels({"present": True}, unsure=["order"]), annotator="bo")
    f.set("a", Labels({"present": True}), annotator="ana")
    assert path.read_text().splitlines() == [
        '{"name": "a", "expected": {"present": true}, "annotations": [{"by": "ana", '
        '"expected": {"present": true}}, {"by": "bo", "expected": {"present": true, '
        '"order": "unsure"}}]}',
        '{"name": "b"}',
    ]
    case = load_cases(path)[0]
    assert case_labels(case, "bo") == Labels({"present": True}, None, ["order"])
    assert case_labels(case) == Labels({"present": True}, None, [])


def test_json_layout_kept(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text('{\n  "test_cases": [\n    {\n      "name": "a",\n      "input": "x"\n'
                    '    },\n    {"name": "b", "expected": {"present": true}, "z": 1}\n  ]\n}\n')
    f = LabelFile(path)
    f.set("a", Labels({"present": True}, expected_score=1.0))
    f.set("b", Labels({}))
    assert path.read_text() == (
        '{\n  "test_cases": [\n    {\n      "name": "a",\n      "input": "x",\n'
        '      "expected": {"present": true},\n      "expected_score": 1.0\n'
        '    },\n    {"name": "b", "z": 1}\n  ]\n}\n')


def test_toml_comments_kept(tmp_path: Path) -> None:
    path = tmp_path / "cases.toml"
    path.write_text('# my cases\n[[cases]]\nname = "a"  # the first\ninput = "x"\n\n'
                    '# the second case\n[[cases]]\nname = "b"\n[cases.expected]\n'
                    'present = true  # sure\n')
    f = LabelFile(path)
    f.set("a", Labels({"present": True, "order": "Two headings swapped"}))
    f.set("b", Labels({"present": False, "order": "ok"}))
    assert path.read_text() == (
        '# my cases\n[[cases]]\nname = "a"  # the first\ninput = "x"\n'
        'expected = {present = true, order = "Two headings swapped"}\n\n'
        '# the second case\n[[cases]]\nname = "b"\n[cases.expected]\n'
        'present = false  # sure\norder = "ok"\n')


def test_changed_on_disk_refused(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"name": "a"}\n')
    f = LabelFile(path)
    f.set("a", Labels({"present": True}))
    path.write_text('{"name": "a"}\n{"name": "new"}\n')  # someone else's edit
    with pytest.raises(ChangedOnDisk):
        f.set("a", Labels({"present": False}))
    assert path.read_text() == '{"name": "a"}\n{"name": "new"}\n'


def test_unknown_case_refused(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"name": "a"}\n')
    with pytest.raises(CaseError, match="no case named 'zz'"):
        LabelFile(path).set("zz", Labels({"present": True}))
