"""`dagtui schema report|results|trace|calibration`: the JSON Schemas of what dagtui writes.

Checked against what real runs write, with a real JSON Schema validator: `dagtui run` with
the in-process labels judge (a graph, a shard of it, a suite), and with litellm on the
loopback stub, where one case's question fails with a 500 (retried, then a judge error), so
calls, retries and error fields are filled; `dagtui calibrate` with two samples, with the
labels judge and on the stub, whose yes/no answers alternate (disagreements, close calls,
dropped items). Every document written is valid; a misspelt key anywhere is refused, since
the writers' objects are closed.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from stub_server import Fault, Script, StubServer, prompt_kind, smart_answer
from test_cli_walkthrough import cli
from test_schema import errors

from dagtui.cli import main
from dagtui.commands.schema import DOCUMENT_KINDS, build_schema

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parent.parent
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")
SUITE = str(ROOT / "graphs" / "suites" / "spans.toml")
LABELLED = str(ROOT / "graphs" / "meeting_summary.calibration.jsonl")
#: in the last meeting case's output only: its binary questions get a 500
FAULTY = "ship on the 28th if it is fixed by Friday"


@pytest.fixture(scope="module")
def validators() -> dict[str, Any]:
    out = {}
    for kind in DOCUMENT_KINDS:
        schema = build_schema(kind)
        jsonschema.Draft202012Validator.check_schema(schema)
        out[kind] = jsonschema.Draft202012Validator(schema)
    return out


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    """kind -> every document of that kind the runs wrote."""
    root = tmp_path_factory.mktemp("runs")
    labels = ["--model", "labels", "-q", "--cache-dir", str(root / "cache")]
    runs = {
        "graph": ["run", MEETING, *labels],
        "shard": ["run", MEETING, *labels, "--shard", "1/2"],
        "suite": ["run", SUITE, *labels],
    }
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CI", "1")
        # a module's fixture runs before conftest's per-test DAGTUI_DIR: calibrate would save
        # beside the shipped graph, in the checkout's graphs/.dagtui/
        mp.setenv("DAGTUI_DIR", str(root / ".dagtui"))
        mp.chdir(root)
        for name, argv in runs.items():
            main([*argv, "--json", str(root / name / "r.json"),
                  "--trace-dir", str(root / name / "traces")])
        with StubServer(Script([(FAULTY, Fault("500"))])) as stub:
            main(["run", MEETING, "--model", "openai/gpt-4.1-mini", "--api-base",
                  stub.base_url, "--retries", "1", "--no-cache", "-q",
                  "--json", str(root / "llm" / "r.json"),
                  "--trace-dir", str(root / "llm" / "traces")])
        calibrate = ["calibrate", MEETING, "--cases", LABELLED, "--samples", "2",
                     "--cache-dir", str(root / "cache")]
        main([*calibrate, "--model", "labels", "--json", str(root / "labels.cal.json")])
        with StubServer(_alternating()) as stub:
            main([*calibrate, "--model", "openai/gpt-4.1-mini", "--api-base", stub.base_url,
                  "--no-cache", "--concurrency", "1", "--probes", "order,padding",
                  "--json", str(root / "llm.cal.json")])
    reports = [json.loads(p.read_text(encoding="utf-8")) for p in root.glob("*/r.json")
               if p.parent.name != "suite"]  # a suite's report is another document
    lines = [json.loads(line) for p in root.glob("*/r.results.jsonl")
             for line in p.read_text(encoding="utf-8").splitlines()]
    traces = [json.loads(p.read_text(encoding="utf-8")) for p in root.glob("*/traces/*.json")]
    calibrations = [json.loads(p.read_text(encoding="utf-8")) for p in root.glob("*.cal.json")]
    return {"report": reports, "results": lines, "trace": traces, "calibration": calibrations}


def _alternating() -> Any:
    """The stub's answers, but yes and no in turn to yes/no questions: the two samples of a
    question differ."""
    turn = itertools.cycle([True, False])

    def answer(body: dict[str, Any]) -> Any:
        if prompt_kind(body) == "binary":
            return {"reason": "it depends", "verdict": next(turn)}
        return smart_answer(body)

    return answer


def test_the_runs_wrote_what_the_schemas_must_cover(written: dict[str, list[Any]]) -> None:
    reports, lines = written["report"], written["results"]
    assert len(reports) == 3 and any("shard" in r for r in reports)
    assert any("rule" in line for line in lines) and any("rule" not in line for line in lines)
    steps = [s for line in lines for s in line["steps"]]
    calls = [c for s in steps for c in s["calls"]]
    assert calls and any(c["retry_kinds"] for c in calls) and any(c["error"] for c in calls)
    assert {line["status"] for line in lines} >= {"pass", "fail", "error"}
    assert len(written["trace"]) > len(reports)
    nodes = [n for cal in written["calibration"] for n in cal["nodes"].values()]
    assert len(written["calibration"]) == 2
    assert all(any(n[key] for n in nodes)
               for key in ("disagreements", "close_calls", "dropped", "confusion", "kappa_ci"))
    probed = [r for cal in written["calibration"] if "probes" in cal
              for per in cal["probes"]["nodes"].values() for r in per.values()]
    assert any(r["flips"] for r in probed) and any(r["skipped"] for r in probed)


@pytest.mark.parametrize("kind", DOCUMENT_KINDS)
def test_every_written_document_is_valid(validators: dict[str, Any],
                                         written: dict[str, list[Any]], kind: str) -> None:
    found = {i: errors(validators[kind], doc) for i, doc in enumerate(written[kind])}
    assert {i: e for i, e in found.items() if e} == {}


def _llm_line(written: dict[str, list[Any]]) -> dict[str, Any]:
    """A results line with a step that made a call (litellm on the stub)."""
    return next(line for line in written["results"]
                if any(s["calls"] for s in line["steps"]))


@pytest.mark.parametrize("kind, where, key", [
    ("report", (), "pass_rate"),
    ("report", ("histogram", 0), "from"),
    ("report", ("nodes", "present"), "reached"),
    ("report", ("results", 0), "score"),
    ("report", ("results", 0, "path", 0), "verdict"),
    ("results", (), "cached_steps"),
    ("results", ("steps", 0), "node_type"),
    ("results", ("steps", 0, "calls", 0), "retry_kinds"),
    ("trace", (), "graph_hash"),
    ("trace", ("result",), "status"),
    ("trace", ("steps", 0), "evidence_from"),
    ("calibration", (), "end_to_end"),
    ("calibration", ("nodes", "present"), "kappa"),
    ("calibration", ("nodes", "present", "close_calls", 0), "votes"),
    ("calibration", ("outcomes", 0), "blame"),
    ("calibration", ("probes",), "pad_share"),
    ("calibration", ("probes", "nodes", "order", "order"), "flip_rate"),
    ("calibration", ("probes", "nodes", "order", "order", "flips", 0), "probed"),
])
def test_a_misspelt_key_is_refused(validators: dict[str, Any], written: dict[str, list[Any]],
                                   kind: str, where: tuple, key: str) -> None:
    doc = json.loads(json.dumps(  # a copy, of the litellm run's document
        _llm_line(written) if kind == "results"
        else next(d for d in written[kind] if d["judge"].get("model"))))
    table: Any = doc
    for step in where:
        table = table[step]
    typo = key[:-1] + key[-1] * 2
    table[typo] = table.pop(key)
    found = errors(validators[kind], doc)
    assert any(f"'{typo}' was unexpected" in e for e in found), found
    assert any(f"'{key}' is a required property" in e for e in found), found


def test_wrong_values_are_refused(validators: dict[str, Any],
                                  written: dict[str, list[Any]]) -> None:
    line = json.loads(json.dumps(_llm_line(written)))
    line["status"] = "passed"
    assert errors(validators["results"], line)
    report = json.loads(json.dumps(written["report"][0]))
    report["exit_code"] = 2  # a report is written only when the run went ahead
    assert errors(validators["report"], report)
    trace = json.loads(json.dumps(written["trace"][0]))
    del trace["case"]["name"]
    assert errors(validators["trace"], trace)


def test_open_objects_take_what_the_user_and_judge_chose(
        validators: dict[str, Any], written: dict[str, list[Any]]) -> None:
    trace = json.loads(json.dumps(written["trace"][0]))
    trace["case"]["my_field"] = [1, 2]
    trace["judge"]["endpoint_region"] = "eu"
    assert errors(validators["trace"], trace) == []


def test_the_command_prints_and_writes_each_kind(capsys: Any, tmp_path: Path) -> None:
    for kind in DOCUMENT_KINDS:
        code, out, _ = cli(capsys, "schema", kind)
        assert code == 0 and json.loads(out) == build_schema(kind)
    target = tmp_path / "trace.schema.json"
    code, _, err = cli(capsys, "schema", "trace", "-o", str(target))
    assert code == 0 and "wrote" in err
    assert json.loads(target.read_text())["title"].startswith("dagtui trace")


def test_the_documents_module_waits_for_pydantic() -> None:
    """Importing it (and the CLI) loads no pydantic; the editor's first import neither."""
    probe = ("import sys, dagtui.cli, dagtui.report.documents, dagtui.tui.app, dagtui.tui.state; "
             "dagtui.cli.build_parser(); "
             "print(any(m.split('.')[0] in ('pydantic', 'pydantic_core') for m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr
