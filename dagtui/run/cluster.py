"""Cases spread over Dask workers: `--workers N|auto` and `--scheduler ADDRESS`.

litellm spends several milliseconds of CPU per call under one GIL, so past ~140 calls/s a
run needs more cores, and past one machine more machines. Rather than a process pool of its
own, dagtui hands the cases to Dask distributed: `--workers N` starts a `LocalCluster` of N
worker processes (one thread each), `--scheduler tcp://host:8786` (or `DAGTUI_SCHEDULER`)
uses an existing cluster, however many machines it spans. Dask is an optional extra
(`pip install 'dagtui[dask]'`) imported only here and only when asked for.

A batch (one graph's cases: a `dagtui run`, or one suite rule's admitted cases):

1. The client looks every case up in the cache first, with a judge that may answer only
   from the cache (`_probe`, with `dagtui.judges.cache_only`). A case whose every step is
   cached is finished right there and never leaves the client, so a rerun on the cluster
   makes no call and ships nothing. For the others, the cached answers found on the way are
   shipped with the case.
2. The rest go out in chunks (`dagtui.run.dask_worker.run_chunk`), each worker running its chunk
   through the same `batch.run_cases` loop an in-process run uses, with a warm judge and
   engine kept between chunks (`DagtuiPlugin`) on its share of `--concurrency` and `--rpm`.
3. Each chunk's results come back with the answers its judge learnt; the client stores them.
   The sqlite file has one writer (the client) and is never opened by a worker, so machines
   need no shared disk.

A worker lost mid-run (killed, its machine gone) has its chunk re-run on another worker by
Dask; a chunk that cannot be run (Dask gave up on it, or the run was interrupted) comes back
as judge errors of kind `worker` for each of its cases — never lost silently. Results,
reports, traces and exit codes are those of an in-process run.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from dagtui.report.trace import RunResult
from dagtui.run.batch import BatchResult, new_report, preflight_all
from dagtui.run.cases import Case
from dagtui.run.engine import Engine

if TYPE_CHECKING:
    from dagtui.report.stream import ResultLog

AUTO_MAX_WORKERS = 4
#: `--workers auto` stays in process below this many cases, or with fewer calls in flight
#: than AUTO_MIN_CONCURRENCY: on 2 cores with the judge's lanes (200 ms per call) a second
#: process only paid off from ~160-320 cases at 32 calls in flight
#: (tests/benchmarks/bench_suite_workers.py --auto)
AUTO_MIN_CASES = 160
AUTO_MIN_CONCURRENCY = 32
WORKER_ERROR = "worker"
SCHEDULER_ENV = "DAGTUI_SCHEDULER"
DASK_MISSING = "--workers needs dask: pip install 'dagtui[dask]'"
#: cases looked up in the cache (and read from the dataset) at a time
PROBE_WINDOW = 1024
#: chunks submitted per worker at most (one running, one waiting its turn)
IN_FLIGHT = 2
#: chunks per worker share: big enough to keep its calls in flight, small enough that a lost
#: worker costs little and results stream back
CHUNK_WAVES = 4
#: seconds a worker may go without a heartbeat before the local scheduler drops it
WORKER_TTL = "60s"
#: seconds to reach a `--scheduler`, and for its first worker to be there
CONNECT_TIMEOUT = "10s"
WORKERS_TIMEOUT = 60.0
#: seconds between looks at the chunks in flight
POLL = 0.02
#: variables shipped to workers (a remote machine has its own environment otherwise)
ENV_PREFIXES = ("DAGTUI_", "LITELLM_")
ENV_SUFFIXES = ("_API_KEY", "_API_BASE", "_API_VERSION")


class DaskMissing(RuntimeError):
    """`--workers N` or `--scheduler` was asked for without Dask installed."""


class ClusterError(RuntimeError):
    """The Dask cluster cannot be used (the scheduler is unreachable, no worker joined)."""


def require_dask() -> Any:
    """`distributed`, or DaskMissing saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise DaskMissing(DASK_MISSING) from None
    return distributed


def max_workers() -> int:
    """The most `--workers` a LocalCluster may start on this machine: twice its cores (at
    least 8). Each is a Python process with litellm loaded; 100,000 of them never start."""
    return max(8, 2 * (os.cpu_count() or 1))


def parse_workers(value: object) -> int | str:
    """`--workers` as given: a whole number from 1 to `max_workers()` or "auto";
    ValueError otherwise."""
    if value == "auto":
        return "auto"
    try:
        count = int(value)  # type: ignore[call-overload]  # any value; refused below if not whole
    except (TypeError, ValueError, OverflowError):
        count = 0
    if not 1 <= count <= max_workers():
        raise ValueError(f"--workers must be a whole number from 1 to {max_workers()} (twice "
                         "this machine's cores, at least 8) or 'auto'")
    return count


def resolve_workers(value: int | str | None, n_cases: int, judge: Any) -> int:
    """How many worker processes to start: an int as given; "auto" is min(cores, 4) for a
    litellm judge with at least AUTO_MIN_CONCURRENCY calls in flight and AUTO_MIN_CASES
    cases (when Dask is installed), else 1. Other judges always run in process (they spend no per-call CPU worth
    spreading and may not pickle)."""
    from dagtui.judges.litellm_judge import LiteLLMJudge

    if not isinstance(judge, LiteLLMJudge) or value is None:
        return 1
    if value == "auto":
        if n_cases < AUTO_MIN_CASES or judge.concurrency < AUTO_MIN_CONCURRENCY:
            return 1
        return cluster_size("auto")
    count = int(value)
    if count < 1:
        raise ValueError("workers must be >= 1 or 'auto'")
    return count


def workers_for(value: int | str | None, n_cases: int, judge: Any,
                scheduler: str | None = None) -> int:
    """The one rule for "in process or on Dask", for a graph run and a suite rule alike:
    the worker processes a batch of `n_cases` gets (`resolve_workers`), at least 2 for a
    litellm judge when a `scheduler` names a cluster; 1 means in process."""
    from dagtui.judges.litellm_judge import LiteLLMJudge

    count = resolve_workers(value, n_cases, judge)
    if scheduler is not None and isinstance(judge, LiteLLMJudge):
        return max(2, count)
    return count


def dask_installed() -> bool:
    """True when `distributed` can be imported (looked up, not imported)."""
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


def cluster_size(value: int | str | None) -> int:
    """Local worker processes a run may use: N as given, "auto" min(cores, 4) when Dask is
    installed (else 1: "auto" never fails for want of it), 1 for None."""
    if value == "auto":
        return max(1, min(os.cpu_count() or 1, AUTO_MAX_WORKERS)) if dask_installed() else 1
    return int(value) if value is not None else 1


def scheduler_address(value: str | None = None) -> str | None:
    """`--scheduler`, else `DAGTUI_SCHEDULER`, else None (no existing cluster)."""
    return value or os.environ.get(SCHEDULER_ENV) or None


def split(total: int, parts: int) -> list[int]:
    """`total` spread over `parts` as evenly as possible (the first ones get the rest)."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def shipped_env() -> dict[str, str]:
    """The client's judge settings and keys, for workers on other machines."""
    return {k: v for k, v in os.environ.items()
            if k.startswith(ENV_PREFIXES) or k.endswith(ENV_SUFFIXES)}


class Cluster:
    """A Dask client: on a `LocalCluster` of `workers` processes, or on the cluster at
    `scheduler`. Nothing starts until the first batch (`connect`); one cluster serves every
    batch of a run (a suite's rules, its baseline), so workers stay warm between them.
    `close()` may be called from another thread while a batch runs: the batch ends within
    a moment, its unfinished cases reported as `worker` errors."""

    def __init__(self, workers: int = 2, *, scheduler: str | None = None) -> None:
        self.workers = max(1, workers)
        self.scheduler = scheduler
        self.client: Any = None
        self._local: Any = None
        self._closing = threading.Event()
        self._start = threading.Lock()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closing(self) -> bool:
        return self._closing.is_set()

    def connect(self) -> Any:
        """The client, connected and with the dagtui plugin on every worker (warm)."""
        with self._start:
            if self._closing.is_set():
                raise RuntimeError("the cluster is closed")
            if self.client is None:
                self.client = self._open()
            return self.client

    def _open(self) -> Any:
        distributed = require_dask()
        import dask

        from dagtui.run.dask_worker import DagtuiPlugin, wait_warm

        if self.scheduler:
            try:
                client = distributed.Client(self.scheduler, timeout=CONNECT_TIMEOUT,
                                            set_as_default=False)
            except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, a bad address
                raise ClusterError(f"cannot reach the Dask scheduler at {self.scheduler}: "
                                   f"{type(exc).__name__}: {exc}") from None
            try:
                client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
            except Exception:  # noqa: BLE001 - a TimeoutError of Dask's own
                client.close()
                raise ClusterError(f"the Dask scheduler at {self.scheduler} has no worker "
                                   f"(none joined within {WORKERS_TIMEOUT:g} s)") from None
        else:
            method = _forkserver()
            with dask.config.set({"distributed.scheduler.worker-ttl": WORKER_TTL,
                                  "distributed.worker.multiprocessing-method": method}):
                self._local = distributed.LocalCluster(
                    n_workers=self.workers, processes=True, threads_per_worker=1,
                    dashboard_address=":0", silence_logs=logging.CRITICAL,
                    host="127.0.0.1")
            client = distributed.Client(self._local, set_as_default=False)
        client.register_plugin(DagtuiPlugin(), name="dagtui")
        client.run(wait_warm)  # litellm imported and warm everywhere before any clock
        return client

    def size(self) -> int:
        """Workers now in the cluster (at least 1)."""
        info = self.connect().scheduler_info()
        return max(1, len(info.get("workers", {})))

    def close(self) -> None:
        """Disconnect (and stop the local cluster); safe twice and from any thread."""
        self._closing.set()
        with self._start:
            client, self.client = self.client, None
            local, self._local = self._local, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close(timeout=10)
        if local is not None:
            with contextlib.suppress(Exception):
                local.close(timeout=10)


def _forkserver() -> str:
    """The start method for local workers: a fork server with litellm imported and warmed
    once (`dagtui.run.dask_worker` preloaded with PRELOAD_FLAG set), so N workers do not each
    pay its seconds of import; "spawn" where there is no fork server. The server is started
    here, before Dask would start it with its own preload list."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return "spawn"
    from multiprocessing import forkserver

    from dagtui.run.dask_worker import PRELOAD_FLAG

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["dagtui.run.dask_worker"])
    # the server inherits the environment of this moment: the flag is set only around its
    # start, so nothing else in this process sees it
    before = os.environ.get(PRELOAD_FLAG)
    os.environ[PRELOAD_FLAG] = "1"
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            del os.environ[PRELOAD_FLAG]
        else:
            os.environ[PRELOAD_FLAG] = before
    return "forkserver"


# ------------------------------------------------------------------ the cache, client side


def _probe(engine: Engine, cases: list[Case]) -> tuple[dict[int, RunResult],
                                                      list[dict[str, Any]]]:
    """({index: result} of the cases the cache finishes, per case the cached answers met on
    its way). Nothing is looked up when the cache cannot serve (off, `--refresh`, empty)."""
    cache: Any = getattr(engine.judge, "cache", None)  # a litellm judge's (none: no probe)
    empty: list[dict[str, Any]] = [{} for _ in cases]
    if getattr(cache, "path", None) is None or cache.refresh or not len(cache):
        return {}, empty
    from dagtui.judges.cache_only import RecordingCache, cache_only_judge

    recording = RecordingCache(cache)
    judge = cache_only_judge(engine.judge, recording)
    done: dict[int, RunResult] = {}
    hits: list[dict[str, Any]] = []

    async def walk() -> None:
        for i, case in enumerate(cases):
            recording.found = {}
            # a fresh engine per case: G-Eval steps are remembered per engine, and each
            # case must meet (and ship) every cached answer it needs
            probe = Engine(engine.graph, judge, validate=False, python=engine.python)
            result = await probe.run(case, check=False)
            if result.error is None and result.calls == 0:
                done[i] = result
            hits.append(recording.found)

    asyncio.run(walk())
    return done, hits


# ------------------------------------------------------------------ one batch


def _worker_error(engine: Engine, case: Case, why: str) -> RunResult:
    return RunResult(case=case.name, threshold=engine.graph.metric.effective_threshold,
                     error=f"{why}; the case has no verdict", error_kind=WORKER_ERROR,
                     expected_score=case.expected_score)


def evaluate_in_workers(
    engine: Engine,
    cases: Iterable[Case],
    *,
    workers: int = 2,
    concurrency: int = 16,
    on_result: Callable[[RunResult], None] | None = None,
    cluster: Cluster | None = None,
    scheduler: str | None = None,
    on_case: Callable[[int, Case, RunResult], None] | None = None,
    log: ResultLog | None = None,
) -> BatchResult:
    """Like `batch.evaluate_cases`, with the cases run by Dask workers: those of `cluster`
    when given (it stays up for the next batch), else of a cluster made and closed here (a
    `LocalCluster` of `workers` processes, or the one at `scheduler`). `cases` may be read
    lazily (`dagtui.run.case_stream.CaseStream`), `on_case`, `on_result` and `log` are
    `evaluate_cases`'s.

    Blocking (call it from a thread inside an event loop). The wall time counts from the
    moment every worker is warm, as an in-process run counts from after litellm's import.
    Raises DaskMissing when Dask is not installed.
    """
    if iter(cases) is cases:  # a one-pass iterator: the preflight would use it up
        cases = list(cases)
    preflight_all(engine, cases)
    report = new_report(engine)
    with contextlib.ExitStack() as stack:
        if cluster is None:
            cluster = stack.enter_context(Cluster(workers, scheduler=scheduler))
        batch = Batch(engine, cases, cluster, concurrency)
        results = batch.run(on_result, on_case=on_case, log=log)
        report.results = log if log is not None else results
        report.wall_time = time.perf_counter() - batch.started
    return report


class Batch:
    """One batch on a cluster: probe the cache, send chunks, gather, store new answers.

    The cases are taken PROBE_WINDOW at a time (a lazily read dataset stays lazy) and at
    most IN_FLIGHT chunks per worker are submitted at once: memory holds the cases in
    flight, never the whole dataset or a future per chunk of it."""

    def __init__(self, engine: Engine, cases: Iterable[Case], cluster: Cluster,
                 concurrency: int) -> None:
        from dagtui.judges.litellm_judge import LiteLLMJudge

        if not isinstance(engine.judge, LiteLLMJudge):
            raise TypeError("Dask workers need a litellm judge")
        self.judge = engine.judge
        self.engine, self.cases, self.cluster = engine, cases, cluster
        self.total_concurrency = concurrency
        #: when the clock started: now, and again once the workers are up and warm
        self.started = time.perf_counter()
        #: CPU seconds the workers spent on their chunks, added up
        self.cpu = 0.0
        self._kept: dict[int, RunResult] = {}
        self._on_result: Callable[[RunResult], None] | None = None
        self._on_case: Callable[[int, Case, RunResult], None] | None = None
        self._log: ResultLog | None = None
        self._client: Any = None

    def run(self, on_result: Callable[[RunResult], None] | None = None, *,
            on_case: Callable[[int, Case, RunResult], None] | None = None,
            log: ResultLog | None = None) -> list[RunResult]:
        """Run every case; the results in case order (empty when they go to `log`)."""
        self._on_result, self._on_case, self._log = on_result, on_case, log
        pending: dict[Any, list[tuple[int, Case]]] = {}
        self._unsent: list[tuple[int, Case]] = []
        items = enumerate(self.cases)
        try:
            while not self.cluster.closing:
                window = list(itertools.islice(items, PROBE_WINDOW))
                if not window:
                    break
                last = len(window) < PROBE_WINDOW
                done, hits = _probe(self.engine, [case for _, case in window])
                for k, result in done.items():  # every step cached: never leaves here
                    self._set(*window[k], result)
                todo = [(i, case, hits[k]) for k, (i, case) in enumerate(window)
                        if k not in done]
                if todo:  # a rerun from the cache never starts a worker
                    self._submit(todo, pending, last=last)
            while pending and not self.cluster.closing:
                self._wait(pending)
        finally:
            for fut in pending:
                with contextlib.suppress(Exception):
                    fut.cancel()
        left = itertools.chain(*pending.values(), self._unsent,
                               items if self.cluster.closing else ())
        for i, case in left:
            self._set(i, case, _worker_error(self.engine, case, "the run was interrupted "
                                             "before its worker finished"))
        return [self._kept[i] for i in sorted(self._kept)]

    def _connect(self) -> None:
        """The client, the spec every chunk shares, scattered once; the clock restarted
        (the workers' start is not the run's time)."""
        from dagtui.run.dask_worker import BatchSpec

        started = time.perf_counter()
        self._client = self.cluster.connect()
        self.workers = n = self.cluster.size()
        self.started += time.perf_counter() - started
        self.per_worker = max(1, self.total_concurrency // n)
        judge = self.judge
        config = judge.worker_config(max(1, judge.concurrency // n))
        self.spec = BatchSpec(uuid.uuid4().hex, self.engine.graph, dict(config, cache=None),
                              self.per_worker, self.engine.python, shipped_env(),
                              cached=getattr(judge.cache, "path", None) is not None)
        self._remote_spec = self._client.scatter(self.spec, broadcast=True, hash=False)
        self._chunks = 0

    def _submit(self, todo: list[tuple[int, Case, dict[str, Any]]],
                pending: dict[Any, list[tuple[int, Case]]], *, last: bool) -> None:
        """Send `todo` in chunks, waiting while IN_FLIGHT chunks per worker are out."""
        from dagtui.run.dask_worker import run_chunk

        if self._client is None:
            self._connect()
        n = self.workers
        size = self.per_worker * CHUNK_WAVES
        if last and not pending:  # the whole batch is here: spread it over every worker
            size = max(1, min(size, math.ceil(len(todo) / n)))
        for k in range(0, len(todo), size):
            while len(pending) >= IN_FLIGHT * n and not self.cluster.closing:
                self._wait(pending)
            if self.cluster.closing:
                self._unsent += [(i, case) for i, case, _ in todo[k:]]
                return
            chunk = todo[k:k + size]
            fut = self._client.submit(run_chunk, self._remote_spec, chunk, pure=False,
                                      key=f"dagtui-{self.spec.batch}-{self._chunks}")
            self._chunks += 1
            pending[fut] = [(i, case) for i, case, _ in chunk]

    def _wait(self, pending: dict[Any, list[tuple[int, Case]]]) -> None:
        """Collect the chunks done by now (polled, so a close() from another thread is
        seen), or sleep a moment."""
        finished = [fut for fut in pending if fut.done()]
        if not finished:
            time.sleep(POLL)
            return
        for fut in finished:
            self._collect(fut, pending.pop(fut))

    def _collect(self, fut: Any, chunk: list[tuple[int, Case]]) -> None:
        try:
            results, new, cpu = fut.result()
        except Exception as exc:  # noqa: BLE001 - Dask gave up on it (KilledWorker, ...)
            why = f"Dask worker failed: {type(exc).__name__}: {exc}"
            for i, case in chunk:
                self._set(i, case, _worker_error(self.engine, case, why[:300]))
            return
        self.cpu += cpu
        cache = self.judge.cache
        for key, model, response, api_base in new:  # the one writer of the sqlite file
            cache.put(key, model, response, api_base=api_base)
        cases = dict(chunk)
        for i, result in results:
            self._set(i, cases[i], result)

    def _set(self, i: int, case: Case, result: RunResult) -> None:
        if self._on_case is not None:
            self._on_case(i, case, result)
        if self._on_result is not None:
            self._on_result(result)
        if self._log is not None:
            self._log.add(i, result)
        else:
            self._kept[i] = result
