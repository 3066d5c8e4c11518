"""Argument types for numeric flags, so a bad value is refused by the parser with the flag
and the value named (`argument --timeout: must be a number above 0, got '-1'`), exit 2,
before any file is read or any call is made."""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Callable

from dagtui.judges.health import RPM_MAX, RPM_MIN
from dagtui.run.spec import RunSpec


def _number(kind: type, low: float, *, strict: bool, words: str,
            high: float | None = None) -> Callable[[str], object]:
    """A parser type: a finite `kind(text)` that is >= `low` (> `low` when `strict`) and,
    with `high`, <= `high`."""

    def parse(text: str) -> object:
        try:
            value = kind(text)
        except (TypeError, ValueError, OverflowError):
            value = None
        if value is None or (isinstance(value, float) and not math.isfinite(value)) \
                or value < low or (strict and value == low) \
                or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {words}, got {text!r}")
        return value

    parse.__name__ = words  # argparse names the type in some messages
    return parse


#: `--concurrency`, `--workers`-like counts: 1 or more
positive_int = _number(int, 1, strict=False, words="a whole number >= 1")
#: `--retries`: 0 or more
non_negative_int = _number(int, 0, strict=False, words="a whole number >= 0")
#: `--timeout`: seconds, above 0
positive_float = _number(float, 0.0, strict=True, words="a number above 0")
#: `--rpm`: requests a minute, within `dagtui.judges.health`'s bounds
rpm = _number(float, RPM_MIN, strict=False, high=RPM_MAX,
              words=f"a number of requests a minute from {RPM_MIN:g} to {RPM_MAX:,.0f}")
#: `--temperature`: what providers accept (OpenAI's range; 0 is deterministic decoding)
temperature = _number(float, 0.0, strict=False, high=2.0, words="a number from 0 to 2")
#: `--min-kappa`: Cohen's kappa lies in -1..1
kappa = _number(float, -1.0, strict=False, high=1.0, words="a number from -1 to 1")
#: `--max-flip`: a share of verdicts, 0..1
share = _number(float, 0.0, strict=False, high=1.0, words="a number from 0 to 1")
#: `--target-width`: a kappa interval's width, above 0 and at most 2 (kappa spans -1..1)
interval_width = _number(float, 0.0, strict=True, high=2.0, words="a number above 0, at most 2")


def _port(low: int, words: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = -1
        if not low <= value < 65536:
            raise argparse.ArgumentTypeError(f"must be {words}, got {text!r}")
        return value

    parse.__name__ = words
    return parse


#: `serve --port`: a TCP port
port = _port(1, "a port number 1..65535")
#: `demo-judge --port`: a TCP port, or 0 for any free one
port_or_free = _port(0, "a port number 1..65535, or 0 for any free port")


def workers(text: str) -> int | str:
    """`--workers`: a whole number from 1 to `dagtui.run.cluster.max_workers()` or `auto`
    (`dagtui.run.cluster.parse_workers`)."""
    from dagtui.run.cluster import parse_workers

    try:
        return parse_workers(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{str(exc).removeprefix('--workers ')}, got "
                                         f"{text!r}") from None


def shard(text: str) -> object:
    """`--shard I/N`: shard I of N, 1 <= I <= N (`dagtui.run.shard.parse_shard`)."""
    from dagtui.run.shard import parse_shard

    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_call_flags(p: argparse.ArgumentParser) -> None:
    """The flags of a command that calls the judge over labelled cases (calibrate, align):
    concurrency, timeout, retries and the cache."""
    p.add_argument("--concurrency", type=positive_int, default=8,
                   help="cases and calls in flight (8)")
    p.add_argument("--timeout", type=positive_float, default=60.0,
                   help="seconds per judge call (60)")
    p.add_argument("--retries", type=non_negative_int, default=3, help="retries per call (3)")
    add_cache_flags(p)


def add_cache_flags(p: argparse.ArgumentParser) -> None:
    """`--cache-dir`, and `--no-cache` or `--refresh`: the judge cache of run, calibrate and
    align."""
    p.add_argument("--cache-dir", metavar="DIR",
                   help="cache directory (default: the graph's .dagtui, see docs/files.md)")
    cached = p.add_mutually_exclusive_group()
    cached.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the cache: every call is sent, nothing "
                             "is stored")
    cached.add_argument("--refresh", action="store_true",
                        help="ask the judge again and overwrite the cached answers")


def run_spec(args: argparse.Namespace, *, stream_results: bool = False) -> RunSpec:
    """The `RunSpec` of a command's parsed flags: the one place a run leaves argparse.
    Each flag whose destination is a `RunSpec` field sets it (a command without the flag
    leaves the default); `--allow-python` / `--python-path` give the python consent;
    `stream_results`: `--json out.json` streams each finished case to
    `out.results.jsonl` (`dagtui run`). Environment fallbacks: `RunSpec.from_env`."""
    from dagtui.report.stream import results_path

    given = vars(args)
    names = {f.name for f in dataclasses.fields(RunSpec)}
    settings = {k: v for k, v in given.items() if k in names}
    if stream_results and given.get("json_out"):
        settings["stream"] = str(results_path(given["json_out"]))
    return RunSpec.from_env(allow_python=bool(given.get("allow_python")),
                            python_path=given.get("python_path") or (),
                            results_on_disk=stream_results, **settings)
