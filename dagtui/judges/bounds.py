"""How much of a judge's answer dagtui reads, and what it does to what it read.

A judge is a remote server dagtui does not control. Unbounded, one answer of 100 MB cost
3.3 GB of memory for one case, a 2 MB gzip bomb 10.7 GB, a 20 MB reason 1.7 GB and 36 s of
parsing and printing, and a 50 MB error body 43 s per error. So every answer is bounded
twice, whatever client carried it:

- on the wire (`dagtui.judges.transport.BoundedTransport`, an httpx transport any httpx-based
  client can be given): at most `MAX_BODY_BYTES` of a successful response body, counted after
  decompression, and `MAX_ERROR_BODY_BYTES` of an error body (cut there: its status already
  says what went wrong, and the message is cut to one line anyway);
- as text (`received`, `check_parsed`): at most `MAX_ANSWER_CHARS` of message content, and
  after parsing `MAX_REASON_CHARS` of reason and `MAX_EVIDENCE_CHARS` of a task's evidence.

Past a cap the step fails with `AnswerTooLarge` (error kind `too_large`, "answer too large:
..."), which is not retried: asking again costs as much and answers as long. `received` is
also where an answer is redacted (`dagtui.redact`), so a key a judge echoes never reaches a
report, a trace or the cache. Both functions take plain text, so any route to a model (the
litellm judge, a direct OpenAI-compatible client) applies the same rules by calling them.

Why these numbers: a judge's answer is one small JSON object (a reason and a verdict, a
score, or a task's extracted text). The largest output a current model writes in one turn is
about 128k tokens, roughly 500 kB of text, so 1 MB of content never refuses a real answer.
A body also carries the JSON envelope and, for a G-Eval score, five alternatives per token
(about 600 bytes a token), hence 8 MiB on the wire. Reasons are read by people (a few
sentences; 20,000 characters is some 5,000 tokens); evidence is handed on in the prompts of
the node's children, so 200,000 characters (about 50k tokens) keeps those prompts within
any model's context. Error bodies are a line of JSON; 64 KiB keeps even a verbose gateway's
page intact.
"""

from __future__ import annotations

from dagtui.judges.base import ErrorKind, JudgeError
from dagtui.judges.prompts import Parsed, Prompt, parse_answer
from dagtui.redact import redact

#: a successful response body, in bytes after decompression (JSON envelope and logprobs too)
MAX_BODY_BYTES = 8 * 1024 * 1024
#: an error response body, in bytes after decompression: read up to here, the rest dropped
MAX_ERROR_BODY_BYTES = 64 * 1024
#: the message content of one answer, in characters
MAX_ANSWER_CHARS = 1_000_000
#: an answer's reason, in characters (after parsing)
MAX_REASON_CHARS = 20_000
#: a task node's evidence (its output), in characters (after parsing)
MAX_EVIDENCE_CHARS = 200_000
#: the error kind of an answer past a cap
TOO_LARGE = ErrorKind.TOO_LARGE.value


class AnswerTooLarge(JudgeError):
    """An answer past one of the caps; the message starts "answer too large"."""

    def __init__(self, what: str) -> None:
        super().__init__(TOO_LARGE, f"answer too large: {what}")


def _size(n: int, unit: str) -> str:
    if unit == "bytes" and n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MiB"
    if unit == "bytes" and n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n:,} {unit}"


def body_too_large(limit: int = MAX_BODY_BYTES) -> AnswerTooLarge:
    """The error for a response body past `limit` bytes (after decompression)."""
    return AnswerTooLarge(f"the response body is over {_size(limit, 'bytes')} "
                          "(after decompression); dagtui stopped reading it")


def received(raw: str | None) -> str | None:
    """A judge's answer text as dagtui keeps it: refused past `MAX_ANSWER_CHARS`, and with
    every known secret masked. Every answer passes here where it enters dagtui (a fresh
    answer and a cached one alike), so reports, traces and the cache never see a key."""
    if raw is None:
        return None
    if len(raw) > MAX_ANSWER_CHARS:
        raise AnswerTooLarge(f"{len(raw):,} characters of text (at most "
                             f"{MAX_ANSWER_CHARS:,})")
    return redact(raw)


def check_parsed(prompt: Prompt, parsed: Parsed) -> Parsed:
    """`parsed` when its reason and (for a task) its evidence are within the caps; raises
    `AnswerTooLarge` otherwise."""
    if len(parsed.reason) > MAX_REASON_CHARS:
        raise AnswerTooLarge(f"a reason of {len(parsed.reason):,} characters (at most "
                             f"{MAX_REASON_CHARS:,})")
    value = parsed.value
    if prompt.answer.evidence and isinstance(value, str) and len(value) > MAX_EVIDENCE_CHARS:
        raise AnswerTooLarge(f"evidence of {len(value):,} characters (at most "
                             f"{MAX_EVIDENCE_CHARS:,})")
    return parsed


def parse_bounded(prompt: Prompt, raw: str) -> Parsed:
    """`prompts.parse_answer` within the caps: AnswerError for an unusable answer (a
    corrective turn may fix it), AnswerTooLarge for one past a cap (none will)."""
    return check_parsed(prompt, parse_answer(prompt, raw))
