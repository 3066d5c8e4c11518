"""A run the cache answers wholly never imports litellm (nor aiohttp, httpx or the openai SDK).

A fresh interpreter runs the six shipped meeting-summary cases against the loopback stub
twice: the first run asks the stub through litellm (`--via litellm`), the second, on the
default route, is answered by the cache and must finish with no client library in
`sys.modules`. A run on the OpenAI-compatible route that does call loads aiohttp only. What a
provider supports, which only litellm can tell, is remembered in the cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from stub_server import StubServer

from dagtui.judges import capabilities, pricemap
from dagtui.judges.cache import Cache

ROOT = Path(__file__).resolve().parent.parent
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")

DRIVER = """
import json, sys
from dagtui.cli import main
code = main(sys.argv[1:])
loaded = sorted(m for m in ("aiohttp", "httpx", "litellm", "openai") if m in sys.modules)
print("MODULES " + json.dumps({"code": code, "loaded": loaded}))
"""


def _run(tmp_path: Path, *args: str) -> dict:
    env = dict(os.environ, CI="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", DRIVER, *args], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=240)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("MODULES ")), None)
    assert line is not None, out.stdout + out.stderr
    return json.loads(line[len("MODULES "):])


@pytest.mark.slow
def test_a_fully_cached_rerun_imports_no_litellm(tmp_path: Path) -> None:
    with StubServer() as stub:
        args = ("run", MEETING, "--model", "openai/gpt-4.1-mini", "--api-base", stub.base_url,
                "-q", "--json", "r.json")
        first = _run(tmp_path, *args, "--via", "litellm")
        assert first["code"] == 0 and "litellm" in first["loaded"], first  # it called
        calls = stub.calls
        assert calls > 0
        again = _run(tmp_path, *args)  # the default route: the same requests, the same keys
        assert stub.calls == calls  # nothing asked
    assert again == {"code": 0, "loaded": []}
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["calls"] == 0 and report["cache_hits"] > 0 and report["passed"] == 6


@pytest.mark.slow
def test_a_run_on_the_openai_compatible_route_never_imports_litellm(tmp_path: Path) -> None:
    with StubServer() as stub:
        done = _run(tmp_path, "run", MEETING, "--model", "openai/gpt-4.1-mini", "--api-base",
                    stub.base_url, "-q", "--no-cache")
        assert stub.calls > 0
    assert done == {"code": 0, "loaded": ["aiohttp"]}


def test_capabilities_are_remembered_beside_the_answers(tmp_path: Path, monkeypatch) -> None:
    """A provider only litellm can describe is asked once; the cache keeps its answer, so the
    next process reads it instead of importing litellm."""
    asked: list[str] = []

    def fake(model: str) -> tuple[bool, bool]:
        asked.append(model)
        return True, False

    monkeypatch.setattr(capabilities, "_ask_litellm", fake)
    cache = Cache(tmp_path)
    assert capabilities.support("anthropic/claude-x", cache) == (True, False)
    assert capabilities.support("anthropic/claude-x", Cache(tmp_path)) == (True, False)
    assert asked == ["anthropic/claude-x"]
    # an OpenAI model is read from litellm's map, never asked of litellm
    assert capabilities.support("openai/gpt-4.1-mini", cache) == (True, True)
    assert asked == ["anthropic/claude-x"]
    # a different map (another litellm) is another identity: asked afresh
    monkeypatch.setattr(pricemap, "map_identity", lambda: "another")
    capabilities.support("anthropic/claude-x", cache)
    assert asked == ["anthropic/claude-x", "anthropic/claude-x"]


def test_a_read_only_cache_without_notes_still_serves_answers(tmp_path: Path) -> None:
    """A file from before the notes table, opened read-only, has no notes; its answers are
    still read (a failed note lookup never turns reading off)."""
    import sqlite3

    cache = Cache(tmp_path)
    cache.put("k", "m", {"raw": "x"})
    cache.close()
    db = sqlite3.connect(tmp_path / "cache.sqlite")
    db.execute("DROP TABLE notes")
    db.commit()
    db.close()
    ro = Cache(tmp_path, read_only=True)
    assert ro.note("support:x") is None
    assert ro.get("k") == {"raw": "x"}
