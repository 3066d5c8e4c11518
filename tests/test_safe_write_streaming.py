"""`safewrite.atomic_writer`, the streaming form of `atomic_write` (the JSON and JUnit
reports of `dagtui run` are written through it piece by piece): the same rules on a clean
exit, and the target untouched when the writing block fails."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from dagtui import safewrite
from dagtui.report.outputs import write_report
from dagtui.safewrite import ChangedOnDisk, ReadOnlyFile, atomic_writer


def _names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_pieces_replace_the_file(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("old\n")
    with atomic_writer(target) as fh:
        fh.write("a\r\n")  # newlines written as given
        fh.writelines(["b", "c\n"])
    assert target.read_bytes() == b"a\r\nbc\n" and _names(tmp_path) == ["r.json"]


def test_an_exception_leaves_the_target_untouched_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("precious\n")
    with pytest.raises(RuntimeError, match="mid-report"), atomic_writer(target) as fh:
        fh.write("half of the new")
        raise RuntimeError("mid-report")
    assert target.read_text() == "precious\n" and _names(tmp_path) == ["r.json"]


def test_a_failing_report_generator_leaves_the_report_untouched(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("precious\n")

    def parts():  # type: ignore[no-untyped-def]
        yield "{"
        raise ValueError("a case failed to render")

    with pytest.raises(ValueError):
        write_report(target, parts())
    assert target.read_text() == "precious\n" and _names(tmp_path) == ["r.json"]


def test_hard_link_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("old and longer than the new text\n")
    target.chmod(0o640)
    other = tmp_path / "other.json"
    os.link(target, other)
    inode = target.stat().st_ino
    write_report(target, iter(["ne", "w\n"]))
    assert target.stat().st_ino == inode == other.stat().st_ino
    assert other.read_text() == "new\n" and target.stat().st_nlink == 2
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _names(tmp_path) == ["other.json", "r.json"]  # temp and backup gone


def test_symlink_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old\n")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with atomic_writer(link) as fh:
        fh.write("new\n")
    assert link.is_symlink() and real.read_text() == "new\n"
    assert _names(tmp_path) == ["link.json", "real.json"]


def test_mode_kept_and_new_file_gets_the_umask_default(tmp_path: Path) -> None:
    kept = tmp_path / "kept.json"
    kept.write_text("old\n")
    kept.chmod(0o600)
    write_report(kept, iter(["new\n"]))
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    old = os.umask(0o022)
    try:
        write_report(tmp_path / "new.json", iter(["{}\n"]))
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644


def test_read_only_refused_before_anything_is_written_unless_forced(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("old\n")
    target.chmod(0o444)
    with pytest.raises(ReadOnlyFile), atomic_writer(target) as fh:
        pytest.fail("the block runs only once the write is allowed")
        fh.write("new\n")
    with atomic_writer(target, force=True) as fh:
        fh.write("new\n")
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o444


def test_expected_stamp_is_checked(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("read\n")
    _, stamp = safewrite.read_text(target)
    with pytest.raises(ChangedOnDisk), atomic_writer(target, expected=stamp) as fh:
        target.write_text("theirs\n")  # changed while the new content was written
        fh.write("mine\n")
    assert target.read_text() == "theirs\n" and _names(tmp_path) == ["r.json"]
