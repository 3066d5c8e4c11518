"""No `argparse.Namespace` travels past the command line: `argparse` and `Namespace` appear
only under dagtui/commands/ and in dagtui/cli.py. A run's settings leave argparse as a
`dagtui.run.spec.RunSpec` (`dagtui.commands.flags.run_spec`); the core, the API, the
integrations and the TUI take that, never the parsed flags."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "dagtui"
ALLOWED = ("commands/", "cli.py")


def _names(tree: ast.AST) -> set[str]:
    """Every module imported and every name or attribute spelt in `tree`."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add((node.module or "").split(".")[0])
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value in ("argparse.Namespace", "Namespace"):
            found.add(node.value)  # a string annotation
    return found


def test_argparse_and_namespace_stay_in_the_command_line() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith(ALLOWED):
            continue
        names = _names(ast.parse(path.read_text(encoding="utf-8")))
        # `types.SimpleNamespace` is a plain object, not parsed flags
        bad = sorted(n for n in names if n in ("argparse", "Namespace", "argparse.Namespace"))
        if bad:
            offenders.append(f"dagtui/{where}: {', '.join(bad)}")
    assert not offenders, "argparse outside dagtui/commands/ and cli.py:\n" + "\n".join(
        offenders)


def test_the_scan_would_see_an_offender(tmp_path: Path) -> None:
    """The scan is not blind: a module that takes parsed flags is named."""
    sample = ast.parse("import argparse\ndef f(args: 'argparse.Namespace') -> None: ...\n"
                       "from argparse import Namespace\n")
    assert {"argparse", "Namespace"} <= _names(sample)
    assert "Namespace" not in _names(ast.parse("from types import SimpleNamespace\n"))
