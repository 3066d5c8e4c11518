"""A content-addressed cache of judge answers, in one sqlite file.

The key is a hash of the model, the endpoint (`api_base`), the exact request (messages,
response format, parameters) and the sample index, so a rerun of an unchanged graph on
unchanged cases costs nothing, and any change to a prompt, a label order, a setting or the
server asked is a different key (DeepEval caches by metric name and goes stale when a leaf
score changes; this cannot). Only answers the judge could use are stored — the caller puts
an answer after it parsed into a verdict, evidence or score — so an error or an unusable
answer is asked again on the next run instead of being replayed forever. The default
location is `cache.sqlite` in the graph's `.dagtui/` (`dagtui.workdir.workdir_for`; a
`Cache()` made without a directory uses `./.dagtui`); `--cache-dir` moves it,
`--refresh` asks again and overwrites, `--no-cache` neither reads nor writes. API keys never
reach the cache: requests are stored without credentials.

A cache file must never stop a run. One that cannot be read (truncated, not sqlite, a
`calls` table of another shape) is set aside as `cache.sqlite.broken-<UTC time>` and rebuilt;
one that cannot be written (read-only file or directory, full disk) is only read, or skipped
when it cannot be read either; each is said once on stderr. `PRAGMA user_version` holds
the schema version: a cache from before the endpoint was part of the key (version 0 with
the old table) is emptied, since its keys cannot be recomputed.

Several processes may share one file (runs side by side in one directory; `--workers` and
`--scheduler` do not add any: Dask workers never open it, the client reads and writes for
them, see `dagtui.run.cluster`): the file is in WAL mode (readers never wait for the writer), and a
statement waits for another writer's lock for `LOCK_WAIT` seconds in all (the busy wait, and
retries with a short backoff for the "database is locked" the busy wait does not cover, e.g.
two connections switching to WAL at once). A writer that holds the file longer (a long
transaction, a stuck process) does not stall the run: it goes on without storing new answers,
saying so once, and still reads the cache.

An entry is used only when it has the shape `put` stores (`usable_entry`): one that does not
(not JSON, `{"raw": 5}`, a count that is text) is a miss, dropped from the file, so the judge
is asked again and its answer replaces it, instead of every rerun failing on it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from dagtui.redact import redact_url
from dagtui.workdir import DEFAULT_DIR, ensure_workdir, workdir_for  # the one maker of .dagtui/

FILENAME = "cache.sqlite"
#: seconds a statement waits, in all, for a lock another connection holds
LOCK_WAIT = 2.0
#: `PRAGMA user_version` of the current layout (1 was never written: the first layout left 0)
SCHEMA_VERSION = 2
COLUMNS = ["key", "model", "api_base", "created", "response"]
#: the layout before the endpoint was part of the key (user_version 0)
OLD_COLUMNS = ["key", "model", "created", "response"]
#: facts kept beside the answers (`Cache.note`); not part of the layout check: a file without
#: it is still a cache of this version, and gets it when next opened for writing
NOTES_TABLE = "CREATE TABLE IF NOT EXISTS notes (key TEXT PRIMARY KEY, value TEXT)"
#: sqlite result codes meaning "this file is not a usable database"
BROKEN_CODES = ("SQLITE_NOTADB", "SQLITE_CORRUPT")

T = TypeVar("T")


class _Unusable(Exception):
    """The file is sqlite but not a cache this version can use (another table layout)."""


class _Newer(Exception):
    """The file is a cache written by a newer dagtui: left alone, not set aside."""


def _is_locked(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _is_broken(exc: BaseException) -> bool:
    """True for errors that say the file's content is bad (not a lock, not permissions)."""
    if isinstance(exc, _Unusable):
        return True
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith(BROKEN_CODES):
        return True
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text


def _retry_locked(action: Callable[[], T]) -> T:
    """Run `action`, retrying while another process holds the sqlite lock, for `LOCK_WAIT`
    seconds in all (each attempt's own busy wait included): then the error is raised."""
    deadline = time.monotonic() + LOCK_WAIT
    attempt = 0
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            pause = min(0.05 * 2 ** attempt, 0.5)
            if not _is_locked(exc) or time.monotonic() + pause >= deadline:
                raise
            time.sleep(pause)
            attempt += 1


def usable_entry(value: Any) -> bool:
    """True when `value` (a stored response, parsed) has the shape `Cache.put` is given by
    the judge: the answer text, token counts, a cost and logprobs, each of its type. Anything
    else would fail the case that reads it, on every rerun."""
    if not isinstance(value, dict) or not isinstance(value.get("raw"), str):
        return False
    for count in ("prompt_tokens", "completion_tokens"):
        n = value.get(count, 0)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            return False
    cost = value.get("cost")
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float)):
        return False
    return value.get("logprobs") is None or isinstance(value["logprobs"], list)


def content_hash(value: Any) -> str:
    """sha256 of `value` as canonical JSON (keys sorted, no spaces, non-ASCII kept): the one
    way dagtui hashes what it sends or measures (cache keys here; a calibration's
    fingerprints, `dagtui.calibration.fingerprint`)."""
    blob = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=str)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()  # "\udc80" in a case


def normal_base(api_base: str | None) -> str | None:
    """An endpoint as keys compare it: no trailing slash; empty is the provider's default."""
    return (api_base or "").rstrip("/") or None


def request_key(model: str, request: dict[str, Any], sample: int = 0,
                api_base: str | None = None) -> str:
    """Stable hash of what determines a judge's answer: model, endpoint, request, sample.

    The endpoint is normalised (`normal_base`), so `http://host/v1` and `http://host/v1/`
    share answers while two servers never do."""
    return content_hash({"model": model, "api_base": normal_base(api_base),
                         "request": request, "sample": sample})


def _stderr(message: str) -> None:
    print(f"dagtui: {message}", file=sys.stderr, flush=True)


@dataclass
class CacheStats:
    """What `dagtui cache stats` prints: entries, bytes on disk, entries per model, and the
    oldest and newest entry (Unix times; None when empty)."""

    path: str
    entries: int = 0
    size: int = 0
    models: dict[str, int] = field(default_factory=dict)
    oldest: float | None = None
    newest: float | None = None


class JudgeCache(Protocol):
    """What a judge asks of its cache: `Cache`, `NullCache`, a Dask worker's in-memory
    one (`dagtui.run.dask_worker.ShippedCache`), or a read-only view that records its hits
    (`dagtui.judges.cache_only.RecordingCache`)."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, model: str, response: dict[str, Any], *,
            api_base: str | None = None) -> None: ...

    def share(self) -> dict[str, Any] | None: ...


class Cache:
    """sqlite-backed map from request key to a stored answer (a JSON object).

    `refresh`: never serve an entry (every lookup misses) but store new answers, so a run
    asks again and overwrites. `read_only`: open for reading only and store nothing (what
    a worker process is told when its parent found the file unwritable). `warn` receives
    each problem once (default: one `dagtui: ...` line on stderr).
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None, *, refresh: bool = False,
                 read_only: bool = False, warn: Callable[[str], None] | None = None) -> None:
        base = Path(directory) if directory is not None else Path.cwd() / DEFAULT_DIR
        self.path = base / FILENAME
        self.refresh = refresh
        self.readable = False
        self.writable = False
        self.hits = 0
        self.misses = 0
        self._warn_to = warn or _stderr
        self._said: set[str] = set()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if read_only:
            self._open_read_only(None)
            return
        try:
            ensure_workdir(base)  # .dagtui/ with its .gitignore, as for traces
        except OSError as exc:
            self._warn(f"cannot create the cache directory {base} ({exc.strerror or exc}); "
                       "caching is off for this run")
            return
        self._open()

    # ---------------------------------------------------------------- opening

    def _warn(self, message: str) -> None:
        if message not in self._said:
            self._said.add(message)
            self._warn_to(message)

    def _connect(self, target: str, *, uri: bool = False) -> sqlite3.Connection:
        # autocommit: each statement is its own transaction unless BEGIN says otherwise
        return sqlite3.connect(target, uri=uri, check_same_thread=False, timeout=LOCK_WAIT,
                               isolation_level=None)

    def _open(self) -> None:
        """Open read-write; set a broken file aside (once) and start afresh; fall back to
        reading only when the file cannot be written. Something other than a file (a FIFO,
        which sqlite would wait on forever; a directory; a device) is set aside unopened."""
        if self.path.exists() and not self.path.is_file():
            problem = _Unusable("not a regular file")
            if not self._set_aside(_inode(self.path), problem):
                self._warn(f"the cache {self.path} is not a regular file and cannot be set "
                           "aside; caching is off for this run")
                return
        for attempt in range(2):
            inode = _inode(self.path)
            db: sqlite3.Connection | None = None
            try:
                db = self._connect(str(self.path))
                with self._lock:
                    _retry_locked(functools.partial(self._setup, db))
            except (sqlite3.Error, _Unusable, _Newer) as exc:
                if db is not None:
                    db.close()
                if isinstance(exc, _Newer):
                    self._warn(f"the cache {self.path} was {exc}; caching is off for this "
                               "run (use another --cache-dir)")
                    return
                if _is_broken(exc):
                    if attempt == 0 and self._set_aside(inode, exc):
                        continue
                    self._warn(f"the cache {self.path} cannot be read ({_why(exc)}) and "
                               "cannot be set aside; caching is off for this run")
                    return
                self._open_read_only(exc)
                return
            self._db, self.readable, self.writable = db, True, True
            return

    def _setup(self, db: sqlite3.Connection) -> None:
        """Check (or create) the layout, then write the version: the write is also the
        probe that tells a read-only file from a writable one."""
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        columns = _columns(db)
        if version > SCHEMA_VERSION:
            raise _Newer(f"written by a newer dagtui (schema {version})")
        if version == SCHEMA_VERSION and columns != COLUMNS \
                or version < SCHEMA_VERSION and columns not in ([], COLUMNS, OLD_COLUMNS):
            raise _Unusable(f"its calls table has columns {columns}, not {COLUMNS}")
        if version < SCHEMA_VERSION and columns == OLD_COLUMNS:
            self._migrate(db)
        db.execute(
            "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, model TEXT, "
            "api_base TEXT, created REAL, response TEXT)"
        )
        db.execute(NOTES_TABLE)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Empty a cache written before the endpoint was part of the key: its keys cannot
        be recomputed (the request is not stored) and it may hold unusable answers."""
        db.execute("BEGIN IMMEDIATE")
        try:
            if int(db.execute("PRAGMA user_version").fetchone()[0]) >= SCHEMA_VERSION:
                db.execute("ROLLBACK")  # another process migrated it meanwhile
                return
            count = int(db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
            db.execute("DROP TABLE calls")
            db.execute(
                "CREATE TABLE calls (key TEXT PRIMARY KEY, model TEXT, api_base TEXT, "
                "created REAL, response TEXT)"
            )
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        if count:
            self._warn(f"the cache {self.path} was written by an older dagtui (keys without "
                       f"the endpoint); its {count} entries were dropped")

    def _set_aside(self, inode: int | None, exc: BaseException) -> bool:
        """Rename the unreadable file (and its WAL files, which must not be replayed onto
        the new one) to `cache.sqlite.broken-<UTC time>`; False when that is impossible
        or another process has already replaced the file."""
        if inode is None or _inode(self.path) != inode:
            return True  # gone or replaced meanwhile (another process set it aside): retry
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        target = self.path.with_name(f"{FILENAME}.broken-{stamp}")
        n = 1
        while target.exists():
            n += 1
            target = self.path.with_name(f"{FILENAME}.broken-{stamp}-{n}")
        try:
            os.replace(self.path, target)
        except OSError:
            return False
        for suffix in ("-wal", "-shm", "-journal"):
            side = self.path.with_name(FILENAME + suffix)
            if side.exists():
                with contextlib.suppress(OSError):
                    os.replace(side, target.with_name(target.name + suffix))
        self._warn(f"the cache {self.path} could not be read ({_why(exc)}); set aside as "
                   f"{target.name}, starting a new one")
        return True

    def _open_read_only(self, exc: BaseException | None) -> None:
        """Read the file without writing (mode=ro; immutable when the directory is read-only
        too, since sqlite then cannot create its lock files), or give up on it."""
        if self.path.is_file():
            uri = self.path.resolve().as_uri()
            for mode in ("mode=ro", "immutable=1"):
                db: sqlite3.Connection | None = None
                try:
                    db = self._connect(f"{uri}?{mode}", uri=True)
                    version = int(db.execute("PRAGMA user_version").fetchone()[0])
                    if version != SCHEMA_VERSION or _columns(db) != COLUMNS:
                        db.close()
                        break
                    db.execute("SELECT key FROM calls LIMIT 1").fetchall()
                except sqlite3.Error:
                    if db is not None:
                        db.close()
                    continue
                self._db, self.readable, self.writable = db, True, False
                if exc is not None:
                    self._warn(f"cannot write the cache {self.path} ({_why(exc)}); reading "
                               "it only: new answers are not stored")
                return
        why = f" ({_why(exc)})" if exc is not None else ""
        self._warn(f"cannot use the cache {self.path}{why}; caching is off for this run")

    # ---------------------------------------------------------------- use

    def _read(self, action: Callable[[sqlite3.Connection], T]) -> T | None:
        """Run a read; a failure (other than a lock, retried) turns reading off with one
        warning: the judge is asked instead."""
        return self._use(action, write=False)

    def _write(self, action: Callable[[sqlite3.Connection], T]) -> T | None:
        """Run a write; a failure turns writing off with one warning (reads go on)."""
        return self._use(action, write=True)

    def _use(self, action: Callable[[sqlite3.Connection], T], *, write: bool) -> T | None:
        db = self._db
        if db is None or not (self.writable if write else self.readable):
            return None
        try:
            with self._lock:
                return _retry_locked(lambda: action(db))
        except sqlite3.Error as exc:
            if write:
                self.writable = False
                self._warn(f"cannot write the cache {self.path} ({_why(exc)}); new answers "
                           "are not stored for the rest of this run")
            else:
                self.readable = False
                self._warn(f"cannot read the cache {self.path} ({_why(exc)}); asking the "
                           "judge instead for the rest of this run")
            return None

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored answer for `key`, or None (always None with `refresh`)."""
        if self.refresh:
            self.misses += 1
            return None
        row = self._read(lambda db: db.execute(
            "SELECT response FROM calls WHERE key = ?", (key,)).fetchone())
        if row is None:
            self.misses += 1
            return None
        try:
            value = json.loads(row[0])
        except (TypeError, ValueError, RecursionError):
            value = None
        if not usable_entry(value):
            self.misses += 1
            self._drop(key)
            return None
        self.hits += 1
        return value

    def _drop(self, key: str) -> None:
        """Remove an entry that is not a usable answer (the judge's new one replaces it)."""
        self._warn(f"the cache {self.path} held an entry that is not a usable answer; it is "
                   "dropped and the judge asked again")
        self._write(lambda db: db.execute("DELETE FROM calls WHERE key = ?", (key,)))

    def put(self, key: str, model: str, response: dict[str, Any], *,
            api_base: str | None = None) -> None:
        """Store (or overwrite) an answer; the caller stores only answers it could use (and
        already redacted, `dagtui.judges.bounds.received`). The endpoint is stored with its
        credentials masked: it is shown, never used, and a key in its URL must not sit in
        the file (the lookup key hashes the URL as given)."""
        data = json.dumps(response, ensure_ascii=False)
        shown = redact_url(api_base)
        self._write(lambda db: db.execute(
            "INSERT OR REPLACE INTO calls (key, model, api_base, created, response) "
            "VALUES (?,?,?,?,?)", (key, model, shown, time.time(), data)))

    def note(self, key: str) -> Any:
        """A small fact remembered beside the answers (`put_note`), or None. What a model
        supports is one (`dagtui.judges.capabilities`): a rerun from the cache then never
        imports litellm to ask it. A file without the notes table (written read-only by an
        older dagtui) has none; that never turns the answers off."""
        db = self._db
        if db is None or not self.readable:
            return None
        try:
            with self._lock:
                row = _retry_locked(lambda: db.execute(
                    "SELECT value FROM notes WHERE key = ?", (key,)).fetchone())
            return json.loads(row[0]) if row is not None else None
        except (sqlite3.Error, TypeError, ValueError):
            return None

    def put_note(self, key: str, value: Any) -> None:
        """Remember `value` (JSON) under `key`; nothing when the file is not writable."""
        db = self._db
        if db is None or not self.writable:
            return
        data = json.dumps(value)
        with contextlib.suppress(sqlite3.Error), self._lock:
            _retry_locked(lambda: db.execute(
                "INSERT OR REPLACE INTO notes (key, value) VALUES (?,?)", (key, data)))

    def __len__(self) -> int:
        count = self._read(lambda db: db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
        return int(count or 0)

    def stats(self) -> CacheStats:
        """Entries, size on disk, entries per model, oldest and newest entry."""
        stats = CacheStats(str(self.path))
        stats.size = sum(_size(self.path.with_name(FILENAME + s)) for s in ("", "-wal"))
        rows = self._read(lambda db: db.execute(
            "SELECT model, COUNT(*), MIN(created), MAX(created) FROM calls GROUP BY model "
            "ORDER BY COUNT(*) DESC, model").fetchall()) or []
        for model, count, oldest, newest in rows:
            stats.models[str(model)] = int(count)
            stats.entries += int(count)
            stats.oldest = oldest if stats.oldest is None else min(stats.oldest, oldest)
            stats.newest = newest if stats.newest is None else max(stats.newest, newest)
        return stats

    def prune(self, *, model: str | None = None, older_than: float | None = None) -> int | None:
        """Remove the entries of `model` and/or created more than `older_than` seconds ago
        (every entry when neither is given); the number removed, None when the file cannot
        be written. The file is compacted afterwards, so the space is given back."""
        where: list[str] = []
        params: list[object] = []
        if model is not None:
            where.append("model = ?")
            params.append(model)
        if older_than is not None:
            where.append("created < ?")
            params.append(time.time() - older_than)
        sql = "DELETE FROM calls" + (" WHERE " + " AND ".join(where) if where else "")
        removed = self._write(lambda db: db.execute(sql, params).rowcount)
        if removed:  # compact, then fold the WAL back in so the file itself shrinks
            self._write(lambda db: db.execute("VACUUM").execute(
                "PRAGMA wal_checkpoint(TRUNCATE)"))
        return removed

    def clear(self) -> None:
        self.prune()

    def share(self) -> dict[str, Any] | None:
        """How a worker process opens this same cache (None: it has none)."""
        if self._db is None or not self.readable:
            return None
        return {"directory": str(self.path.parent), "refresh": self.refresh,
                "read_only": not self.writable}

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self.readable = self.writable = False


class NullCache:
    """The cache when caching is off: never hits, stores nothing."""

    path = None
    hits = 0
    misses = 0
    refresh = False

    def get(self, key: str) -> dict[str, Any] | None:
        return None

    def put(self, key: str, model: str, response: dict[str, Any], *,
            api_base: str | None = None) -> None:
        return None

    def __len__(self) -> int:
        return 0

    def clear(self) -> None:
        return None

    def share(self) -> dict[str, Any] | None:
        return None

    def close(self) -> None:
        return None


def open_cache(directory: str | Path | None = None, *, enabled: bool = True,
               refresh: bool = False, graph: str | os.PathLike[str] | None = None
               ) -> Cache | None:
    """The cache the command-line flags ask for: None for `--no-cache` (nothing read or
    written), else the one in `--cache-dir`, else the `.dagtui/` of the file at `graph`
    (`dagtui.workdir.workdir_for`: wherever the command runs from), refreshing on
    `--refresh`."""
    if not enabled:
        return None
    if directory is None and graph is not None:
        directory = workdir_for(graph)
    return Cache(directory, refresh=refresh)


def _columns(db: sqlite3.Connection) -> list[str]:
    return [row[1] for row in db.execute("PRAGMA table_info(calls)").fetchall()]


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _why(exc: BaseException | None) -> str:
    return str(exc) if exc is not None else "unknown"
