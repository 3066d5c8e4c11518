"""The core must never pull in Textual, litellm or pydantic (issue #4).

Textual belongs to `dagtui/tui/` only, litellm (seconds and ~200 MB to import) must wait
for a real judge call, and pydantic (about a tenth of a second) is imported lazily, only
where it is used (`dagtui schema`, through the report and trace document models of
`dagtui/report/documents.py`): the editor's first frame must come fast, so neither the core nor
the editor may load it at import. Importing every other module of the package in a fresh
interpreter and then looking at `sys.modules` proves both, including for modules added
later: the list is discovered by walking the package, not written by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

FORBIDDEN = ("textual", "litellm", "pydantic")

_PROBE = textwrap.dedent(
    """
    import importlib, json, os, pkgutil, sys
    import dagtui

    # pkgutil.walk_packages imports every package it descends into (dagtui.tui too), so
    # the walk goes over directories instead and never enters the TUI package
    def walk(path, prefix):
        for info in pkgutil.iter_modules([path]):
            name = prefix + info.name
            if name == "dagtui.tui" or name.endswith(".__main__"):  # TUI; runs the CLI
                continue
            yield name
            if info.ispkg:
                yield from walk(os.path.join(path, info.name), name + ".")

    names = ["dagtui"] + list(walk(dagtui.__path__[0], "dagtui."))
    failed = {}
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # report, do not hide: a broken module is a finding too
            failed[name] = f"{type(exc).__name__}: {exc}"
    forbidden = sorted(
        m for m in sys.modules
        if m.split(".")[0] in ("textual", "litellm", "pydantic", "pydantic_core")
    )
    print(json.dumps({"imported": names, "failed": failed, "forbidden": forbidden}))
    """
)


@pytest.fixture(scope="module")
def probe() -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_probe_walked_the_core(probe: dict) -> None:
    imported = set(probe["imported"])
    # the foundation modules are always part of the walk
    for name in (
        "dagtui", "dagtui.graph.model", "dagtui.graph.loader", "dagtui.graph.positions", "dagtui.diagnostics",
        "dagtui.run.schedule", "dagtui.graph.tomlio", "dagtui.graph.starters", "dagtui.commands.fmt",
        "dagtui.graph.validate",
    ):
        assert name in imported
    assert not any(n == "dagtui.tui" or n.startswith("dagtui.tui.") for n in imported)


def test_every_core_module_imports(probe: dict) -> None:
    assert probe["failed"] == {}


@pytest.mark.parametrize("package", FORBIDDEN)
def test_core_does_not_import(probe: dict, package: str) -> None:
    leaked = [m for m in probe["forbidden"] if m.split(".")[0] == package]
    assert leaked == [], f"importing the core loaded {package}: {leaked[:5]}"


def _editor_startup_modules() -> list[str]:
    """The modules loaded by importing what `dagtui edit` needs before its first frame."""
    probe = (
        "import sys, json\n"
        "import dagtui, dagtui.graph.loader, dagtui.graph.validate, dagtui.graph.tomlio, dagtui.cli\n"
        "import dagtui.tui.state, dagtui.tui.app\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_editor_startup_stays_light() -> None:
    """Editor startup (< 0.5 s to the first frame) stays free of pydantic (litellm brings
    its own copy, loaded only with litellm) and of the widgets first shown a moment later:
    the bottom panels' tables and tabs, and the text areas of the form."""
    loaded = _editor_startup_modules()
    assert [m for m in loaded if m.split(".")[0] in ("pydantic", "pydantic_core")] == []
    later = ("textual.widgets._data_table", "textual.widgets._text_area",
             "textual.widgets._tabbed_content", "litellm")
    assert [m for m in loaded if m.startswith(later)] == []


def test_a_plain_run_writes_its_reports_without_pydantic(tmp_path) -> None:
    """`dagtui run` with the in-process labels judge, writing JSON, JUnit, traces and the
    summary, and the imports `dagtui edit` makes before its first frame, load no pydantic:
    the report writers and the records do not need it; only `dagtui schema` (and `dagtui
    merge`, which checks each shard against the schema) build the document models."""
    from pathlib import Path

    graph = Path(__file__).resolve().parent.parent / "graphs" / "meeting_summary.toml"
    probe = textwrap.dedent(
        f"""
        import json, sys
        import dagtui.commands.edit, dagtui.tui.app, dagtui.tui.state
        from dagtui.cli import main
        code = main(["run", {str(graph)!r}, "--model", "labels", "-q", "--no-cache",
                     "--json", "r.json", "--junit", "j.xml", "--trace-dir", "traces"])
        loaded = sorted(m for m in sys.modules
                        if m.split(".")[0] in ("pydantic", "pydantic_core"))
        print(json.dumps({{"code": code, "pydantic": loaded}}))
        """
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env={**os.environ, "CI": "1"})
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["code"] in (0, 1)  # the labels judge gives verdicts: no judge error
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["cases"] > 0 and "<testsuites" in (tmp_path / "j.xml").read_text()
    assert list((tmp_path / "traces").glob("*.json"))
    assert found["pydantic"] == []
