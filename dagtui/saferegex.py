"""Regular expressions from a graph file, matched with a bound they cannot escape.

Why: a graph's `regex` check and a JSON Schema's `pattern` / `patternProperties` are
written by whoever wrote the graph, and matched against what a model wrote. Python's `re`
backtracks, so a pattern with nested quantifiers takes exponential time on a text that
almost matches: `^(a+)+$` on "a" * 24 + "!" takes 2.6 s here, and each further character
doubles it, so the 35-character text of issue 21 would take about 1.5 hours; `--timeout`
bounds judge calls, not code, so `test` and `run` hung for good. RE2 (the `google-re2`
package) matches in time linear in the text: the same pattern on the same 35 characters
takes 40 microseconds.

How `search` matches:
- The pattern is first compiled by `re`, so the syntax and the error messages stay those of
  Python's `re` (docs/format.md documents `re.search`).
- RE2 runs it when it means the same there: `\\d`, `\\s` and `\\w` are rewritten to the
  Unicode classes Python gives them (RE2's are ASCII), `\\Z` to RE2's `\\z`; a pattern
  whose meaning still differs for this text (`\\b` on a text with non-ASCII letters, `$`
  on a text that ends with a newline, where Python's `$` also matches before it) is not
  given to RE2.
- What RE2 cannot run (backreferences, lookaround, the `x` flag, atomic groups, more than
  1,000 repetitions, such texts) runs under `re` in a worker process with a deadline
  (`DEADLINE` seconds of wall clock, and a CPU limit set by the kernel in the worker itself,
  so it ends even if dagtui is killed meanwhile). Past the deadline the worker is killed
  and `RegexTimeout` says why; the check's step fails with that message.

`nested_quantifier` finds the shape that backtracks (`(a+)+`, `(\\w*)*`, `(a|b+){2,}`), for
`validate`'s warning DAG117.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess

#: seconds a pattern may run in the worker before the step fails
DEADLINE = 2.0

#: the flag letters of a regex check, as `re` flags
FLAG_LETTERS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


class RegexError(ValueError):
    """The pattern cannot be matched: it does not compile, or it ran past the deadline."""


class RegexTimeout(RegexError):
    """The pattern was still running under `re` when the deadline passed."""


@dataclass(frozen=True)
class Found:
    """Where a pattern matched, and the text it matched."""

    start: int
    end: int
    text: str


def flags_of(letters: str) -> int:
    """`re` flags from a check's letters; RegexError naming a letter that is not one."""
    flags = 0
    for letter in letters.lower():
        if letter not in FLAG_LETTERS:
            raise RegexError(f"unknown regex flag {letter!r} (use i, m, s, x)")
        flags |= FLAG_LETTERS[letter]
    return flags


def search(pattern: str, text: str, flags: int = 0) -> Found | None:
    """`re.search(pattern, text, flags)`, in bounded time (see the module docstring)."""
    python_compile(pattern, flags)
    plan = _plan(pattern, flags)
    if plan.re2 is not None and _re2_fits(plan, text):
        try:
            match = plan.re2.search(text)
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 text holds it
            pass
        else:
            return None if match is None else Found(match.start(), match.end(), match.group(0))
    return _WORKER.search(pattern, text, flags)


@lru_cache(maxsize=256)
def python_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """The pattern under `re` (compiling does not backtrack); RegexError saying why not."""
    try:
        with warnings.catch_warnings():  # "possible nested set": a future meaning, not an error
            warnings.simplefilter("ignore", FutureWarning)
            return re.compile(pattern, flags)
    except (re.error, OverflowError, ValueError, RecursionError) as exc:
        raise RegexError(f"bad pattern: {exc}") from None


# --------------------------------------------------------------------------- RE2 routing

#: Python's classes for str patterns, as RE2 Unicode classes (RE2's own are ASCII): \d is
#: category Nd, \w is what str.isalnum() takes (letters and numbers) plus "_", \s is what
#: str.isspace() takes
_DIGIT = r"\p{Nd}"
_WORD = r"\p{L}\p{N}_"
_SPACE = (r"\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}"
          r"\x{202f}\x{205f}\x{3000}")
_IN_CLASS = {"d": _DIGIT, "w": _WORD, "s": _SPACE}
_OUTSIDE = {"d": _DIGIT, "D": r"\P{Nd}", "w": f"[{_WORD}]", "W": f"[^{_WORD}]",
            "s": f"[{_SPACE}]", "S": f"[^{_SPACE}]", "Z": r"\z"}


@dataclass(frozen=True)
class _Plan:
    """How a pattern is matched: `re2` (None: only in the worker), and what about a text
    would make RE2's answer differ from Python's."""

    re2: Any
    word_boundary: bool  # \b or \B: RE2's are ASCII
    dollar: bool  # $ outside a class: Python's also matches before a final newline


def _re2_fits(plan: _Plan, text: str) -> bool:
    if plan.dollar and text.endswith("\n"):
        return False
    return not (plan.word_boundary and not text.isascii())


@lru_cache(maxsize=256)
def _plan(pattern: str, flags: int) -> _Plan:
    translated = _translate(pattern) if not flags & re.VERBOSE else None
    compiled = _re2_compile(translated[0], flags) if translated is not None else None
    if translated is None or compiled is None:
        return _Plan(None, False, False)
    return _Plan(compiled, *translated[1:])


def _re2_compile(pattern: str, flags: int) -> Any:
    try:
        import re2
    except ImportError:  # pragma: no cover - a dependency; without it every pattern is bounded
        return None
    options = re2.Options()
    options.log_errors = False  # its refusals are expected: the worker takes those patterns
    inline = "".join(letter for letter, bit in (("m", re.MULTILINE), ("s", re.DOTALL))
                     if flags & bit)
    if flags & re.IGNORECASE:
        options.case_sensitive = False
    try:
        return re2.compile(f"(?{inline}){pattern}" if inline else pattern, options)
    except re2.error:
        return None


def _translate(pattern: str) -> tuple[str, bool, bool] | None:
    """`pattern` in RE2's syntax with Python's meaning, and whether it has \\b/\\B and `$`;
    None when a construct means something else in RE2 and cannot be rewritten (`{,n}`,
    `[[:alpha:]]`, `\\W` inside a class, an inline `x` flag)."""
    out: list[str] = []
    boundary = dollar = False
    in_class = False
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if in_class and nxt in _IN_CLASS:
                out.append(_IN_CLASS[nxt])
            elif in_class and nxt in "DWSbB":
                return None  # a negated class or a backspace inside a set
            elif not in_class and nxt in _OUTSIDE:
                out.append(_OUTSIDE[nxt])
            else:
                boundary = boundary or (not in_class and nxt in "bB")
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if ch == "[" and pattern.startswith((":", ".", "="), i + 1):
                return None  # POSIX classes in RE2, plain characters in Python
            if ch == "]":
                in_class = False
            out.append(ch)
            i += 1
            continue
        if ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):  # a leading ] is a character in both
                out.append(r"\]")
                i += 1
            continue
        if ch == "{" and pattern.startswith(",", i + 1):
            return None  # {,n} is 0..n in Python, a literal in RE2
        if ch == "(" and pattern.startswith("?", i + 1):
            flags = re.match(r"\(\?([a-zA-Z]*)(?:-[a-zA-Z]*)?[:)]", pattern[i:])
            if flags and "x" in flags.group(0):
                return None
        dollar = dollar or ch == "$"
        out.append(ch)
        i += 1
    return "".join(out), boundary, dollar


# --------------------------------------------------------------------------- the worker

#: the worker's program: one JSON request a line, one JSON answer a line; before each
#: search it lets the kernel end it after `deadline` more seconds of CPU
_WORKER_CODE = r"""
import json, re, resource, sys
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the CPU limit's signal dumps no core
for line in sys.stdin:
    req = json.loads(line)
    used = resource.getrusage(resource.RUSAGE_SELF)
    limit = int(used.ru_utime + used.ru_stime + req["d"]) + 2
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard == resource.RLIM_INFINITY or limit <= hard:
        resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))
    try:
        m = re.search(req["p"], req["t"], req["f"])
        out = {"m": None if m is None else [m.start(), m.end()]}
    except Exception as exc:
        out = {"e": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
"""


class _Worker:
    """One `python -I` process matching with `re`, started on first use, killed and
    replaced when a search passes the deadline. Searches take turns (a lock)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner = os.getpid()  # a forked child must not share its parent's worker
        self._lock = threading.Lock()

    def search(self, pattern: str, text: str, flags: int) -> Found | None:
        request = json.dumps({"p": pattern, "t": text, "f": flags, "d": DEADLINE}) + "\n"
        with self._lock:
            proc = self._start()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(request.encode("ascii"))
                proc.stdin.flush()
                line = self._answer(proc, time.monotonic() + DEADLINE)
            except OSError:
                line = None
            if line is None:
                self.stop()
                raise RegexTimeout(
                    f"pattern /{pattern}/ was still matching a {len(text):,}-character text "
                    f"after {DEADLINE:g} s, so it was stopped: it backtracks (nested "
                    "quantifiers such as (a+)+ take exponential time), and RE2, which would "
                    "not, cannot run it (backreferences, lookaround or the x flag)")
        answer = json.loads(line)
        if "e" in answer:
            raise RegexError(f"pattern /{pattern}/ failed: {answer['e']}")
        if answer["m"] is None:
            return None
        start, end = answer["m"]
        return Found(start, end, text[start:end])

    def _start(self) -> subprocess.Popen[bytes]:
        if self._owner != os.getpid():
            self._proc, self._owner = None, os.getpid()
        if self._proc is None or self._proc.poll() is not None:
            import subprocess  # only when a pattern needs the worker

            # -I: neither the working directory nor PYTHON* variables reach the worker
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-c", _WORKER_CODE], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return self._proc

    @staticmethod
    def _answer(proc: subprocess.Popen[bytes], deadline: float) -> bytes | None:
        """The worker's answer line, or None if it has not come by `deadline`."""
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        chunks: list[bytes] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None  # it died (the kernel's CPU limit)
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                return b"".join(chunks)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and self._owner == os.getpid() and proc.poll() is None:
            proc.kill()
            proc.wait()


_WORKER = _Worker()
atexit.register(_WORKER.stop)


# --------------------------------------------------------------------------- the warning

def nested_quantifier(pattern: str) -> str | None:
    """The first group that is repeated and holds a repeated part (`(a+)+`, `(a|b*){2,}`),
    as written in the pattern; None when there is none. Such a group makes a backtracking
    engine try exponentially many ways to split a text that almost matches."""
    stack: list[tuple[int, bool]] = []  # (where the group opens, holds a quantifier)
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
            i += 1
            continue
        if ch == "[":
            in_class = True
            i += 2 if pattern.startswith("]", i + 1) or pattern.startswith("^]", i + 1) else 1
            continue
        if ch == "(":
            stack.append((i, False))
        elif ch == ")" and stack:
            start, inner = stack.pop()
            repeated = _repeats(pattern, i + 1, exact=True)
            if inner and repeated:
                return pattern[start:i + 1] + pattern[i + 1:i + 1 + repeated]
            if (inner or repeated) and stack:
                stack[-1] = (stack[-1][0], True)
        elif ch in "*+{" and _repeats(pattern, i) and stack:
            stack[-1] = (stack[-1][0], True)
        i += 1
    return None


def _repeats(pattern: str, i: int, exact: bool = False) -> int:
    """The length of a quantifier at `i` that can repeat a part a varying number of times
    (`*`, `+`, `{2,}`, `{3,9}`, with a `?` or `+` after it), else 0; with `exact`, `{3}`
    counts too (a group repeated three times over a varying part still backtracks, where
    an exact count inside a group does not). `?` and `{1}` never count."""
    if pattern.startswith(("*", "+"), i):
        size = 1
    else:
        m = re.match(r"\{(\d*)(,(\d*))?\}", pattern[i:])
        if m is None or (m.group(2) is None and (not exact or m.group(1) in ("", "0", "1"))):
            return 0
        if m.group(2) is not None and m.group(3) and int(m.group(3)) <= 1:
            return 0
        size = len(m.group(0))
    return size + (1 if pattern.startswith(("?", "+"), i + size) else 0)
