"""docs/patterns.md shows graphs and says what `validate` makes of them; here each complete
graph of the page is validated, so the page cannot claim a refusal or a path count that the
code no longer gives."""

from __future__ import annotations

import re
from pathlib import Path

from dagtui.graph.validate import check_text

PAGE = (Path(__file__).resolve().parent.parent / "docs" / "patterns.md").read_text(
    encoding="utf-8")
METRIC = '[metric]\nname = "pattern"\nmodel = "gpt-4.1-mini"\n\n'


def graphs_of(section: str) -> list[str]:
    body = PAGE.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```toml\n(.*?)```", body, re.S)


def codes(toml: str) -> list[str]:
    return [d.code for d in check_text(METRIC + toml).errors]


def test_two_branches_into_one_leaf_is_refused_twice_with_dag015() -> None:
    broken = graphs_of("Two branches into one leaf: one leaf per branch")[0]
    assert codes(broken) == ["DAG015", "DAG015"]
    assert "a node waits for every parent" in PAGE.lower()


def test_one_leaf_per_branch_is_the_fix() -> None:
    """The page writes the fixed graph as changes to the broken one ("...as above, but:"
    and new verdicts): put the broken nodes' other keys back, then validate."""
    broken, fixed = graphs_of("Two branches into one leaf: one leaf per branch")[:2]
    whole = fixed
    for name, keys in re.findall(r"\[nodes\.(\w+)\]\n((?:(?!\[nodes\.).*\n?)*)", broken):
        other = "\n".join(line for line in keys.splitlines()
                          if line and not line.startswith(("verdicts", "  {", "]")))
        whole = whole.replace(f"[nodes.{name}]\n# ...as above, but:", f"[nodes.{name}]\n{other}")
    assert "# ...as above" not in whole
    report = check_text(METRIC + whole)
    assert report.errors == [] and report.paths is not None
    assert len(report.paths.paths) == 3


def test_a_task_behind_a_gate_is_valid_with_three_paths() -> None:
    (graph,) = graphs_of("A task behind a gate")
    report = check_text(METRIC + graph)
    assert report.errors == [] and report.paths is not None
    assert len(report.paths.paths) == 3
