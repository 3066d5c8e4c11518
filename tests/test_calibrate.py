"""`dagtui calibrate` and `dagtui.calibrate`: teacher forcing, agreement, blame and flip rates,
with a real litellm judge against the loopback stub answering from a per-case script (and
per sample: the n-th time the stub sees a question is its n-th sample)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stub_server import StubServer, prompt_kind

import dagtui
from dagtui.calibration import stats
from dagtui.cli import main
from dagtui.judges.base import CallbackJudge
from dagtui.judges.litellm_judge import LiteLLMJudge

GRAPH = """\
[metric]
name = "Calib"
threshold = 0.5
cases = "calib.cases.jsonl"

[nodes.extract]
type = "task"
instructions = "List the items in actual_output."
output_label = "Items"
params = ["actual_output"]
children = ["gate", "kind"]

[nodes.gate]
type = "binary"
criteria = "Is the output acceptable?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "kind" }]

[nodes.kind]
type = "non_binary"
criteria = "Which kind of output is it?"
params = ["actual_output"]
verdicts = [{ verdict = "A", score = 10 }, { verdict = "B", score = 5 }, { verdict = "C", score = 0 }]
"""

SCORE = {"A": 1.0, "B": 0.5, "C": 0.0}
# case -> (extract label, gate label, kind label)
LABELS: dict[str, tuple[Any, bool, str | None]] = {
    "c01": (["alpha", "beta"], True, "A"),
    "c02": (["alpha", "beta"], True, "A"),
    "c03": ("plain text", True, "B"),
    "c04": (None, True, "B"),
    "c05": (None, True, "C"),
    "c06": (["delta"], True, "A"),
    "c07": (None, False, None),
    "c08": (None, False, None),
    "c09": (None, False, None),
    "c10": (None, False, None),
}
# what the judge says: per case, per node, one answer per sample (the last one repeats)
JUDGE: dict[str, dict[str, list[Any]]] = {
    "c01": {"extract": ["alpha\nbeta"], "gate": [True, False, True], "kind": ["A"]},
    "c02": {"extract": ["alpha"], "gate": [True], "kind": ["A"]},          # drops beta
    "c03": {"extract": ["x"], "gate": [True], "kind": ["B", "B", "A"]},
    "c04": {"extract": ["x"], "gate": [True], "kind": ["A"]},              # B -> A
    "c05": {"extract": ["x"], "gate": [True], "kind": ["C"]},
    "c06": {"extract": ["nothing"], "gate": [False], "kind": ["A"]},       # drops delta
    "c07": {"extract": ["x"], "gate": [False, True, True], "kind": ["A"]},
    "c08": {"extract": ["x"], "gate": [False], "kind": ["A"]},
    "c09": {"extract": ["x"], "gate": [False], "kind": ["A"]},
    "c10": {"extract": ["x"], "gate": [True], "kind": ["A"]},              # false -> true
}
NODE_OF_KIND = {"task": "extract", "binary": "gate", "non_binary": "kind"}


def case_rows() -> list[dict[str, Any]]:
    rows = []
    for name, (extract, gate, kind) in LABELS.items():
        expected: dict[str, Any] = {"gate": gate}
        if extract is not None:
            expected["extract"] = extract
        if kind is not None:
            expected["kind"] = kind
        rows.append({"name": name, "actual_output": f"CASE-{name} output", "expected": expected,
                     "expected_score": SCORE[kind] if gate else 0.0})
    return rows


class PerSample:
    """The stub's responder: the answer scripted for this case and node, the n-th time this
    exact question is asked (sample 0 first: calibrate asks sample 0 before the others)."""

    def __init__(self, script: dict[str, dict[str, list[Any]]]) -> None:
        self.script = script
        self.seen: dict[str, int] = defaultdict(int)

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        case = re.search(r"CASE-(c\d+)", text).group(1)  # type: ignore[union-attr]
        kind = prompt_kind(body)
        answers = self.script[case][NODE_OF_KIND[kind]]
        n = self.seen[text]
        self.seen[text] += 1
        value = answers[min(n, len(answers) - 1)]
        if kind == "task":
            return {"reason": "extracted", "output": value}
        return {"reason": f"scripted {value}", "verdict": value}


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    path = tmp_path / "calib.toml"
    path.write_text(GRAPH)
    cases = tmp_path / "calib.cases.jsonl"
    cases.write_text("".join(json.dumps(r) + "\n" for r in case_rows()))
    return path


@pytest.fixture
def scripted():
    with StubServer(PerSample(JUDGE)) as server:
        yield server


def test_teacher_forcing_agreement_kappa_confusion_blame_and_flips(graph_file, scripted):
    judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=scripted.base_url, retries=0)
    ticks: list[tuple[int, int]] = []
    cal = dagtui.calibrate(str(graph_file), str(graph_file.with_suffix(".cases.jsonl")),
                           judge=judge, samples=3, concurrency=8,
                           progress=lambda done, total: ticks.append((done, total)))
    assert ticks == [(i, 40) for i in range(1, 41)]  # 10 cases x (3 forced samples + free)
    gate, kind, extract = cal.nodes["gate"], cal.nodes["kind"], cal.nodes["extract"]
    # gate: 8 of 10 agree; labels T6/F4, verdicts T6/F4 -> kappa (0.8 - 0.52) / 0.48
    assert (gate.cases, gate.agreement) == (10, 0.8)
    assert gate.kappa == pytest.approx(0.28 / 0.48)
    assert gate.confusion == {True: {True: 5, False: 1}, False: {False: 3, True: 1}}
    assert sorted(d["case"] for d in gate.disagreements) == ["c06", "c10"]
    # kind is judged on the six cases whose labels reach it, c06 included (the judge's own
    # gate said false there) and c10 excluded (the judge went there, the labels did not)
    assert (kind.reached, kind.cases) == (6, 6)
    assert kind.agreement == pytest.approx(5 / 6)
    assert kind.kappa == pytest.approx(15 / 21)
    assert kind.confusion == {"A": {"A": 3}, "B": {"B": 1, "A": 1}, "C": {"C": 1}}
    assert [d["case"] for d in kind.disagreements] == ["c04"]
    lo, hi = kind.kappa_ci
    assert lo <= kind.kappa <= hi
    # extract: items found / labelled = (2 + 1 + 0) / (2 + 2 + 1)
    assert (extract.items_found, extract.items_labelled) == (3, 5)
    assert extract.recall == pytest.approx(0.6)
    assert {d["case"]: d["missing"] for d in extract.dropped} == {"c02": ["beta"],
                                                                  "c06": ["delta"]}
    assert extract.texts == [{"case": "c03", "label": "plain text", "evidence": "x"}]
    # end to end: c04 (0.5 -> 1.0), c06 (1.0 -> 0), c10 (0 -> 1.0) differ
    assert cal.exact == pytest.approx(0.7)
    assert cal.pass_fail == pytest.approx(0.8)
    assert cal.mae == pytest.approx(0.25)
    blamed = {o.case: o.blame for o in cal.outcomes if o.differs}
    assert blamed == {"c04": "kind", "c06": "extract", "c10": "gate"}
    assert (extract.flipped, gate.flipped, kind.flipped) == (1, 1, 1)
    assert (extract.flipped_pass_fail, gate.flipped_pass_fail, kind.flipped_pass_fail) \
        == (1, 1, 0)
    # samples: gate splits on c01 and c07, kind on c03; every split is 2 to 1
    assert gate.flip_rate == pytest.approx(0.2) and gate.sampled_cases == 10
    assert kind.flip_rate == pytest.approx(1 / 6)
    assert extract.flip_rate == 0.0
    assert sorted(c["case"] for c in gate.close_calls) == ["c01", "c07"]
    assert [c["case"] for c in kind.close_calls] == ["c03"]
    assert gate.margin == pytest.approx((8 * 1 + 2 * (1 / 3)) / 10)
    gate_items = [[True] * 3] * 5 + [[False] * 3] * 3 + [[True, False, True], [False, True, True]]
    assert gate.fleiss == pytest.approx(stats.fleiss_kappa(gate_items))
    # calls: sample 0 asks 10 + 10 + 6, the free run adds kind for c10, samples 1-2 ask 26 each
    assert scripted.calls == 26 + 1 + 2 * 26 == cal.calls
    assert any("temperature 0" in n for n in cal.notes)


def test_cli_reports_min_kappa_json_markdown_and_saves(graph_file, tmp_path, monkeypatch,
                                                       capsys):
    monkeypatch.chdir(tmp_path)
    script = PerSample(JUDGE)
    with StubServer(script) as stub:
        args = ["calibrate", str(graph_file), "--model", "openai/gpt-4.1-mini",
                "--api-base", stub.base_url, "--no-cache", "--retries", "0"]
        code = main([*args, "--json", "out/c.json", "--markdown", "out/c.md",
                     "--min-kappa", "0.6"])
        out = capsys.readouterr().out
        assert code == 1  # gate's kappa 0.58 is below 0.6
        assert "below --min-kappa 0.6: gate (0.58)" in out
        assert re.search(r"gate\s+binary\s+10\s+80%\s+0\.58", out)
        data = json.loads((tmp_path / "out" / "c.json").read_text())
        assert data["nodes"]["gate"]["confusion"] == {"true": {"true": 5, "false": 1},
                                                      "false": {"false": 3, "true": 1}}
        assert data["end_to_end"]["exact"] == pytest.approx(0.7)
        saved = json.loads((tmp_path / ".dagtui" / "calibration" / "calib.json").read_text())
        assert saved == data
        md = (tmp_path / "out" / "c.md").read_text()
        assert "### Judge calibration: Calib" in md and "**below the kappa floor 0.6: gate**" in md
        assert "| gate | binary | 10 | 80% | 0.58 |" in md
        script.seen.clear()  # a second run: its sample 0 is the script's first answer again
        assert main([*args, "--min-kappa", "0.5"]) == 0
        before = stub.calls
        assert main([*args, "--dry-run", "--samples", "5"]) == 0
        assert stub.calls == before
    dry = capsys.readouterr().out
    assert "teacher forcing: 26 calls per sample x 5 = 130 calls" in dry
    assert "free run: at most 4 more" in dry
    assert "cost: about $" in dry  # litellm knows gpt-4.1-mini's price


def test_cli_refuses_unlabelled_cases_and_bad_flags(tmp_path, capsys):
    graph = tmp_path / "g.toml"
    graph.write_text(GRAPH)
    cases = tmp_path / "c.jsonl"
    cases.write_text(json.dumps({"name": "x", "actual_output": "y"}) + "\n")
    assert main(["calibrate", str(graph), "--cases", str(cases), "--dry-run"]) == 2
    assert "no case has labels" in capsys.readouterr().err
    suite = Path(__file__).resolve().parent.parent / "graphs" / "suites" / "spans.toml"
    assert main(["calibrate", str(suite), "--dry-run"]) == 2
    assert "is a suite: calibrate one of its rule graphs" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # refused by the parser, naming the flag
        main(["calibrate", str(graph), "--cases", str(cases), "--samples", "0"])
    assert exc.value.code == 2
    assert "--samples: must be a whole number >= 1, got '0'" in capsys.readouterr().err


# --------------------------------------------------------------------------- properties

labels_strategy = st.lists(
    st.tuples(st.lists(st.sampled_from(["alpha", "beta", "gamma"]), max_size=3, unique=True),
              st.booleans(), st.sampled_from("ABC"), st.booleans(), st.sampled_from("ABC"),
              st.sampled_from(["alpha", "beta", "gamma alpha", ""])),
    min_size=1, max_size=12)


def _calibrate_with(rows: list[tuple[Any, ...]], *, perfect: bool) -> Any:
    """Calibrate the test graph with a callback judge: either the labels themselves
    (`perfect`) or the random answers in each row."""
    cases = []
    answers: dict[str, dict[str, Any]] = {}
    for i, (items, gate, kind, j_gate, j_kind, j_extract) in enumerate(rows):
        name = f"case{i}"
        expected: dict[str, Any] = {"extract": items, "gate": gate}
        if gate:
            expected["kind"] = kind
        cases.append({"name": name, "actual_output": f"CASE-{name}", "expected": expected})
        answers[name] = {"extract": "\n".join(items) if perfect else j_extract,
                         "gate": gate if perfect else j_gate,
                         "kind": kind if perfect else j_kind}

    def fn(ask: Any) -> Any:
        return answers[ask.case.name][ask.node.id]

    graph = dagtui.load_text(GRAPH).graph
    return dagtui.calibrate(graph, cases, judge=CallbackJudge(fn)), answers


@given(labels_strategy)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_teacher_forcing_judges_each_node_on_exactly_the_cases_its_labels_reach(rows):
    cal, _ = _calibrate_with(rows, perfect=False)
    n = len(rows)
    reaching_kind = sum(1 for r in rows if r[1])
    assert cal.nodes["extract"].reached == cal.nodes["extract"].cases == n
    assert cal.nodes["gate"].reached == cal.nodes["gate"].cases == n
    assert cal.nodes["kind"].reached == cal.nodes["kind"].cases == reaching_kind
    for node in ("gate", "kind"):
        nc = cal.nodes[node]
        assert (nc.kappa == 1.0) == (not nc.disagreements) or nc.cases == 0


@given(labels_strategy)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_judge_that_answers_the_labels_has_kappa_one_everywhere(rows):
    cal, _ = _calibrate_with(rows, perfect=True)
    for node in ("gate", "kind"):
        nc = cal.nodes[node]
        assert nc.cases == 0 or (nc.kappa == 1.0 and nc.agreement == 1.0)
        assert not nc.disagreements
    assert cal.nodes["extract"].items_found == cal.nodes["extract"].items_labelled
    assert cal.exact == 1.0 and not any(o.blame for o in cal.outcomes)


def test_run_summary_shows_agreement_with_the_labels_without_extra_calls(graph_file, tmp_path,
                                                                         monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    with StubServer(PerSample(JUDGE)) as stub:
        code = main(["run", str(graph_file), "--model", "openai/gpt-4.1-mini", "--api-base",
                     stub.base_url, "--no-cache", "--retries", "0", "-q"])
        calls = stub.calls
    out = capsys.readouterr().out
    assert code == 1
    # the run's own path: 10 extract + 10 gate + kind where the judge said true (6 cases)
    assert calls == 26
    assert "agreement with the labels" in out
    # gate: the same 8/10 as teacher forcing; kind only where the judge's path went and the
    # labels reach (c01-c05: c04 disagrees; c10 has no kind label, c06 never got there)
    assert re.search(r"gate\s+10\s+80%\s+0\.58", out)
    assert re.search(r"kind\s+5\s+80%\s+0\.69", out)
    assert "score vs expected_score: 10 cases, exact 70%, pass/fail 80%, mean absolute " \
           "error 0.250" in " ".join(out.split())  # the summary wraps at 80 columns
    assert "c04: score 1.00, expected 0.50" in out


def test_shipped_calibration_cases_are_labelled_and_consistent(capsys):
    """The example: 40+ cases, every node their labels reach labelled, `dagtui test` passes."""
    root = Path(__file__).resolve().parent.parent
    graph = root / "graphs" / "meeting_summary.toml"
    cases = root / "graphs" / "meeting_summary.calibration.jsonl"
    rows = [json.loads(line) for line in cases.read_text().splitlines()]
    assert len(rows) >= 40
    for row in rows:
        exp = row["expected"]
        assert isinstance(exp["extract"], list) and isinstance(exp["present"], bool)
        assert ("order" in exp) == exp["present"] and "expected_score" in row
    assert main(["test", str(graph), "--cases", str(cases)]) == 0
    assert f"{len(rows)} passed, 0 failed" in capsys.readouterr().out


def test_cli_judge_that_cannot_be_reached_is_one_line_exit_3(graph_file, tmp_path, monkeypatch,
                                                             capsys):
    import socket

    monkeypatch.chdir(tmp_path)
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = main(["calibrate", str(graph_file), "--model", "openai/gpt-4.1-mini", "--api-base",
                 f"http://127.0.0.1:{port}/v1", "--no-cache", "--retries", "0", "--timeout",
                 "5"])
    captured = capsys.readouterr()
    assert code == 3
    assert "judge unusable" in captured.err and "teacher forcing" not in captured.out


CHECK_GRAPH = """\
[metric]
name = "Check first"
threshold = 0.5

[nodes.long_enough]
type = "check"
check = "length"
param = "actual_output"
min = 10
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "tone" }]

[nodes.tone]
type = "geval"
name = "Tone"
params = ["actual_output"]
evaluation_steps = ["Is it polite?"]
"""


def test_check_labels_steer_the_forced_path_and_geval_leaves_get_an_mae():
    """A labelled check node follows its label under teacher forcing (the labels' path), the
    code's disagreement is blamed end to end; a G-Eval leaf is compared with its 0..10 label."""
    graph = dagtui.load_text(CHECK_GRAPH).graph
    cases = [
        # code says too short (false -> 0); the human says it passes ("true" as in a TOML string)
        {"name": "short", "actual_output": "Thanks!", "expected": {"long_enough": "true",
                                                                    "tone": 8},
         "expected_score": 0.8},
        {"name": "long", "actual_output": "Thank you for writing in.",
         "expected": {"long_enough": True, "tone": 6}, "expected_score": 0.6},
    ]
    cal = dagtui.calibrate(graph, cases, judge=CallbackJudge(lambda ask: 9))
    tone = cal.nodes["tone"]
    assert (tone.reached, tone.cases) == (2, 2)  # "short" reached tone through its label
    assert tone.mae == pytest.approx((1 + 3) / 2)
    assert [d["case"] for d in tone.disagreements] == ["long"]  # off by more than 1
    blamed = {o.case: (o.blame, o.why) for o in cal.outcomes if o.differs}
    assert blamed["short"][0] == "long_enough" and "code says false" in blamed["short"][1]
    assert blamed["long"] == ("tone", "scored 9, the label 6")


def test_task_label_table_form_feeds_dagtui_test_and_counts_recall(tmp_path, capsys):
    graph = tmp_path / "g.toml"
    graph.write_text(GRAPH)
    row = {"name": "t", "actual_output": "CASE-c01 x",
           "expected": {"extract": {"contains": ["alpha"], "text": "alpha\nbeta"},
                        "gate": False}, "expected_score": 0.0}
    cases = tmp_path / "c.jsonl"
    cases.write_text(json.dumps(row) + "\n")
    assert main(["test", str(graph), "--cases", str(cases)]) == 0
    bad = dict(row, expected={"extract": {"contain": ["alpha"]}, "gate": False})
    cases.write_text(json.dumps(bad) + "\n")
    # a malformed task table is a bad label (dagtui.labels.check): exit 2 before the test,
    # naming file, line and case (it used to fail the case at run time, exit 1)
    assert main(["test", str(graph), "--cases", str(cases)]) == 2
    assert (f"{cases}:1: case 't': task node 'extract': a task label table takes 'contains' "
            "and 'text', not 'contain'") in capsys.readouterr().err
    cal = dagtui.calibrate(str(graph), [row], judge=CallbackJudge(
        lambda ask: "Alpha  and more" if ask.kind == "task" else False))
    extract = cal.nodes["extract"]
    assert (extract.items_found, extract.items_labelled) == (1, 1)
    assert extract.texts[0]["label"] == "alpha\nbeta"


def test_cli_second_run_is_served_by_the_cache(graph_file, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    script = PerSample(JUDGE)
    with StubServer(script) as stub:
        args = ["calibrate", str(graph_file), "--model", "openai/gpt-4.1-mini", "--api-base",
                stub.base_url, "--retries", "0", "--samples", "2", "--json", "c.json"]
        assert main(args) == 0
        first = json.loads((tmp_path / "c.json").read_text())
        calls = stub.calls
        assert main(args) == 0
        assert stub.calls == calls  # samples included: the index is in the cache key
    second = json.loads((tmp_path / "c.json").read_text())
    assert first["calls"] == calls and (second["calls"], second["cache_hits"]) == (0, calls)
    assert second["nodes"]["gate"]["flip_rate"] == first["nodes"]["gate"]["flip_rate"] == 0.2
    assert (tmp_path / ".dagtui" / "cache.sqlite").exists()
