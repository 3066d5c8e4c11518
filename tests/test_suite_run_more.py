"""Suite runs catching up with `dagtui run`/`dagtui test` on graphs: per-(case, rule) traces
and the zero-call labels test. Calls are counted at the loopback stub."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from dagtui.cli import main
from dagtui.graph.loader import load_file
from dagtui.report.trace import Trace, trace_file_name
from dagtui.suite import load_suite_file
from dagtui.suite.labels import split_labels

sys.path.insert(0, str(Path(__file__).parent))
from stub_server import StubServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "graphs" / "suites" / "spans.toml"
LABELLED = ROOT / "graphs" / "suites" / "spans.labels.jsonl"


CORRECTNESS = EXAMPLE.parent / "correctness.toml"


def _gated_suite(tmp_path: Path) -> tuple[Path, Path]:
    """has_output (code) gates the example's correctness graph (two binary LLM nodes);
    case "b/odd name" has no output, so correctness never runs on it."""
    suite = tmp_path / "s.toml"
    suite.write_text('[suite]\nname = "gated correctness"\n[rules.has_output]\n'
                     'check = { check = "length", param = "actual_output", min = 1 }\n'
                     f'[rules.correct]\ngraph = {json.dumps(str(CORRECTNESS))}\n'
                     'depends_on = ["has_output"]\n')
    cases = tmp_path / "c.jsonl"
    case = {"input": "Capital of France?", "expected_output": "Paris."}
    cases.write_text(json.dumps({"name": "a", **case, "actual_output": "Paris."}) + "\n"
                     + json.dumps({"name": "b/odd name", **case, "actual_output": ""}) + "\n")
    return suite, cases


def test_trace_dir_writes_one_reopenable_trace_per_evaluated_pair(tmp_path: Path,
                                                                  monkeypatch) -> None:
    suite, cases = _gated_suite(tmp_path)
    traces = tmp_path / "traces"
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with StubServer() as stub:
        rc = main(["run", str(suite), "--cases", str(cases), "--model", "openai/gpt-4.1-mini",
                   "--api-base", stub.base_url, "--no-cache", "-q",
                   "--json", str(tmp_path / "o.json"), "--trace-dir", str(traces)])
        calls = stub.calls
    assert rc == 1  # has_output fails on the empty case
    assert calls == 2  # addresses, then agrees, for "a" only
    # "b" never reached the correctness rule (gated off): no file for that pair
    names = sorted(p.name for p in traces.iterdir())
    # a name that had to be made safe carries a short hash of itself (never shared)
    odd = trace_file_name(1, "b/odd name", "has_output")
    assert odd.startswith("002_b_odd_name-") and odd.endswith("__has_output.json")
    assert names == ["001_a__correct.json", "001_a__has_output.json", odd]
    data = json.loads((tmp_path / "o.json").read_text())
    evaluated = sum(1 for r in data["rules"] for c in r["cases"] if c["state"] == "evaluated")
    assert evaluated == len(names)
    skipped = [c for r in data["rules"] for c in r["cases"] if c["state"] != "evaluated"]
    assert [(c["case"], c["state"]) for c in skipped] == [("b/odd name", "skipped_deps")]

    judged = Trace.load(traces / "001_a__correct.json")
    # `dagtui step graphs/suites/correctness.toml --trace FILE` opens it as its own trace
    assert judged.matches(load_file(CORRECTNESS).graph)
    assert judged.graph_path == str(CORRECTNESS)
    assert judged.case["name"] == "a" and judged.case["actual_output"] == "Paris."
    assert judged.judge["name"] == "litellm" and judged.judge["api_base"].startswith(
        stub.base_url.rstrip("/"))
    assert [s.node for s in judged.steps] == ["addresses", "agrees"]
    assert all(len(s.calls) == 1 and s.answer is True for s in judged.steps)
    assert judged.result.score == 1.0
    assert judged.result.describe_path() == "addresses=true → agrees ; agrees=true → score 10"

    failed_check = Trace.load(traces / odd)
    assert failed_check.judge["name"] == "check"
    step = failed_check.steps[0]
    assert (step.node, step.node_type, step.source, step.answer) == (
        "has_output", "check", "check", False)
    assert failed_check.result.score == 0.0 and failed_check.result.success is False
    assert failed_check.result.calls == 0


def test_labels_test_passes_the_labelled_example_with_zero_calls(monkeypatch, capsys) -> None:
    with StubServer() as stub:
        # were anything to reach a model, it would reach the stub
        monkeypatch.setenv("OPENAI_API_BASE", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        rc = main(["test", str(EXAMPLE), "--cases", str(LABELLED)])
        assert stub.calls == 0
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "7 cases, 7 passed, 0 failed (labels judge, 0 LLM calls)" in out
    table = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:]}
    assert table["correctness"][:3] == ["4", "3", "4"]  # ran, not run, labelled
    assert table["is_english"][3] == "7/7"  # the inline check agreed with every label


def _labelled_cases() -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in map(json.loads, LABELLED.read_text().splitlines())}


def _write(tmp_path: Path, cases: dict[str, dict[str, Any]]) -> Path:
    path = tmp_path / "mislabelled.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases.values()))
    return path


def test_mislabelled_cases_fail_naming_rule_and_node(tmp_path: Path, capsys) -> None:
    cases = _labelled_cases()
    cases["span-009"]["expected"]["is_english"] = True  # Italian: the check says false
    del cases["span-001"]["expected"]["correctness"]["agrees"]  # the path reaches it
    cases["span-008"]["expected"]["correctness"]["expected_score"] = 1  # labels lead to 0
    cases["span-003"]["expected"]["correctness"] = {"addresses": True}  # filtered out
    cases["span-010"]["expected"]["correctness"] = "skipped"  # but it runs
    cases["span-005"]["expected_score"] = 0.0  # a graph's field, not a suite's
    rc = main(["test", str(EXAMPLE), "--cases", str(_write(tmp_path, cases))])
    out = capsys.readouterr().out
    assert rc == 1
    assert "7 cases, 1 passed, 6 failed" in out
    assert ("rule 'is_english', node 'is_english': the check answered false in code" in out
            and "the label says true" in out)
    assert ("rule 'correctness', node 'agrees': no label, and the suite's path reaches it; "
            'add "correctness": {"agrees": ...}') in out
    assert "rule 'correctness': score 0.00 but its expected_score is 1.00" in out
    assert ("rule 'correctness' is labelled (addresses=true) but the suite did not run it: "
            "filter: metadata.kind in ['chat', 'qa']") in out
    assert "rule 'correctness' ran, but the labels say the suite should skip it" in out
    fails = [line.split()[1] for line in out.splitlines() if line.strip().startswith("FAIL")]
    assert fails == ["span-001", "span-003", "span-005", "span-008", "span-009", "span-010"]
    assert ("expected_score 0 at the top of the case means nothing for a suite: put it in a "
            "rule's table") in out


def test_dotted_labels_read_like_nested_tables() -> None:
    load = load_suite_file(EXAMPLE)
    nested = split_labels(load.suite, load.graphs, {
        "has_output": True, "correctness": {"addresses": True, "expected_score": 0.5},
        "deep_analysis": "skipped"})
    dotted = split_labels(load.suite, load.graphs, {
        "has_output.has_output": True, "correctness.addresses": True,
        "correctness.expected_score": 0.5, "deep_analysis": "Skipped"})
    assert nested == dotted and not nested.problems
    assert nested.of("correctness").nodes == {"addresses": True}
    assert nested.of("correctness").score == 0.5
    assert nested.of("deep_analysis").skipped and not nested.of("is_english").any
    wrong = split_labels(load.suite, load.graphs, {"corectness.agrees": True,
                                                   "correctness": True})
    assert wrong.problems[0] == ("label 'corectness.agrees' names no rule of the suite (did "
                                 "you mean 'correctness'?)")
    assert "rule 'correctness' is a graph: label its nodes with a table" in wrong.problems[1]


@pytest.mark.parametrize("cases_text, code", [(None, 2), ("not json\n", 2)])
def test_labels_test_input_errors_exit_2(tmp_path: Path, cases_text: str | None,
                                         code: int, capsys) -> None:
    path = tmp_path / "cases.jsonl"
    if cases_text is not None:
        path.write_text(cases_text)
    assert main(["test", str(EXAMPLE), "--cases", str(path)]) == code
    assert "dagtui test:" in capsys.readouterr().err


def _in_process_then_two_workers(monkeypatch: Any, tmp_path: Path, suite: Path, cases: Path,
                                 *extra: str, traces: bool = False) -> list[dict[str, Any]]:
    """`dagtui run SUITE --workers 1`, then `--workers 2`, against one stub: for each, the
    exit code, the calls the stub saw and the report counted, every (rule, case) outcome
    and (with `traces`) the trace files written."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("CI", "1")
    seen = []
    with StubServer() as stub:
        for workers in ("1", "2"):
            before = stub.calls
            trace_args = ["--trace-dir", str(tmp_path / f"t{workers}")] if traces else []
            rc = main(["run", str(suite), "--cases", str(cases), "--api-base", stub.base_url,
                       "--no-cache", "-q", "--workers", workers, *extra, *trace_args,
                       "--json", str(tmp_path / f"w{workers}.json")])
            data = json.loads((tmp_path / f"w{workers}.json").read_text())
            seen.append({
                "rc": rc, "stub": stub.calls - before, "calls": data["totals"]["calls"],
                "outcomes": [(r["rule"], [(c["case"], c["state"], c.get("score"))
                                          for c in r["cases"]]) for r in data["rules"]],
                "traces": sorted(p.name for p in (tmp_path / f"t{workers}").iterdir())
                if traces else None,
            })
    return seen


@pytest.mark.slow
def test_workers_give_the_in_process_outcomes_calls_and_traces(tmp_path: Path,
                                                               monkeypatch) -> None:
    """`--workers 2` spreads each LLM rule's admitted cases over Dask workers; the
    budgeted rule (deep_analysis, max_calls) stays in process. Nothing else may differ."""
    pytest.importorskip("distributed", reason="--workers needs dagtui[dask]")
    cases = tmp_path / "spans.jsonl"  # the first 20 spans: every gate still stops some
    cases.write_text("".join((EXAMPLE.parent / "spans.cases.jsonl").read_text()
                             .splitlines(keepends=True)[:20]))
    from dagtui.suite.runner import EngineRuleRunner

    pools: list[dict[str, int]] = []
    real_init = EngineRuleRunner.__init__

    def recording_init(self: EngineRuleRunner, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        pools.append(self.pools)

    monkeypatch.setattr(EngineRuleRunner, "__init__", recording_init)
    one, two = _in_process_then_two_workers(monkeypatch, tmp_path, EXAMPLE, cases,
                                            traces=True)
    assert one["stub"] == one["calls"] > 0 and two["stub"] == two["calls"] == one["calls"]
    assert two["outcomes"] == one["outcomes"] and two["rc"] == one["rc"]
    assert two["traces"] == one["traces"]
    assert pools == [{}, {"correctness": 2}]  # in process; then correctness in 2 workers
    from dagtui.cli import build_parser
    from dagtui.commands.flags import run_spec

    parsed = build_parser().parse_args(["run", str(EXAMPLE), "--workers", "auto"])
    assert run_spec(parsed).workers == "auto"


@pytest.mark.parametrize("value", ["0", "two"])
def test_bad_workers_flag_is_a_usage_error(value: str, capsys) -> None:
    with pytest.raises(SystemExit) as exited:  # the parser refuses it, naming flag and value
        main(["run", str(EXAMPLE), "--workers", value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "argument --workers: must be a whole number from 1 to" in err
    assert f"or 'auto', got '{value}'" in err


def test_check_nodes_inside_a_rule_graph_are_compared_with_their_labels(tmp_path: Path,
                                                                       capsys) -> None:
    (tmp_path / "fmt.toml").write_text(
        '[metric]\nname = "fmt"\nmodel = "openai/gpt-4.1-mini"\n'
        '[nodes.is_json]\ntype = "check"\ncheck = "json"\nparam = "actual_output"\n'
        'verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "good" }]\n'
        '[nodes.good]\ntype = "binary"\ncriteria = "Is the JSON good?"\n'
        'params = ["actual_output"]\n'
        'verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 3 }]\n')
    suite = tmp_path / "s.toml"
    suite.write_text('[suite]\nname = "json"\n[rules.fmt]\ngraph = "fmt.toml"\n')
    cases = tmp_path / "c.toml"
    cases.write_text(
        '[[cases]]\nname = "right"\nactual_output = \'{"a": 1}\'\n'
        '[cases.expected.fmt]\nis_json = true\ngood = false\nexpected_score = 0.3\n'
        # not JSON, labelled as if it were: the check's code disagrees with its label (the
        # labels' own path goes on to `good`; a label off that path would be refused)
        '[[cases]]\nname = "wrong"\nactual_output = \'not json\'\n'
        '[cases.expected.fmt]\nis_json = true\ngood = true\n')
    graph = ROOT / "graphs" / "meeting_summary.toml"
    rc = main(["test", str(suite), "--cases", str(cases), "-v"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "2 cases, 1 passed, 1 failed" in out
    assert "PASS right" in out and "fmt: is_json=true → good ; good=false → score 3" in out
    wrong = out[out.index("FAIL wrong"):]
    assert "rule 'fmt', node 'is_json': the check answered false in code (" in wrong
    assert wrong.split("\n")[2].endswith("); the label says true")
    assert "fmt                     2        0         2           1/2" in out
    # a graph and a suite in one call: each goes to its own logic test (the graph's refuses
    # the suite's labels, keyed by rule: no node of its graph, exit 2)
    assert main(["test", str(graph), str(suite), "--cases", str(cases)]) == 2
    both = capsys.readouterr().out
    assert f"{suite}: 2 cases" in both


def _two_llm_rule_suite(tmp_path: Path, n_cases: int) -> tuple[Path, Path]:
    """The example suite without its `max_calls`, so both LLM rules (correctness, then
    deep_analysis on what passed it) go to worker processes, over its first spans."""
    for name in ("correctness.toml", "deep_analysis.toml"):
        (tmp_path / name).write_text((EXAMPLE.parent / name).read_text())
    suite = tmp_path / "spans.toml"
    suite.write_text("".join(line for line in EXAMPLE.read_text().splitlines(keepends=True)
                             if not line.startswith(("max_calls", "cases ="))))
    cases = tmp_path / "spans.jsonl"
    cases.write_text("".join((EXAMPLE.parent / "spans.cases.jsonl").read_text()
                             .splitlines(keepends=True)[:n_cases]))
    return suite, cases


@pytest.mark.slow
def test_one_warm_cluster_serves_every_llm_rule_and_the_baseline(tmp_path: Path,
                                                                  monkeypatch) -> None:
    """`--workers 2 --measure-ungated`: four batches (two rules, gated and ungated) on one
    Dask cluster whose two workers start once; outcomes and calls as in process."""
    pytest.importorskip("distributed", reason="--workers needs dagtui[dask]")
    from dagtui.run import cluster as cluster_mod

    suite, cases = _two_llm_rule_suite(tmp_path, 12)
    made: list[Any] = []
    opened: list[int] = []
    batches: list[tuple[str, list[int]]] = []

    class RecordedCluster(cluster_mod.Cluster):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

        def _open(self) -> Any:
            opened.append(1)
            return super()._open()

    real = cluster_mod.evaluate_in_workers

    def recorded(engine: Any, batch: Any, **kwargs: Any) -> Any:
        report = real(engine, batch, **kwargs)
        pids = sorted(kwargs["cluster"].client.run(os.getpid).values())
        batches.append((engine.graph.metric.name, pids))
        return report

    monkeypatch.setattr(cluster_mod, "Cluster", RecordedCluster)
    monkeypatch.setattr(cluster_mod, "evaluate_in_workers", recorded)
    one, two = _in_process_then_two_workers(monkeypatch, tmp_path, suite, cases,
                                            "--measure-ungated")
    assert two["outcomes"] == one["outcomes"] and two["rc"] == one["rc"]
    assert two["calls"] == one["calls"] > 0 and two["stub"] == one["stub"] > two["calls"]
    evaluated = {r: [c for c, state, _ in rows if state == "evaluated"]
                 for r, rows in two["outcomes"]}
    assert evaluated["correctness"] and evaluated["deep_analysis"]  # both rules really ran
    assert len(made) == 1 and opened == [1] and made[0].client is None  # started once, closed
    assert [name for name, _ in batches] == ["Correctness", "Deep analysis"] * 2
    assert all(pids == batches[0][1] and len(pids) == 2 for _, pids in batches)
