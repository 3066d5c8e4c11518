"""What the labelling screen reveals (`r`) is what a run was answered, read from the cache
with no call (`dagtui.labels.session.cached_judge`, `LiteLLMJudge.cached_reply`)."""

from __future__ import annotations

import shutil
from pathlib import Path

from stub_server import StubServer

from dagtui.cli import main
from dagtui.graph.loader import load_file
from dagtui.labels.session import cached_judge, open_session

ROOT = Path(__file__).resolve().parent.parent
MODEL = "openai/gpt-4.1-mini"


def test_reveal_reads_the_answers_a_run_cached_and_asks_nothing(tmp_path: Path) -> None:
    for name in ("meeting_summary.toml", "meeting_summary.cases.jsonl"):
        shutil.copy(ROOT / "graphs" / name, tmp_path / name)
    graph_path, cache = tmp_path / "meeting_summary.toml", tmp_path / "cache"
    with StubServer() as stub:
        assert main(["run", str(graph_path), "--model", MODEL, "--api-base", stub.base_url,
                     "--via", "litellm", "--cache-dir", str(cache), "-q"]) == 0
        asked = stub.calls
        graph = load_file(graph_path).graph
        lookup = cached_judge(graph, model=MODEL, api_base=stub.base_url,
                              cache_dir=str(cache))
        session = open_session(graph, tmp_path / "meeting_summary.cases.jsonl", judge=lookup)
        extracted = session.judge_answer(0, "extract")
        assert stub.calls == asked  # the cache only
    assert extracted is not None
    value, reason = extracted
    assert "Intro" in value and isinstance(reason, str)

    other = cached_judge(graph, model="openai/another-model", api_base=stub.base_url,
                         cache_dir=str(cache))
    assert open_session(graph, tmp_path / "meeting_summary.cases.jsonl",
                        judge=other).judge_answer(0, "extract") is None  # never asked
