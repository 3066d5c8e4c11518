"""`dagtui import`: DeepEval DAG JSON (uuid ids, verdicts as nodes) to a readable graph.

The fixture documents below are what DeepEval 4.3.1's `dag_to_json` writes (captured from the
real library), so these tests need no DeepEval install.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_export_support import normalise

from dagtui.cli import main
from dagtui.export import export_graph, import_deepeval_json
from dagtui.export.importer import ImportFailed
from dagtui.export.refusals import deepeval_refusals
from dagtui.export.toml_text import render_graph
from dagtui.graph.loader import load_file, load_text
from dagtui.graph.model import BinaryNode, GEvalNode, NonBinaryNode, TaskNode
from dagtui.graph.validate import check_text

GRAPHS = sorted(Path(__file__).resolve().parent.parent.joinpath("graphs").glob("*.toml"))

REFUND = {
    "nodes": {
        "6d01cc39-a0f8-4b5b-9159-35c2708960ee": {
            "type": "BinaryJudgementNode",
            "criteria": "Does the response promise a refund the 30-day policy does not allow?",
            "label": "Refund promised outside policy",
            "evaluation_params": ["input", "actual_output", "context"],
            "children": [
                "d47e84f6-2dd8-4d8c-b733-29f023613402",
                "b2e77fb9-6016-4481-95ee-6147ff739fc9",
            ],
        },
        "d47e84f6-2dd8-4d8c-b733-29f023613402": {
            "type": "VerdictNode", "verdict": True, "score": 0,
        },
        "b2e77fb9-6016-4481-95ee-6147ff739fc9": {
            "type": "VerdictNode",
            "verdict": False,
            "child": {
                "type": "geval",
                "name": "Helpfulness & tone",
                "evaluation_params": ["input", "actual_output"],
                "criteria": None,
                "evaluation_steps": ["Check it answers the question.", "Check the tone."],
                "rubric": None,
                "threshold": 0.5,
                "top_logprobs": 20,
                "async_mode": True,
                "strict_mode": False,
                "verbose_mode": False,
                "_include_g_eval_suffix": True,
                "flaky": False,
            },
        },
    }
}

SUMMARY = {
    "nodes": {
        "0b6c1a8e-1111-4c1e-9a51-3d0f6a7b8c01": {
            "type": "TaskNode",
            "instructions": "Extract all headings in `actual_output`.",
            "output_label": "Summary headings",
            "label": None,
            "evaluation_params": ["actual_output"],
            "children": ["0b6c1a8e-2222-4c1e-9a51-3d0f6a7b8c02",
                         "0b6c1a8e-3333-4c1e-9a51-3d0f6a7b8c03"],
        },
        "0b6c1a8e-2222-4c1e-9a51-3d0f6a7b8c02": {
            "type": "BinaryJudgementNode",
            "criteria": "Do the headings contain Intro, Body and Conclusion?",
            "label": None,
            "evaluation_params": None,
            "children": ["v-false", "v-true"],
        },
        "0b6c1a8e-3333-4c1e-9a51-3d0f6a7b8c03": {
            "type": "NonBinaryJudgementNode",
            "criteria": "Classify the ordering of the headings.",
            "label": None,
            "evaluation_params": None,
            "children": ["v-correct", "v-swapped"],
        },
        "v-false": {"type": "VerdictNode", "verdict": False, "score": 0},
        "v-true": {"type": "VerdictNode", "verdict": True,
                   "child": {"type": "node", "ref": "0b6c1a8e-3333-4c1e-9a51-3d0f6a7b8c03"}},
        "v-correct": {"type": "VerdictNode", "verdict": "Correct order", "score": 10},
        "v-swapped": {"type": "VerdictNode", "verdict": "Two headings swapped", "score": 4.0},
    }
}


def test_refund_document_folds_verdicts_and_names_nodes() -> None:
    graph = import_deepeval_json(json.dumps(REFUND), name="Support")
    assert list(graph.nodes) == ["refund_promised_outside_policy", "helpfulness_tone"]
    gate = graph.nodes["refund_promised_outside_policy"]
    assert isinstance(gate, BinaryNode)
    assert gate.params == ["input", "actual_output", "context"]
    assert [(v.verdict, v.score, v.then) for v in gate.verdicts] == [
        (True, 0, None), (False, None, "helpfulness_tone")]
    tone = graph.nodes["helpfulness_tone"]
    assert isinstance(tone, GEvalNode)
    assert tone.name == "Helpfulness & tone"
    assert tone.evaluation_steps == ["Check it answers the question.", "Check the tone."]
    assert tone.criteria is None and tone.params == ["input", "actual_output"]
    assert graph.metric.name == "Support" and not graph.metric.multi_turn


def test_ids_come_from_output_label_and_criteria_words() -> None:
    graph = import_deepeval_json(json.dumps(SUMMARY))
    assert list(graph.nodes) == ["summary_headings", "headings_contain_intro_body", "classify_ordering_headings"]
    task = graph.nodes["summary_headings"]
    assert isinstance(task, TaskNode)
    assert task.children == ["headings_contain_intro_body", "classify_ordering_headings"]
    order = graph.nodes["classify_ordering_headings"]
    assert isinstance(order, NonBinaryNode)
    assert [v.score for v in order.verdicts] == [10, 4]  # 4.0 becomes the integer 4
    assert isinstance(order.verdicts[1].score, int)


@pytest.mark.parametrize("doc", [REFUND, SUMMARY], ids=["refund", "summary"])
def test_imported_toml_is_clean_and_reads_back_identically(doc) -> None:
    graph = import_deepeval_json(json.dumps(doc), name="Imported")
    text = render_graph(graph, ["header"])
    report = check_text(text, "imported.toml")
    assert report.graph is not None
    assert report.errors == [], [d.format() for d in report.errors]
    assert report.graph.to_raw() == graph.to_raw()


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: p.stem)
def test_own_export_imports_back_with_same_ids(path: Path) -> None:
    graph = load_file(path).graph
    assert graph is not None
    if deepeval_refusals(graph):
        # examples with check nodes never reach DeepEval; the refusal names them
        checks = tuple(nid for nid, n in graph.nodes.items() if n.type == "check")
        assert [r.nodes for r in deepeval_refusals(graph)] == [checks]
        return
    back = import_deepeval_json(export_graph(graph, "deepeval-json"),
                                multi_turn=graph.metric.multi_turn)
    # DeepEval keeps a G-Eval inline in its verdict, so its id comes back from its name;
    # every other node keeps its id, and the graph is the same up to that renaming.
    kept = {nid for nid, node in graph.nodes.items() if not isinstance(node, GEvalNode)}
    assert kept <= set(back.nodes)
    assert normalise(back) == normalise(graph)


def test_multi_turn_is_detected_from_params_and_turn_window() -> None:
    doc = {"nodes": {
        "j": {"type": "BinaryJudgementNode", "criteria": "Did the bot greet?",
              "label": "greets", "evaluation_params": ["role", "content"],
              "turn_window": [0, 2], "children": ["t", "f"]},
        "t": {"type": "VerdictNode", "verdict": True, "score": 10},
        "f": {"type": "VerdictNode", "verdict": False, "score": 0},
    }}
    graph = import_deepeval_json(json.dumps(doc))
    assert graph.metric.multi_turn
    assert graph.nodes["j"].turn_window == (0, 2)


# -- what cannot be imported -------------------------------------------------------------

def _with_verdict(verdict: dict) -> dict:
    return {"nodes": {
        "j": {"type": "BinaryJudgementNode", "criteria": "c", "label": None,
              "evaluation_params": ["input"], "children": ["t", "f"]},
        "t": verdict,
        "f": {"type": "VerdictNode", "verdict": False, "score": 0},
    }}


@pytest.mark.parametrize(("verdict", "words"), [
    ({"type": "VerdictNode", "verdict": True, "score": 10.5}, "10.5"),
    ({"type": "VerdictNode", "verdict": True,
      "child": {"type": "geval", "name": "g", "evaluation_params": ["input"], "criteria": "c",
                "rubric": [{"score_range": [0, 5], "expected_outcome": "bad"}]}}, "rubric"),
])
def test_inexpressible_content_is_named(verdict: dict, words: str) -> None:
    with pytest.raises(ImportFailed) as info:
        import_deepeval_json(json.dumps(_with_verdict(verdict)))
    assert not info.value.usage
    # named by its judgement's id and its label, not the JSON id of the verdict
    assert "judgement 'j', verdict true" in str(info.value) and words in str(info.value)


def test_verdict_shared_by_two_judgements_is_refused() -> None:
    doc = _with_verdict({"type": "VerdictNode", "verdict": True, "score": 1})
    doc["nodes"]["k"] = {"type": "BinaryJudgementNode", "criteria": "d", "label": None,
                         "evaluation_params": ["input"], "children": ["t", "f"]}
    with pytest.raises(ImportFailed, match="shared by judgement nodes 'j', 'k'"):
        import_deepeval_json(json.dumps(doc))


@pytest.mark.parametrize("text", [
    "", "{", "[]", '{"nodes": []}', '{"nodes": {}}', '{"nodes": {"a": 1}}',
    '{"nodes": {"a": {"type": "Mystery"}}}',
    '{"nodes": {"a": {"type": "TaskNode", "instructions": 3, "output_label": "x"}}}',
    '{"nodes": {"a": {"type": "TaskNode", "instructions": "i", "output_label": "x",'
    ' "children": ["zzz"]}}}',
    "[" * 100000,
])
def test_invalid_documents_are_usage_errors(text: str) -> None:
    with pytest.raises(ImportFailed) as info:
        import_deepeval_json(text)
    assert info.value.usage
    assert "\n" not in str(info.value)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.floats(allow_nan=False)
    | st.sampled_from(["TaskNode", "VerdictNode", "BinaryJudgementNode", "node", "geval",
                       "input", "a", "b", ""]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["type", "children", "child", "ref", "verdict", "score",
                                       "criteria", "instructions", "output_label", "label",
                                       "evaluation_params", "name", "a", "b", "nodes"]),
                      inner, max_size=5),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(doc=st.dictionaries(st.sampled_from(["a", "b", "c"]), _json, max_size=3) | _json)
def test_arbitrary_json_never_raises_anything_else(doc) -> None:
    for data in (doc, {"nodes": doc}):
        try:
            graph = import_deepeval_json(json.dumps(data))
        except ImportFailed:
            continue
        render_graph(graph)


# -- the command ---------------------------------------------------------------------------

def test_cli_writes_toml_and_refuses_to_overwrite(tmp_path: Path, capsys) -> None:
    src = tmp_path / "refund_dag.json"
    src.write_text(json.dumps(REFUND), encoding="utf-8")
    out = tmp_path / "refund.toml"
    assert main(["import", str(src), "-o", str(out)]) == 0
    first = out.read_text(encoding="utf-8")
    assert 'name = "Refund dag"' in first and "[nodes.helpfulness_tone]" in first
    assert main(["import", str(src), "-o", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    out.write_text("changed", encoding="utf-8")
    assert main(["import", str(src), "-o", str(out), "--force", "--name", "Support"]) == 0
    assert 'name = "Support"' in out.read_text(encoding="utf-8")


def test_cli_stdout_by_default(tmp_path: Path, capsys) -> None:
    src = tmp_path / "dag.json"
    src.write_text(json.dumps(SUMMARY), encoding="utf-8")
    assert main(["import", str(src)]) == 0
    assert "[nodes.summary_headings]" in capsys.readouterr().out


@pytest.mark.parametrize("content", [None, b"{not json", b"\xff\xfe\x00", b'{"nodes": 5}'])
def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path, capsys, content) -> None:
    src = tmp_path / "dag.json"
    if content is not None:
        src.write_bytes(content)
    assert main(["import", str(src)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_cli_inexpressible_exits_1(tmp_path: Path, capsys) -> None:
    src = tmp_path / "dag.json"
    src.write_text(json.dumps(_with_verdict(
        {"type": "VerdictNode", "verdict": True, "score": 10.5})), encoding="utf-8")
    assert main(["import", str(src)]) == 1
    assert "judgement 'j', verdict true: score 10.5 is outside 0..10" in capsys.readouterr().err


_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=30) | st.sampled_from(
    ['"""', "'''", "\\", "\n", "\r\n", "\x00", "\x7f", "\u2028", "{{ x }}", "# c", "[nodes.x]"])


@settings(max_examples=150, deadline=None)
@given(criteria=_text, label=_text, instructions=_text, name=_text, step=_text,
       labels=st.lists(_text, min_size=1, max_size=3, unique=True))
def test_imported_text_survives_the_toml_file(criteria, label, instructions, name, step,
                                              labels) -> None:
    doc = {"nodes": {
        "t": {"type": "TaskNode", "instructions": instructions, "output_label": label,
              "label": label, "evaluation_params": ["input"], "children": ["j"]},
        "j": {"type": "NonBinaryJudgementNode", "criteria": criteria, "label": None,
              "evaluation_params": None, "children": [f"v{i}" for i in range(len(labels))]},
        **{f"v{i}": {"type": "VerdictNode", "verdict": lab, "score": i} for i, lab in
           enumerate(labels[1:], start=1)},
        "v0": {"type": "VerdictNode", "verdict": labels[0],
               "child": {"type": "geval", "name": name, "evaluation_params": ["input"],
                         "criteria": None, "evaluation_steps": [step]}},
    }}
    graph = import_deepeval_json(json.dumps(doc), name=name)
    text = render_graph(graph, [f"from {name}"])
    again = load_text(text)
    assert again.graph is not None and not again.diagnostics, again.diagnostics
    assert again.graph.to_raw() == graph.to_raw()


def test_cli_reports_errors_deepeval_lets_through(tmp_path: Path, capsys) -> None:
    """A lone task node: DeepEval loads it and scores None. The file is written so it can
    be fixed, and the validator's errors are shown with exit 1."""
    src = tmp_path / "dag.json"
    src.write_text(json.dumps({"nodes": {"only": {
        "type": "TaskNode", "instructions": "x", "output_label": "X", "label": None,
        "evaluation_params": ["input"], "children": []}}}), encoding="utf-8")
    out = tmp_path / "g.toml"
    assert main(["import", str(src), "-o", str(out)]) == 1
    assert out.exists()
    assert "error DAG" in capsys.readouterr().err


def test_reference_that_is_not_a_string_is_a_usage_error() -> None:
    doc = _with_verdict({"type": "VerdictNode", "verdict": True,
                         "child": {"type": "node", "ref": ["j"]}})
    with pytest.raises(ImportFailed) as info:
        import_deepeval_json(json.dumps(doc))
    assert info.value.usage
