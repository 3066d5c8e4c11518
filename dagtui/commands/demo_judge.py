"""`dagtui demo-judge`: a stand-in judge to try `run`, `calibrate` and `step --model` with no
API key.

It serves an OpenAI-compatible `/v1/chat/completions` on 127.0.0.1 (`dagtui.stubjudge`, the
server the tests use) whose answers come from a few deterministic rules, never a model:
every reason says so (`demo judge, not a model: ...`), so a report or trace made with it
cannot be mistaken for a real judge's. Point any judge-using command at it with
`--model openai/demo --api-base URL`; a loopback `openai/` endpoint needs no key. It binds
127.0.0.1 only and keeps no request log, so it can run for a whole session; ctrl+c stops it.
"""

from __future__ import annotations

import argparse
import errno
import signal
import sys
import threading
from typing import Any

from dagtui.commands import flags
from dagtui.exitcodes import ExitCode

#: the model string to use with it (any `openai/...` name works: the rules ignore it)
MODEL = "openai/demo"
DEFAULT_PORT = 8765


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo-judge",
        help="a stand-in judge on 127.0.0.1 (deterministic rules, not a model): try run "
        "and calibrate without an API key",
        description="Serve an OpenAI-compatible chat-completions endpoint on 127.0.0.1 whose "
        "answers follow fixed rules (short lines are headings; quoted terms are looked for "
        "as words; a G-Eval leaf scores 7) and say they are not a model. Use it with "
        f"--model {MODEL} --api-base http://127.0.0.1:PORT/v1. ctrl+c stops it.",
    )
    p.add_argument("--port", type=flags.port_or_free, default=DEFAULT_PORT, metavar="N",
                   help=f"TCP port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free port)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dagtui.stubjudge import StubServer, demo_answer

    server = StubServer(demo_answer, port=args.port, idle_timeout=None, keep_requests=False)
    try:
        server.start()
    except OSError as exc:
        why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be used: {exc}"
        print(f"dagtui demo-judge: port {args.port} on 127.0.0.1 {why}; pick another with "
              "--port N (0: any free port)", file=sys.stderr)
        return ExitCode.USAGE
    stopped = threading.Event()

    def stop(_signum: int, _frame: Any) -> None:
        stopped.set()

    # before the address is printed: whoever read it may stop the server at once
    previous = signal.signal(signal.SIGTERM, stop)
    url = server.base_url
    print(f"dagtui demo-judge: {url} (deterministic rules, not a model; ctrl+c stops)",
          flush=True)
    print(f"  use it with: --model {MODEL} --api-base {url}", flush=True)
    try:
        while not stopped.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.stop()
    print(f"dagtui demo-judge: stopped after {server.calls} call(s)", file=sys.stderr)
    return ExitCode.OK
