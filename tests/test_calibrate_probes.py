"""`dagtui calibrate --probes order,padding`: the bias probes (dagtui/calibration/probes.py),
with a real litellm judge against the loopback stub scripted to be order-sensitive (it picks
the first option listed on some cases) and length-sensitive (it says false when the material
it reads is long), so the flip rates the probes report are known exactly."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from stub_server import Fault, StubServer, labels_in, prompt_kind

import dagtui
from dagtui.calibration.probes import orders_of, parse_probes
from dagtui.cli import main
from dagtui.judges.litellm_judge import LiteLLMJudge
from dagtui.judges.prompts import FILLER_HEAD, build_prompt
from dagtui.stubjudge.answers import split_request

GRAPH = """\
[metric]
name = "Probed"
threshold = 0.5
cases = "probed.cases.jsonl"

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

#: material longer than this makes the scripted judge say false to the binary question
LONG = 400
#: case -> (gate label, kind label, fickle: picks the first option listed, long output)
CASES: dict[str, tuple[bool, str | None, bool, bool]] = {
    "c01": (True, "A", False, False),
    "c02": (True, "B", True, False),    # fickle: normal A, reversed C, rotated B
    "c03": (True, "C", True, True),     # fickle and long
    "c04": (True, "B", False, True),    # long: padding flips the gate
    "c05": (True, "C", False, False),
    "c06": (True, "A", False, False),
    "c07": (False, None, False, True),  # long, never reaches kind
    "c08": (False, None, False, False),
}
REACH_KIND = [c for c, (gate, *_) in CASES.items() if gate]
FICKLE = [c for c, (_, _, fickle, _) in CASES.items() if fickle]
LONG_CASES = [c for c, (*_, long) in CASES.items() if long]


def output_of(name: str) -> str:
    _, _, fickle, long = CASES[name]
    text = f"CASE-{name} output" + (" FICKLE" if fickle else "")
    # long: under LONG as it is, over LONG with the +50 % padding
    return text + (" " + "word " * 60 if long else "")


def load_graph(path: Path) -> Any:
    return dagtui.load(path).graph


def rows() -> list[dict[str, Any]]:
    out = []
    for name, (gate, kind, _, _) in CASES.items():
        expected: dict[str, Any] = {"gate": gate}
        if kind is not None:
            expected["kind"] = kind
        out.append({"name": name, "actual_output": output_of(name), "expected": expected})
    return out


def biased(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted judge: the case's label as its answer, except that it picks the first
    listed option on FICKLE cases and says false to the yes/no question when the material
    is longer than LONG characters."""
    text = str(body["messages"][-1]["content"])
    kind = prompt_kind(body)
    if kind == "task":
        return {"reason": "extracted", "output": "items"}
    name = re.search(r"CASE-(c\d+)", text).group(1)  # type: ignore[union-attr]
    gate, label, fickle, _ = CASES[name]
    if kind == "binary":
        _, material = split_request(body)
        return {"reason": "read it", "verdict": gate and len(material) <= LONG}
    return {"reason": "picked", "verdict": labels_in(body)[0] if fickle else label}


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    path = tmp_path / "probed.toml"
    path.write_text(GRAPH)
    (tmp_path / "probed.cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows()))
    return path


def test_the_scripted_lengths_are_what_the_test_needs(graph_file: Path) -> None:
    """The premise: a long case's material is under LONG as it is and over it padded; a
    short one stays under it padded."""
    graph = load_graph(graph_file)
    node = graph.nodes["gate"]
    for name in CASES:
        fields = {"actual_output": output_of(name)}
        plain = build_prompt(graph, node, fields, {"extract": "items"})
        padded = build_prompt(graph, node, fields, {"extract": "items"}, pad=0.5)
        body = {"messages": plain.messages}
        plain_len = len(split_request(body)[1])
        padded_len = len(split_request({"messages": padded.messages})[1])
        assert plain_len <= LONG
        assert (padded_len > LONG) == (name in LONG_CASES)
        assert 1.45 * plain_len <= padded_len <= 1.6 * plain_len + len(FILLER_HEAD)


def test_probes_report_the_scripted_flip_rates_exactly(graph_file: Path) -> None:
    with StubServer(biased) as stub:
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, retries=0)
        cal = dagtui.calibrate(str(graph_file), judge=judge, probes=["order", "padding"])
        plain = [r["body"]["messages"] for r in stub.requests]
    probes = cal.probes
    assert probes is not None
    kind, gate = probes.nodes["kind"], probes.nodes["gate"]
    # order: the fickle cases flip under both variants, the others under none
    order = kind["order"]
    assert order.variants == ["reversed", "rotated"]
    assert order.compared == 2 * len(REACH_KIND)
    assert order.flipped == 2 * len(FICKLE)
    assert order.flip_rate == pytest.approx(len(FICKLE) / len(REACH_KIND))
    assert sorted((f["case"], f["variant"], f["normal"], f["probed"]) for f in order.flips) == [
        ("c02", "reversed", "A", "C"), ("c02", "rotated", "A", "B"),
        ("c03", "reversed", "A", "C"), ("c03", "rotated", "A", "B")]
    # normal: 4 of 6 agree on each pair; probed: c02 rotated (B) and c03 reversed (C) now agree
    assert order.agreement == pytest.approx(8 / 12)
    assert order.agreement_probed == pytest.approx(10 / 12)
    assert order.kappa is not None and order.kappa_probed is not None
    assert order.kappa_probed > order.kappa
    # binary nodes have no options to reorder
    assert gate["order"].skipped == "binary: no options to reorder"
    assert gate["order"].compared == 0 and gate["order"].flip_rate is None
    # padding: the gate flips on the long cases (true -> false), kind never (it reads no length)
    padding = gate["padding"]
    assert (padding.compared, padding.flipped) == (len(CASES), len(LONG_CASES) - 1)
    assert sorted(f["case"] for f in padding.flips) == ["c03", "c04"]  # c07 was false already
    assert padding.flip_rate == pytest.approx(2 / 8)
    assert padding.agreement == pytest.approx(1.0)
    assert padding.agreement_probed == pytest.approx(6 / 8)
    assert kind["padding"].flipped == 0 and kind["padding"].compared == len(REACH_KIND)
    # the task node is never asked again: order 2 x 6 (kind), padding 8 (gate) + 6 (kind)
    assert probes.calls == 12 + 8 + 6
    normal_calls = 8 + 8 + 6  # extract, gate, kind at sample 0 (the free run shares them)
    assert len(plain) == normal_calls + probes.calls == cal.calls
    # the above(max_flip) gate
    assert probes.above(0.3) == [("kind", "order", pytest.approx(1 / 3))]
    assert {(n, p) for n, p, _ in probes.above(0.2)} == {("gate", "padding"), ("kind", "order")}


def test_normal_prompts_and_cache_keys_do_not_change(graph_file: Path, tmp_path: Path) -> None:
    """Probes only add requests: a calibration without probes sends the same requests as
    the normal part of one with them, and on the cache it left only the probes are sent."""
    cache = tmp_path / "cache"
    base = ["calibrate", str(graph_file), "--model", "openai/gpt-4.1-mini", "--retries", "0",
            "--cache-dir", str(cache)]
    with StubServer(biased) as stub:
        assert main([*base, "--api-base", stub.base_url]) == 0
        normal = [json.dumps(r["body"]["messages"], sort_keys=True) for r in stub.requests]
        stub.requests.clear()
        assert main([*base, "--api-base", stub.base_url, "--probes", "order,padding"]) == 0
        probed = [r["body"] for r in stub.requests]
        assert main([*base, "--api-base", stub.base_url, "--probes", "order,padding"]) == 0
        again = len(stub.requests) - len(probed)
    assert len(normal) == 22 and len(probed) == 26  # the normal requests were all cache hits
    assert again == 0  # and the probe requests are cached like any other
    assert not set(normal) & {json.dumps(b["messages"], sort_keys=True) for b in probed}
    # every probe request is a judgement node's, reordered or padded
    for body in probed:
        text = body["messages"][-1]["content"]
        labels = labels_in(body)
        assert FILLER_HEAD in text or labels in (["C", "B", "A"], ["B", "C", "A"])
    # and the declared order, given explicitly, is the default request byte for byte
    graph = load_graph(graph_file)
    node = graph.nodes["kind"]
    fields = {"actual_output": "x"}
    assert build_prompt(graph, node, fields, {}, options_order=["A", "B", "C"], pad=0) \
        == build_prompt(graph, node, fields, {})


def test_cli_text_json_markdown_and_max_flip(graph_file: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with StubServer(biased) as stub:
        args = ["calibrate", str(graph_file), "--model", "openai/gpt-4.1-mini",
                "--api-base", stub.base_url, "--retries", "0", "--probes", "padding,order"]
        assert main([*args, "--max-flip", "0.4", "--json", "c.json", "--markdown", "c.md"]) == 0
        out = capsys.readouterr().out
        assert "every probed node at or below the flip ceiling 0.4" in (tmp_path / "c.md").read_text()
        assert re.search(r"kind\s+non_binary\s+order \(reversed, rotated\)\s+12\s+4\s+33%"
                         r"\s+67% → 83%", out)
        assert "  order skipped (binary: no options to reorder): gate\n" in out
        assert re.search(r"gate\s+binary\s+padding \(padded\)\s+8\s+2\s+25%\s+100% → 75%", out)
        assert "kind flipped under order in 4: c02 (reversed: A → C, label B); c02 (rotated" in out
        data = json.loads((tmp_path / "c.json").read_text())
        assert data["probes"]["probes"] == ["order", "padding"]
        assert data["probes"]["nodes"]["kind"]["order"]["flip_rate"] == pytest.approx(1 / 3)
        assert data["probes"]["nodes"]["gate"]["padding"]["flipped"] == 2
        md = (tmp_path / "c.md").read_text()
        assert "**Bias probes**" in md and "| kind | non_binary | order (reversed, rotated) |" in md
        # above the ceiling: exit 1, the nodes named (the answers come from the cache now)
        assert main([*args, "--max-flip", "0.25", "--markdown", "c.md"]) == 1
        out = capsys.readouterr().out
        assert "above --max-flip 0.25: kind (order 33%)" in out
        assert "**above the flip ceiling 0.25: kind (order 33%)**" in (tmp_path / "c.md").read_text()
        assert main([*args, "--max-flip", "0.2"]) == 1
        assert "above --max-flip 0.2: gate (padding 25%), kind (order 33%)" in capsys.readouterr().out


def test_bad_probe_flags_are_usage_errors(graph_file: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    base = ["calibrate", str(graph_file), "--model", "labels"]
    assert main([*base, "--probes", "order,colour"]) == 2
    assert "--probes: unknown probe 'colour': choose from order, padding" in capsys.readouterr().err
    assert main([*base, "--max-flip", "0.1"]) == 2
    assert "--max-flip needs --probes" in capsys.readouterr().err
    assert main([*base, "--probes", "order", "--check"]) == 2
    assert "--check makes no call" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main([*base, "--max-flip", "1.5", "--probes", "order"])
    assert exit_.value.code == 2
    assert "--max-flip: must be a number from 0 to 1, got '1.5'" in capsys.readouterr().err


def test_dry_run_counts_the_probe_calls(graph_file: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", str(graph_file), "--model", "openai/gpt-4.1-mini", "--dry-run",
                 "--probes", "order,padding"]) == 0
    assert "bias probes (order, padding): at most 26 calls (sample 0; a request" in capsys.readouterr().out


def test_option_orders_and_probe_names() -> None:
    assert orders_of(["A", "B", "C"]) == {"reversed": ["C", "B", "A"], "rotated": ["B", "C", "A"]}
    assert orders_of(["yes", "no"]) == {"reversed": ["no", "yes"]}  # rotated is the same
    assert orders_of(["only"]) == {}
    assert parse_probes(" padding , order") == ["order", "padding"]
    with pytest.raises(ValueError, match="unknown probe"):
        parse_probes("")



def test_an_order_that_is_not_of_the_options_is_refused(graph_file: Path) -> None:
    graph = load_graph(graph_file)
    with pytest.raises(ValueError, match="is not an order of its options"):
        build_prompt(graph, graph.nodes["kind"], {}, {}, options_order=["A", "B"])


def test_a_failed_probe_call_is_counted_apart(graph_file: Path) -> None:
    """c01's padded yes/no question gets a 500: it is listed as an error, not as a flip, and
    the pairs compared are the others."""
    def failing(body: dict[str, Any]) -> Any:
        text = str(body["messages"][-1]["content"])
        if "CASE-c01" in text and FILLER_HEAD in text and prompt_kind(body) == "binary":
            return Fault("500")
        return biased(body)

    with StubServer(failing) as stub:
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, retries=0)
        cal = dagtui.calibrate(str(graph_file), judge=judge, probes="padding")
    padding = cal.probes.nodes["gate"]["padding"]
    assert padding.errors == [{"case": "c01", "variant": "padded", "kind": "5xx"}]
    assert (padding.compared, padding.flipped) == (len(CASES) - 1, 2)
    assert padding.flip_rate == pytest.approx(2 / 7)
    assert list(cal.probes.nodes["kind"]) == ["padding"]  # only the probe asked for
