"""Cases spread over worker processes, so litellm's per-call CPU uses every core.

litellm spends several milliseconds of CPU per call under one GIL; at high concurrency that,
not the network, sets the wall time. `evaluate_in_workers` splits the cases over N processes,
each running the same `Engine` (through `batch.run_cases`, the loop the in-process batch
uses) with its own `LiteLLMJudge` on its share of the concurrency, and sends every
`RunResult` back (pickled) as it ends. The parent builds the same `Report`, progress,
outputs and exit codes as an in-process run, and never imports litellm itself.

Life of a pool: processes are forked from a fork server that has litellm preloaded
(`dagtui.worker_preload`), build their judge and engine, and say "ready"; only then does the
clock start and "go" is sent. A worker that raises, exits or stops sending its heartbeat
for `stall_timeout` seconds is stopped, and each case it had not finished is reported as a
judge error of kind `worker` — never a hang. All workers share the sqlite cache (see
`dagtui.cache` for how concurrent writers are kept safe).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from .batch import Report, new_report, preflight_all, run_cases
from .cases import Case
from .engine import Engine
from .model import Graph
from .trace import RunResult

AUTO_MAX_WORKERS = 4
#: below this many cases, `--workers auto` stays in process (start-up would not pay off)
AUTO_MIN_CASES = 40
HEARTBEAT = 0.5
START_TIMEOUT = 120.0
STALL_TIMEOUT = 60.0
WORKER_ERROR = "worker"


def resolve_workers(value: int | str | None, n_cases: int, judge: Any) -> int:
    """How many processes to use: an int as given; "auto" is min(cores, 4) for a litellm
    judge and at least AUTO_MIN_CASES cases, else 1. Other judges always run in process
    (they spend no per-call CPU worth spreading and may not pickle)."""
    from .judges.litellm_judge import LiteLLMJudge

    if not isinstance(judge, LiteLLMJudge):
        return 1
    if value is None:
        return 1
    if value == "auto":
        if n_cases < AUTO_MIN_CASES:
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
    """Everything one worker needs, as plain picklable data."""

    graph: Graph
    judge_config: dict[str, Any]
    cases: list[Case]
    indices: list[int]
    concurrency: int
    env: dict[str, str]


def worker_main(conn: Connection, job: WorkerJob) -> None:
    """A worker process: build, report ready, wait for go, run, send each result."""
    try:
        # the fork server was started with an older environment: use the parent's now
        os.environ.clear()
        os.environ.update(job.env)
        from .judges.litellm_judge import LiteLLMJudge, import_litellm

        import_litellm()  # already loaded when preloaded; a no-op then
        engine = Engine(job.graph, LiteLLMJudge.from_worker_config(job.judge_config))
        asyncio.run(_serve(conn, engine, job))
    except BaseException:  # noqa: BLE001 - anything: tell the parent, then exit
        with contextlib.suppress(Exception):
            conn.send(("fatal", None, traceback.format_exc(limit=8)))
    finally:
        conn.close()


async def _serve(conn: Connection, engine: Engine, job: WorkerJob) -> None:
    """Warm up, say ready, wait for go, run the share; one event loop throughout, so the
    client state litellm sets up while warming is the one the real calls use."""
    await engine.judge.warm_up()  # type: ignore[attr-defined]
    conn.send(("ready", None, None))
    if await asyncio.to_thread(conn.recv) != "go":
        return
    cpu = time.process_time()
    await _work(conn, engine, job)
    conn.send(("done", None, time.process_time() - cpu))


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


class WorkerPool:
    """N warm worker processes for one batch: `start()`, then `run()`, then `close()`."""

    def __init__(self, engine: Engine, cases: list[Case], *, workers: int, concurrency: int,
                 stall_timeout: float = STALL_TIMEOUT,
                 start_timeout: float = START_TIMEOUT) -> None:
        from .judges.litellm_judge import LiteLLMJudge

        if not isinstance(engine.judge, LiteLLMJudge):
            raise TypeError("worker processes need a litellm judge")
        self.engine = engine
        self.cases = cases
        self.stall_timeout = stall_timeout
        self.start_timeout = start_timeout
        n = max(1, min(workers, len(cases), concurrency))
        shares = split(concurrency, n)
        judge_share = split(engine.judge.concurrency, n)
        env = dict(os.environ)
        self.jobs = [
            WorkerJob(engine.graph, engine.judge.worker_config(max(1, judge_share[w])),
                      [cases[i] for i in range(w, len(cases), n)],
                      list(range(w, len(cases), n)), shares[w], env)
            for w in range(n)
        ]
        self.processes: list[Any] = []
        self.conns: list[Connection] = []
        self.slots: list[RunResult | None] = [None] * len(cases)
        self._live: set[int] = set()
        self._seen: dict[int, float] = {}
        self._why: dict[int, str] = {}
        #: CPU seconds each worker spent on its share (all its threads), once it is done
        self.cpu: dict[int, float] = {}

    def start(self) -> None:
        """Start every worker and wait until each is warm (or has failed)."""
        ctx = _context()
        for w, job in enumerate(self.jobs):
            parent, child = ctx.Pipe(duplex=True)
            proc = ctx.Process(target=worker_main, args=(child, job), daemon=True,
                               name=f"dagtui-worker-{w}")
            proc.start()
            child.close()
            self.processes.append(proc)
            self.conns.append(parent)
            self._live.add(w)
        waiting = set(self._live)
        deadline = time.monotonic() + self.start_timeout
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                for w in list(waiting):
                    self._fail(w, f"did not start within {self.start_timeout:g} s")
                break
            for w in self._ready([self.conns[w] for w in waiting], left):
                try:
                    kind, _, detail = self.conns[w].recv()
                except (EOFError, OSError):
                    kind, detail = "fatal", "exited while starting"
                waiting.discard(w)
                if kind != "ready":
                    self._fail(w, _last_line(detail))

    def _ready(self, conns: list[Connection], timeout: float) -> list[int]:
        index = {id(c): w for w, c in enumerate(self.conns)}
        return [index[id(c)] for c in wait(conns, timeout)]  # type: ignore[arg-type]

    def run(self, on_result: Callable[[RunResult], None] | None = None) -> list[RunResult]:
        """Send go, collect every result (in case order); failures become judge errors."""
        now = time.monotonic()
        for w in list(self._live):
            try:
                self.conns[w].send("go")
                self._seen[w] = now
            except OSError:
                self._fail(w, "exited before it could start its cases")
        while self._live:
            for w in self._ready([self.conns[w] for w in self._live], HEARTBEAT):
                self._receive(w, on_result)
            now = time.monotonic()
            for w in list(self._live):
                if now - self._seen[w] > self.stall_timeout:
                    self._fail(w, f"sent nothing for {self.stall_timeout:g} s (hung)",
                               kill=True)
        for w, job in enumerate(self.jobs):  # whatever a failed worker left undone
            for i in job.indices:
                if self.slots[i] is None:
                    why = self._why.get(w, f"worker process {w} ended early")
                    self._set(i, self._error_result(i, why), on_result)
        return [r for r in self.slots if r is not None]

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
        """Stop worker `w`; its unfinished cases will be judge errors saying why. A hung
        worker is killed outright (a stopped or wedged process may never act on SIGTERM)."""
        self._why[w] = f"worker process {w} {why}"
        self._live.discard(w)
        proc = self.processes[w]
        if proc.is_alive():
            if kill:
                proc.kill()
            else:
                proc.terminate()

    def _error_result(self, index: int, why: str) -> RunResult:
        case = self.cases[index]
        return RunResult(case=case.name, threshold=self.engine.graph.metric.effective_threshold,
                         error=f"{why}; the case has no verdict",
                         error_kind=WORKER_ERROR, expected_score=case.expected_score)

    def close(self) -> None:
        """Stop and reap every worker (safe to call twice, and after a failure)."""
        for conn in self.conns:
            conn.close()
        for proc in self.processes:
            proc.join(2)
            if proc.is_alive():
                proc.terminate()
                proc.join(2)
            if proc.is_alive():
                proc.kill()
                proc.join()


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
) -> Report:
    """Like `batch.evaluate_cases`, with the cases run by `workers` processes.

    Blocking (call it from a thread inside an event loop). The wall time counts from the
    moment every worker is warm, as an in-process run counts from after litellm's import.
    """
    preflight_all(engine, cases)
    report = new_report(engine)
    pool = WorkerPool(engine, cases, workers=workers, concurrency=concurrency,
                      stall_timeout=stall_timeout)
    try:
        pool.start()
        start = time.perf_counter()
        report.results = pool.run(on_result)
        report.wall_time = time.perf_counter() - start
    finally:
        pool.close()
    return report
