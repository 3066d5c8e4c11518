"""The README's "Try it without a key" tour, run end to end as a newcomer would: in a fresh
directory holding a copy of graphs/, with no API key in the environment.

The commands are read out of the README's bash blocks, so the README cannot drift from what
works: `validate` and `test` run as processes; `step` (a terminal UI) is the same command's
`prepare` and `debugger_app` under Pilot, `c` pressed; `dagtui demo-judge` is started on a
free port (`--port 0`), and `run` and `calibrate` are sent to the address it prints instead
of the README's 8765.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_URL = "http://127.0.0.1:8765/v1"

pytestmark = pytest.mark.slow


def tour_commands() -> list[list[str]]:
    """Every `dagtui ...` line of the bash blocks under "## Try it without a key"."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Try it without a key", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    return [shlex.split(line) for line in lines if line.startswith("dagtui ")]


def keyless_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not (k.endswith(("_API_KEY", "_TOKEN", "_SECRET")) or k.startswith("DAGTUI_"))}
    env.update(HOME=str(home), CI="1", PYTHONUNBUFFERED="1", NO_COLOR="1")
    return env


def dagtui(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dagtui", *argv[1:]], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=240)


def test_the_tour_parses_into_the_commands_it_promises() -> None:
    names = [argv[1] for argv in tour_commands()]
    assert names == ["validate", "test", "step", "demo-judge", "run", "calibrate"]
    for argv in tour_commands():
        if argv[1] in ("run", "calibrate"):
            assert argv[argv.index("--api-base") + 1] == README_URL
            assert argv[argv.index("--model") + 1].startswith("openai/")


async def step_to_the_end(argv: list[str]) -> float | None:
    """`dagtui step ...` as the command builds it, run to the end with `c`."""
    from dagtui.cli import build_parser
    from dagtui.commands.step import prepare
    from dagtui.tui.app import debugger_app

    ready, code = prepare(build_parser().parse_args(argv[1:]))
    assert ready is not None and code == 0
    assert ready["judge"].name == "labels"  # no key, no server: the case labels answer
    graph, path = ready.pop("graph"), ready.pop("graph_path")
    app = debugger_app(graph, path, cursor_blink=False, **ready)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("c")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        result = app.debugger.live.result()
        return result.score if result is not None else None


async def test_the_readme_tour_runs_without_a_key(tmp_path: Path, monkeypatch) -> None:
    work = tmp_path / "newcomer"
    work.mkdir()
    shutil.copytree(ROOT / "graphs", work / "graphs")
    env = keyless_env(tmp_path)
    monkeypatch.chdir(work)
    for name in list(os.environ):
        if name not in env:
            monkeypatch.delenv(name)
    demo: subprocess.Popen[str] | None = None
    url = None
    ran = []
    try:
        for argv in tour_commands():
            command = argv[1]
            if command == "step":
                assert await step_to_the_end(argv) == 0.4  # "intro and body swapped"
            elif command == "demo-judge":
                demo = subprocess.Popen([sys.executable, "-m", "dagtui", *argv[1:], "--port", "0"],
                                        cwd=work, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
                assert demo.stdout is not None
                first = demo.stdout.readline()
                found = re.search(r"http://127\.0\.0\.1:\d+/v1", first)
                assert found and "not a model" in first, first
                url = found.group(0)
            else:
                if url is not None:
                    argv = [url if arg == README_URL else arg for arg in argv]
                done = dagtui(argv, work, env)
                out = done.stdout + done.stderr
                assert "Traceback" not in out, out
                if command == "validate":
                    assert done.returncode == 0 and "0 errors" in out, out
                elif command == "test":
                    assert done.returncode == 0 and "6 passed, 0 failed" in out, out
                elif command == "run":
                    # as the README says: four cases fail, as their labels say they should
                    assert done.returncode == 1, out
                    assert "6 cases, 2 passed, 4 failed, 0 judge errors" in out, out
                    assert "score vs expected_score: 6 cases, exact 100%" in out, out
                elif command == "calibrate":
                    assert done.returncode == 0, out
                    assert "calibration of openai/demo on 44 cases" in out, out
                    assert "blame" in out and "extract" in out, out
                    saved = re.search(r"^saved (.+)$", done.stdout, re.M)
                    assert saved, out
                    assert (work / saved.group(1).strip()).is_file()
            ran.append(command)
    finally:
        if demo is not None:
            demo.send_signal(signal.SIGTERM)
            _out, err = demo.communicate(timeout=30)
    assert ran == ["validate", "test", "step", "demo-judge", "run", "calibrate"]
    assert demo is not None and demo.returncode == 0, err
    calls = re.search(r"stopped after (\d+) call", err)
    assert calls and int(calls.group(1)) > 0, err  # run and calibrate really asked it
