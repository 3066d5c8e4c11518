"""`dagtui demo-judge` (dagtui/commands/demo_judge.py) and its rules (dagtui/stubjudge/answers.py):
deterministic answers that always say they are not a model, and a command that starts on the
port asked, refuses a taken one with exit 2, and stops cleanly on SIGTERM.

The whole tour (run and calibrate against it) is tests/test_readme_tour.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from dagtui.graph.loader import load_file
from dagtui.judges.prompts import build_prompt, geval_steps_prompt
from dagtui.stubjudge import DEMO_PREFIX, demo_answer
from dagtui.stubjudge.answers import heading_lines, quoted_terms

ROOT = Path(__file__).resolve().parent.parent
MEETING = ROOT / "graphs" / "meeting_summary.toml"


def body(prompt: Any) -> dict[str, Any]:
    return {"model": "openai/demo", "messages": prompt.messages}


def meeting_requests(text: str, headings: str) -> dict[str, dict[str, Any]]:
    """The three requests the meeting graph sends for a summary `text` whose extracted
    headings are `headings` (built by dagtui.judges.prompts, as a run builds them)."""
    graph = load_file(MEETING).graph
    assert graph is not None
    case = {"actual_output": text}
    evidence = {"extract": headings}
    return {
        "extract": body(build_prompt(graph, graph.nodes["extract"], case, {})),
        "present": body(build_prompt(graph, graph.nodes["present"], case, evidence)),
        "order": body(build_prompt(graph, graph.nodes["order"], case, evidence)),
    }


def test_the_rules_read_the_meeting_graph_as_a_person_skimming_it_would() -> None:
    text = "## Body\nThe migration is late.\n\n**Intro**\nWeekly sync.\n\n- a list item\n" \
           "Conclusion\nShip on Friday."
    asks = meeting_requests(text, "Body\nIntro\nConclusion")
    assert demo_answer(asks["extract"])["output"] == "Body\nIntro\nConclusion"
    assert demo_answer(asks["present"])["verdict"] is True
    assert demo_answer(asks["order"])["verdict"] == "Two headings swapped"
    rotated = meeting_requests(text, "Conclusion\nIntro\nBody")
    assert demo_answer(rotated["order"])["verdict"] == "All headings out of order"
    missing = meeting_requests(text, "Intro\nBody")
    answer = demo_answer(missing["present"])
    assert answer["verdict"] is False and "'Conclusion'" in answer["reason"]


def test_every_answer_says_it_is_not_a_model_and_is_the_same_each_time() -> None:
    graph = load_file(ROOT / "graphs" / "refund_policy.toml").graph
    assert graph is not None
    asks = list(meeting_requests("Intro\nhi", "Intro").values())
    for node in graph.nodes.values():
        if node.type == "geval":
            asks.append(body(geval_steps_prompt(node)))
            asks.append(body(build_prompt(graph, node, {"actual_output": "ok"}, {},
                                          steps=["Read it."])))
    kinds = set()
    for ask in asks:
        first = demo_answer(ask)
        assert first["reason"].startswith(DEMO_PREFIX), first
        assert demo_answer(json.loads(json.dumps(ask))) == first
        kinds.update(k for k in first if k != "reason")
    assert kinds == {"output", "verdict", "steps", "score"}


def test_quoted_terms_skip_apostrophes_and_long_quotes() -> None:
    assert quoted_terms("Does the user's reply contain 'Intro' and \"Body\"?") == ["Intro", "Body"]
    assert quoted_terms("Is 'this quoted sentence far too long to be a term' there?") == []
    assert heading_lines("Intro:\n1. Intro\nA sentence.\n# Body #\n") == ["Body"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(*argv: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "dagtui", "demo-judge", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_the_command_serves_the_port_asked_and_stops_on_sigterm() -> None:
    port = free_port()
    proc = start("--port", str(port))
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        url = f"http://127.0.0.1:{port}/v1"
        assert url in first and "not a model" in first
        assert f"--model openai/demo --api-base {url}" in proc.stdout.readline()
        asks = meeting_requests("Intro\nhello", "Intro")
        request = urllib.request.Request(f"{url}/chat/completions",
                                         data=json.dumps(asks["present"]).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as reply:
            content = json.loads(reply.read())["choices"][0]["message"]["content"]
        assert json.loads(content) == demo_answer(asks["present"])
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "stopped after 1 call(s)" in err


def test_a_port_in_use_is_refused_with_exit_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = start("--port", str(port))
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and out == ""
    assert f"port {port} on 127.0.0.1 is in use" in err and "--port N" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("value", ["-1", "65536", "http"])
def test_a_bad_port_is_a_usage_error(value: str) -> None:
    proc = start("--port", value)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "argument --port: must be a port number" in err
