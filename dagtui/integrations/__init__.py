"""dagtui inside the tools people already run evaluations with.

- `dagtui.testing.assert_graph` and the pytest plugin (`dagtui.integrations.pytest_plugin`,
  the `dagtui_graph` fixture);
- `dagtui.integrations.deepeval.GraphMetric`, a DeepEval metric (extra `deepeval`);
- `dagtui.integrations.inspect.graph_scorer`, an Inspect AI scorer (extra `inspect`).

Each runs the graph on dagtui's own engine (its call count, cache and traces) and reports the
same things: the score, the deciding reason, the path and every node's verdict and reason.
Importing this package, or any module in it, loads neither DeepEval nor Inspect: each
integration imports its tool when first used, so the core's import test can walk them all.
"""
