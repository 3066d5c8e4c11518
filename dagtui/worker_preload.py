"""Preloaded by the worker pool's fork server, so every worker starts with litellm loaded.

`dagtui.workers` starts its processes from a `forkserver` whose preload list names this
module, and starts that server with PRELOAD_FLAG set: litellm's multi-second import is then
paid once, in the server (which has no threads, so forking from it is safe), and each
worker is a copy that is warm at birth. The server also runs one judge warm-up (a mock
completion, no network): litellm imports some fifty more modules on its first request,
which would otherwise cost every new worker ~0.7 s (measured on 2 cores; see
tests/benchmarks/bench_suite_workers.py --auto). The warm-up's event loop is closed again
and no thread is left running, so the server stays safe to fork; each worker still warms
up its own judge on its own loop, which then takes milliseconds.

Without the flag (any other import, e.g. a tool walking the package) importing this module
does nothing: the core still imports litellm only when a judge call needs it.
"""

from __future__ import annotations

import os

PRELOAD_FLAG = "DAGTUI_PRELOAD_LITELLM"


def _preload() -> None:
    import asyncio
    import contextlib

    from .judges.litellm_judge import LiteLLMJudge, import_litellm

    import_litellm()
    with contextlib.suppress(Exception):  # a warm-up that fails only costs the time
        asyncio.run(LiteLLMJudge("openai/gpt-4.1-mini", api_key="warm-up").warm_up())


if os.environ.get(PRELOAD_FLAG) == "1":
    _preload()
