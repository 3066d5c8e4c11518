"""`dagtui align` and `dagtui.align`: a judge (the loopback stub, through a real litellm
client) that agrees with the labels only when the criteria hold a phrase (or when shown worked
examples); align must pick the wording that holds it among decoys, prove it on held-out cases,
and write only that node's criteria."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from align_helpers import PHRASE, TASK_GRAPH, Judge, write
from stub_server import StubServer

import dagtui
from dagtui.cli import main
from dagtui.judges.litellm_judge import LiteLLMJudge
from dagtui.workdir import calibration_file

MODEL = "openai/gpt-4.1-mini"
GOOD = f"Is the reply polite, {PHRASE}?"
DECOYS = ["Is the reply rude?", "Is the reply courteous and kind?"]


def _cli(graph: Path, stub: StubServer, *extra: str) -> int:
    return main(["align", str(graph), "--node", "polite", "--model", MODEL,
                 "--api-base", stub.base_url, "--retries", "0", *extra])


def test_try_picks_the_phrase_proves_it_on_held_out_and_writes_only_the_criteria(
        tmp_path, capsys):
    graph = write(tmp_path)
    before = graph.read_text()
    saved = calibration_file(graph)
    saved.parent.mkdir(parents=True)
    saved.write_text(json.dumps({"graph": "Align", "nodes": {"polite": {
        "node": "polite", "type": "binary", "cases": 20, "kappa": 0.0}}, "notes": []}))
    with StubServer(Judge(20)) as stub:
        code = _cli(graph, stub, "--try", DECOYS[0], "--try", GOOD, "--try", DECOYS[1],
                    "--write", "--json", str(tmp_path / "a.json"),
                    "--markdown", str(tmp_path / "a.md"))
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads((tmp_path / "a.json").read_text())
    assert data["winner"] == "try 2"
    assert data["split"]["classes"] == {"false": [7, 3], "true": [7, 3]}
    held = data["held_out"]
    assert held["before"]["figures"]["kappa"] == 0.0
    assert held["before"]["figures"]["agreement"] == 0.5
    assert held["after"]["figures"]["kappa"] == 1.0
    assert held["after"]["figures"]["agreement"] == 1.0
    assert held["after"]["figures"]["kappa_ci"] == [1.0, 1.0]
    assert (held["better_items"], held["worse_items"], held["mcnemar_p"]) == (3, 0, 0.25)
    assert len(data["now_agree"]) == 3 and data["now_disagree"] == []
    # 14 train cases x 4 (the node as it is and three wordings) + 2 x 6 held-out
    assert data["calls"] == 68
    diff = [line for line in difflib.unified_diff(before.splitlines(),
                                                  graph.read_text().splitlines(), lineterm="")
            if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert diff == ['-criteria = "Is the reply polite?"  # the wording under test',
                    f'+criteria = "{GOOD}"  # the wording under test']
    node = json.loads(saved.read_text())["nodes"]["polite"]
    assert (node["cases"], node["kappa"], node["agreement"]) == (20, 1.0, 1.0)
    assert node["aligned"]["winner"] == "try 2"
    md = (tmp_path / "a.md").read_text()
    assert "improved on the held-out cases" in md and "### Now agree (3)" in md
    assert "0.00 [0.00, 0.00] | 1.00 [1.00, 1.00]" in md


def test_a_scripted_proposer_is_picked_among_decoys_and_a_second_run_makes_no_call(tmp_path):
    graph = write(tmp_path)
    judge_script = Judge(20, proposals=[DECOYS[0], GOOD, DECOYS[1]])
    with StubServer(judge_script) as stub:
        args = ("--method", "rewrite", "--candidates", "3", "--json", str(tmp_path / "a.json"))
        assert _cli(graph, stub, *args) == 0
        first = json.loads((tmp_path / "a.json").read_text())
        sent = len(stub.requests)
        assert _cli(graph, stub, *args) == 0
        again = json.loads((tmp_path / "a.json").read_text())
        assert len(stub.requests) == sent  # every answer from the cache
    assert first["winner"] == "rewrite 2"
    assert [c["text"] for c in first["candidates"]] == [None, *DECOYS[:1], GOOD, DECOYS[1]]
    assert first["calls"] == 14 * 4 + 1 + 12 == sent
    assert again["calls"] == 0 and again["cache_hits"] == sent
    for part in ("before", "after"):
        for key in ("figures", "rows"):
            assert again["held_out"][part][key] == first["held_out"][part][key]
    assert again["split"] == first["split"]
    assert judge_script.proposer_calls == 1


def test_a_proposer_that_never_helps_writes_nothing_and_exits_1(tmp_path, capsys):
    graph = write(tmp_path)
    before = graph.read_text()
    with StubServer(Judge(20, proposals=DECOYS)) as stub:
        assert _cli(graph, stub, "--method", "rewrite", "--write") == 1
    out = capsys.readouterr().out
    assert "no candidate beat the node as it is" in out
    assert graph.read_text() == before


def test_the_examples_method_on_a_judge_that_follows_examples(tmp_path):
    graph = write(tmp_path)
    with StubServer(Judge(20, follow_examples=True)) as stub:
        judge = LiteLLMJudge(MODEL, api_base=stub.base_url, retries=0)
        result = dagtui.align(str(graph), "polite", judge=judge, method="examples",
                              candidates=2)
    assert result.winner is not None and result.winner.name == "examples 1"
    chosen = result.winner.examples
    assert chosen is not None and [e.verdict for e in chosen] == [False, True]
    # wrong first: the judge said true to every case, so the false example is one it got wrong
    assert chosen[0].reason == "a person's label; true was wrong here"
    assert chosen[0].material.startswith("Actual output:\nCASE-c")
    assert (result.before.figures.kappa, result.after.figures.kappa) == (0.0, 1.0)
    assert result.improved
    examples = result.aligned_graph.nodes["polite"].examples
    assert examples == chosen


def test_same_seed_same_split_and_result_another_seed_another_split(tmp_path):
    graph = write(tmp_path)
    with StubServer(Judge(20)) as stub:
        judge = LiteLLMJudge(MODEL, api_base=stub.base_url, retries=0)
        runs = [dagtui.align(str(graph), "polite", judge=judge, tries=[GOOD], seed=s)
                for s in (7, 7, 8)]
    a, b, c = runs
    assert a.split.to_dict() == b.split.to_dict()
    assert a.to_dict()["held_out"] == b.to_dict()["held_out"]
    assert a.split.held_out != c.split.held_out


def test_a_task_node_is_aligned_by_its_downstream_node(tmp_path):
    graph = write(tmp_path, graph=TASK_GRAPH)
    with StubServer(Judge(20)) as stub:
        judge = LiteLLMJudge(MODEL, api_base=stub.base_url, retries=0)
        result = dagtui.align(str(graph), "extract", judge=judge,
                              tries=["Quote the reply exactly.", f"Quote the reply, {PHRASE}."])
    assert result.wording == "instructions"
    assert result.winner is not None and result.winner.name == "try 2"
    assert set(result.after.nodes) == {"polite"}
    assert (result.before.nodes["polite"].kappa, result.after.nodes["polite"].kappa) == \
        (0.0, 1.0)
    assert result.improved and not result.worse_nodes


def test_too_few_labels_are_refused_with_the_number_needed(tmp_path, capsys):
    graph = write(tmp_path, n=8)
    with StubServer(Judge(8)) as stub:
        assert _cli(graph, stub, "--try", GOOD) == 2
        assert stub.requests == []
    assert "8 labelled case(s) reach it; alignment needs at least 10 (2 more)" in \
        capsys.readouterr().err


def test_a_class_with_too_few_cases_is_refused(tmp_path, capsys):
    graph = write(tmp_path, n=12)
    rows = [json.loads(line) for line in (tmp_path / "align.cases.jsonl").read_text().splitlines()]
    for row in rows[2:]:
        row["expected"]["polite"] = True
    (tmp_path / "align.cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["align", str(graph), "--node", "polite", "--dry-run"]) == 2
    assert "too few of false: 1 (2 more)" in capsys.readouterr().err


def test_dry_run_and_a_budget_that_counts_only_requests_sent(tmp_path, capsys):
    graph = write(tmp_path)
    assert main(["align", str(graph), "--node", "polite", "--try", GOOD, "--dry-run",
                 "--model", MODEL]) == 0
    out = capsys.readouterr().out
    assert "14 train, 6 held-out" in out and "up to 40 calls" in out
    with StubServer(Judge(20)) as stub:
        # 40 requests needed, 30 allowed: the search stops when 30 were sent, nothing
        # concluded (the node as it is and the wording on train are 28, then 2 of held-out)
        assert _cli(graph, stub, "--try", GOOD, "--budget", "30") == 1
        assert stub.calls == 30
        out = " ".join(capsys.readouterr().out.split())
        assert "not finished: --budget 30 spent after 30 calls (0 cache hits, free)" in out
        assert "not finished: the budget was spent before the search ended" in out
        # the same command again: the 30 are cache hits, free; the 10 left are sent
        assert _cli(graph, stub, "--try", GOOD, "--budget", "30") == 0
        assert stub.calls == 40
        out = capsys.readouterr().out
        assert "improved on the held-out cases" in out
        # a budget of 0 is enough once everything is cached
        assert _cli(graph, stub, "--try", GOOD, "--budget", "0") == 0
        assert stub.calls == 40


@pytest.mark.parametrize("node", ["nope"])
def test_an_unknown_node_is_refused(tmp_path, capsys, node):
    graph = write(tmp_path)
    assert main(["align", str(graph), "--node", node, "--dry-run"]) == 2
    assert "no node 'nope'" in capsys.readouterr().err
