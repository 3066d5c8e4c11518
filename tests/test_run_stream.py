"""Large runs: `--json out.json` also streams `out.results.jsonl` as cases finish, and the
progress line shows calls/s and an ETA. Calls go to the loopback stub."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

from dagtui.cli import main
from dagtui.commands.run import Progress
from dagtui.report.stream import results_path
from dagtui.report.trace import RunResult

sys.path.insert(0, str(Path(__file__).parent))
from stub_server import StubServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")


def test_results_stream_beside_the_json_summary(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    with StubServer() as stub:
        code = main(["run", MEETING, "--model", "openai/gpt-4.1-mini", "--api-base",
                     stub.base_url, "--no-cache", "--json", "out/report.json"])
    assert code == 0
    summary = json.loads((tmp_path / "out" / "report.json").read_text())
    lines = (tmp_path / "out" / "report.results.jsonl").read_text().splitlines()
    streamed = [json.loads(line) for line in lines]
    assert sorted(r["case"] for r in streamed) == sorted(r["case"] for r in summary["results"])
    by_case = {r["case"]: r for r in streamed}

    def without_text(result: dict) -> dict:
        steps = [{k: v for k, v in s.items() if k not in ("prompt", "request", "raw", "calls")}
                 for s in result["steps"]]
        return {**result, "steps": steps}

    for r in summary["results"]:  # the same results and steps ...
        assert without_text(by_case[r["case"]]) == without_text(r)
        # ... the prompts, requests and raw answers only in the stream (memory stays low)
        assert all(s["request"] is None and s["raw"] is None for s in r["steps"])
        assert any(s["request"] for s in by_case[r["case"]]["steps"])
    out = capsys.readouterr().out
    assert re.search(r"\[1/6\] PASS .*\[\d+\.\d calls/s, ETA \d+s\]", out)
    assert re.search(r"\[6/6\] PASS .*\[\d+\.\d calls/s\]", out)  # nothing left: no ETA


def test_stream_names_and_pace() -> None:
    assert results_path("a/out.json") == Path("a/out.results.jsonl")
    assert results_path("report") == Path("report.results.jsonl")
    progress = Progress(400, io.StringIO(), quiet=True)
    progress.started -= 10.0  # ten seconds in
    for _ in range(100):
        progress.add(RunResult(case="c", score=1.0, success=True))
    assert progress.pace() == "ETA 30s"  # no calls (cache hits): no rate, but an ETA
    progress.calls = 250
    progress.started -= 30.0
    assert progress.pace() == "6.2 calls/s, ETA 2m00s"


def test_the_json_report_is_encoded_result_by_result_yet_identical() -> None:
    """`BatchResult.to_json` encodes one result at a time (a large run's memory peak); the text
    is exactly what encoding the whole report at once gives, hostile text included."""
    from dagtui.report.outputs import safe_json
    from dagtui.report.trace import PathStep, StepRecord
    from dagtui.run.batch import BatchResult

    results = [RunResult(case=f"c{i} \udc80 \x1b", score=i / 4, success=i > 1, reason="r\n2",
                         path=[PathStep("a", True, None, 10.0)],
                         steps=[StepRecord("a", "binary", answer=True, reason="ok")])
               for i in range(4)]
    for report in (BatchResult("m", 0.5, results=results, node_order=["a"]), BatchResult("empty", 0.5)):
        for steps in (True, False):
            assert report.to_json(steps=steps) == safe_json(report.to_dict(steps=steps))
            json.loads(report.to_json(steps=steps))
