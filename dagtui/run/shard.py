"""`--shard I/N`: one of N disjoint parts of a dataset, for a CI matrix.

A case belongs to shard `hash(name) mod N`: the split depends only on the case's name, never
on its position, so adding, removing or reordering cases moves only those cases between
shards and every machine of the matrix agrees on the split without talking to the others.
The hash is SHA-256 (not Python's `hash`, which is salted per process). `dagtui merge`
(`dagtui.report.merge`) puts the shards' JSON reports back together.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, name: str) -> bool:
        """True when the case called `name` belongs to this shard."""
        return shard_of(name, self.count) == self.index - 1

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "count": self.count}


def parse_shard(text: str) -> Shard:
    """`I/N` with 1 <= I <= N; ValueError naming what is wrong otherwise."""
    left, sep, right = str(text).partition("/")
    try:
        index, count = int(left), int(right)
    except ValueError:
        index = count = 0
    if not sep or count < 1 or not 1 <= index <= count:
        raise ValueError(f"must be I/N with 1 <= I <= N (e.g. 1/4), got {text!r}")
    return Shard(index, count)


def shard_of(name: str, count: int) -> int:
    """0-based shard of a case name among `count` shards."""
    digest = hashlib.sha256(str(name).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count


def select(items: Iterable[T], shard: Shard | None, name: Any = None) -> Iterator[T]:
    """The items of `shard` (every item when None); `name(item)` gives an item's case name
    (default: its `name` attribute). Lazy, so a streamed dataset stays streamed."""
    if shard is None:
        yield from items
        return
    get = name or (lambda item: getattr(item, "name", ""))
    for item in items:
        if shard.holds(get(item)):
            yield item
