"""Cases spread over worker processes, so litellm's per-call CPU uses every core.

litellm spends several milliseconds of CPU per call under one GIL; at high concurrency that,
not the network, sets the wall time. `evaluate_in_workers` splits the cases over N processes,
each running the same `Engine` (through `batch.run_cases`, the loop the in-process batch
uses) with its own `LiteLLMJudge` on its share of the concurrency, and sends every
`RunResult` back (pickled) as it ends. The parent builds the same `Report`, progress,
outputs and exit codes as an in-process run, and never imports litellm itself.

Life of a pool (`WarmPool`): processes are forked from a fork server that has litellm
preloaded (`dagtui.worker_preload`) and then serve batch after batch until the pool closes,
so a suite of several LLM rules pays the start once. Per batch each worker gets its share
(graph, judge config, cases), builds its judge and engine, warms up and says "ready"; only
then does the clock start and "go" is sent. A worker that raises, exits or stops sending its
heartbeat for `stall_timeout` seconds is stopped, and each case it had not finished is
reported as a judge error of kind `worker` — never a hang; the next batch starts a fresh
process in its place. All workers share the sqlite cache (see `dagtui.cache` for how
concurrent writers are kept safe). `evaluate_in_workers` runs one batch, on a given pool or
on one of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from .batch import Report, new_report, preflight_all, run_cases
from .cases import Case
from .checks import PythonConsent
from .engine import Engine
from .model import Graph
from .trace import RunResult

AUTO_MAX_WORKERS = 4
#: `--workers auto` stays in process below this many cases, or with fewer calls in flight
#: than AUTO_MIN_CONCURRENCY: measured on 2 cores with the judge's lanes (`dagtui run`, 200 ms
#: per call), 2 workers never won at 8 calls in flight, and at 32 only from ~160-320 cases
#: (tests/benchmarks/bench_suite_workers.py --auto)
AUTO_MIN_CASES = 160
AUTO_MIN_CONCURRENCY = 32
HEARTBEAT = 0.5
START_TIMEOUT = 120.0
STALL_TIMEOUT = 60.0
WORKER_ERROR = "worker"


def parse_workers(value: object) -> int | str:
    """`--workers` as given: a whole number >= 1 or "auto"; ValueError otherwise."""
    if value == "auto":
        return "auto"
    try:
        count = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        count = 0
    if count < 1:
        raise ValueError("--workers must be a whole number >= 1 or 'auto'")
    return count


def resolve_workers(value: int | str | None, n_cases: int, judge: Any) -> int:
    """How many processes to use: an int as given; "auto" is min(cores, 4) for a litellm
    judge with at least AUTO_MIN_CONCURRENCY calls in flight and AUTO_MIN_CASES cases, else
    1 (workers pay off only when many calls per core are in flight). Other judges always run
    in process (they spend no per-call CPU worth spreading and may not pickle)."""
    from .judges.litellm_judge import LiteLLMJudge

    if not isinstance(judge, LiteLLMJudge):
        return 1
    if value is None:
        return 1
    if value == "auto":
        if n_cases < AUTO_MIN_CASES or judge.concurrency < AUTO_MIN_CONCURRENCY:
            return 1
        return max(1, min(os.cpu_count() or 1, AUTO_MAX_WORKERS))
    count = int(value)
    if count < 1:
        raise ValueError("workers must be >= 1 or 'auto'")
    return count


def split(total: int, parts: int) -> list[int]:
    """`total` spread over `parts` as evenly as possible (the first ones get the rest)."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


@dataclass
class WorkerJob:
    """One batch's share for one worker, as plain picklable data."""

    graph: Graph
    judge_config: dict[str, Any]
    cases: list[Case]
    indices: list[int]
    concurrency: int
    env: dict[str, str]
    #: the parent's consent for python checks, as the user gave it (never from the file)
    python: PythonConsent | None = None


def worker_main(conn: Connection) -> None:
    """A worker process: serve jobs until the parent closes its end of the pipe."""
    try:
        from .judges.litellm_judge import import_litellm

        import_litellm()  # already loaded when preloaded; a no-op then
        asyncio.run(_serve(conn))
    except BaseException:  # noqa: BLE001 - anything: tell the parent, then exit
        with contextlib.suppress(Exception):
            conn.send(("fatal", None, traceback.format_exc(limit=8)))
    finally:
        conn.close()


async def _serve(conn: Connection) -> None:
    """Job after job on one event loop, so the client state litellm sets up while warming
    is the one the real calls use. Per job: build, warm up, say ready, wait for go, run."""
    from .judges.litellm_judge import LiteLLMJudge

    while (job := await asyncio.to_thread(_receive_or_none, conn)) is not None:
        # the fork server was started with an older environment: use the parent's now
        os.environ.clear()
        os.environ.update(job.env)
        judge = LiteLLMJudge.from_worker_config(job.judge_config)
        try:
            engine = Engine(job.graph, judge, python=job.python)
            await judge.warm_up()
            conn.send(("ready", None, None))
            if await asyncio.to_thread(_receive_or_none, conn) != "go":
                return
            cpu = time.process_time()
            await _work(conn, engine, job)
            conn.send(("done", None, time.process_time() - cpu))
        finally:
            judge.cache.close()  # each job opens the shared cache file afresh


def _receive_or_none(conn: Connection) -> Any:
    """The next message; None once the parent has closed its end (time to exit)."""
    try:
        return conn.recv()
    except (EOFError, OSError):
        return None


async def _work(conn: Connection, engine: Engine, job: WorkerJob) -> None:
    async def beat() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT)
            conn.send(("beat", None, None))

    def sent(i: int, result: RunResult) -> None:
        conn.send(("result", job.indices[i], result))

    beating = asyncio.create_task(beat())
    try:
        await run_cases(engine, job.cases, concurrency=job.concurrency, on_result=sent)
    finally:
        beating.cancel()


def _context() -> Any:
    """forkserver with litellm preloaded where it exists (POSIX); spawn elsewhere."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    from multiprocessing import forkserver

    from .worker_preload import PRELOAD_FLAG

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["dagtui.worker_preload"])
    # the server is started once per process and inherits the environment of that moment:
    # the flag is set only around its start, so nothing else in this process sees it
    before = os.environ.get(PRELOAD_FLAG)
    os.environ[PRELOAD_FLAG] = "1"
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            del os.environ[PRELOAD_FLAG]
        else:
            os.environ[PRELOAD_FLAG] = before
    return ctx


class WarmPool:
    """Worker processes that stay up and run batch after batch, each batch with its own
    graph, judge and cases: a suite pays the pool's start once, not once per rule.

    `batch(...)` starts whatever processes are missing (the first time, or to replace one
    lost in an earlier batch), hands each its share and returns once every worker is warm;
    `Batch.run()` then runs it. One batch at a time. `close()` may be called from another
    thread while a batch runs (a cancelled suite run): the batch ends within a heartbeat,
    its unfinished cases reported as worker errors, and then the processes are stopped.
    """

    def __init__(self, *, stall_timeout: float = STALL_TIMEOUT,
                 start_timeout: float = START_TIMEOUT) -> None:
        self.stall_timeout = stall_timeout
        self.start_timeout = start_timeout
        self.processes: list[Any] = []
        self.conns: list[Connection] = []
        #: processes started over the pool's life (a reused, healthy pool starts no more)
        self.started = 0
        self._retired: list[Any] = []
        self._ctx: Any = None
        self._closing = threading.Event()
        self._busy = threading.Lock()

    def __enter__(self) -> WarmPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def batch(self, engine: Engine, cases: list[Case], *, workers: int,
              concurrency: int) -> Batch:
        """Send `cases` of `engine` to up to `workers` processes; they are warm on return."""
        if self._closing.is_set():
            raise RuntimeError("the worker pool is closed")
        return Batch(self, engine, cases, workers=workers, concurrency=concurrency)

    def _ensure(self, n: int) -> None:
        """Processes 0..n-1 are up: start the missing ones, replace the dead ones."""
        if self._ctx is None:
            self._ctx = _context()
        while len(self.processes) < n:
            self.processes.append(None)
            self.conns.append(None)  # type: ignore[arg-type]
        for w in range(n):
            proc = self.processes[w]
            if proc is not None and proc.is_alive():
                continue
            if proc is not None:  # it died while idle (killed from outside)
                self._retire(w, proc, kill=False)
            parent, child = self._ctx.Pipe(duplex=True)
            proc = self._ctx.Process(target=worker_main, args=(child,), daemon=True,
                                     name=f"dagtui-worker-{w}")
            proc.start()
            child.close()
            self.processes[w], self.conns[w] = proc, parent
            self.started += 1

    def _retire(self, w: int, proc: Any, *, kill: bool) -> None:
        """Stop process `proc` (slot `w`); the next batch starts a fresh one in its place.
        A hung worker is killed outright (a stopped or wedged process may never act on
        SIGTERM)."""
        if proc.is_alive():
            if kill:
                proc.kill()
            else:
                proc.terminate()
        if w < len(self.processes) and self.processes[w] is proc:
            self.conns[w].close()
            self.processes[w] = None
            self._retired.append(proc)

    def close(self) -> None:
        """Stop and reap every worker (safe to call twice, from any thread)."""
        self._closing.set()
        with self._busy:  # a batch running in another thread notices and ends first
            for conn in self.conns:
                if conn is not None:
                    conn.close()  # an idle worker reads the end of its pipe and exits
            for proc in [p for p in self.processes if p is not None] + self._retired:
                proc.join(2)
                if proc.is_alive():
                    proc.terminate()
                    proc.join(2)
                if proc.is_alive():
                    proc.kill()
                    proc.join()
            self.processes, self.conns, self._retired = [], [], []


class Batch:
    """One batch on a `WarmPool`: made (jobs sent, workers warm) by `WarmPool.batch`;
    `run()` says go and collects every result in case order."""

    def __init__(self, pool: WarmPool, engine: Engine, cases: list[Case], *, workers: int,
                 concurrency: int) -> None:
        from .judges.litellm_judge import LiteLLMJudge

        if not isinstance(engine.judge, LiteLLMJudge):
            raise TypeError("worker processes need a litellm judge")
        self.pool, self.engine, self.cases = pool, engine, cases
        n = max(1, min(workers, len(cases), concurrency))
        shares = split(concurrency, n)
        judge_share = split(engine.judge.concurrency, n)
        env = dict(os.environ)
        self.jobs = [
            WorkerJob(engine.graph, engine.judge.worker_config(max(1, judge_share[w])),
                      [cases[i] for i in range(w, len(cases), n)],
                      list(range(w, len(cases), n)), shares[w], env, engine.python)
            for w in range(n)
        ]
        self.slots: list[RunResult | None] = [None] * len(cases)
        self._live: set[int] = set(range(n))
        self._seen: dict[int, float] = {}
        self._why: dict[int, str] = {}
        #: CPU seconds each worker spent on its share (all its threads), once it is done
        self.cpu: dict[int, float] = {}
        with pool._busy:
            pool._ensure(n)
            self.processes = pool.processes[:n]
            self.conns = pool.conns[:n]
            for w, job in enumerate(self.jobs):
                try:
                    self.conns[w].send(job)
                except OSError:
                    self._fail(w, "exited before it got its cases")
            self._wait_ready()

    def _wait_ready(self) -> None:
        waiting = set(self._live)
        deadline = time.monotonic() + self.pool.start_timeout
        while waiting and not self.pool._closing.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                for w in list(waiting):
                    self._fail(w, f"did not start within {self.pool.start_timeout:g} s")
                break
            for w in self._ready(waiting, min(left, HEARTBEAT)):
                try:
                    kind, _, detail = self.conns[w].recv()
                except (EOFError, OSError):
                    kind, detail = "fatal", "exited while starting"
                waiting.discard(w)
                if kind != "ready":
                    self._fail(w, _last_line(detail))

    def _ready(self, workers: set[int], timeout: float) -> list[int]:
        index = {id(self.conns[w]): w for w in workers}
        return [index[id(c)] for c in wait([self.conns[w] for w in workers], timeout)]

    def run(self, on_result: Callable[[RunResult], None] | None = None) -> list[RunResult]:
        """Send go, collect every result (in case order); failures become judge errors."""
        with self.pool._busy:
            try:
                self._collect(on_result)
            finally:  # a batch left early (an error, the pool closing): its workers go
                for w in list(self._live):
                    self._fail(w, "was stopped (the run was interrupted)", kill=True)
        for w, job in enumerate(self.jobs):  # whatever a failed worker left undone
            for i in job.indices:
                if self.slots[i] is None:
                    why = self._why.get(w, f"worker process {w} ended early")
                    self._set(i, self._error_result(i, why), on_result)
        return [r for r in self.slots if r is not None]

    def _collect(self, on_result: Callable[[RunResult], None] | None) -> None:
        now = time.monotonic()
        for w in list(self._live):
            try:
                self.conns[w].send("go")
                self._seen[w] = now
            except OSError:
                self._fail(w, "exited before it could start its cases")
        while self._live and not self.pool._closing.is_set():
            for w in self._ready(self._live, HEARTBEAT):
                self._receive(w, on_result)
            now = time.monotonic()
            for w in list(self._live):
                if now - self._seen[w] > self.pool.stall_timeout:
                    self._fail(w, f"sent nothing for {self.pool.stall_timeout:g} s (hung)",
                               kill=True)

    def _receive(self, w: int, on_result: Callable[[RunResult], None] | None) -> None:
        try:
            kind, index, payload = self.conns[w].recv()
        except (EOFError, OSError):
            code = self.processes[w].exitcode if not self.processes[w].is_alive() else None
            self._fail(w, f"exited (code {code})")
            return
        except Exception as exc:  # a message that does not unpickle: stop that worker
            self._fail(w, f"sent an unreadable message ({type(exc).__name__}: {exc})")
            return
        self._seen[w] = time.monotonic()
        if kind == "result":
            self._set(index, payload, on_result)
        elif kind == "done":
            self.cpu[w] = float(payload)
            self._live.discard(w)
        elif kind == "fatal":
            self._fail(w, _last_line(payload))

    def _set(self, index: int, result: RunResult,
             on_result: Callable[[RunResult], None] | None) -> None:
        self.slots[index] = result
        if on_result is not None:
            on_result(result)

    def _fail(self, w: int, why: str, *, kill: bool = False) -> None:
        """Stop worker `w`; its unfinished cases will be judge errors saying why."""
        self._why[w] = f"worker process {w} {why}"
        self._live.discard(w)
        self.pool._retire(w, self.processes[w], kill=kill)

    def _error_result(self, index: int, why: str) -> RunResult:
        case = self.cases[index]
        return RunResult(case=case.name, threshold=self.engine.graph.metric.effective_threshold,
                         error=f"{why}; the case has no verdict",
                         error_kind=WORKER_ERROR, expected_score=case.expected_score)


def _last_line(detail: Any) -> str:
    text = str(detail or "failed").strip()
    return "failed: " + text.splitlines()[-1] if text else "failed"


def evaluate_in_workers(
    engine: Engine,
    cases: list[Case],
    *,
    workers: int,
    concurrency: int = 16,
    on_result: Callable[[RunResult], None] | None = None,
    stall_timeout: float = STALL_TIMEOUT,
    pool: WarmPool | None = None,
) -> Report:
    """Like `batch.evaluate_cases`, with the cases run by `workers` processes: those of
    `pool` when given (it stays open for the next batch; its own timeouts apply), else of
    a pool made and closed here.

    Blocking (call it from a thread inside an event loop). The wall time counts from the
    moment every worker is warm, as an in-process run counts from after litellm's import.
    """
    preflight_all(engine, cases)
    report = new_report(engine)
    with contextlib.ExitStack() as stack:
        if pool is None:
            pool = stack.enter_context(WarmPool(stall_timeout=stall_timeout))
        batch = pool.batch(engine, cases, workers=workers, concurrency=concurrency)
        start = time.perf_counter()
        report.results = batch.run(on_result)
        report.wall_time = time.perf_counter() - start
    return report
