"""No import circles between dagtui's modules, function-level imports included.

A circle hidden in a function (`def f(): from dagtui.a import x` in a module `dagtui.a`
imports) still ties the two modules together: neither can be understood, tested or moved
alone, and the import order decides which one sees the other half made. The graph is built
from the source (the AST), not by importing: every `import` and `from ... import` anywhere
in a module, at module level or inside a function or class, with `from pkg import name`
read as the submodule `pkg.name` when there is one. Imports under `if TYPE_CHECKING:` are
left out: they never run, and are the way to name a type without the dependency.

(grimp, under `lint-imports`, counts function-level imports too, but import-linter has no
contract that forbids every circle; this test is that contract.)
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def modules(package: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module of the package at `package`."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:` (never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
                (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
                or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")):
            for inner in node.body:
                skipped.update(id(n) for n in ast.walk(inner))
    return skipped


def _known(name: str, mods: dict[str, Path]) -> str | None:
    """`name`, or the nearest enclosing package that is a module of ours, or None."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(name: str, path: Path, mods: dict[str, Path]) -> set[str]:
    """The modules of ours that module `name` imports, anywhere in its body."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skipped = _type_checking_only(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative (ruff bans them here; read right all the same)
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in mods else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            module = _known(target, mods)
            if module is not None and module != name:
                found.add(module)
    return found


def import_graph(package: Path) -> dict[str, set[str]]:
    mods = modules(package)
    return {name: imports_of(name, path, mods) for name, path in mods.items()}


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def one_cycle(graph: dict[str, set[str]], component: frozenset[str]) -> list[str]:
    """A shortest path round the circle from its first module, for the failure message."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & component):
            if child == start:
                return [*paths[node], start]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    return sorted(component)


def test_no_import_circles_between_dagtui_modules() -> None:
    graph = import_graph(ROOT / "dagtui")
    new = circles(graph)
    assert not new, "import circles (function-level imports count):\n" + "\n".join(
        "  " + " -> ".join(one_cycle(graph, c)) for c in new)


def test_the_graph_sees_function_level_and_submodule_imports(tmp_path: Path) -> None:
    """The checker itself: a circle closed only inside a function, through `from pkg import
    submodule`, is found; one closed only under TYPE_CHECKING is not."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from pkg import a\n    return a\n")
    (pkg / "c.py").write_text("from pkg import d\n")
    (pkg / "d.py").write_text("from typing import TYPE_CHECKING\n"
                              "if TYPE_CHECKING:\n    from pkg import c\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.a"}
    assert circles(graph) == [frozenset({"pkg.a", "pkg.sub.b"})]
    assert one_cycle(graph, circles(graph)[0]) == ["pkg.a", "pkg.sub.b", "pkg.a"]
