"""`dagtui align --method gepa` (issue 24): GEPA's reflective search over the node's wording
(dagtui/calibration/gepa_search.py, the `align` extra), scored by teacher forcing on train and
proven on held-out like any candidate. The stub's proposer offers a decoy on its first
reflection and the phrase the scripted judge needs afterwards (tests/align_helpers.py)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from align_helpers import PHRASE, Judge, write
from stub_server import StubServer, first_user

from dagtui.calibration.align import AlignRefused
from dagtui.cli import main

MODEL = "openai/gpt-4.1-mini"
GOOD = f"Is the reply polite, {PHRASE}?"
DECOY = "Is the reply courteous and kind?"


class Reflecting(Judge):
    """The decoy the first time the proposer is asked, the phrase every time after."""

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        if first_user(body).startswith("The step's current"):
            self.proposals = [DECOY] if self.proposer_calls == 0 else [GOOD]
        return super().__call__(body)


def test_gepa_finds_the_phrase_and_it_is_proven_on_held_out(tmp_path, capsys) -> None:
    graph = write(tmp_path)
    script = Reflecting(20)
    with StubServer(script) as stub:
        args = ["align", str(graph), "--node", "polite", "--model", MODEL, "--api-base",
                stub.base_url, "--retries", "0", "--method", "gepa", "--candidates", "3",
                "--json", str(tmp_path / "a.json")]
        assert main(args) == 0, capsys.readouterr().out
        first = json.loads((tmp_path / "a.json").read_text())
        sent = stub.calls
        assert main(args) == 0  # the search again: every answer from the cache
        assert stub.calls == sent
    assert script.proposer_calls >= 2  # the decoy did not help: GEPA reflected again
    winner = next(c for c in first["candidates"] if c["name"] == first["winner"])
    assert (winner["method"], winner["text"]) == ("gepa", GOOD)
    assert {c["text"] for c in first["candidates"] if c["method"] == "gepa"} <= {GOOD, DECOY}
    held = first["held_out"]
    assert held["before"]["figures"]["kappa"] == 0.0
    assert held["after"]["figures"]["kappa"] == 1.0
    assert first["improved"] is True
    assert "improved on the held-out cases" in capsys.readouterr().out


def test_gepa_without_the_extra_is_refused_before_any_call(tmp_path, monkeypatch) -> None:
    import dagtui

    monkeypatch.setitem(sys.modules, "gepa", None)  # `import gepa` raises ImportError
    graph = write(tmp_path)
    with StubServer(Judge(20)) as stub, pytest.raises(AlignRefused, match=r"dagtui\[align\]"):
        dagtui.align(str(graph), "polite", judge=MODEL, api_base=stub.base_url,
                     method="gepa")
    assert stub.calls == 0
