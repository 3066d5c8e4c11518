"""The tests' OpenAI-compatible stub on 127.0.0.1: `dagtui.stubjudge`, the same server that
`dagtui demo-judge` runs, imported under the name the tests and benchmarks use. Its faults,
hostile modes and use are described in dagtui/stubjudge/server.py.

Run as a script (the benchmarks: keeps the stub's CPU off the client's GIL), it prints the
base URL on the first line of stdout, then serves until stdin closes.
"""

from __future__ import annotations

import argparse
import sys

from dagtui.stubjudge import (  # noqa: F401  (re-exported for the tests)
    FAULT_KINDS,
    HOSTILE_KINDS,
    Answer,
    Fault,
    Responder,
    Script,
    StubServer,
    first_user,
    labels_in,
    last_user,
    prompt_kind,
    smart_answer,
)


def main(argv: list[str] | None = None) -> None:
    """The stub in its own process, with the benchmarks' latency and fault options."""
    parser = argparse.ArgumentParser(description="OpenAI-compatible loopback stub")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--faults", default="429,500,timeout,bad_json")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hang", type=float, default=30.0)
    args = parser.parse_args(argv)
    stub = StubServer(latency=args.latency, fault_rate=args.fault_rate,
                      faults=tuple(args.faults.split(",")), seed=args.seed, hang=args.hang)
    stub.start()
    print(stub.base_url, flush=True)
    try:
        sys.stdin.read()
    finally:
        print(f"calls {stub.calls} faults {stub.faults_sent}", file=sys.stderr, flush=True)
        stub.stop()


if __name__ == "__main__":
    main()
