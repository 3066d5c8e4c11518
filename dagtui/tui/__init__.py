"""The Textual front end of dagtui (the only package that may import textual).

`dagtui.tui.state` holds the editor's domain state and never imports textual, so it can be
tested and benchmarked on its own; `dagtui.tui.app.DagtuiApp` is the one application, and
each view (editor, debugger, suite view, calibration view) is one of its screens.
"""
