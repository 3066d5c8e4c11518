"""`dagtui merge` on damaged shard reports (issue #21, 11a): real shards of a real run (the
loopback stub judges), then one value changed; each is exit 2 and one line naming the file
and what is wrong in it, never a traceback, and nothing is written."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from stub_server import StubServer

from dagtui.cli import main

ROOT = Path(__file__).resolve().parent.parent
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")
SUITE = str(ROOT / "graphs" / "suites" / "spans.toml")
MODEL = "openai/gpt-4.1-mini"


def _shards(tmp: Path, target: str) -> list[Path]:
    out = []
    with StubServer() as stub:
        for i in (1, 2):
            path = tmp / f"s{i}.json"
            main(["run", target, "--model", MODEL, "--api-base", stub.base_url, "--no-cache",
                  "-q", "--shard", f"{i}/2", "--json", str(path)])
            out.append(path)
    return out


@pytest.fixture(scope="module")
def graph_shards(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in _shards(tmp_path_factory.mktemp("g"), MEETING)]


@pytest.fixture(scope="module")
def suite_shards(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in _shards(tmp_path_factory.mktemp("s"), SUITE)]


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(report: dict[str, Any]) -> None:
        report[key] = value
    return change


def _result(value: Any) -> Callable[[dict[str, Any]], None]:
    def change(report: dict[str, Any]) -> None:
        report["results"][0] = value
    return change


def _step_field(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(report: dict[str, Any]) -> None:
        report["results"][0]["steps"][0][key] = value
    return change


GRAPH_DAMAGE = [
    (_result("a string"), "results[0]: "),
    (_set("threshold", "0.5"), "threshold: "),
    (_set("nodes", ["extract", "present"]), "nodes: "),
    (_set("results", {"a": 1}), "not a dagtui run report"),
    (_step_field("latency", "fast"), "results[0].steps[0].latency: "),
    (_set("shard", {"index": "1", "count": 2, "positions": []}), "shard.index: "),
    (_set("wall_time", None), "wall_time: "),
]


def _rule(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(report: dict[str, Any]) -> None:
        report["rules"][0][key] = value
    return change


def _record(value: Any) -> Callable[[dict[str, Any]], None]:
    def change(report: dict[str, Any]) -> None:
        report["rules"][0]["cases"][0] = value
    return change


def _detail(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(report: dict[str, Any]) -> None:
        rec = next(c for r in report["rules"] for c in r["cases"] if "result" in c)
        rec["result"][key] = value
    return change


SUITE_DAMAGE = [
    (_record("a string"), "rules[0].cases[0]: should be an object"),
    (_rule("calls", "3"), "rules[0].calls: should be a whole number, got '3'"),
    (_rule("cost", "free"), "rules[0].cost: should be a number"),
    (_rule("saved_by", ["x"]), "rules[0].saved_by: should be an object"),
    (_rule("passed", True), "rules[0].passed: should be a whole number, got True"),
    (_detail("score", "high"), ".result.score: "),
    (_set("levels", "all"), "levels: should be a list"),
    (_set("totals", {"wall_time": "long"}), "totals.wall_time: should be a number"),
]


DAMAGE = [("graph", d, w) for d, w in GRAPH_DAMAGE] + [("suite", d, w) for d, w in SUITE_DAMAGE]


@pytest.mark.parametrize(("kind", "damage", "where"), DAMAGE,
                         ids=[f"{k}-{w.split(':')[0]}" for k, _, w in DAMAGE])
def test_a_damaged_shard_is_one_line_naming_file_and_place(
        request: pytest.FixtureRequest, tmp_path: Path, capsys, kind: str, damage,
        where: str) -> None:
    good, bad = copy.deepcopy(request.getfixturevalue(f"{kind}_shards"))
    damage(bad)
    (tmp_path / "s1.json").write_text(json.dumps(good))
    (tmp_path / "s2.json").write_text(json.dumps(bad))
    code = main(["merge", str(tmp_path / "s1.json"), str(tmp_path / "s2.json"),
                 "--json", str(tmp_path / "m.json")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{tmp_path / 's2.json'}: " in err and where in err, err
    said = [line for line in err.splitlines() if line.startswith("dagtui merge:")]
    assert "Traceback" not in err and len(said) == 1, err
    assert not (tmp_path / "m.json").exists()


def test_undamaged_shards_still_merge(graph_shards, suite_shards, tmp_path: Path,
                                      capsys) -> None:
    for name, shards in (("g", graph_shards), ("s", suite_shards)):
        paths = []
        for i, report in enumerate(shards, 1):
            paths.append(tmp_path / f"{name}{i}.json")
            paths[-1].write_text(json.dumps(report))
        assert main(["merge", *map(str, paths)]) in (0, 1, 3)
        assert "merged 2 report(s) (shards 1/2, 2/2)" in capsys.readouterr().err
