"""The OpenAI-compatible route agrees with litellm: what a model supports.

`dagtui.judges.pricemap` reads litellm's bundled map as data instead of importing litellm;
for every model the OpenAI-compatible route takes, its answer (structured output, logprobs)
must be litellm's own, or the two routes would build different requests and cache keys.
"""

from __future__ import annotations

import pytest

from dagtui.judges import pricemap


def _route_models() -> list[str]:
    names = {"openai/llama3", "openai/meta-llama/Llama-3.1-8B-Instruct", "openai/openai/gpt-4o"}
    for key, value in pricemap.model_map().items():
        if isinstance(value, dict) and value.get("litellm_provider") == "openai":
            names |= {key, f"openai/{key}"}
    return sorted(m for m in names if pricemap.plain_openai_name(m) is not None)


def test_capabilities_from_the_map_are_litellms() -> None:
    from dagtui.judges.litellm_judge import import_litellm

    litellm = import_litellm()
    models = _route_models()
    assert len(models) > 50  # the map was found and read
    differ = []
    for model in models:
        theirs = (bool(litellm.supports_response_schema(model=model)),
                  "logprobs" in (litellm.get_supported_openai_params(model=model) or []))
        ours = (pricemap.supports_schema(pricemap.plain_openai_name(model) or ""), True)
        if ours != theirs:
            differ.append((model, ours, theirs))
    assert differ == []


@pytest.mark.parametrize("model", ["o3-mini", "openai/o1", "gpt-5", "openai/gpt-5-mini",
                                   "anthropic/claude-3-5-sonnet", "ollama/llama3",
                                   "gpt-4o-audio-preview", "not-a-model"])
def test_models_litellm_rewrites_keep_the_litellm_route(model: str) -> None:
    assert pricemap.plain_openai_name(model) is None


def test_bare_openai_names_and_prefixed_ones_take_the_route() -> None:
    assert pricemap.plain_openai_name("gpt-4.1-mini") == "gpt-4.1-mini"
    assert pricemap.plain_openai_name("openai/my-local-model") == "my-local-model"


# ------------------------------------------------------------------ both routes on the stub

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from stub_server import Fault, StubServer  # noqa: E402

from dagtui.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")
#: what may differ between two runs of the same cases: clocks
TIMINGS = {"latency", "wall_time", "latency_p50", "latency_p95", "created", "saved"}


def _without_timings(data):
    if isinstance(data, dict):
        return {k: _without_timings(v) for k, v in data.items() if k not in TIMINGS}
    if isinstance(data, list):
        return [_without_timings(v) for v in data]
    return data


def _run_route(tmp_path: Path, stub: StubServer, via: str, *extra: str):
    """One run on `via` against `stub` (both routes ask the same server: the same api_base
    in the reports), each with its own cache."""
    out = tmp_path / via
    stub.reset()
    code = main(["run", MEETING, "--model", "openai/gpt-4.1-mini", "--api-base",
                 stub.base_url, "--via", via, "--cache-dir", str(out / "cache"),
                 "--json", str(out / "r.json"), "--trace-dir", str(out / "traces"),
                 "-q", *extra])
    bodies = sorted(json.dumps(r["body"], sort_keys=True) for r in stub.requests)
    report = json.loads((out / "r.json").read_text())
    traces = {p.name: json.loads(p.read_text()) for p in sorted((out / "traces").glob("*"))}
    return code, bodies, _without_timings(report), _without_timings(traces)


@pytest.mark.slow
def test_both_routes_send_the_same_requests_and_report_the_same(tmp_path, monkeypatch,
                                                                 capsys) -> None:
    monkeypatch.setenv("CI", "1")
    with StubServer() as stub:
        fast = _run_route(tmp_path, stub, "auto")
        slow = _run_route(tmp_path, stub, "litellm")
    assert fast[0] == slow[0] == 0
    assert fast[1] == slow[1] and len(fast[1]) > 0  # the same bodies reached the server
    assert fast[2] == slow[2]  # the JSON report, every figure but the clocks
    assert fast[2]["cost"] and fast[2]["calls"] == len(fast[1])
    assert fast[3] == slow[3] and len(fast[3]) == 6  # and every trace


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["429", "500", "timeout", "malformed", "bad_json", "400",
                                   "401", "403", "404", "echo_key", "huge"])
def test_both_routes_report_a_fault_alike(tmp_path, monkeypatch, capsys, fault) -> None:
    """A fault on every request: the same error kinds, retries and halts on either route
    (the messages' wording may differ: each client describes its own exception)."""
    monkeypatch.setenv("CI", "1")

    def always(body):
        return Fault(fault)

    runs = {}
    with StubServer(always, hang=3) as stub:
        for via in ("auto", "litellm"):
            code, bodies, report, _ = _run_route(tmp_path, stub, via, "--retries", "1",
                                                 "--timeout", "1")
            runs[via] = (code, len(bodies), report["judge_errors"], report["retried"],
                         report["not_run"], report["errors"], report["passed"],
                         report["failed"])
    assert runs["auto"] == runs["litellm"]
