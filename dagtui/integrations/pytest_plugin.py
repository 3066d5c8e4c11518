"""The pytest plugin: a `dagtui_graph` fixture and three options, nothing else.

Installed with dagtui (entry point `pytest11`), so it loads in every pytest run of an
environment that has dagtui; it therefore does nothing unless a test asks for the fixture:
no hooks, no collection changes, no imports of dagtui's engine until first use.

    def test_summary(dagtui_graph):
        meeting = dagtui_graph("graphs/meeting_summary.toml")      # relative to this test file
        meeting.check({"name": "weekly", "actual_output": text})  # fails explaining the path
        meeting.check(bad_case, passes=False)

Options (for CI, so the same tests can run on another judge or endpoint):
`--dagtui-model M` (else `DAGTUI_MODEL`, else the graph's model), `--dagtui-api-base URL`,
`--dagtui-no-cache`. A failure's message is `dagtui.testing.assert_graph`'s: score and
threshold, the path, each node's verdict and reason, and the trace file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from dagtui.api import LoadedGraph
    from dagtui.report.trace import RunResult


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dagtui", "dagtui decision graphs (the dagtui_graph fixture)")
    group.addoption("--dagtui-model", default=None, metavar="MODEL",
                    help="judge model for dagtui_graph checks (default: DAGTUI_MODEL, else "
                    "the graph's [metric] model); 'labels' answers from the case labels")
    group.addoption("--dagtui-api-base", default=None, metavar="URL",
                    help="judge endpoint for dagtui_graph checks")
    group.addoption("--dagtui-no-cache", action="store_true", default=False,
                    help="dagtui_graph checks neither read nor write the judge-answer cache")


class GraphUnderTest:
    """A graph file bound to the session's judge settings: `check` asserts on one case."""

    def __init__(self, graph: LoadedGraph, defaults: dict[str, Any]) -> None:
        self.graph = graph
        self._defaults = defaults

    def check(self, case: Any, **options: Any) -> RunResult:
        """`dagtui.testing.assert_graph` with the session's judge, endpoint and cache
        settings as defaults (`options` override them)."""
        __tracebackhide__ = True
        from dagtui.testing import assert_graph

        return assert_graph(self.graph, case, **{**self._defaults, **options})

    async def a_check(self, case: Any, **options: Any) -> RunResult:
        """`check` for async tests."""
        __tracebackhide__ = True
        from dagtui.testing import a_assert_graph

        return await a_assert_graph(self.graph, case, **{**self._defaults, **options})

    def __repr__(self) -> str:
        return f"<dagtui graph under test {self.graph.path}>"


@pytest.fixture
def dagtui_graph(request: pytest.FixtureRequest) -> Any:
    """A factory: `dagtui_graph("graph.toml", judge=..., allow_python=...)` loads and
    validates the graph (a relative path is looked up beside the test file first, then in
    the current directory) and returns an object whose `check(case)` asserts on a case."""
    config = request.config
    defaults: dict[str, Any] = {}
    model = config.getoption("--dagtui-model")
    if model:
        defaults["judge"] = model
    api_base = config.getoption("--dagtui-api-base")
    if api_base and model != "labels":
        defaults["api_base"] = api_base
    if config.getoption("--dagtui-no-cache") and model != "labels":
        defaults["cache"] = False
    here = Path(str(request.path)).parent

    def make(graph: str | os.PathLike[str], *, allow_python: bool = False,
             **options: Any) -> GraphUnderTest:
        from dagtui.integrations.common import load_graph

        path = Path(graph)
        if not path.is_absolute() and (here / path).exists():
            path = here / path
        return GraphUnderTest(load_graph(path, allow_python=allow_python),
                              {**defaults, **options})

    return make
