"""A judge that cannot work, or stops working: the run says so at once and spends nothing.

Against the loopback stub: a 401 that echoes the key, a refused connection, a model litellm
does not know, a 404, a 400, a 429 with Retry-After, an endpoint that dies mid-run; plus the
requests-per-minute limit and identical requests in flight sent once. Keys never appear in
anything dagtui prints or writes.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from stub_server import Answer, Fault, StubServer, smart_answer

from dagtui.cli import main
from dagtui.graph.loader import load_file
from dagtui.judges import JudgeError, LiteLLMJudge
from dagtui.judges.cache import Cache
from dagtui.judges.errors import CallError, classify, retry_after
from dagtui.judges.health import STOPPED, UNUSABLE, JudgeHealth, RateLimiter
from dagtui.redact import redact, remember_secret
from dagtui.run.batch import evaluate_cases
from dagtui.run.cases import Case
from dagtui.run.engine import Engine

ROOT = Path(__file__).resolve().parent.parent
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")
CASES = str(ROOT / "graphs" / "meeting_summary.cases.jsonl")
SECRET = "sk-test-0123456789abcdefSECRET"
MODEL = "openai/gpt-4.1-mini"


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    """`dagtui run` in process with JSON, JUnit and traces: (exit code, all it wrote)."""
    code = main(["run", MEETING, "--cases", CASES, "--no-cache", "--retries", "2",
                 "--timeout", "5", "--json", str(tmp_path / "r.json"),
                 "--junit", str(tmp_path / "j.xml"), "--trace-dir", str(tmp_path / "traces"),
                 *args])
    written = "".join(p.read_text(encoding="utf-8") for p in sorted(tmp_path.rglob("*"))
                      if p.is_file())
    return code, written


@pytest.fixture(autouse=True)
def _ci(monkeypatch, tmp_path):
    monkeypatch.setenv("CI", "1")
    monkeypatch.chdir(tmp_path)
    for name in ("DAGTUI_API_KEY", "DAGTUI_MODEL"):
        monkeypatch.delenv(name, raising=False)


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def judge_for(stub: StubServer, **options) -> LiteLLMJudge:
    options = {"api_key": "test", "retries": 3, "timeout": 5, "backoff": 0.01,
               "max_backoff": 0.05, **options}
    return LiteLLMJudge(MODEL, api_base=stub.base_url, **options)


def request(text: str = "Say true or false.") -> dict:
    return {"model": MODEL, "messages": [{"role": "user", "content": text}], "temperature": 0}


# ---------------------------------------------------------------- the judge cannot work

def test_401_echoing_the_key_stops_at_once_and_the_key_is_nowhere(tmp_path, monkeypatch,
                                                                  capsys):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with StubServer(lambda body: Fault("401")) as stub:
        code, written = run_cli(tmp_path, "--model", MODEL, "--api-base", stub.base_url)
        calls = stub.calls
        echoed = stub.requests[0]["body"]  # the stub saw the key (it echoes it back)
    out, err = capsys.readouterr()
    assert code == 3
    assert calls == 1  # the probe alone; every other case waited for it
    line = one_line(err)
    assert UNUSABLE in line and MODEL in line and stub.base_url in line and "401" in line
    assert out.strip() == ""
    assert echoed
    for text in (out, err, written):
        assert SECRET not in text
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["not_run"] == report["cases"] and report["exit_code"] == 3
    assert {r["status"] for r in report["results"]} == {"not_run"}
    assert "[redacted]" in written  # the echoed header is kept, masked, in the trace
    assert "<skipped" in (tmp_path / "j.xml").read_text()


def test_refused_connection_is_one_line_naming_the_endpoint(tmp_path, capsys):
    base = f"http://127.0.0.1:{free_port()}/v1"
    start = time.perf_counter()
    code, _ = run_cli(tmp_path, "--model", MODEL, "--api-base", base)
    err = capsys.readouterr().err
    assert code == 3
    assert time.perf_counter() - start < 20
    line = one_line(err)
    assert base in line and "connection" in line and "Connect call failed" in line
    assert "5xx" not in line


def test_unknown_model_is_one_line(tmp_path, capsys):
    code, _ = run_cli(tmp_path, "--model", "nosuchprovider-model-xyz")
    line = one_line(capsys.readouterr().err)
    assert code == 3
    assert "nosuchprovider-model-xyz" in line and "LLM Provider NOT provided" in line


def test_404_model_stops_after_one_call(tmp_path, capsys):
    with StubServer(lambda body: Fault("404")) as stub:
        code, _ = run_cli(tmp_path, "--model", MODEL, "--api-base", stub.base_url)
        calls = stub.calls
    line = one_line(capsys.readouterr().err)
    assert code == 3 and calls == 1 and "not found" in line


# ---------------------------------------------------------------- retries

@pytest.mark.parametrize(("fault", "kind"), [("400", "request"), ("404", "not_found"),
                                             ("401", "auth"), ("403", "auth")])
def test_client_errors_are_never_retried(fault, kind):
    with StubServer(lambda body: Fault(fault)) as stub:
        judge = judge_for(stub)
        with pytest.raises(JudgeError) as caught:
            asyncio.run(judge.complete(request()))
        assert stub.calls == 1
    assert caught.value.kind == kind
    assert caught.value.calls[0].retries == 0


@pytest.mark.parametrize("header", ["1", "http-date"])
def test_429_retry_after_is_honoured(header):
    if header == "http-date":  # whole seconds, rounded down: 2 s ahead is at least 1 s
        from email.utils import formatdate

        header = formatdate(time.time() + 2, usegmt=True)
    with StubServer(fault_plan={0: "429"}, retry_after=header) as stub:
        judge = judge_for(stub)
        rec, _ = asyncio.run(judge.complete(request()))
        times = [r["time"] for r in stub.requests]
    assert len(times) == 2 and rec.retries == 1 and rec.retry_kinds == ["429"]
    assert times[1] - times[0] >= 1.0  # backoff alone would be ~0.01 s


def test_retry_after_reads_headers_in_every_form():
    def exc(headers):
        return SimpleNamespace(response=SimpleNamespace(headers=headers))

    assert retry_after(exc({"retry-after": "3"})) == 3.0
    assert retry_after(exc({"retry-after-ms": "1500"})) == 1.5
    assert retry_after(exc({})) is None
    assert retry_after(ValueError("no response")) is None
    assert retry_after(exc({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0


def test_classify_reads_the_classes_from_the_root_cause():
    """The kind comes from the exception classes (litellm's wrap the openai SDK's, which
    wrap httpx's, which wrap the OS error), the deepest known one winning; never from the
    wording."""
    import httpx
    import openai

    def wrapped(outer, *inner):
        """`outer` raised from `inner[0]`, raised from `inner[1]`, ..."""
        for cause, effect in zip(inner, (outer, *inner), strict=False):
            effect.__cause__ = cause
        return outer

    def server_error():
        exc = RuntimeError("a 500 that says only 'Connection error.'")
        exc.status_code = 500
        return exc

    assert classify(wrapped(server_error(), httpx.ConnectError("refused"),
                            ConnectionRefusedError(111, "Connect call failed"))) == "connection"
    assert classify(server_error()) == "5xx"  # the status alone, when no class says more
    response = httpx.Response(403, request=httpx.Request("POST", "http://127.0.0.1/v1"))
    denied = openai.PermissionDeniedError("forbidden", response=response, body=None)
    assert classify(wrapped(RuntimeError("APIError"), denied)) == "auth"
    assert classify(openai.OpenAIError("the client needs a key")) == "auth"  # no client
    assert classify(wrapped(RuntimeError("x"), json.JSONDecodeError("Expecting value", "", 0))) \
        == "malformed"
    assert classify(httpx.ReadTimeout("slow")) == "timeout"
    assert classify(CallError("not_found", "no provider for model=x")) == "not_found"
    assert classify(RuntimeError("Missing credentials; LLM Provider NOT provided")) == "other"


# ---------------------------------------------------------------- the provider goes down

def test_endpoint_dying_mid_run_stops_early_and_reports_the_rest_not_run(tmp_path):
    graph = load_file(MEETING).graph
    cases = [Case(f"case {i}", {"actual_output": f"Intro\nBody {i}\nConclusion"})
             for i in range(40)]
    with StubServer(die_after=12, latency=0.01) as stub:
        judge = judge_for(stub, retries=1, trip_after=4, concurrency=4)
        start = time.perf_counter()
        report = asyncio.run(evaluate_cases(Engine(graph, judge), cases, concurrency=4))
        elapsed = time.perf_counter() - start
        calls = stub.calls
    assert elapsed < 30
    assert calls == 12
    statuses = [r.status for r in report.results]
    assert "pass" in statuses and "not_run" in statuses
    assert statuses.count("error") <= 8  # the calls that proved the outage, not every case
    assert report.halt is not None and report.halt.startswith(STOPPED)
    assert "connection" in report.halt
    assert report.exit_code() == 3
    data = report.to_dict()
    assert data["not_run"] == statuses.count("not_run") and data["halt"] == report.halt
    assert "skipped=" in report.to_junit()


def test_breaker_needs_the_same_kind_in_a_row():
    health = JudgeHealth("m at x", trip_after=3)
    assert asyncio.run(health.admit()) is True  # the probe
    health.failed("5xx", "boom", probe=True)  # not fatal for a probe: the batch goes on
    health.failed("5xx", "boom", probe=False)
    health.failed("timeout", "slow", probe=False)
    health.succeeded()
    health.failed("timeout", "slow", probe=False)
    health.failed("timeout", "slow", probe=False)
    assert health.halt is None
    assert health.failed("timeout", "slow", probe=False) is not None
    with pytest.raises(JudgeError) as caught:
        health.check()
    assert caught.value.kind == "not_run"


# ---------------------------------------------------------------- rate and single flight

def test_rpm_spaces_requests_across_the_whole_run(monkeypatch):
    """Four requests at once under rpm 120: the limiter plans them 0.5 s apart, none
    reaches the endpoint before its slot, and the note says the limit held them back.

    Asserted on what the limiter planned and on the order of events (a slot, then the
    request at the stub, both on the monotonic clock), not on the gaps between arrivals:
    a loaded machine only makes a request later than its slot, never earlier, while the
    first request's own setup can shrink the gaps it leaves to the next ones."""
    arrived: list[float] = []  # when each request reached the stub (monotonic)

    def answer(body: dict) -> Answer:
        arrived.append(time.monotonic())
        return smart_answer(body)

    with StubServer(answer) as stub:
        judge = judge_for(stub, rpm=120)
        (limiter,) = judge.limiters
        slots: list[float] = []  # each request's slot, in the order they were handed out
        held: list[float] = []  # the slots of those that had to wait for theirs
        reserve = limiter.reserve

        def recorded() -> float:
            slots.append(reserve())
            if slots[-1] > limiter.clock():  # later than now: this one waits for its slot
                held.append(slots[-1])
            return slots[-1]

        monkeypatch.setattr(limiter, "reserve", recorded)

        async def go():
            return await asyncio.gather(*(judge.complete(request(f"q{i} true or false"))
                                          for i in range(4)))

        asyncio.run(go())
        assert stub.calls == 4
    assert limiter.interval == 0.5  # 120 a minute: one every 0.5 s
    assert len(slots) == 4 and held and limiter.waited >= len(held)  # one slot each
    assert all(later - earlier >= 0.5 - 1e-9
               for earlier, later in zip(slots, slots[1:], strict=False))
    # the k-th request to arrive came no earlier than the k-th slot (each waited for its own)
    assert len(arrived) == 4
    assert all(came >= slot - 1e-3 for came, slot in zip(sorted(arrived), slots, strict=True))
    # the note, asked on the limiter's clock: as the last held request goes out it says the
    # limit binds; once the window after it (2 s at this rate) has passed it is quiet again
    monkeypatch.setattr(limiter, "clock", lambda: held[-1])
    assert judge.rate_note() == "rpm 120"
    monkeypatch.setattr(limiter, "clock", lambda: held[-1] + 2.5)
    assert judge.rate_note() == ""


def test_identical_requests_in_flight_are_sent_once(tmp_path):
    with StubServer(latency=0.3) as stub:
        judge = judge_for(stub, cache=Cache(tmp_path / "cache"))

        async def go():
            return await asyncio.gather(*(judge.complete(request()) for _ in range(5)))

        results = asyncio.run(go())
        assert stub.calls == 1
    sent = [rec for rec, _ in results if not rec.cache_hit]
    assert len(sent) == 1
    assert {rec.raw for rec, _ in results} == {sent[0].raw}


def test_without_a_cache_every_request_is_sent():
    with StubServer(latency=0.1) as stub:
        judge = judge_for(stub)

        async def go():
            return await asyncio.gather(*(judge.complete(request()) for _ in range(3)))

        asyncio.run(go())
        assert stub.calls == 3


# ---------------------------------------------------------------- redaction

def test_redact_masks_known_keys_env_tokens_and_bearer(monkeypatch):
    monkeypatch.setenv("ACME_TOKEN", "tok-12345678")
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to be a secret
    remember_secret("given-key-123456")
    text = redact("a tok-12345678 b given-key-123456 c Authorization: Bearer xyz.987 abc")
    assert "tok-12345678" not in text and "given-key-123456" not in text
    assert "xyz.987" not in text and text.endswith("abc")
    err = JudgeError("auth", "echo: given-key-123456")
    assert "given-key-123456" not in str(err)


# ---------------------------------------------------------------- suites

SPANS = ROOT / "graphs" / "suites" / "spans.toml"


def suite_args(tmp_path: Path, base: str, *extra: str) -> list[str]:
    return ["run", str(SPANS), "--model", MODEL, "--api-base", base, "--no-cache",
            "--retries", "1", "--timeout", "5", "--json", str(tmp_path / "s.json"), *extra]


def test_suite_with_an_unusable_judge_is_one_line_and_not_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with StubServer(lambda body: Fault("401")) as stub:
        code = main(suite_args(tmp_path, stub.base_url, "-q"))
        calls = stub.calls
    out, err = capsys.readouterr()
    assert code == 3 and calls == 1
    line = one_line(err)
    assert UNUSABLE in line and stub.base_url in line
    written = (tmp_path / "s.json").read_text()
    for text in (out, err, written):
        assert SECRET not in text
    report = json.loads(written)
    assert report["totals"]["not_run"] > 0 and report["totals"]["halts"]
    states = {c["state"] for r in report["rules"] for c in r["cases"]}
    assert "not_run" in states


def test_suite_summary_lists_judge_errors_by_kind_and_message(tmp_path, capsys):
    with StubServer(lambda body: Fault("400")) as stub:
        code = main(suite_args(tmp_path, stub.base_url, "-q"))
    out = capsys.readouterr().out
    assert code == 3
    assert "judge errors (pairs without a verdict, not failures): request:" in out
    assert "error correctness" in out and "request refused" in out


def test_suite_rule_rpm_is_checked(tmp_path):
    from dagtui.suite.loader import load_suite_file

    text = SPANS.read_text().replace('max_calls = 60', 'max_calls = 60\nrpm = 0')
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    for name in ("correctness.toml", "deep_analysis.toml", "spans.cases.jsonl",
                 "spans.labels.jsonl"):
        (tmp_path / name).write_text((SPANS.parent / name).read_text())
    assert "SUI018" in [d.code for d in load_suite_file(str(bad)).diagnostics]
    good = tmp_path / "good.toml"
    good.write_text(text.replace("rpm = 0", "rpm = 30"))
    load = load_suite_file(str(good))
    assert not [d for d in load.diagnostics if d.is_error]
    assert load.suite.rules["deep_analysis"].rpm == 30


# ---------------------------------------------------------------- API and worker processes

def test_api_evaluate_halts_on_an_unusable_judge():
    import dagtui

    base = f"http://127.0.0.1:{free_port()}/v1"
    report = dagtui.evaluate(MEETING, CASES, judge=MODEL, api_base=base, cache=False,
                             retries=1, timeout=5)
    assert report.halt is not None and report.halt.startswith(UNUSABLE) and base in report.halt
    assert len(report.not_run) == len(report.results) and report.exit_code() == 3


def test_workers_halt_too(tmp_path, capsys):
    base = f"http://127.0.0.1:{free_port()}/v1"
    code, _ = run_cli(tmp_path, "--model", MODEL, "--api-base", base, "--workers", "2")
    line = one_line(capsys.readouterr().err)
    assert code == 3 and UNUSABLE in line and base in line


def test_cached_cases_prove_nothing_the_first_uncached_call_probes(tmp_path, capsys):
    cases = [json.dumps({"name": f"c{i}", "actual_output": f"Intro\nBody {i}\nConclusion"})
             for i in range(4)]
    (tmp_path / "two.jsonl").write_text("\n".join(cases[:2]) + "\n")
    (tmp_path / "four.jsonl").write_text("\n".join(cases) + "\n")
    with StubServer() as stub:
        args = ["run", MEETING, "--model", MODEL, "--api-base", stub.base_url, "--retries", "1"]
        assert main([*args, "--cases", str(tmp_path / "two.jsonl")]) == 0
        stub.responder = lambda body: Fault("401")
        stub.reset()
        code = main([*args, "--cases", str(tmp_path / "four.jsonl")])
        calls = stub.calls
    out = capsys.readouterr().out
    assert code == 3 and calls == 1  # the two cached cases sent nothing; one probe
    assert "4 cases, 2 passed, 0 failed, 0 judge errors, 2 not run" in out
    assert UNUSABLE in out


def test_suite_rpm_holds_calls_back_and_says_so(tmp_path, capsys, monkeypatch):
    """`--rpm 600` on a suite: one limiter over the whole run plans every call 0.1 s after
    the one before, none reaches the endpoint before its slot, and the summary says the
    limit held calls back. Asserted on the limiter's planned slots and the order of events
    (as `test_rpm_spaces_requests_across_the_whole_run`), not on arrival gaps, which a
    loaded machine shrinks behind a slow first call."""
    arrived: list[float] = []  # when each request reached the stub (monotonic)
    planned: list[tuple[RateLimiter, float, float]] = []  # (limiter, slot, now) per call
    reserve = RateLimiter.reserve

    def recorded(self: RateLimiter) -> float:
        slot = reserve(self)
        planned.append((self, slot, self.clock()))
        return slot

    def answer(body: dict) -> Answer:
        arrived.append(time.monotonic())
        return smart_answer(body)

    monkeypatch.setattr(RateLimiter, "reserve", recorded)
    with StubServer(answer) as stub:
        code = main(suite_args(tmp_path, stub.base_url, "--rpm", "600"))
        calls = stub.calls
    err = capsys.readouterr().err
    assert code in (0, 1) and calls >= 3
    limiters = {id(limiter): limiter for limiter, _, _ in planned}
    assert len(limiters) == 1  # one limit over every rule's judge
    (limiter,) = limiters.values()
    assert limiter.interval == 0.1  # 600 a minute: one every 0.1 s
    slots = [slot for _, slot, _ in planned]
    assert len(slots) == calls  # every call took a slot, one each
    assert all(later - earlier >= 0.1 - 1e-9
               for earlier, later in zip(slots, slots[1:], strict=False))
    assert any(slot > now for _, slot, now in planned)  # some call was held back
    # the k-th call to arrive came no earlier than the k-th slot (each waited for its own)
    assert len(arrived) == calls
    assert all(came >= slot - 1e-3 for came, slot in zip(sorted(arrived), slots, strict=True))
    assert "[rpm 600]" in err


def test_classify_knows_litellms_own_classes():
    """litellm's classes subclass the openai SDK's; those that say more are read first."""
    from dagtui.judges.litellm_judge import import_litellm

    litellm = import_litellm()
    assert classify(litellm.ContextWindowExceededError("too long", "m", "openai")) == "request"
    assert classify(litellm.LiteLLMUnknownProvider("nosuch-model")) == "not_found"
    assert classify(litellm.ServiceUnavailableError("down", "openai", "m")) == "5xx"
    assert classify(litellm.Timeout("slow", "m", "openai")) == "timeout"
    assert classify(litellm.RateLimitError("slow down", "openai", "m")) == "429"


def test_the_backoff_jitters_around_the_step_and_obeys_retry_after():
    """tenacity's exponential step (`backoff * 2**n`, capped) times 0.5-1.5, never below
    the provider's Retry-After (itself capped at 60 s or max_backoff)."""
    from dagtui.judges.retries import Backoff

    def state(attempt, exc):
        return SimpleNamespace(attempt_number=attempt,
                               outcome=SimpleNamespace(exception=lambda: exc))

    plain = RuntimeError("boom")
    wait = Backoff(0.5, 8.0)
    firsts = [wait(state(1, plain)) for _ in range(200)]
    assert all(0.25 <= d <= 0.75 for d in firsts) and max(firsts) - min(firsts) > 0.1
    assert all(4.0 <= wait(state(10, plain)) <= 12.0 for _ in range(50))  # capped at 8 s
    asked = CallError("429", "slow down", status_code=429,
                      response=SimpleNamespace(headers={"retry-after": "30"}))
    assert all(wait(state(1, asked)) == 30.0 for _ in range(20))
    too_long = CallError("429", "slow down", status_code=429,
                         response=SimpleNamespace(headers={"retry-after": "3600"}))
    assert wait(state(1, too_long)) == 60.0
