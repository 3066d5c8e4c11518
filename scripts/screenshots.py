"""Write SVG screenshots of the editor's states into screenshots/ (for the README).

Drives the real app headless at 120×36, and a few states at 80×24 (a small terminal),
(`run_test` + `save_screenshot`) on copies of the example graphs in a temp directory, so
the pictures are regenerated, never hand-made:

    .venv/bin/python scripts/screenshots.py            # all states
    .venv/bin/python scripts/screenshots.py --png /tmp/shots   # also PNGs, to look at
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "screenshots"
SIZE = (120, 36)
SMALL = (80, 24)

BROKEN = """\
# A graph with mistakes the editor points at, each with its line
[metric]
name = "Answer quality"
threshold = 0.5

[nodes.extract]
type = "task"
instructions = "List the claims made in `actual_output`."
output_label = "Claims"
params = ["actual_output"]
children = ["supported", "tone"]

[nodes.supported]
type = "binary"
criteria = "Is every claim supported by `context`?"
verdicts = [
  { verdict = true, score = 10 },
  { verdict = true, then = "depth" },
]

[nodes.tone]
type = "non_binary"
criteria = "Respond in JSON with at most 3 sentences."
verdicts = [
  { verdict = "Polite", score = 12 },
]
"""

UNPARSABLE = """\
# a quote is missing on line 7
[metric]
name = "Broken file"

[nodes.judge]
type = "binary"
criteria = "Is the answer correct?
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
"""


def wide_graph(n_classifiers: int = 8) -> str:
    """About 30 nodes: one extraction feeding gates that each lead to classifiers."""
    lines = ["# a wider graph to show the graph view", "[metric]", 'name = "Support reply"',
             "threshold = 0.6", 'model = "gpt-4.1-mini"', "", "[nodes.extract]",
             'type = "task"', 'instructions = "Extract the reply\'s claims."',
             'params = ["actual_output"]', 'output_label = "Claims"',
             "children = [" + ", ".join(f'"gate_{i}"' for i in range(n_classifiers)) + "]", ""]
    for i in range(n_classifiers):
        nxt = f"gate_{i + 1}" if i + 1 < n_classifiers else None
        then = f'then = "{nxt}"' if nxt else "score = 10"
        lines += [f"[nodes.gate_{i}]", 'type = "binary"', f'criteria = "Rule {i} holds?"',
                  "verdicts = [", "  { verdict = false, score = 0 },",
                  f'  {{ verdict = true, then = "grade_{i}" }},', "]", "",
                  f"[nodes.grade_{i}]", 'type = "non_binary"', f'criteria = "Grade part {i}."',
                  "verdicts = [", f"  {{ verdict = \"Good\", {then} }},",
                  '  { verdict = "Weak", score = 4 },', "]", ""]
    return "\n".join(lines)


Step = Callable[[object], Awaitable[None]]


async def shoot(name: str, graph: str, steps: list[str | Step], *, starter: str | None = None,
                workdir: Path, size: tuple[int, int] = SIZE) -> Path:
    """Open `graph` (a file name in workdir), press keys / run steps, save an SVG."""
    from dagtui.tui.app import editor_app

    app = editor_app(graph, poll_interval=0, cursor_blink=False, starter=starter)
    async with app.run_test(size=size, notifications=True) as pilot:
        await pilot.pause()
        await pilot.pause(0.2)
        for step in steps:
            if isinstance(step, str):
                await pilot.press(step)
            else:
                await step(pilot)
            await pilot.pause()
        await pilot.pause(0.3)
        path = OUT / f"{name}.svg"
        app.save_screenshot(filename=path.name, path=str(OUT))
    return path


async def main(png: Path | None) -> None:
    OUT.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="dagtui-shots-"))
    for name in ("meeting_summary.toml", "refund_policy.toml", "code_review.toml"):
        shutil.copy(ROOT / "graphs" / name, work / name)
    (work / "broken.toml").write_text(BROKEN)
    (work / "unparsable.toml").write_text(UNPARSABLE)
    (work / "support.toml").write_text(wide_graph())
    os.chdir(work)

    async def type_text(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
        for ch in text:
            await pilot.press({" ": "space"}.get(ch, ch))

    async def focus_criteria(pilot) -> None:  # type: ignore[no-untyped-def]
        from dagtui.tui.widgets.node_form import NodeForm

        area = pilot.app.query_one(NodeForm).field("criteria")
        area.focus()
        area.move_cursor(area.document.end)

    shots = [
        ("editor", "meeting_summary.toml", ["j"]),
        ("editor_typing", "meeting_summary.toml",
         ["j", focus_criteria, lambda p: type_text(p, " Answer JSON.")]),
        ("editor_problems", "broken.toml", ["j", "j"]),
        ("editor_paths", "refund_policy.toml", ["t"]),
        ("editor_graph", "meeting_summary.toml", ["g"]),
        ("editor_graph_wide", "support.toml", ["g", "g"]),
        ("editor_graph_focus", "support.toml", [*(["j"] * 9), "f", "g"]),
        ("editor_add_node", "meeting_summary.toml", ["a"]),
        ("editor_delete_refused", "meeting_summary.toml", ["j", "j", "j", "j", "d"]),
        ("editor_read_only", "unparsable.toml", []),
        ("editor_help", "meeting_summary.toml", ["f1"]),
        ("editor_palette", "meeting_summary.toml", ["ctrl+p", lambda p: type_text(p, "ren")]),
        ("editor_goto", "support.toml", ["slash", lambda p: type_text(p, "grd3")]),
        ("editor_starter", "new_graph.toml", []),
    ]
    small = [  # the same editor in a small terminal
        ("editor_80x24", "meeting_summary.toml", ["j"]),
        ("editor_help_80x24", "meeting_summary.toml", ["f1"]),
    ]
    written = []
    for (name, graph, steps), size in [*((shot, SIZE) for shot in shots),
                                       *((shot, SMALL) for shot in small)]:
        written.append(await shoot(name, graph, steps, workdir=work, size=size))
        print(f"wrote {written[-1].relative_to(ROOT)}")
    if png is not None:
        import cairosvg

        png.mkdir(parents=True, exist_ok=True)
        for path in written:
            cairosvg.svg2png(url=str(path), write_to=str(png / f"{path.stem}.png"))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--png", type=Path, metavar="DIR",
                        help="also write PNGs into DIR (for a look; not committed)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    asyncio.run(main(args.png))
