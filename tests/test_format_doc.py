"""docs/format.md is the reference of every graph, case and suite key and every diagnostic code.

It is written by hand, so these tests keep it from going stale: a code added to the code base,
a node type, a node/metric/verdict/suite/rule key or a check kind that the document does not
mention fails here, naming what is missing. The README links to it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dagtui.diagnostics import CODES, severity_of
from dagtui.graph.model import CHECK_KINDS, NODE_CLASSES, NODE_TYPES, Metric, Verdict
from dagtui.run.cases import LABEL_FIELDS, MULTI_TURN_FIELDS, SINGLE_TURN_FIELDS
from dagtui.suite.codes import SUITE_CODES
from dagtui.suite.loader import FILTER_KEYS, RULE_KEYS, SAMPLE_KEYS, SUITE_KEYS
from dagtui.suite.model import FILTER_OPS, STATUSES

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "format.md"
TEXT = DOC.read_text(encoding="utf-8")
CODE_RE = re.compile(r"\b(?:DAG|SUI)\d{3}\b")


def _code_rows() -> dict[str, str]:
    """code -> severity, from the rows of the code table (`| DAG001 | error | ... |`)."""
    return dict(re.findall(r"^\| ((?:DAG|SUI)\d{3}) \| (\w+) \|", TEXT, re.MULTILINE))


def _source_codes() -> set[str]:
    """Every code written anywhere in the package (raised, tabled or documented)."""
    found: set[str] = set()
    for path in (ROOT / "dagtui").rglob("*.py"):
        found.update(CODE_RE.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_code_has_a_row_with_its_severity() -> None:
    rows = _code_rows()
    severities = {"error": "error", "warning": "warning", "info": "note"}
    missing = sorted((set(CODES) | set(SUITE_CODES) | _source_codes()) - set(rows))
    assert not missing, f"docs/format.md has no row for {missing}"
    wrong = {c: s for c, s in rows.items() if severities[severity_of(c).value] != s}
    assert not wrong, f"docs/format.md gives the wrong severity for {wrong}"


def test_no_row_for_a_code_that_does_not_exist() -> None:
    stale = sorted(set(_code_rows()) - set(CODES) - set(SUITE_CODES))
    assert not stale, f"docs/format.md documents codes the code base no longer has: {stale}"


def _keys() -> list[tuple[str, str]]:
    """(where, key) for every key a file may hold."""
    keys = [("node type", t) for t in NODE_TYPES]
    keys += [("check kind", k) for k in CHECK_KINDS]
    keys += [("[metric]", k) for k in Metric.toml_keys()]
    keys += [("verdict", k) for k in Verdict.toml_keys()]
    for ntype, cls in NODE_CLASSES.items():
        keys += [(f"{ntype} node", k) for k in cls.FIELDS]
    keys += [("case", k) for k in (*SINGLE_TURN_FIELDS, *MULTI_TURN_FIELDS, *LABEL_FIELDS)]
    keys += [("[suite]", k) for k in SUITE_KEYS]
    keys += [("rule", k) for k in RULE_KEYS]
    keys += [("sample", k) for k in SAMPLE_KEYS]
    keys += [("filter", k) for k in FILTER_KEYS]
    keys += [("filter op", k) for k in FILTER_OPS]
    keys += [("rule status", k) for k in STATUSES]
    return keys


@pytest.mark.parametrize(("where", "key"), _keys(), ids=lambda v: str(v))
def test_every_key_is_documented(where: str, key: str) -> None:
    assert f"`{key}`" in TEXT or f'"{key}"' in TEXT, (
        f"docs/format.md does not mention {where} `{key}`")


def test_every_node_type_has_its_section() -> None:
    missing = [t for t in NODE_TYPES if f'`type = "{t}"`' not in TEXT]
    assert not missing, f"docs/format.md has no section for node types {missing}"


def test_readme_links_the_reference() -> None:
    assert "docs/format.md" in (ROOT / "README.md").read_text(encoding="utf-8")
