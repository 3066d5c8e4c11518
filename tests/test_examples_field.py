"""The `examples` field of task, binary and non_binary nodes: loaded and type-checked with a
position, rendered before the case in the node's request (and so in its cache key), kept by fmt
and by a comment-keeping save, folded into the criteria of the DeepEval exports. A node without
examples sends byte-for-byte the request it sent before the field existed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from dagtui.export.deepeval_json import to_json
from dagtui.export.deepeval_python import to_python
from dagtui.export.refusals import deepeval_notes
from dagtui.graph.loader import load_file, load_text
from dagtui.graph.model import Example
from dagtui.graph.tomlio import format_text, render
from dagtui.judges.cache import request_key
from dagtui.judges.litellm_judge import LiteLLMJudge
from dagtui.judges.prompts import EXAMPLES_END, EXAMPLES_HEAD, build_prompt
from dagtui.stubjudge.answers import split_request

ROOT = Path(__file__).resolve().parent.parent

GRAPH = """\
[metric]
name = "Ex"
threshold = 0.5

# the gate
[nodes.gate]
type = "binary"
criteria = "Is it polite?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, score = 10 }]
examples = [{ material = "Actual output:\\nThanks!", verdict = true, reason = "it thanks" }]
"""

#: sha256 over the messages and cache keys of every node's request in graphs/*.toml, computed
#: before the `examples` field existed (the same walk as `_digest`)
BEFORE = "2c8add70aad38788e225ae35505717f55ccede64b29bffa33e32e0ebb9e65a90"


def _digest() -> str:
    h = hashlib.sha256()
    judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base="http://127.0.0.1:9", api_key="x",
                         cache=False)
    case = {"input": "in", "actual_output": "out", "expected_output": "exp",
            "turns": [{"role": "user", "content": "hi"}]}
    for path in sorted((ROOT / "graphs").glob("*.toml")):
        graph = load_file(str(path)).graph
        for nid, node in graph.nodes.items():
            if not node.uses_llm or node.type == "metric":
                continue
            evidence = {p: "evidence of " + p for p in graph.task_parents(nid)}
            prompt = build_prompt(graph, node, case, evidence, steps=["one", "two"])
            request = judge.build_request("openai/gpt-4.1-mini", prompt,
                                          list(prompt.messages), False)
            h.update(json.dumps(prompt.messages, sort_keys=True).encode())
            h.update(request_key("openai/gpt-4.1-mini", request).encode())
    return h.hexdigest()


def test_without_examples_every_request_and_cache_key_is_as_before() -> None:
    assert _digest() == BEFORE


def test_examples_load_and_come_before_the_case() -> None:
    graph = load_text(GRAPH, "ex.toml").graph
    gate = graph.nodes["gate"]
    assert gate.examples == [Example(material="Actual output:\nThanks!", verdict=True,
                                     reason="it thanks")]
    text = build_prompt(graph, gate, {"actual_output": "Go away"}, {}).messages[1]["content"]
    block = (f"{EXAMPLES_HEAD}\n\nExample 1:\nMaterial:\nActual output:\nThanks!\n"
             f"Answer: true\nWhy: it thanks\n\n{EXAMPLES_END}")
    assert text == ("Question (answer true or false):\nIs it polite?\n\n" + block
                    + "\n\nActual output:\nGo away\n\n"
                    'Answer with JSON: {"reason": "<why>", "verdict": true or false}')
    # the stub judge reads the case after the examples, not the examples' material
    body = {"messages": [{"role": "user", "content": text}]}
    assert split_request(body)[1] == "Actual output:\nGo away"


def test_examples_change_the_cache_key() -> None:
    graph = load_text(GRAPH, "ex.toml").graph
    gate = graph.nodes["gate"]
    keys = set()
    for node in (gate, gate.replace(examples=[]),
                 gate.replace(examples=[Example(material="m", verdict=False)])):
        prompt = build_prompt(graph, node, {"actual_output": "x"}, {})
        keys.add(request_key("m", {"messages": prompt.messages}))
    assert len(keys) == 3


def test_a_wrong_example_is_reported_at_its_line() -> None:
    text = GRAPH.replace('material = "Actual output:\\nThanks!"', "material = 3")
    result = load_text(text, "ex.toml")
    assert [d.format() for d in result.diagnostics] == [
        "ex.toml:11:12: error DAG004 [gate.examples] 'examples' must be a list of tables "
        "(got [{'material': 3, 'verdict': True, 'reas…)"]


def test_fmt_and_a_comment_keeping_save_keep_the_examples() -> None:
    formatted = format_text(GRAPH)
    assert load_text(formatted, "f.toml").graph.nodes["gate"].examples == \
        load_text(GRAPH, "ex.toml").graph.nodes["gate"].examples
    assert "# the gate" in formatted
    graph = load_text(GRAPH, "ex.toml").graph
    changed = graph.nodes["gate"].replace(examples=[Example(material="a", verdict=False)])
    saved = render(graph.replace(nodes={"gate": changed}), GRAPH)
    assert saved == GRAPH.replace(
        '{ material = "Actual output:\\nThanks!", verdict = true, reason = "it thanks" }',
        '{ material = "a", verdict = false }')


def test_deepeval_exports_fold_the_examples_into_the_criteria() -> None:
    graph = load_text(GRAPH, "ex.toml").graph
    criteria = json.loads(to_json(graph))["nodes"]["gate"]["criteria"]
    assert criteria.startswith(f"Is it polite?\n\n{EXAMPLES_HEAD}\n")
    assert criteria.endswith(EXAMPLES_END)
    module = to_python(graph, "ex.toml")
    assert "they are folded into\nthat node's criteria" in module.split('"""')[1]
    assert any("folded into the criteria" in n for n in deepeval_notes(graph, "deepeval-json"))
    plain = load_text(GRAPH.replace(GRAPH.splitlines()[-1], ""), "p.toml").graph
    assert "folded" not in to_python(plain, "p.toml")
    assert not any("worked examples" in n for n in deepeval_notes(plain, "deepeval-json"))
