"""Benchmark: how fast the editor starts, opens a big graph and reacts to an edit.

Run by hand: `.venv/bin/python tests/benchmarks/bench_editor.py`. It prints:
- the first painted frame beside its peer, a bare Textual app showing a Tree of the same
  graph's node ids (no dagtui import), on every shipped graph (graphs/*.toml) and a generated
  1,000-node one: runs interleaved (editor, bare, editor, ...) so load drifts hit both alike,
  medians and the ratio (target <= 1.2x), wall time and the CPU time behind it (the CPU
  figure moves less on a busy machine); measured headless as below (`run_test`) and in a
  real terminal (a pseudo-terminal of 120x36: `dagtui edit` (the installed console
  script) and the bare app as processes of their own, timed from spawn to the first
  frame's bytes on the terminal); headless,
  the first frame is the moment Textual posts `Ready` (right after its first compositor
  refresh) in both apps; the editor's probe starts as `dagtui edit` does, with the
  collector paused (dagtui/tui/startup.py); `bench_editor.py --first-frame` prints only
  this comparison, `--runs N` sets the runs of each (default 5);
- startup to first painted frame (fresh process: imports, load, first frame; the first
  validation runs right after that frame and is printed separately; median of several
  runs; target < 0.5 s) on graphs/meeting_summary.toml, split into imports (with, for
  scale, what importing Textual alone costs), `editor_app()` and app start to first frame;
- a generated 1,000-node graph: open to first painted frame (target < 1.5 s);
- one edit on that graph (a criteria emptied: model, validation, path analysis, tree badges,
  problems list, messages beside fields) until the app is idle again (target < 100 ms),
  for a text edit and for a structural edit (a verdict added). Validation runs in a worker:
  "idle" includes that worker's result drawn. For the text edit it also prints how long the
  keystroke itself holds the event loop (the edit applied, the worker started).
Each figure runs in a fresh interpreter so import caching does not flatter it. The
interpreters run without PYTHONDONTWRITEBYTECODE, as a user's would: dagtui's modules are
compiled once, not at every start (Textual's already are, by pip).
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = 5


def big_graph_text(stages: int = 200) -> str:
    """A valid chain of `stages` × 5 nodes: task → gate → classifier → code check → judge."""
    out = [f"# generated: {stages} stages of five nodes", "[metric]", 'name = "Big"',
           "threshold = 0.5", 'model = "gpt-4.1-mini"', ""]
    for i in range(stages):
        last = f'then = "task_{i + 1}"' if i + 1 < stages else "score = 10"
        out += [
            f"[nodes.task_{i}]", 'type = "task"',
            f'instructions = "Extract the facts of part {i} from `actual_output`."',
            'params = ["actual_output"]', f'output_label = "Facts {i}"',
            f'children = ["gate_{i}"]', "",
            f"[nodes.gate_{i}]", 'type = "binary"',
            f'criteria = "Are the facts of part {i} present?"', "verdicts = [",
            "  { verdict = false, score = 0 },", f'  {{ verdict = true, then = "class_{i}" }},',
            "]", "",
            f"[nodes.class_{i}]", 'type = "non_binary"', 'params = ["actual_output"]',
            f'criteria = "How good is part {i}?"', "verdicts = [",
            f'  {{ verdict = "Good", then = "check_{i}" }},', '  { verdict = "Bad", score = 2 },',
            "]", "",
            f"[nodes.check_{i}]", 'type = "check"', 'check = "json"', 'param = "actual_output"',
            "verdicts = [", f'  {{ verdict = true, then = "judge_{i}" }},',
            "  { verdict = false, score = 1 },", "]", "",
            f"[nodes.judge_{i}]", 'type = "binary"', 'params = ["input"]',
            f'criteria = "Is part {i} polite?"', "verdicts = [",
            f"  {{ verdict = true, {last} }},", "  { verdict = false, score = 3 },", "]", "",
        ]
    return "\n".join(out)


PROBE = textwrap.dedent("""
    import time
    T0 = time.perf_counter()
    # as `dagtui edit` starts: the collector paused until the first frame (tui/startup.py)
    from dagtui.tui.startup import pause_collector
    pause_collector()
    import asyncio, json, sys
    from dagtui.tui.app import DagtuiApp
    from dagtui.tui.screens.editor import EditorScreen
    IMPORTED = time.perf_counter() - T0
    # nothing more before the first frame than `dagtui edit` imports: the form's messages
    # come from their own module (the form is imported right after that frame)
    from dagtui.tui.widgets.form_messages import FieldChanged

    from textual import events

    class Probe(DagtuiApp):
        painted = None
        checked = None
        def post_message(self, message):
            # the first frame is on screen when Textual posts Ready (right after the first
            # compositor refresh), not when the app gets round to handling it
            if isinstance(message, events.Ready) and self.painted is None:
                self.painted = time.perf_counter() - T0
                self.cpu = time.process_time()
            return super().post_message(message)
        def on_ready(self):
            self.run_worker(self._mark_checked())
        async def _mark_checked(self):
            await self.editor.first_check_done.wait()
            self.checked = time.perf_counter() - T0

    async def settled(app, pilot):
        # validation runs in a worker: idle means that worker's result is on screen too
        await app.workers.wait_for_complete()
        await pilot.pause()

    async def main():
        app = Probe(EditorScreen(sys.argv[1], poll_interval=0), cursor_blink=False)
        out = {"imported": IMPORTED, "built": time.perf_counter() - T0}
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            out["first_frame"] = app.painted
            out["cpu"] = app.cpu
            out["checked"] = app.checked
            out["nodes"] = len(app.editor.state.graph.nodes)
            if sys.argv[2] == "edit":
                nid = sys.argv[3]
                idle = []
                for _ in range(5):
                    t = time.perf_counter()
                    await pilot.pause()
                    idle.append(time.perf_counter() - t)
                out["idle_pause"] = sorted(idle)[2]
                text, structure, blocked = [], [], []
                for i in range(7):
                    t = time.perf_counter()
                    await app.editor._field_changed(FieldChanged(
                        nid, "criteria", "" if i % 2 == 0 else "Is it polite?"))
                    blocked.append(time.perf_counter() - t)
                    await settled(app, pilot)
                    text.append(time.perf_counter() - t)
                tree = app.query_one("#tree")
                badge = next(tree.row_label(k) for k in tree._rows if k[:2] == ("node", nid))
                out["badge_after_edit"] = badge
                out["problems"] = len(app.editor.state.diagnostics)
                for i in range(5):
                    app.editor.state.selected = nid
                    t = time.perf_counter()
                    await app.editor.action_add_verdict()
                    await settled(app, pilot)
                    structure.append(time.perf_counter() - t)
                out["edit_text"] = text[1:]
                out["edit_blocked"] = blocked[1:]
                out["edit_structure"] = structure[1:]
        print(json.dumps(out))

    asyncio.run(main())
""")


#: the peer of the editor's first frame: a bare Textual app whose screen is one Tree, the
#: graph's node ids under the metric's name, read with tomllib (no dagtui import); argv:
#: GRAPH headless|terminal
BARE = textwrap.dedent("""
    import time
    T0 = time.perf_counter()
    import asyncio, json, sys, tomllib
    from textual import events
    from textual.app import App
    from textual.widgets import Tree

    class Bare(App):
        painted = None
        def post_message(self, message):  # as the editor's probe measures it
            if isinstance(message, events.Ready) and self.painted is None:
                self.painted = time.perf_counter() - T0
                self.cpu = time.process_time()
            return super().post_message(message)
        def compose(self):
            with open(sys.argv[1], "rb") as f:
                data = tomllib.load(f)
            tree = Tree(str(data.get("metric", {}).get("name", "graph")))
            tree.root.expand()
            for nid in data.get("nodes", {}):
                tree.root.add_leaf(nid)
            yield tree

    async def main():
        app = Bare()
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            print(json.dumps({"first_frame": app.painted, "cpu": app.cpu}))

    if sys.argv[2] == "terminal":
        Bare().run()
    else:
        asyncio.run(main())
""")

#: the terminal both apps are drawn on by `terminal_frame`
COLUMNS, LINES = 120, 36


def child_env() -> dict[str, str]:
    """The environment of every measured interpreter: bytecode cached as an installed
    dagtui's is, and a terminal of a known kind."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(TERM="xterm-256color", COLUMNS=str(COLUMNS), LINES=str(LINES))
    return env


def bare(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", BARE, str(path), "headless"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT, env=child_env())
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def terminal_frame(argv: list[str], marker: str, timeout: float = 60.0) -> float:
    """Seconds from spawning `argv` on a fresh pseudo-terminal of COLUMNS x LINES until
    `marker` (a node id both apps draw in their tree) has been written to it: the first
    frame as a person at a real terminal sees it, the terminal driver's start included."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its terminal
        os.chdir(ROOT)
        os.execve(argv[0], argv, child_env())
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    start = time.perf_counter()
    seen, found = b"", None
    try:
        while found is None and time.perf_counter() - start < timeout:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child is gone
                break
            if not chunk:
                break
            seen += chunk
            if marker.encode() in seen:
                found = time.perf_counter() - start
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
        os.close(fd)
    if found is None:
        raise SystemExit(f"{argv[-1]}: no frame with {marker!r} within {timeout:.0f} s")
    return found


def dagtui_command() -> list[str]:
    """`dagtui` as a user types it: the console script pip installed beside this
    interpreter (no `runpy`, as `python -m dagtui` has), else `python -m dagtui`."""
    script = Path(sys.executable).with_name("dagtui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dagtui"]


def first_node(path: Path) -> str:
    """The first node id in the file: a row both apps' trees show at the top."""
    import tomllib

    with path.open("rb") as f:
        return next(iter(tomllib.load(f)["nodes"]))


def compare_first_frames(graphs: list[Path], runs: int) -> None:
    """Print each graph's first frame beside the bare Tree app's: interleaved, medians,
    the ratio; headless and in a real terminal."""
    print(f"first frame vs a bare Textual Tree app of the same node ids ({runs} interleaved "
          f"runs each, medians; target ratio <= 1.20x)")
    print(f"  {'graph':<22} {'headless editor':>16} {'bare':>8} {'ratio':>6}   {'cpu ratio':>9}"
          f"   {'terminal editor':>16} {'bare':>8} {'ratio':>6}")
    edit_cmd = [*dagtui_command(), "edit"]
    for path in graphs:
        ed, bb, ed_cpu, bb_cpu, ed_tty, bb_tty = [], [], [], [], [], []
        marker = first_node(path)
        for _ in range(runs):
            e, b = probe(path, "open"), bare(path)
            ed.append(e["first_frame"])
            bb.append(b["first_frame"])
            ed_cpu.append(e["cpu"])
            bb_cpu.append(b["cpu"])
            ed_tty.append(terminal_frame([*edit_cmd, str(path)], marker))
            bb_tty.append(terminal_frame([sys.executable, "-c", BARE, str(path), "terminal"],
                                         marker))
        med = statistics.median
        print(f"  {path.name:<22} {ms(med(ed)):>16} {ms(med(bb)):>8} "
              f"{med(ed) / med(bb):>5.2f}x   {med(ed_cpu) / med(bb_cpu):>8.2f}x"
              f"   {ms(med(ed_tty)):>16} {ms(med(bb_tty)):>8} {med(ed_tty) / med(bb_tty):>5.2f}x")


TEXTUAL_ALONE = ("import time; t = time.perf_counter(); import textual.app; "
                 "print(time.perf_counter() - t)")


def textual_import() -> float:
    """Seconds to import `textual.app` in a fresh interpreter: the floor under our imports."""
    out = subprocess.run([sys.executable, "-c", TEXTUAL_ALONE], capture_output=True,
                         text=True, timeout=60, cwd=ROOT, check=True, env=child_env())
    return float(out.stdout.strip())


def probe(path: Path, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, str(path), *args], capture_output=True,
                         text=True, timeout=300, cwd=ROOT, env=child_env())
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def ms(seconds: float) -> str:
    if seconds < 0.01:  # the keystroke's own cost is well under 10 ms
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds * 1000:.0f} ms"


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="the editor's start, open and edit times")
    parser.add_argument("--first-frame", action="store_true",
                        help="only the first frame beside a bare Textual app")
    parser.add_argument("--runs", type=int, default=RUNS,
                        help=f"runs of each app in the comparison (default {RUNS})")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (figures grow with it)")
    small = ROOT / "graphs" / "meeting_summary.toml"
    probe(small, "open")  # compiles dagtui's modules once (see the module's docstring)
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.toml"
        big.write_text(big_graph_text())
        compare_first_frames([*sorted((ROOT / "graphs").glob("*.toml")), big], args.runs)
    if args.first_frame:
        return
    opens = [probe(small, "open") for _ in range(RUNS)]
    starts = [o["first_frame"] for o in opens]
    print(f"startup to first painted frame (meeting_summary, {RUNS} runs): median "
          f"{ms(statistics.median(starts))}  (min {ms(min(starts))}, max {ms(max(starts))})"
          f"  target < 500 ms")
    imported = statistics.median(o["imported"] for o in opens)
    built = statistics.median(o["built"] - o["imported"] for o in opens)
    shown = statistics.median(o["first_frame"] - o["built"] for o in opens)
    textual = statistics.median(textual_import() for _ in range(RUNS))
    print(f"  of which (medians): imports {ms(imported)} (importing textual.app alone: "
          f"{ms(textual)}), editor_app() {ms(built)} (file read and parsed), app start to "
          f"first frame {ms(shown)} (compose, CSS, layout, paint)")
    print(f"  problems filled in (first validation done): median "
          f"{ms(statistics.median(o['checked'] for o in opens))} after start")
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.toml"
        big.write_text(big_graph_text())
        opens = [probe(big, "open") for _ in range(3)]
        first = [o["first_frame"] for o in opens]
        print(f"{opens[0]['nodes']}-node graph, open to first painted frame: median "
              f"{ms(statistics.median(first))}  target < 1500 ms; problems filled in at "
              f"{ms(statistics.median(o['checked'] for o in opens))}")
        edit = probe(big, "edit", "gate_150")
        text_edit = statistics.median(edit["edit_text"])
        print(f"{edit['nodes']}-node graph, text edit → badges + problems + form updated and "
              f"painted: median {ms(text_edit)} (max {ms(max(edit['edit_text']))}); "
              f"of which {ms(edit['idle_pause'])} is the test harness waiting for the next "
              f"frame when nothing changed (net {ms(text_edit - edit['idle_pause'])})  "
              f"target < 100 ms")
        print(f"  the keystroke itself (the event loop blocked before validation is left to "
              f"its worker): median {ms(statistics.median(edit['edit_blocked']))}")
        print(f"{edit['nodes']}-node graph, structural edit (add verdict; tree rebuilt, paths "
              f"re-analysed): median {ms(statistics.median(edit['edit_structure']))}")
        print(f"  badge after the edit: {edit['badge_after_edit']!r}; "
              f"{edit['problems']} problems listed")


if __name__ == "__main__":
    main()
