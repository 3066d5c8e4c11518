"""The pre-commit hooks (`.pre-commit-hooks.yaml`) on a fixture repository.

Running pre-commit for real means it builds a virtualenv and pip-installs dagtui with litellm
(minutes, and PyPI), so the suite does what pre-commit does with the hook file instead: picks
the files with the hook's own `files` / `exclude` patterns and runs its `entry` on them, here
with this interpreter's dagtui. When `pre-commit` is on PATH and DAGTUI_TEST_PRE_COMMIT=1,
`pre-commit try-repo` runs too, end to end.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML (installed with litellm) reads the hooks")

ROOT = Path(__file__).resolve().parent.parent
MEETING = ROOT / "graphs" / "meeting_summary.toml"


def hooks() -> dict[str, dict[str, Any]]:
    data = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    return {hook["id"]: hook for hook in data}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a good graph, a misspelt one, a badly laid out one, a suite, and
    TOML that is no graph (pyproject, a cases file) which the hooks must leave alone."""
    graphs = tmp_path / "graphs"
    graphs.mkdir()
    text = MEETING.read_text(encoding="utf-8")
    (graphs / "good.toml").write_text(text)
    (graphs / "typo.toml").write_text(text.replace("\ncriteria = \"Do the", "\ncritera = \"Do the"))
    (graphs / "messy.toml").write_text(
        '[nodes.g]\nverdicts=[{verdict=false,score=0},{verdict=true,score=10}]\ntype="binary"\n'
        'criteria="Is it fine?"\nparams=["actual_output"]\n[metric]\nname="Messy"\n')
    suites = ROOT / "graphs" / "suites"
    for name in ("correctness.toml", "deep_analysis.toml", "spans.toml"):
        shutil.copy(suites / name, graphs / name)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (graphs / "more.cases.toml").write_text('[[cases]]\nname = "a"\nactual_output = "x"\n')
    return tmp_path


def selected(hook: dict[str, Any], repo: Path) -> list[str]:
    """The files pre-commit would pass: `files` matches and `exclude` does not (re.search on
    the path relative to the repository, as pre-commit does)."""
    files = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file())
    keep = re.compile(hook.get("files", ""))
    drop = re.compile(hook["exclude"]) if hook.get("exclude") else None
    return [f for f in files if keep.search(f) and not (drop and drop.search(f))]


def run_hook(hook: dict[str, Any], repo: Path, files: list[str]) -> subprocess.CompletedProcess:
    entry = hook["entry"].split()
    assert entry[0] == "dagtui" and hook["language"] == "python"
    argv = [sys.executable, "-m", "dagtui", *entry[1:], *hook.get("args", []), *files]
    return subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=120)


def test_the_hooks_are_declared() -> None:
    found = hooks()
    assert set(found) == {"dagtui-validate", "dagtui-fmt-check"}
    for hook in found.values():
        assert hook["language"] == "python" and hook["files"] == r"\.toml$"


def test_only_graph_and_suite_files_are_offered(repo: Path) -> None:
    for hook in hooks().values():
        assert selected(hook, repo) == [
            "graphs/correctness.toml", "graphs/deep_analysis.toml", "graphs/good.toml",
            "graphs/messy.toml", "graphs/spans.toml", "graphs/typo.toml"]


def test_validate_fails_on_the_hidden_typo_only(repo: Path) -> None:
    hook = hooks()["dagtui-validate"]
    files = [f for f in selected(hook, repo) if f != "graphs/typo.toml"]
    ok = run_hook(hook, repo, files)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = run_hook(hook, repo, selected(hook, repo))
    assert bad.returncode == 1
    assert re.search(r"graphs/typo\.toml:\d+:\d+: error DAG002 .*'critera'.*did you mean "
                     r"'criteria'", bad.stdout), bad.stdout


def test_fmt_check_fails_on_the_messy_file_only(repo: Path) -> None:
    hook = hooks()["dagtui-fmt-check"]
    clean = run_hook(hook, repo, ["graphs/good.toml", "graphs/correctness.toml"])
    assert clean.returncode == 0, clean.stdout + clean.stderr
    messy = run_hook(hook, repo, selected(hook, repo))
    assert messy.returncode == 1 and "graphs/messy.toml" in messy.stdout + messy.stderr
    assert "graphs/good.toml" not in messy.stdout + messy.stderr


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("pre-commit") and os.environ.get("DAGTUI_TEST_PRE_COMMIT")),
                    reason="pre-commit try-repo pip-installs dagtui and litellm (minutes); "
                    "set DAGTUI_TEST_PRE_COMMIT=1 with pre-commit on PATH to run it")
def test_pre_commit_try_repo(repo: Path) -> None:
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "fixture"], cwd=repo, check=True)
    proc = subprocess.run(["pre-commit", "try-repo", str(ROOT), "dagtui-validate",
                           "--all-files"], cwd=repo, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 1 and "critera" in proc.stdout, proc.stdout[-3000:]
