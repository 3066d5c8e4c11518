"""Criteria that read like something code could check (DAG109): the patterns and the
check to write instead."""

from __future__ import annotations

import re

# criteria that a deterministic check could settle (DAG109): pattern -> (kind, hint)
_NUMBER = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|hundred)"
_CHECKABLE: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"\bjson\s+schema\b", re.I), "json_schema",
     'check = "json_schema" (schema inline or in a file)'),
    (re.compile(r"\b(valid|well[- ]formed|parse(s|able)?(\s+as)?|proper|is)\s+json\b|"
                r"\bjson\b[^.?!]{0,30}\b(valid|parses?)\b", re.I),
     "json", 'check = "json" (does it parse)'),
    (re.compile(rf"\b(at\s+most|no\s+more\s+than|fewer\s+than|less\s+than|under|at\s+least|"
                rf"more\s+than|no\s+fewer\s+than|maximum\s+of|minimum\s+of|exceeds?|"
                rf"longer\s+than|shorter\s+than)\s+{_NUMBER}\s+"
                rf"(sentences?|words?|characters?|chars?)\b", re.I),
     "length", 'check = "length" (unit, min, max)'),
    (re.compile(r"\b(contains?|includes?|mentions?)\s+(the\s+(exact\s+)?(word|phrase|string|"
                r"text|keyword|term)\s+)?[\"'\u201c\u2018][^\"'\u201d\u2019]{1,60}"
                r"[\"'\u201d\u2019]", re.I),
     "contains", 'check = "contains" (values = [...])'),
    (re.compile(r"\b(regex|regular\s+expression|matches\s+the\s+pattern|"
                r"(starts?|begins?|ends?)\s+with\s+[\"'\u201c\u2018]|iso[- ]?8601|"
                r"valid\s+email\s+address|valid\s+url)\b", re.I),
     "regex", 'check = "regex" (a pattern)'),
)


def checkable_hint(criteria: str) -> tuple[str, str] | None:
    """(check kind, how to write it) when `criteria` reads like something code can check."""
    for pattern, kind, hint in _CHECKABLE:
        if pattern.search(criteria):
            return kind, hint
    return None
