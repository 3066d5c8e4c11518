"""The step debugger (README "The debugger"): one case through one graph, node by node.

`screen.DebuggerScreen` is the debugger, a screen of the one app
(`dagtui.tui.app.DagtuiApp`): `dagtui step` starts the app on it
(`dagtui.tui.app.debugger_app`), and F5 in the editor pushes it over the editor
(`dagtui.tui.screens.editor.EditorScreen.open_debugger`).

Nothing is imported here: a module of the package imports what it needs from its sibling
modules, so importing one never imports the whole debugger (nor closes an import circle
through this file).
"""
