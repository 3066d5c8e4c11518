"""The editor with a map node (the "claims" starter): its fields in the form, an aggregate
typed as an inline table and an unsure word, both applied to the graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagtui.graph.starters import starter_text
from dagtui.tui.widgets.node_form import NodeForm
from tui.conftest import SIZE, make_app
from tui.test_metric_leaf_editor import _goto

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def claims_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / "claims.toml"
    target.write_text(starter_text("claims"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return target


async def test_map_fields_edit(claims_graph: Path) -> None:
    app = make_app(claims_graph)
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "supported")
        form = app.query_one(NodeForm)
        assert form.field("aggregate").value == "fraction"
        assert form.field("max_items").value == "20"
        assert form.field("unsure").value == "unscored"
        field = form.field("aggregate")
        field.focus()
        await pilot.pause()
        field.value = "{ at_least = 0.8 }"
        await pilot.pause()
        assert app.editor.state.graph.nodes["supported"].aggregate == {"at_least": 0.8}
        unsure = form.field("unsure")
        unsure.focus()
        await pilot.pause()
        unsure.value = "{ score = 5 }"
        await pilot.pause()
        assert app.editor.state.graph.nodes["supported"].unsure == {"score": 5}
