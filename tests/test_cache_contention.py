"""A cache another writer holds, and entries of the wrong shape (issue #21, 10): neither
stalls nor fails a run. The lock is a real second sqlite connection holding the write lock;
the damaged entries are written straight into the file. Judge calls go to the loopback stub."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from stub_server import StubServer
from test_cache_semantics import (
    N_CASES,
    STEPS,
    cache_lines,
    expected_scores,
    labelled,
    rows,
    run_cli,
    scores,
)

from dagtui.judges.cache import FILENAME, Cache, usable_entry

# the old 30 s busy wait x 5 retries stalled ~155 s: a regression fails here, it does not wait
pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("plain_progress")]


@pytest.fixture
def plain_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")  # one plain line per case, no progress bar


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[Path, sqlite3.Connection]]:
    """A cache with one entry, and a second connection holding its write lock."""
    cache_dir = tmp_path / "c"
    cache = Cache(cache_dir)
    cache.put("k", "m", {"raw": "stored"})
    cache.close()
    other = sqlite3.connect(cache_dir / FILENAME, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the write lock, held until the test ends
    other.execute("INSERT INTO calls (key, response) VALUES ('other', '{\"raw\": \"x\"}')")
    yield cache_dir, other
    other.execute("ROLLBACK")
    other.close()


def test_a_cache_locked_at_opening_is_read_but_not_written(held) -> None:
    cache_dir, _ = held
    said: list[str] = []
    cache = Cache(cache_dir, warn=said.append)
    assert cache.readable and not cache.writable
    assert cache.get("k") == {"raw": "stored"}  # WAL: the held lock does not stop reads
    cache.put("new", "m", {"raw": "not stored"})
    cache.put("new2", "m", {"raw": "not stored"})
    assert len(said) == 1 and "cannot write the cache" in said[0] and "locked" in said[0]
    cache.close()


def test_a_lock_taken_during_the_run_turns_writing_off_once(tmp_path: Path) -> None:
    cache_dir = tmp_path / "c"
    said: list[str] = []
    cache = Cache(cache_dir, warn=said.append)
    assert cache.writable
    other = sqlite3.connect(cache_dir / FILENAME, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        for i in range(5):  # the first waits briefly; the rest do not wait at all
            cache.put(f"k{i}", "m", {"raw": "x"})
        assert not cache.writable and cache.readable
        assert len(said) == 1 and "new answers are not stored" in said[0], said
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert cache.get("k0") is None
    cache.close()


def test_a_run_on_a_held_cache_finishes_and_says_so_once(held, capsys,
                                                         tmp_path: Path) -> None:
    cache_dir, _ = held
    with StubServer(labelled) as stub:
        code, report = run_cli(stub, cache_dir, json_out=tmp_path / "r.json")
    assert code == 1 and report is not None  # the labelled cases: two fail, as they should
    assert scores(report) == expected_scores()
    lines = cache_lines(capsys.readouterr().err)
    assert len(lines) == 1 and "cannot write the cache" in lines[0], lines


@pytest.mark.parametrize("response", [
    '{"raw": 5}', '{"raw": null}', '"just text"', '[1, 2]', "not json",
    '{"raw": "ok", "prompt_tokens": "7"}', '{"raw": "ok", "cost": "free"}',
    '{"raw": "ok", "logprobs": 3}', '{"raw": "ok", "completion_tokens": true}',
])
def test_an_entry_of_the_wrong_shape_is_a_miss_and_is_dropped(response: str, tmp_path: Path,
                                                              capsys) -> None:
    cache_dir = tmp_path / "c"
    with StubServer(labelled) as stub:
        run_cli(stub, cache_dir)
        first = stub.calls
        assert first == N_CASES * STEPS - 2  # the two empty extractions end early
        db = sqlite3.connect(cache_dir / FILENAME)
        with db:
            db.execute("UPDATE calls SET response = ?", (response,))
        db.close()
        for _ in range(2):  # every rerun: the same right scores, never an internal error
            code, report = run_cli(stub, cache_dir, json_out=tmp_path / "r.json")
            assert report is not None and scores(report) == expected_scores()
            assert all(r["error"] is None for r in report["results"]), report["results"]
        assert stub.calls == 2 * first  # asked again once; the rerun after is free
    assert all(usable_entry(json.loads(value)) for _, value in rows(cache_dir))
    lines = cache_lines(capsys.readouterr().err)
    assert len(lines) == 1 and "not a usable answer" in lines[0], lines


def test_usable_entry_is_what_the_judge_stores() -> None:
    assert usable_entry({"raw": "x", "prompt_tokens": 3, "completion_tokens": 4,
                         "cost": 0.001, "logprobs": None})
    assert usable_entry({"raw": "", "cost": 0, "logprobs": [{"token": "a"}]})
    assert not usable_entry({"raw": "x", "prompt_tokens": -1})
    assert not usable_entry({"prompt_tokens": 1})
