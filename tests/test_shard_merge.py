"""`--shard I/N` and `dagtui merge`: a CI matrix's shards merged equal the whole run.

Calls go to the loopback stub; the split is by a hash of the case name, so it is checked to
be disjoint, complete and independent of the cases' order.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from dagtui.cli import main
from dagtui.run.shard import Shard, parse_shard, select, shard_of

sys.path.insert(0, str(Path(__file__).parent))
from stub_server import Script, StubServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")
CASES = ROOT / "graphs" / "meeting_summary.cases.jsonl"
SUITE = str(ROOT / "graphs" / "suites" / "spans.toml")
SPANS = str(ROOT / "graphs" / "suites" / "spans.cases.jsonl")


def test_the_split_is_stable_disjoint_and_complete() -> None:
    names = [f"case-{i}" for i in range(400)]
    shards = [Shard(i, 3) for i in (1, 2, 3)]
    parts = [list(select(names, s, name=str)) for s in shards]
    assert sorted(sum(parts, [])) == sorted(names)  # every case once
    assert all(40 < len(p) < 230 for p in parts)  # roughly even
    # by name, not position: reordering or dropping other cases moves nothing
    again = [list(select(list(reversed(names[::2])), s, name=str)) for s in shards]
    assert [sorted(p) for p in again] == [sorted(set(p) & set(names[::2])) for p in parts]
    assert shard_of("héllo \udc80", 5) == shard_of("héllo \udc80", 5)


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_is_refused(text: str, capsys) -> None:
    with pytest.raises(ValueError, match="I/N"):
        parse_shard(text)
    with pytest.raises(SystemExit) as exit_:
        main(["run", MEETING, "--shard", text])
    assert exit_.value.code == 2
    assert "--shard" in capsys.readouterr().err


def _rows(report: dict) -> list[tuple]:
    return [(r["case"], r["score"], r["status"], r["calls"]) for r in report["results"]]


def _totals(report: dict) -> tuple:
    return tuple(report[k] for k in ("cases", "passed", "failed", "errors", "not_run",
                                     "calls", "pass_rate", "exit_code"))


@pytest.mark.slow
def test_graph_shards_merged_equal_the_whole_run(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    # more cases than the example has, with one judged failing
    lines = CASES.read_text().splitlines()
    many = [json.loads(line) for line in lines if line.strip()]
    cases = []
    for k in range(4):
        for case in many:
            cases.append({**case, "name": f"{case['name']} #{k}"})
    data = tmp_path / "cases.jsonl"
    data.write_text("".join(json.dumps(c) + "\n" for c in cases))
    responder = Script([("NO-HEADINGS", {"reason": "missing", "verdict": False}),
                        ("Staging database is blocking Tom",
                         {"reason": "none found", "output": "NO-HEADINGS"})])

    def run(*extra: str) -> int:
        return main(["run", MEETING, "--cases", str(data), "--model", "openai/gpt-4.1-mini",
                     "--api-base", stub.base_url, "--retries", "0", "--no-cache", "-q",
                     *extra])

    with StubServer(responder) as stub:
        whole = run("--json", "whole.json", "--junit", "whole.xml")
        calls_whole = stub.calls
        codes = [run("--shard", f"{i}/2", "--json", f"s{i}.json") for i in (1, 2)]
        calls_shards = stub.calls - calls_whole
    err = capsys.readouterr().err
    assert re.search(r"shard 1/2: \d+ of 24 cases", err)
    whole_r = json.loads((tmp_path / "whole.json").read_text())
    parts = [json.loads((tmp_path / f"s{i}.json").read_text()) for i in (1, 2)]
    assert all(p["shard"]["count"] == 2 for p in parts) and "shard" not in whole_r
    assert sum(p["cases"] for p in parts) == 24 and min(p["cases"] for p in parts) > 0
    assert calls_shards == calls_whole
    assert whole == 1 and sorted(codes) in ([0, 1], [1, 1])
    merged = main(["merge", "s2.json", "s1.json", "--json", "m.json", "--junit", "m.xml"])
    merged_r = json.loads((tmp_path / "m.json").read_text())
    assert merged == whole
    assert _rows(merged_r) == _rows(whole_r)  # the dataset's order, not shard order
    assert _totals(merged_r) == _totals(whole_r)
    assert merged_r["nodes"].keys() == whole_r["nodes"].keys()
    for node, stats in whole_r["nodes"].items():
        assert merged_r["nodes"][node]["verdicts"] == stats["verdicts"]
        assert merged_r["nodes"][node]["calls"] == stats["calls"]
    strip = lambda x: re.sub(r' time="[^"]*"', "", x)  # noqa: E731
    assert strip((tmp_path / "m.xml").read_text()) == strip((tmp_path / "whole.xml").read_text())
    out = capsys.readouterr()
    assert "24 cases" in out.out and "merged 2 report(s) (shards 1/2, 2/2)" in out.err
    # a shard missing, or given twice: refused, never a partial green merge
    assert main(["merge", "s1.json"]) == 2
    assert "shard(s) 2/2 missing" in capsys.readouterr().err
    assert main(["merge", "s1.json", "s1.json", "s2.json"]) == 2
    assert "given twice" in capsys.readouterr().err
    assert main(["merge", "whole.json", "s1.json"]) == 2


@pytest.mark.slow
def test_suite_shards_merged_equal_the_whole_run(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")

    # max_calls is a budget per run, so per shard: the split would move the cut-off
    suites = tmp_path / "suites"
    shutil.copytree(Path(SUITE).parent, suites)
    text = (suites / "spans.toml").read_text()
    (suites / "spans.toml").write_text(re.sub(r"(?m)^max_calls.*$", "", text))

    def run(*extra: str) -> int:
        return main(["run", str(suites / "spans.toml"), "--cases", SPANS, "--model", "openai/gpt-4.1-mini",
                     "--api-base", stub.base_url, "--retries", "0", "--no-cache", "-q",
                     *extra])

    with StubServer() as stub:
        whole = run("--json", "whole.json", "--junit", "whole.xml")
        calls_whole = stub.calls
        for i in (1, 2, 3):
            run("--shard", f"{i}/3", "--json", f"s{i}.json")
        calls_shards = stub.calls - calls_whole
    merged = main(["merge", "s1.json", "s2.json", "s3.json", "--json", "m.json",
                   "--junit", "m.xml"])
    whole_r = json.loads((tmp_path / "whole.json").read_text())
    merged_r = json.loads((tmp_path / "m.json").read_text())
    assert merged == whole
    # a G-Eval leaf without fixed steps asks for its steps once per run: once per shard
    assert calls_whole <= calls_shards <= calls_whole + 3
    assert merged_r["totals"]["calls"] == calls_shards
    keys = ("errors", "not_run", "failures")
    assert {k: merged_r["totals"][k] for k in keys} == {k: whole_r["totals"][k] for k in keys}
    assert merged_r["cases"] == whole_r["cases"] == 50

    def per_rule(report: dict) -> list[tuple]:
        return [(r["rule"], r["candidates"], r["evaluated"], r["passed"], r["skipped_deps"],
                 r["sampled_out"],
                 [(c["case"], c["state"], c.get("score")) for c in r["cases"]])
                for r in report["rules"]]

    assert per_rule(merged_r) == per_rule(whole_r)
    strip = lambda x: re.sub(r' time="[^"]*"', "", x)  # noqa: E731
    assert strip((tmp_path / "m.xml").read_text()) == strip((tmp_path / "whole.xml").read_text())


def test_merge_refuses_what_is_not_a_report(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    assert main(["merge", str(bad)]) == 2
    assert "not a dagtui run report" in capsys.readouterr().err
    assert main(["merge", str(tmp_path / "missing.json")]) == 2
