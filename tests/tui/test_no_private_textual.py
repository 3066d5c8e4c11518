"""dagtui's TUI uses only Textual's public API.

Private attributes change without notice between Textual releases, so reaching into them is
what would tie dagtui to one exact Textual version. The rule, by AST over `dagtui/tui/`:

- Textual's private names are every `_name` (one leading underscore) that the installed
  Textual's own source defines or reads: methods, class attributes and `x._name` accesses.
- `self._name` / `cls._name` is fine when dagtui defines `_name` on that class or on one of
  its dagtui bases (its own state, even if Textual happens to use the same name elsewhere);
  otherwise, when `_name` is one of Textual's, it is Textual's private state: flagged.
- `other._name` (any object but `self` / `cls`), and `getattr` / `setattr` / `hasattr` with a
  literal `"_name"`, is flagged when `_name` is one of Textual's, or when dagtui defines no
  such name anywhere (a private attribute pinned onto a Textual object from outside).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import textual

TUI = Path(__file__).resolve().parents[2] / "dagtui" / "tui"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined_in_class(cls: ast.ClassDef) -> set[str]:
    """Private names a class defines: methods, class attributes, `self._x = ...` targets."""
    names: set[str] = set()
    body = list(cls.body)
    for stmt in body:
        if isinstance(stmt, ast.If):  # `if TYPE_CHECKING:` stubs of a mixin
            body += stmt.body + stmt.orelse
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(stmt.name)
        for target in _targets(stmt):
            if isinstance(target, ast.Name):
                names.add(target.id)
    for node in ast.walk(cls):
        for target in _targets(node):
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id in ("self", "cls")):
                names.add(target.attr)
    return {n for n in names if _private(n)}


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AnnAssign | ast.AugAssign):
        return [node.target]
    return []


@cache
def textual_private_names() -> frozenset[str]:
    names: set[str] = set()
    for path in Path(textual.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                names.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                names |= _defined_in_class(node)
    return frozenset(names)


def _dagtui_trees() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(TUI.rglob("*.py"))}


def _string_access(node: ast.Call) -> tuple[ast.expr, str] | None:
    """`getattr(obj, "_x"...)`, `setattr`, `hasattr`: (obj, "_x")."""
    if (isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr", "hasattr")
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)):
        return node.args[0], node.args[1].value
    return None


def private_textual_accesses(trees: dict[Path, ast.Module]) -> Iterator[str]:
    """One `file:line: what` per access the rule above flags."""
    classes: dict[str, ast.ClassDef] = {}
    dagtui_names: set[str] = set()
    for tree in trees.values():
        for stmt in tree.body:  # module-level helpers (`backend._memo` from another module)
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                dagtui_names.add(stmt.name)
            dagtui_names |= {t.id for t in _targets(stmt) if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes[node.name] = node
                dagtui_names |= _defined_in_class(node)
    textual_names = textual_private_names()

    def own(cls: ast.ClassDef, seen: frozenset[str] = frozenset()) -> set[str]:
        names = _defined_in_class(cls)
        for base in cls.bases:
            name = base.id if isinstance(base, ast.Name) else None
            if name in classes and name not in seen:
                names |= own(classes[name], seen | {name})
        return names

    for path, tree in trees.items():
        rel = path.relative_to(TUI.parent.parent)

        def visit(node: ast.AST, cls: ast.ClassDef | None, rel: Path = rel) -> Iterator[str]:
            if isinstance(node, ast.ClassDef):
                cls = node
            access: tuple[ast.expr, str] | None = None
            if isinstance(node, ast.Attribute):
                access = node.value, node.attr
            elif isinstance(node, ast.Call):
                access = _string_access(node)
            if access is not None and _private(access[1]):
                obj, name = access
                on_self = isinstance(obj, ast.Name) and obj.id in ("self", "cls")
                if on_self and cls is not None:
                    bad = name in textual_names and name not in own(cls)
                else:
                    bad = name in textual_names or name not in dagtui_names
                if bad:
                    yield f"{rel}:{node.lineno}: {ast.unparse(node)[:80]}"
            for child in ast.iter_child_nodes(node):
                yield from visit(child, cls)

        yield from visit(tree, None)


def test_textual_private_names_are_found() -> None:
    """The rule has teeth: the names that once leaked in are among Textual's private ones."""
    assert {"_label", "_options", "_allow_blank", "_bindings", "_keymap"} <= (
        textual_private_names())


def test_rule_flags_what_it_should() -> None:
    src = '''
class Mine(Widget):
    def __init__(self):
        self._own = 1
    def f(self, tab, select, app):
        tab._label, select._options, self._bindings, getattr(app, "_keymap", None)
        widget._said = 1
        return self._own, other._own
'''
    found = list(private_textual_accesses({TUI / "fake.py": ast.parse(src)}))
    flagged = [f.split(": ", 1)[1] for f in found]
    assert flagged == ["tab._label", "select._options", "self._bindings",
                       "getattr(app, '_keymap', None)", "widget._said"]


def test_no_private_textual_attributes_in_the_tui() -> None:
    found = list(private_textual_accesses(_dagtui_trees()))
    assert not found, "private Textual attributes (use public API):\n" + "\n".join(found)
