"""What the node form (`node_form.NodeForm`) tells the editor screen: typed messages.

Their own small module, apart from the form: the editor screen names them in its `@on(...)`
handlers, which Textual reads when the screen's class is built, while the form itself (its
pages of inputs and selects) is imported and mounted only right after the first frame
(`screens.editor.EditorScreen._first_form`). `NodeForm` keeps them as its attributes too
(`NodeForm.FieldChanged`, ...). Their `namespace` keeps the handler names they had nested in
the form (`on_node_form_field_changed`, ...).
"""

from __future__ import annotations

from typing import Any

from textual.message import Message


class FieldChanged(Message, namespace="node_form"):
    """A node field was edited (value already parsed)."""

    def __init__(self, node_id: str, field: str, value: Any) -> None:
        super().__init__()
        self.node_id, self.field, self.value = node_id, field, value


class VerdictChanged(Message, namespace="node_form"):
    """One part (`verdict`, `score` or `then`) of one verdict was edited."""

    def __init__(self, node_id: str, index: int, part: str, value: Any) -> None:
        super().__init__()
        self.node_id, self.index, self.part, self.value = node_id, index, part, value


class MetricChanged(Message, namespace="node_form"):
    """A metric setting was edited (value already parsed)."""

    def __init__(self, field: str, value: Any) -> None:
        super().__init__()
        self.field, self.value = field, value


class FieldFocused(Message, namespace="node_form"):
    """Focus moved to another field: typing there starts a new undo step."""
