"""A content-addressed cache of judge calls, in one sqlite file.

The key is a hash of the model, the exact request (messages, response format, parameters)
and the sample index, so a rerun of an unchanged graph on unchanged cases costs nothing, and
any change to a prompt, a label order or a setting is a different key (DeepEval caches by
metric name and goes stale when a leaf score changes; this cannot). The default location is
`.dagtui/cache.sqlite` under the current directory; `--cache-dir` moves it, `--no-cache`
turns it off. API keys never reach the cache: requests are stored without credentials.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

DEFAULT_DIR = ".dagtui"
FILENAME = "cache.sqlite"


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
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, model TEXT, "
                "created REAL, response TEXT)"
            )
            self._db.commit()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT response FROM calls WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(row[0])

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        data = json.dumps(response, ensure_ascii=False)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO calls (key, model, created, response) VALUES (?,?,?,?)",
                (key, model, time.time(), data),
            )
            self._db.commit()

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
