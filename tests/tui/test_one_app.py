"""The TUI is one Textual app with screens (dagtui/tui/app.py), and its modules import each
other without circles (function-level imports counted): read from the source, not run."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TUI = ROOT / "dagtui" / "tui"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def tui_modules() -> dict[str, ast.Module]:
    return {module_name(p): ast.parse(p.read_text(encoding="utf-8"), str(p))
            for p in sorted(TUI.rglob("*.py"))}


def app_subclasses(tree: ast.Module) -> list[str]:
    """Classes whose bases name Textual's `App` (as `App`, `App[...]` or `textual.app.App`)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for base in node.bases:
            target = base.value if isinstance(base, ast.Subscript) else base
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name == "App":
                found.append(node.name)
    return found


def test_exactly_one_app_subclass_under_dagtui_tui() -> None:
    apps = [(name, cls) for name, tree in tui_modules().items() for cls in app_subclasses(tree)]
    assert apps == [("dagtui.tui.app", "DagtuiApp")]


def runtime_imports(tree: ast.Module, known: set[str]) -> set[str]:
    """The dagtui modules `tree` imports when it runs, at any depth (inside functions too),
    leaving out `if TYPE_CHECKING:` blocks (never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for n in ast.walk(node))
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            out.update(f"{node.module}.{a.name}" for a in node.names
                       if f"{node.module}.{a.name}" in known)
            if node.module in known:
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_among_the_tui_modules() -> None:
    modules = tui_modules()
    graph = {name: runtime_imports(tree, set(modules)) for name, tree in modules.items()}
    assert circles(graph) == []


def test_the_circle_finder_finds_one() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import m.b\n"
                     "def f():\n    from m import c\n")
    assert runtime_imports(tree, {"m.b", "m.c"}) == {"m.c"}
