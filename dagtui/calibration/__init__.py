"""Calibration: how far each node's judge agrees with human labels, and with itself.

`dagtui.calibrate(graph, cases, judge=..., samples=N)` (see `dagtui.calibration.core`) runs the
cases with teacher forcing (every labelled node judged on the cases the labels take to it), a
free run (the judge's own path, scored against `expected_score`, each changed outcome blamed on
the first node that diverged), and optional repeated samples (does the judge agree with
itself). Statistics live in `stats`, task-label items in `items`, the text and Markdown
reports in `report`. Textual-free, like the rest of the core; importing this package is light
(the engine is loaded on first use).
"""
