"""The TUI is one Textual app with screens (dagtui/tui/app.py): read from the source, not run.
(That its modules import each other without circles is tests/test_import_cycles.py's, for
every module of dagtui.)"""

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
