"""Text for people: a verdict as words, a long text cut to fit, "did you mean", a count,
and text made safe for a terminal.

Messages, summaries, pictures and panes all show verdicts, cut long texts and suggest
spellings; doing each in one place keeps the wording the same wherever a user meets it (a
label quoted in one message and bare in the next reads like two different values).

Every text the CLI prints may come from a file (a metric or node name, a label, a case
name), a flag (`--model`) or a judge (a reason, an error body). Printed raw, an ESC, OSC or
BEL sequence in it can recolour, clear or retitle the terminal, a U+202E reorders what
follows, and a U+200B makes two different names look the same. `say` is the one way the
commands print such text: it writes `for_terminal(text)`, where every such character is its
visible escape (`\x1b`, `\u202e`); a rich console gets `for_markup(text)`, which also
escapes rich's `[markup]`.

Text written into a report (JSON, JUnit XML, Markdown) follows another rule, kept in
dagtui/report/outputs.py (`safe_text`, `safe_json`): it must be valid UTF-8 and XML, so it escapes
what those cannot hold and leaves bidi and zero-width characters as written. A report is
data; a terminal is where text is shown, and shown text goes through `say`.
"""

from __future__ import annotations

import difflib
import re
import sys
import unicodedata
from collections.abc import Iterable
from typing import Any, Literal, TextIO

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


#: characters that are invisible or move the cursor, but are not control characters (Cc):
#: zero-width space/joiners, the byte-order mark, bidi embeddings/overrides/isolates, and
#: the line/paragraph separators
_INVISIBLE = frozenset(
    "\u200b\u200c\u200d\u200e\u200f\ufeff\u2028\u2029"
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
#: what a terminal may get raw from a multi-line text: its line breaks and tabs
TERMINAL_KEEP = "\n\t"


def is_unsafe_char(ch: str) -> bool:
    """A character that must never reach a terminal raw: a control character (it can move
    the cursor, clear the screen or retitle the window), or one that is invisible or
    reorders text (two different ids would print the same), or a lone surrogate (JSON's
    `"\\udc80"`: no UTF-8 stream can carry it, so printing it raw crashes)."""
    return ch in _INVISIBLE or unicodedata.category(ch) in ("Cc", "Cf", "Cs")


def visible_escape(ch: str) -> str:
    """`ch` written as its Python escape (`\\x1b`, `\\n`, `\\u202e`, `\\udc80`): how a
    character that must not be shown raw is shown, on a terminal (`escape_controls`) and in
    a report (`dagtui.report.outputs.safe_text`) alike."""
    return repr(ch)[1:-1]


_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """`text` with each lone surrogate written as the visible text `\\udc80`: what a prompt
    sends the judge (no HTTP client can encode the character itself), all else unchanged."""
    return _SURROGATE.sub(lambda m: visible_escape(m.group()), text)


def escape_controls(text: str, keep: str = "") -> str:
    """`text` with every unsafe character written as its Python escape (`\\x1b`, `\\n`,
    `\\u202e`), so a file's contents quoted in a message cannot drive the terminal; the
    characters in `keep` (say the newlines of a multi-line report) pass as they are."""
    probe = text
    for ch in keep:
        probe = probe.replace(ch, "")
    if probe.isprintable():  # the common case: nothing to do (every unsafe one is not)
        return text
    return "".join(
        visible_escape(ch) if is_unsafe_char(ch) and ch not in keep else ch for ch in text
    )


def for_terminal(text: object) -> str:
    """`text` as it may reach a terminal: lines and tabs kept, every other control, every
    invisible or bidi character and every lone surrogate escaped (see the module doc)."""
    return escape_controls(str(text), keep=TERMINAL_KEEP)


def for_markup(text: object) -> str:
    """`for_terminal(text)` for a rich console or a rich progress description, whose
    `[...]` would otherwise be read as markup (`[red]`, `[link=...]`)."""
    from rich.markup import escape

    return escape(for_terminal(text))


def say(*parts: object, file: TextIO | None = None, sep: str = " ", end: str = "\n",
        flush: bool = False, one_line: bool = False) -> None:
    """`print`, through `for_terminal`: the one way the commands print text that came from
    a file, a flag or a judge (summaries, progress lines, errors). `file` defaults to the
    standard output of the moment (so tests capturing it see the text). `one_line` escapes
    line breaks and tabs too (`escape_controls`): a log line or a message quoting a path or
    a URL, which a newline in that path must not split into two."""
    out = sys.stdout if file is None else file
    text = sep.join(str(p) for p in parts)
    out.write((escape_controls(text) if one_line else for_terminal(text)) + end)
    if flush:
        out.flush()
