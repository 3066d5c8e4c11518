"""`dagtui label`: the labelling screen (`LabelScreen`); its state is
`dagtui.labels.session`, Textual-free."""

from dagtui.tui.label.screen import LabelScreen, run_label

__all__ = ["LabelScreen", "run_label"]
