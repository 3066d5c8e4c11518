"""Text for people: a verdict as words, a long text cut to fit, "did you mean", a count.

Messages, summaries, pictures and panes all show verdicts, cut long texts and suggest
spellings; doing each in one place keeps the wording the same wherever a user meets it (a
label quoted in one message and bare in the next reads like two different values).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any, Literal

#: the mark a cut text ends with: one character, so a cut text is exactly as wide as asked
ELLIPSIS = "…"
#: what stands for a line break when `shorten` puts a text on one line (`flat="mark"`)
NEWLINE_MARK = " ⏎ "


def counted(n: int, word: str, plural: str | None = None) -> str:
    """`1 case`, `2 cases`, `0 cases`: a count with its noun in the right number (`plural`
    for nouns that do not just take an `s`)."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def verdict_text(value: Any, *, quote: bool = False) -> str:
    """A verdict, label or answer as a person reads it: `true`/`false` as the TOML file writes
    them, a label as written. With `quote` a label is in quotes (`'Two swapped'`), as messages
    need where it sits among other words (`order='Two swapped' has no score`); drawings,
    trees and summaries show it bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if quote and isinstance(value, str):
        return repr(value)
    return str(value)


def shorten(text: str, width: int, *, flat: Literal["squash", "mark"] | None = None) -> str:
    """`text` cut to `width` characters, an ellipsis marking the cut (so boxes and columns
    keep their width). `flat` puts it on one line first: "squash" turns every run of white
    space into one space (and leaves none before the ellipsis), for labels and error
    messages; "mark" joins the lines with ` ⏎ `, so the reader still sees where they broke
    (evidence, reasons, matched text)."""
    if flat == "squash":
        text = " ".join(text.split())
    elif flat == "mark":
        text = NEWLINE_MARK.join(text.splitlines())
    if len(text) <= width:
        return text
    head = text[: width - 1]
    return (head.rstrip() if flat == "squash" else head) + ELLIPSIS


def suggest(word: str, options: Iterable[str], *, abbreviations: bool = False) -> str:
    """` (did you mean 'x'?)` when a close match exists, else empty: the one wording of every
    "did you mean" (keys, node ids, check kinds, flags, commands). With `abbreviations` the
    one option `word` is the start of wins first (`--con` for `--concurrency`), as a flag
    the user cut short should be named in full."""
    choices = list(options)
    starts = [o for o in choices if o.startswith(word)] if abbreviations else []
    if len(starts) == 1:
        return f" (did you mean '{starts[0]}'?)"
    match = closest(word, choices)
    return f" (did you mean '{match}'?)" if match else ""


def closest(word: str, options: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The option most like `word` when one is close enough to be a misspelling of it
    (difflib's ratio >= `cutoff`; 0.6 is what `suggest` asks), else None."""
    match = difflib.get_close_matches(word, list(options), n=1, cutoff=cutoff)
    return match[0] if match else None
