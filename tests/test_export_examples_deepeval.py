"""Worked examples (`examples`) kept from file to DeepEval: `dagtui fmt`, an editor save, the
DeepEval Python export, and a run of that export in the real DeepEval against the loopback
stub (issue #24).

One graph file, written out of canonical order, with examples on a task, a binary and a
non_binary node (inline and as `[[nodes.x.examples]]` tables) goes through the whole chain:
`dagtui fmt` rewrites it and the examples load back the same; the editor (its Textual-free
`EditorState`) edits a criteria and renames a node, then saves, and the examples are still
there, under the new id too; the saved file is exported to DeepEval Python, its
`build_metric(model=LocalModel(...stub...))` measures a case, and every request the stub
received for a node carries that node's examples exactly as dagtui's own prompt renders
them (`dagtui.judges.prompts.examples_block`), folded into the criteria or instructions.
Needs deepeval (the `interop` extra, its own venv); skipped without it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
os.environ.setdefault("DEEPEVAL_HOME", os.path.join(tempfile.gettempdir(), "dagtui-deepeval-home"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

pytest.importorskip(
    "deepeval", reason="deepeval is not installed (pip install -e '.[interop]'); "
    "interop tests run in their own environment"
)

from deepeval.models import LocalModel  # noqa: E402
from deepeval.test_case import LLMTestCase  # noqa: E402
from stub_server import Script, StubServer  # noqa: E402
from test_export_support import load_module  # noqa: E402

from dagtui.cli import main  # noqa: E402
from dagtui.export import export_graph  # noqa: E402
from dagtui.graph.loader import load_file  # noqa: E402
from dagtui.graph.model import Example, Graph  # noqa: E402
from dagtui.graph.tomlio import format_text  # noqa: E402
from dagtui.judges.prompts import EXAMPLES_HEAD, examples_block  # noqa: E402
from dagtui.tui.state import EditorState  # noqa: E402

#: out of canonical order (type after criteria, [metric] last, extra blank lines), so `fmt`
#: really rewrites it; each example's text is unique, so the prompt it reaches is unmistakable
GRAPH = '''\
# headings, with worked examples on every judged node

[nodes.extract]
instructions = "List the section headings of the summary, one per line."
type = "task"
output_label = "Headings"
params = ["actual_output"]
children = ["present"]

# the task's worked example, as a table
[[nodes.extract.examples]]
material = "Actual output:\\nIntro\\nwe met (TASK-MATERIAL-7)\\nConclusion"
evidence = "Intro\\nConclusion"
reason = "only the two heading lines (TASK-REASON-7)"


[nodes.present]
criteria = "Are Intro, Body and Conclusion all among the headings?"
type = "binary"
params = []
examples = [
  { material = "Headings:\\nIntro\\nConclusion (GATE-MATERIAL-3)", verdict = false, reason = "Body is missing (GATE-REASON-3)" },
  { material = "Headings:\\nIntro\\nBody\\nConclusion", verdict = true },  # all there
]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "order" }]

[nodes.order]
type = "non_binary"
criteria = "In what order do Intro, Body and Conclusion appear?"
params = []
examples = [{ material = "Headings:\\nBody\\nIntro\\nConclusion (ORDER-MATERIAL-5)", verdict = "Two swapped", reason = "ORDER-REASON-5" }]
verdicts = [
  { verdict = "Correct order", score = 10 },
  { verdict = "Two swapped", score = 4 },
]

[metric]
threshold = 0.5
name = "Headings with examples"
'''

NEW_CRITERIA = "In what order do the Intro, Body and Conclusion headings appear?"
CASE = {"input": "Summarise the meeting.", "actual_output": "Intro\nHi\nBody\nText\nConclusion"}


def _examples(graph: Graph) -> dict[str, list[Example]]:
    return {nid: list(getattr(n, "examples", None) or []) for nid, n in graph.nodes.items()}


def _loaded(path: Path) -> Graph:
    result = load_file(path)
    assert result.graph is not None, result.diagnostics
    assert not [d for d in result.diagnostics if d.is_error], result.diagnostics
    return result.graph


def _script(graph: Graph) -> Script:
    """The path extract → present (true) → order ("Correct order"). DeepEval's reason call
    quotes the whole traversal, criteria included, so it is matched first."""
    return Script([
        ("DAG Traversal", {"reason": "scripted reason"}),
        (graph.nodes["extract"].instructions,
         {"reason": "scripted", "output": "Intro\nBody\nConclusion"}),
        (graph.nodes["present"].criteria, {"reason": "scripted", "verdict": True}),
        (graph.nodes["ordering"].criteria, {"reason": "scripted", "verdict": "Correct order"}),
    ])


def _prompt(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body.get("messages", []))


def test_examples_survive_fmt_and_an_editor_save_and_reach_deepevals_prompt(
        tmp_path: Path) -> None:
    path = tmp_path / "headings.toml"
    path.write_text(GRAPH, encoding="utf-8")
    original = _examples(_loaded(path))
    assert [len(original[n]) for n in ("extract", "present", "order")] == [1, 2, 1]

    # dagtui fmt: the file is rewritten to canonical layout, the examples load back the same
    assert main(["fmt", str(path)]) == 0
    formatted = path.read_text(encoding="utf-8")
    assert formatted != GRAPH and formatted == format_text(formatted)
    assert "# all there" in formatted and "# the task's worked example, as a table" in formatted
    assert _examples(_loaded(path)) == original

    # the editor: edit a criteria, rename the node, save; every example is kept
    state = EditorState.open(path)
    state.set_field("order", "criteria", NEW_CRITERIA)
    state.rename("order", "ordering")
    state.save()
    saved = path.read_text(encoding="utf-8")
    assert "# all there" in saved and saved == format_text(saved)
    graph = _loaded(path)
    assert graph.nodes["ordering"].criteria == NEW_CRITERIA
    assert _examples(graph) == {"extract": original["extract"], "present": original["present"],
                                "ordering": original["order"]}

    # the DeepEval Python export, run in the real DeepEval on the stub
    source = export_graph(graph, "deepeval-python")
    assert "folded into" in source.split('"""')[1]
    module = load_module(source, tmp_path)
    with StubServer(_script(graph)) as stub:
        metric = module.build_metric(
            model=LocalModel(model="stub-model", base_url=stub.base_url, api_key="test"))
        metric.measure(LLMTestCase(**CASE), _show_indicator=False)
        prompts = [_prompt(r["body"]) for r in stub.requests]
    assert metric.score == pytest.approx(1.0) and metric.success
    for nid, needle in (("extract", graph.nodes["extract"].instructions),
                        ("present", graph.nodes["present"].criteria),
                        ("ordering", NEW_CRITERIA)):
        asked = [p for p in prompts if needle in p and "DAG Traversal" not in p]
        assert len(asked) == 1, f"{nid}: {len(asked)} requests"
        block = examples_block(graph.nodes[nid])
        assert block is not None
        # the criteria (or instructions) as DeepEval sent it: the text, a blank line, the
        # examples exactly as dagtui's own prompt renders them
        assert needle + "\n\n" + block in asked[0], nid
        for example in graph.nodes[nid].examples:
            assert example.material in asked[0] and example.reason in asked[0], nid
    # no node's examples leak into another node's request
    gate = next(p for p in prompts if graph.nodes["present"].criteria in p
                and "DAG Traversal" not in p)
    assert "ORDER-MATERIAL-5" not in gate and "TASK-MATERIAL-7" not in gate
    assert sum(EXAMPLES_HEAD in p for p in prompts if "DAG Traversal" not in p) == 3
