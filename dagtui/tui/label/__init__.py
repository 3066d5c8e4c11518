"""`dagtui label`: the labelling screen (`LabelScreen`); its state is
`dagtui.labels.session`, Textual-free."""

from dagtui.tui.label.screen import LabelScreen

__all__ = ["LabelScreen"]
