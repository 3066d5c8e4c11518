"""A content-addressed cache of judge calls, in one sqlite file.

The key is a hash of the model, the exact request (messages, response format, parameters)
and the sample index, so a rerun of an unchanged graph on unchanged cases costs nothing, and
any change to a prompt, a label order or a setting is a different key (DeepEval caches by
metric name and goes stale when a leaf score changes; this cannot). The default location is
`.dagtui/cache.sqlite` under the current directory; `--cache-dir` moves it, `--no-cache`
turns it off. API keys never reach the cache: requests are stored without credentials.

Several processes share one file when `dagtui run --workers N` spreads cases over worker
processes: the file is in WAL mode (readers never wait for the writer), every connection
waits up to 30 s for a lock, and a statement that still meets "database is locked" (the
one case the busy wait does not cover, e.g. two connections switching to WAL at once) is
retried a few times with a short backoff before the error is raised.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

DEFAULT_DIR = ".dagtui"
FILENAME = "cache.sqlite"
LOCK_RETRIES = 5

T = TypeVar("T")


def _retry_locked(action: Callable[[], T]) -> T:
    """Run `action`, retrying when another process holds the sqlite lock."""
    for attempt in range(LOCK_RETRIES):
        try:
            return action()
        except sqlite3.OperationalError as exc:
            text = str(exc).lower()
            if attempt == LOCK_RETRIES - 1 or ("locked" not in text and "busy" not in text):
                raise
            time.sleep(0.05 * 2 ** attempt)
    raise AssertionError("unreachable")


def request_key(model: str, request: dict[str, Any], sample: int = 0) -> str:
    """Stable hash of what determines a judge's answer."""
    blob = json.dumps(
        {"model": model, "request": request, "sample": sample},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Cache:
    """sqlite-backed map from request key to the stored response (a JSON object)."""

    def __init__(self, directory: str | Path | None = None) -> None:
        base = Path(directory) if directory is not None else Path.cwd() / DEFAULT_DIR
        base.mkdir(parents=True, exist_ok=True)
        self.path = base / FILENAME
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        with self._lock:
            _retry_locked(self._setup)
        self.hits = 0
        self.misses = 0

    def _setup(self) -> None:
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, model TEXT, "
            "created REAL, response TEXT)"
        )
        self._db.commit()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = _retry_locked(lambda: self._db.execute(
                "SELECT response FROM calls WHERE key = ?", (key,)).fetchone())
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(row[0])

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        data = json.dumps(response, ensure_ascii=False)

        def write() -> None:
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO calls (key, model, created, response) "
                    "VALUES (?,?,?,?)", (key, model, time.time(), data))
                self._db.commit()
            except sqlite3.OperationalError:
                self._db.rollback()
                raise

        with self._lock:
            _retry_locked(write)

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def clear(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM calls")
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()


class NullCache:
    """The cache when caching is off: never hits, stores nothing."""

    path = None
    hits = 0
    misses = 0

    def get(self, key: str) -> dict[str, Any] | None:
        return None

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        return None

    def __len__(self) -> int:
        return 0

    def clear(self) -> None:
        return None

    def close(self) -> None:
        return None
