"""A cases file read lazily: `dagtui run` over a dataset of any size with flat memory.

`load_cases` returns every case in a list, which is what a debugger or a test wants. A run over
a 100,000-line JSONL dataset must not hold every case at once, so `CaseStream` reads the file
again on each pass instead, one line at a time:

1. `check()` — before the first judge call, one pass parses and shape-checks every line and
   checks the names are unique, with the errors (and their order) `load_cases` gives: a byte
   that is not UTF-8 anywhere in the file first, then the first bad line, then the first
   repeated name. It also counts the cases (the progress line's total) and, with a shard,
   records the positions of the shard's cases. Names are checked through their hashes (8
   bytes a case); only a repeated hash is looked up again by name.
2. `iter()` — each later pass (the missing-field preflight, the run) yields the cases one
   by one, so only the cases in flight are in memory.

Only `.jsonl` files stream; a JSON or TOML cases file is one document, parsed whole, and
held as `load_cases` holds it.
"""

from __future__ import annotations

import os
from array import array
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from dagtui.inputs import CASES_LIMIT, InputError, decode, open_checked
from dagtui.run.cases import Case, CaseError, jsonl_case, load_cases, misspelt_fields

#: how many misspelt-field warnings `check()` keeps (a dataset of 100,000 cases with one
#: typo throughout needs a few lines, not 100,000)
MISSPELT_KEPT = 20


class CaseStream:
    """The cases of one file (of one `--shard` when `shard` is given), read per pass.

    Iterating yields `Case`s in file order; `len()` is the number of cases (the shard's),
    counted by `check()`, which every use should call first: it raises `CaseError` on any
    bad line before anything runs."""

    def __init__(self, path: str | os.PathLike[str], *, shard: Any = None) -> None:
        self.path = Path(path)
        self.file = os.fspath(path)
        self.shard = shard
        #: every case in the file (before sharding); set by `check()`
        self.total: int | None = None
        #: with a shard: the 0-based positions of its cases in the file
        self.positions: list[int] | None = None
        #: a JSON or TOML file's cases, parsed whole (None for a streamed JSONL file)
        self._held: list[Case] | None = None
        self._count: int | None = None
        #: (field, warning) of the first fields that look misspelt (`misspelt_fields`),
        #: found by `check()`'s pass, so warning about them costs no read of its own
        self.misspelt: list[tuple[str, str]] = []

    @property
    def streamed(self) -> bool:
        return self.path.suffix.lower() == ".jsonl"

    def check(self) -> int:
        """Read every case once (see the module doc): their number, the shard's when
        sharded. Raises `CaseError` naming the file and line of the first problem."""
        if self._count is not None:
            return self._count
        hashes = array("q")
        positions: list[int] = []
        first_error: CaseError | None = None
        for position, case in enumerate(self._all(errors=True)):
            if isinstance(case, CaseError):
                first_error = first_error or case
                continue
            if first_error is None:
                if len(self.misspelt) < MISSPELT_KEPT:
                    self.misspelt.extend(misspelt_fields(case))
                hashes.append(hash(case.name))
                if self.shard is not None and self.shard.holds(case.name):
                    positions.append(position)
        if first_error is not None:
            raise first_error
        if self.streamed:
            self._check_unique(hashes)
        self.total = len(hashes)
        if self.shard is not None:
            self.positions = positions
        self._count = len(positions) if self.shard is not None else self.total
        return self._count

    def __len__(self) -> int:
        return self.check()

    def __iter__(self) -> Iterator[Case]:
        for case in self._all(errors=False):
            assert isinstance(case, Case)
            if self.shard is None or self.shard.holds(case.name):
                yield case

    # ------------------------------------------------------------------ reading

    def _all(self, *, errors: bool) -> Iterator[Case | CaseError]:
        """Every case of the file. With `errors`, a bad line is yielded as its CaseError
        and reading goes on (a later byte that is not UTF-8 is still raised, as reading the
        whole file first would find it); else it is raised."""
        if not self.streamed:
            if self._held is None:
                self._held = load_cases(self.path)
            yield from self._held
            return
        index = 0
        for lineno, line in self._lines():
            try:
                case = jsonl_case(line, lineno, index, self.file)
            except CaseError as exc:
                if not errors:
                    raise
                yield exc
                continue
            if case is not None:
                index += 1
                yield case

    def _lines(self) -> Iterator[tuple[int, str]]:
        """(line number, text) of each line, numbered as `str.splitlines` numbers the
        whole text; a byte that is not UTF-8 is a CaseError naming its line and offset."""
        lineno = 0
        offset = 0
        with self._open() as fh:
            for newline_count, raw in enumerate(fh):
                try:
                    text = decode(raw, self.file, "cases file", offset=offset,
                                  line=newline_count + 1)
                except InputError as exc:
                    raise CaseError(exc.message, self.file, exc.line) from None
                offset += len(raw)
                for part in text.splitlines():
                    lineno += 1
                    yield lineno, part

    def _open(self) -> IO[bytes]:
        """The file opened for reading, refused as `load_cases` refuses it (missing, not a
        regular file, over the size limit) without reading a byte."""
        try:
            fd, _ = open_checked(self.file, limit=CASES_LIMIT, what="cases file")
        except InputError as exc:
            message = "no such cases file" if exc.kind == "missing" else exc.message
            raise CaseError(message, self.file, exc.line) from None
        return os.fdopen(fd, "rb")

    def _check_unique(self, hashes: array) -> None:
        """A CaseError for the first repeated name, as `load_cases` words it."""
        repeated = _repeated(hashes)
        if not repeated:
            return
        seen: dict[str, Case] = {}
        for case in self._all(errors=False):
            assert isinstance(case, Case)
            if hash(case.name) not in repeated:
                continue
            if case.name in seen:
                raise CaseError(f"duplicate case name {case.name!r} (first at line "
                                f"{seen[case.name].line})", case.file, case.line)
            seen[case.name] = case

    def sharded(self, shard: Any) -> CaseStream:
        """The cases of `shard` of this file, checked (`positions` set)."""
        part = CaseStream(self.path, shard=shard)
        part._held = self._held
        part.check()
        return part


def open_cases(path: str | os.PathLike[str]) -> CaseStream:
    """The cases file at `path`, checked and ready to stream (see `CaseStream`)."""
    cases = CaseStream(path)
    cases.check()
    return cases


def _repeated(hashes: array) -> set[int]:
    """The values met more than once among `hashes`, in fixed memory: a bitmap of 2**23 bits
    (1 MiB) marks the values seen, so a value whose bit is already set is a candidate (a
    repeat, or for 100,000 names a few hundred bit collisions); counting the candidates
    over the array again keeps the true repeats. (Sorting would copy every hash into a
    list of Python ints: 4 MB per 100,000 cases.)"""
    seen = bytearray(1 << 20)
    maybe: set[int] = set()
    for h in hashes:
        bit = h & 0x7FFFFF
        if seen[bit >> 3] & (1 << (bit & 7)):
            maybe.add(h)
        else:
            seen[bit >> 3] |= 1 << (bit & 7)
    if not maybe:
        return set()
    counts = Counter(h for h in hashes if h in maybe)
    return {h for h, n in counts.items() if n > 1}
