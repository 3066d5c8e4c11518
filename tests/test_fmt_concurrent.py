"""`dagtui fmt` and a concurrent edit (issue #21, 11c): however long fmt stalls before its
rename, an edit another program makes meanwhile is never silently lost. The stall is injected
at the rename (the atomic swap `dagtui.safewrite` makes), and a real concurrent writer edits
the file while it lasts: by a rename of its own (how editors save), or in place."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from test_fmt import FORMATTED, MESSY

from dagtui import safewrite
from dagtui.cli import main

ROUNDS = 30


def _edit_by_rename(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".editor-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _edit_in_place(path: Path, text: str) -> None:
    with open(path, "r+", encoding="utf-8") as fh:
        fh.write(text)
        fh.truncate()


@pytest.fixture
def stalled(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    """Every swap waits for the writer threads appended to the returned list: they run
    while fmt has checked the file and not yet renamed."""
    writers: list[threading.Thread] = []
    real = safewrite._exchange

    def stalled_exchange(a: Path, b: Path) -> bool:
        while writers:
            writer = writers.pop()
            writer.start()
            writer.join()
        return real(a, b)

    monkeypatch.setattr(safewrite, "_exchange", stalled_exchange)
    return writers


def test_no_concurrent_edit_is_lost_during_a_stall_at_the_rename(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        stalled: list[threading.Thread]) -> None:
    if safewrite._libc() is None:
        pytest.skip("no atomic swap (renameat2) on this system: the check precedes the rename")
    graph = tmp_path / "g.toml"
    kept = 0
    for k in range(ROUNDS):
        graph.write_text(MESSY, encoding="utf-8")
        edit = MESSY.replace("Support", f"Support, edited {k}")
        how = _edit_by_rename if k % 2 else _edit_in_place
        stalled.append(threading.Thread(target=how, args=(graph, edit)))
        code = main(["fmt", str(graph)])
        err = capsys.readouterr().err
        assert code == 2 and "changed on disk" in err, (k, err)
        assert graph.read_text(encoding="utf-8") == edit, k  # the edit survived
        kept += 1
    assert kept == ROUNDS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.toml"]  # no temp file left


def test_a_stall_with_no_edit_still_formats(tmp_path: Path, capsys,
                                            stalled: list[threading.Thread]) -> None:
    graph = tmp_path / "g.toml"
    graph.write_text(MESSY, encoding="utf-8")
    graph.chmod(0o640)
    stalled.append(threading.Thread(target=lambda: None))
    assert main(["fmt", str(graph)]) == 0
    assert graph.read_text(encoding="utf-8") == FORMATTED
    assert graph.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.toml"]


def test_without_an_atomic_swap_the_check_comes_right_before_the_rename(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the kernel cannot swap (not Linux, an old glibc, a file system without
    RENAME_EXCHANGE), the plain rename follows a last check: an edit made before it is
    still refused."""
    monkeypatch.setattr(safewrite, "_exchange", lambda a, b: False)
    graph = tmp_path / "g.toml"
    graph.write_text(MESSY, encoding="utf-8")
    assert main(["fmt", str(graph)]) == 0 and graph.read_text() == FORMATTED
    graph.write_text(MESSY, encoding="utf-8")
    real_check = safewrite._check_unchanged
    calls = []

    def edit_before_the_last_check(shown, target, expected):  # type: ignore[no-untyped-def]
        calls.append(target)
        if len(calls) == 3:  # entry, before the swap, then the last one before the rename
            _edit_by_rename(graph, "# edited\n" + MESSY)
        return real_check(shown, target, expected)

    monkeypatch.setattr(safewrite, "_check_unchanged", edit_before_the_last_check)
    assert main(["fmt", str(graph)]) == 2
    assert "changed on disk" in capsys.readouterr().err
    assert graph.read_text().startswith("# edited\n")
