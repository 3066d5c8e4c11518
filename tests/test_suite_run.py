"""The example suite end to end against the loopback stub: calls counted at the stub."""

from __future__ import annotations

import asyncio
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from dagtui.commands.run import run_suite
from dagtui.run.spec import RunSpec
from dagtui.suite import load_suite_file
from dagtui.suite.runner import EngineRuleRunner, run_inline_check

sys.path.insert(0, str(Path(__file__).parent))
from stub_server import Script, StubServer, prompt_kind, smart_answer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "graphs" / "suites" / "spans.toml"
CASES = ROOT / "graphs" / "suites" / "spans.cases.jsonl"
#: spans whose answer is wrong: the stub's judge says "no" to any yes/no question about them
WRONG = ("Venus is the closest", "painted by Michelangelo", "Brazil is Spanish", "Buzz Aldrin")


def _no_for_wrong(body: dict[str, Any]) -> Any:
    if prompt_kind(body) == "binary":
        return {"reason": "contradicts the reference", "verdict": False}
    return smart_answer(body)


def _spec(stub: StubServer, tmp_path: Path, **extra: Any) -> RunSpec:
    return RunSpec(
        model="openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test", no_cache=True,
        concurrency=16, json_out=str(tmp_path / "suite.json"),
        junit=str(tmp_path / "suite.xml"), **extra,
    )


@pytest.mark.slow
def test_example_suite_saves_calls_counted_at_the_stub(tmp_path: Path, capsys,
                                                       monkeypatch) -> None:
    from dagtui.suite import gating

    script = Script([(w, _no_for_wrong) for w in WRONG])
    counted: list[int] = []  # the stub's counter after each of the two runs
    real_run_suite = gating.run_suite

    async def counting_run_suite(*args: Any, **kwargs: Any) -> Any:
        result = await real_run_suite(*args, **kwargs)
        counted.append(stub.calls)
        return result

    monkeypatch.setattr(gating, "run_suite", counting_run_suite)
    with StubServer(script) as stub:
        rc = run_suite(str(EXAMPLE), None, _spec(stub, tmp_path, measure_ungated=True))
        out = capsys.readouterr().out
        total_at_stub = stub.calls
    data = json.loads((tmp_path / "suite.json").read_text())
    totals = data["totals"]
    # the gated run, then the ungated one, each exactly what the stub received
    assert counted == [totals["calls"], totals["calls"] + totals["ungated_calls"]]
    assert total_at_stub == counted[-1]
    assert totals["ungated_method"] == "measured"
    saved = totals["ungated_calls"] - totals["calls"]
    assert totals["calls_saved"] == saved and saved > 0
    assert sum(totals["saved_by"].values()) == saved
    assert f"saved {saved} calls" in out and "measured by an ungated run" in out
    assert rc == 1  # some spans fail their rules, as in a graph run
    rules = {r["rule"]: r for r in data["rules"]}
    correctness = rules["correctness"]
    assert correctness["evaluated"] == 29
    assert correctness["passed"] == 29 - 4  # the four wrong answers fail
    deep = rules["deep_analysis"]
    assert deep["calls"] <= 60  # its max_calls
    assert (deep["skipped_deps"] + deep["filtered"] + deep["sampled_out"] + deep["over_budget"]
            + deep["evaluated"] == 50)
    assert rules["concise"]["paused"] == 50 and rules["concise"]["calls"] == 0
    junit = ET.parse(tmp_path / "suite.xml").getroot()
    assert junit.get("tests") == str(50 * 5)
    suites = {s.get("name"): s for s in junit}
    assert suites["correctness"].get("failures") == "4"


def test_inline_checks_score_one_or_zero_without_calls() -> None:
    load = load_suite_file(EXAMPLE)
    runner = EngineRuleRunner(load, judge_for=lambda rule, graph: pytest.fail("no judge"))
    rule = load.suite.rules["has_output"]
    yes = asyncio.run(runner.run(rule, {"name": "a", "actual_output": "hi"}))
    no = asyncio.run(runner.run(rule, {"name": "b", "actual_output": ""}))
    assert (yes.score, yes.passed, yes.calls) == (1.0, True, 0)
    assert (no.score, no.passed) == (0.0, False)
    english = load.graphs["is_english"]
    assert run_inline_check(english, {"actual_output": "La capital es Madrid."}).score == 0.0
    assert run_inline_check(english, {"actual_output": "It is Madrid."}).score == 1.0


def test_run_parser_arguments_reach_the_suite_command(tmp_path: Path, capsys,
                                                      monkeypatch) -> None:
    """`dagtui run SUITE.toml` routes to the suite runner, with the run parser's flags."""
    from dagtui.cli import main

    suite = tmp_path / "s.toml"
    suite.write_text('[suite]\nname = "tiny"\n[rules.has_output]\n'
                     'check = { check = "length", param = "actual_output", min = 1 }\n'
                     '[rules.judge]\ngraph = "j.toml"\ndepends_on = ["has_output"]\n')
    (tmp_path / "j.toml").write_text(
        '[metric]\nname = "j"\nmodel = "openai/gpt-4.1-mini"\n[nodes.ok]\ntype = "binary"\n'
        'criteria = "Is it ok?"\nparams = ["actual_output"]\n'
        'verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]\n')
    cases = tmp_path / "c.jsonl"
    cases.write_text('{"name": "a", "actual_output": "hello"}\n'
                     '{"name": "b", "actual_output": ""}\n')
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with StubServer() as stub:
        argv = ["run", str(suite), "--cases", str(cases), "--api-base", stub.base_url,
                "--no-cache", "--json", str(tmp_path / "o.json"), "--junit",
                str(tmp_path / "o.xml"), "--measure-ungated"]
        rc = main(argv)
        assert stub.calls == 1 + 2  # gated: only "a" reaches the judge; ungated: both
    assert rc == 1  # has_output fails on "b"
    data = json.loads((tmp_path / "o.json").read_text())
    assert data["totals"]["calls"] == 1 and data["totals"]["calls_saved"] == 1
    assert data["totals"]["saved_by"] == {"skipped_deps": 1}
    err = capsys.readouterr().err
    assert "level 1 judge: 1/2 evaluated, 1 passed, 1 calls" in err
    assert (tmp_path / "o.xml").read_text().count("<skipped") == 1


def test_invalid_suite_is_refused_before_any_call(tmp_path: Path, capsys) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text('[rules.a]\ncheck = { check = "json", param = "actual_output" }\n'
                     'depends_on = ["b"]\n[rules.b]\ngraph = "gone.toml"\ndepends_on = ["a"]\n')
    rc = run_suite(str(suite), None, RunSpec())
    err = capsys.readouterr().err
    assert rc == 1
    assert "SUI007" in err and "a -> b -> a" in err and "SUI008" in err
    assert "nothing was run" in err
