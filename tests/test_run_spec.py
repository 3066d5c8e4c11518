"""`RunSpec`: every run setting in one value, its environment fallbacks resolved once, and
one rule for "in process or on Dask" (`dagtui.run.cluster.workers_for`)."""

from __future__ import annotations

import pytest

from dagtui.cli import build_parser
from dagtui.commands.flags import run_spec
from dagtui.judges.labels import LabelsJudge
from dagtui.judges.litellm_judge import LiteLLMJudge
from dagtui.run.cluster import workers_for
from dagtui.run.spec import RunSpec

GRAPH = "graphs/meeting_summary.toml"


def test_from_env_fills_only_what_was_not_given() -> None:
    env = {"DAGTUI_MODEL": "openai/env-model", "DAGTUI_SCHEDULER": "tcp://h:8786",
           "DAGTUI_MEASURE_UNGATED": "1"}
    spec = RunSpec.from_env(environ=env)
    assert (spec.model, spec.scheduler, spec.measure_ungated) == (
        "openai/env-model", "tcp://h:8786", True)
    given = RunSpec.from_env(environ=env, model="openai/flag", scheduler="tcp://x:1")
    assert (given.model, given.scheduler) == ("openai/flag", "tcp://x:1")
    quiet = RunSpec.from_env(environ={"DAGTUI_MEASURE_UNGATED": "0"})
    assert quiet.model is None and quiet.scheduler is None and not quiet.measure_ungated


def test_a_spec_is_frozen_and_changed_by_replace() -> None:
    spec = RunSpec(concurrency=4)
    with pytest.raises(AttributeError):
        spec.concurrency = 8  # type: ignore[misc]
    assert spec.replace(concurrency=8).concurrency == 8 and spec.concurrency == 4


def test_the_run_flags_become_one_spec(monkeypatch) -> None:
    monkeypatch.delenv("DAGTUI_MODEL", raising=False)
    args = build_parser().parse_args([
        "run", GRAPH, "--model", "openai/m", "--api-base", "http://127.0.0.1:9", "--rpm",
        "60", "--timeout", "5", "--retries", "1", "--concurrency", "3", "--workers", "2",
        "--shard", "1/2", "--json", "out/r.json", "--junit", "r.xml", "--trace-dir", "t",
        "--no-cache", "-q", "--lenient", "--allow-python", "--via", "litellm"])
    spec = run_spec(args, stream_results=True)
    assert (spec.model, spec.api_base, spec.rpm, spec.timeout, spec.retries) == (
        "openai/m", "http://127.0.0.1:9", 60.0, 5.0, 1)
    assert (spec.concurrency, spec.workers, str(spec.shard)) == (3, 2, "1/2")
    assert spec.stream == "out/r.results.jsonl" and spec.json_out == "out/r.json"
    assert spec.junit == "r.xml" and spec.trace_dir == "t" and spec.via == "litellm"
    assert spec.no_cache and spec.quiet and spec.lenient and spec.python.allow
    assert spec.results_on_disk
    options = spec.judge_kwargs(cache=None)
    assert options["rpm"] == 60.0 and options["via"] == "litellm" and options["retries"] == 1


def test_calibrate_and_step_flags_give_the_same_fields() -> None:
    cal = run_spec(build_parser().parse_args(
        ["calibrate", GRAPH, "--samples", "3", "--temperature", "0.5", "--refresh"]))
    assert (cal.samples, cal.temperature, cal.refresh, cal.stream) == (3, 0.5, True, None)
    step = run_spec(build_parser().parse_args(["step", GRAPH, "--judge", "labels"]))
    assert step.judge == "labels" and not step.no_cache


def test_one_rule_says_in_process_or_on_dask() -> None:
    model = LiteLLMJudge("openai/m", concurrency=8)
    assert workers_for(1, 10, model) == 1
    assert workers_for(3, 10, model) == 3
    assert workers_for(1, 10, model, scheduler="tcp://h:8786") == 2  # a cluster: on it
    assert workers_for("auto", 10, model) == 1  # too few cases for "auto"
    # judges that spend no per-call CPU (and may not pickle) always stay in process
    assert workers_for(3, 10, LabelsJudge(), scheduler="tcp://h:8786") == 1
