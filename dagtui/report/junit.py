"""The one JUnit XML writer, for graph runs and suite runs alike.

A run gives its items as `JUnitCase`s grouped in `JUnitSuite`s (a graph run: one suite, a
case each; a suite run: a suite per rule, a (rule, case) pair each), with each suite's
counts known up front, so the header is written before the first case and a run of many
cases is written one case at a time, never held as one tree (`dagtui run` streams its
results from disk: `dagtui.report.stream.ResultLog`).

The mapping from a status (`dagtui.report.outcome.Status`) to JUnit is fixed here: a
failing item is a `<failure>`, a judge error an `<error>` (its `type` the error's kind),
an item never judged (the judge halted, or a suite's gate stopped it) `<skipped>`, and a
passing one carries what it did as `<system-out>`. Text is escaped for XML and made
writable (`dagtui.report.outputs.safe_text`: no NUL, escape byte or lone surrogate), so the
document is well-formed whatever the cases held.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

from dagtui.report.outcome import Counts

#: status -> the JUnit element an item with it gets (a pass gets `<system-out>`)
ELEMENTS = {"fail": "failure", "error": "error", "not_run": "skipped", "skipped": "skipped",
            "pass": "system-out"}


@dataclass
class JUnitCase:
    """One `<testcase>`: a graph run's case, or a suite run's (rule, case) pair."""

    classname: str
    name: str
    status: str
    #: the failure's, error's or skip's one line (the `message` attribute)
    message: str = ""
    #: the element's text: the path a verdict took, the judge's reason
    text: str = ""
    #: a judge error's kind (429, auth, ...), its `type`
    kind: str | None = None
    #: seconds; None leaves `time` out (an item never judged took none)
    time: float | None = None


@dataclass
class JUnitSuite:
    """One `<testsuite>`: its counts (known before its cases are read) and its cases."""

    name: str
    counts: Counts
    cases: Iterable[JUnitCase]
    time: float | None = None
    #: (name, value) pairs written as `<properties>`; a value of None is left out
    properties: list[tuple[str, object]] = field(default_factory=list)


@dataclass
class JUnitDocument:
    """A whole JUnit file: `<testsuites>` named after the graph or suite, and its suites."""

    name: str
    suites: list[JUnitSuite]
    time: float | None = None


def junit_parts(doc: JUnitDocument) -> Iterator[str]:
    """The JUnit document in pieces (one per case), for writing without building it."""
    from dagtui.report.outputs import safe_text

    total = Counts()
    for suite in doc.suites:
        for status, n in (("pass", suite.counts.passed), ("fail", suite.counts.failed),
                          ("error", suite.counts.errors), ("not_run", suite.counts.not_run),
                          ("skipped", suite.counts.skipped)):
            total.add(status, n)
    yield safe_text('<?xml version="1.0" encoding="UTF-8"?>\n'
                    f"<testsuites name={quoteattr(doc.name)} {_counts(total, doc.time)}>\n")
    for suite in doc.suites:
        yield safe_text(f"  <testsuite name={quoteattr(suite.name)} "
                        f"{_counts(suite.counts, suite.time)}>\n")
        props = [(k, v) for k, v in suite.properties if v is not None]
        if props:
            yield safe_text("    <properties>\n" + "".join(
                f"      <property name={quoteattr(k)} value={quoteattr(str(v))}/>\n"
                for k, v in props) + "    </properties>\n")
        for case in suite.cases:
            yield safe_text(_case(case))
        yield "  </testsuite>\n"
    yield "</testsuites>\n"


def junit_text(doc: JUnitDocument) -> str:
    """The whole JUnit document as one string."""
    return "".join(junit_parts(doc))


def _counts(counts: Counts, time: float | None) -> str:
    skipped = counts.not_run + counts.skipped
    return (f'tests="{counts.items}" failures="{counts.failed}" errors="{counts.errors}" '
            f'skipped="{skipped}"' + ("" if time is None else f' time="{time:.3f}"'))


def _case(case: JUnitCase) -> str:
    """One `<testcase>` and what it holds (nothing: an empty element)."""
    time = "" if case.time is None else f' time="{case.time:.3f}"'
    head = (f"    <testcase classname={quoteattr(case.classname)} "
            f"name={quoteattr(case.name)}{time}")
    element = ELEMENTS[case.status]
    if element == "system-out":
        inner = f"<system-out>{escape(case.text)}</system-out>" if case.text else ""
    elif element == "skipped":
        inner = f"<skipped message={quoteattr(case.message)}/>"
    else:
        kind = f" type={quoteattr(case.kind or 'other')}" if element == "error" else ""
        body = f">{escape(case.text)}</{element}>" if case.text else "/>"
        inner = f"<{element}{kind} message={quoteattr(case.message)}{body}"
    return f"{head}>\n      {inner}\n    </testcase>\n" if inner else f"{head}/>\n"
