"""Prompts: stable, readable, reason first; tolerant parsing that never guesses."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dagtui.graph.loader import load_file, load_text
from dagtui.judges.prompts import (
    AnswerError,
    build_prompt,
    corrective_message,
    extract_json,
    parse_answer,
    render_value,
)

MEETING = "graphs/meeting_summary.toml"


def order_prompt():
    graph = load_file(MEETING).graph
    return build_prompt(graph, graph.nodes["order"], {"actual_output": "x"},
                        {"extract": "Body\nIntro\nConclusion"})


def test_labels_listed_in_declared_order_and_schema_matches():
    p = order_prompt()
    text = p.messages[1]["content"]
    a, b, c = (text.index(f"- {label}") for label in
               ("Correct order", "Two headings swapped", "All headings out of order"))
    assert a < b < c
    assert p.labels == ["Correct order", "Two headings swapped", "All headings out of order"]
    assert p.schema["required"] == ["reason", "verdict"]
    assert list(p.schema["properties"]) == ["reason", "verdict"]
    assert text.index('"reason"') < text.index('"verdict"')  # reason requested first


def test_prompt_is_identical_across_processes():
    code = (
        "import hashlib, json\n"
        "from dagtui.graph.loader import load_file\n"
        "from dagtui.judges.prompts import build_prompt\n"
        f"g = load_file({MEETING!r}).graph\n"
        "p = build_prompt(g, g.nodes['order'], {'actual_output': 'x'}, "
        "{'extract': 'Body\\nIntro\\nConclusion'})\n"
        "print(hashlib.sha256(json.dumps(p.messages).encode()).hexdigest())\n"
    )
    here = hashlib.sha256(json.dumps(order_prompt().messages).encode()).hexdigest()
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env={"PYTHONHASHSEED": seed, "PATH": ""})
        assert out.stdout.strip() == here


GRAPH = """
[nodes.j]
type = "binary"
criteria = "Were the right tools used given the context?"
params = ["context", "tools_called", "metadata"]
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
"""


def test_lists_tool_calls_and_dicts_render_readably():
    graph = load_text(GRAPH).graph
    fields = {
        "context": ["Policy: 30 days.", "Bought on 1 Nov."],
        "tools_called": [
            {"name": "lookup_order", "input_parameters": {"id": 42}, "output": {"ok": True}},
            "send_email",
        ],
        "metadata": {"tier": "gold", "region": "EU"},
    }
    text = build_prompt(graph, graph.nodes["j"], fields, {}).messages[1]["content"]
    assert "Context:\n- Policy: 30 days.\n- Bought on 1 Nov." in text
    assert 'Tools called:\n- lookup_order(id=42) -> {"ok": true}\n- send_email' in text
    assert "Metadata:\nregion: EU\ntier: gold" in text
    assert "['" not in text and "{'" not in text  # no Python reprs


def test_missing_param_is_visible_not_none():
    assert render_value(None) == "(not provided)"
    assert render_value([]) == "(none)"


MULTI = """
[metric]
multi_turn = true
[nodes.j]
type = "binary"
criteria = "Did the assistant stay polite?"
params = ["role", "content", "scenario"]
turn_window = [1, 2]
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
"""


def test_multi_turn_turns_rendered_with_window():
    graph = load_text(MULTI).graph
    fields = {
        "turns": [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "hi, how can I help?"},
            {"role": "user", "content": "refund please"},
            {"role": "assistant", "content": "no"},
        ],
        "scenario": "refund request",
    }
    text = build_prompt(graph, graph.nodes["j"], fields, {}).messages[1]["content"]
    assert "Turns 1 to 2:\n[1] assistant: hi, how can I help?\n[2] user: refund please" in text
    assert "hello" not in text and "[3]" not in text
    assert "Scenario:\nrefund request" in text


@pytest.mark.parametrize("raw", [
    '{"reason": "r", "verdict": "Two headings swapped"}',
    '```json\n{"reason": "r", "verdict": "Two headings swapped"}\n```',
    'Sure. {"reason": "r", "verdict": "Two headings swapped"} Hope that helps!',
    '{"reason": "r", "verdict": "two headings  swapped."}',
])
def test_tolerant_parsing(raw):
    parsed = parse_answer(order_prompt(), raw)
    assert parsed.value == "Two headings swapped" and parsed.reason == "r"


def test_parsing_never_guesses():
    with pytest.raises(AnswerError) as info:
        parse_answer(order_prompt(), '{"reason": "r", "verdict": "Swapped"}')
    assert info.value.kind == "out_of_set"
    with pytest.raises(AnswerError) as info:
        parse_answer(order_prompt(), "I think they are swapped")
    assert info.value.kind == "malformed"
    with pytest.raises(AnswerError):
        extract_json("no json here")


def test_binary_accepts_yes_no_and_geval_range():
    graph = load_file(MEETING).graph
    p = build_prompt(graph, graph.nodes["present"], {}, {"extract": "x"})
    assert parse_answer(p, '{"reason": "", "verdict": "yes"}').value is True
    assert parse_answer(p, '{"reason": "", "verdict": false}').value is False
    with pytest.raises(AnswerError):
        parse_answer(p, '{"reason": "", "verdict": "perhaps"}')
    msg = corrective_message(order_prompt(), "bad")
    assert msg["role"] == "user" and '"Correct order"' in msg["content"]


def test_include_reason_false_asks_for_the_answer_alone():
    """A graph that turns reasons off pays for no reason tokens: no prompt part asks for one."""
    text = Path(MEETING).read_text(encoding="utf-8").replace(
        'threshold = 0.5', 'threshold = 0.5\ninclude_reason = false', 1)
    graph = load_text(text, MEETING).graph
    assert graph.metric.include_reason is False
    for nid in ("extract", "present", "order"):
        p = build_prompt(graph, graph.nodes[nid], {"actual_output": "x"}, {"extract": "x"})
        assert p.reasons is False
        assert "reason" not in p.schema["properties"]
        assert "reason" not in p.schema["required"]
        system, user = (m["content"] for m in p.messages)
        assert "reason" not in system.lower() and '"reason"' not in user
        assert user.rstrip().endswith("}")  # the answer shape still closes the request
    order = build_prompt(graph, graph.nodes["order"], {"actual_output": "x"}, {"extract": "x"})
    assert order.schema["required"] == ["verdict"]
    assert corrective_message(order, "bad")["content"].endswith("only the JSON object.")
    # the default graph keeps reason first, byte for byte as before
    assert corrective_message(order_prompt(), "bad")["content"].endswith(", reason first.")
