"""Saving like a careful editor (`dagtui.safewrite`), on real files.

Every writer of user files (`fmt`, the editor's save, `export -o`, `import -o`, the suite
editor) goes through `safewrite.atomic_write`: a symlink stays a link and its target is
written, a read-only file is refused unless forced, mode and owner are kept, a new file gets
the umask's default mode, hard links are not split, an edit made on disk after the file was
read is never discarded, and temp files a killed writer left behind are cleaned up.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dagtui import safewrite
from dagtui.cli import main
from dagtui.safewrite import ChangedOnDisk, ReadOnlyFile, Stamp, atomic_write
from dagtui.tui.state import EditorState

GRAPHS = Path(__file__).resolve().parent.parent / "graphs"
#: valid, but not in canonical layout: `fmt` rewrites it
MESSY = '[nodes.a]\ncriteria="Is it?"\ntype="binary"\nverdicts=[{verdict=true,score=1},' \
        '{verdict=false,score=0}]\n[metric]\nname="M"\n'


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.fixture
def umask_022():  # type: ignore[no-untyped-def]
    old = os.umask(0o022)
    yield
    os.umask(old)


# ------------------------------------------------------------------------------------------
# symlinks


def test_symlink_stays_a_link_and_its_target_is_written(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    target = real / "g.toml"
    target.write_text("old\n")
    link = tmp_path / "g.toml"
    link.symlink_to(target)
    atomic_write(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new\n"
    assert _names(real) == ["g.toml"] and _names(tmp_path) == ["g.toml", "real"]


def test_fmt_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.toml"
    target.write_text(MESSY)
    link = tmp_path / "link.toml"
    link.symlink_to(target.name)  # relative, as people make them
    assert main(["fmt", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == "real.toml"
    assert target.read_text() != MESSY
    assert main(["fmt", "--check", str(link)]) == 0


def test_editor_save_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.toml"
    shutil.copy(GRAPHS / "meeting_summary.toml", target)
    link = tmp_path / "g.toml"
    link.symlink_to(target)
    state = EditorState.open(link)
    state.add_verdict("order")
    state.save()
    assert link.is_symlink()
    assert target.read_text().count("{ verdict =") > (
        (GRAPHS / "meeting_summary.toml").read_text().count("{ verdict ="))


# ------------------------------------------------------------------------------------------
# read-only files, mode, owner


def test_read_only_file_is_refused_without_force_and_written_with_it(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    target.write_text("old\n")
    target.chmod(0o444)
    with pytest.raises(ReadOnlyFile, match="read-only"):
        atomic_write(target, "new\n")
    assert target.read_text() == "old\n"
    atomic_write(target, "new\n", force=True)
    assert target.read_text() == "new\n"
    assert _mode(target) == 0o444  # forced, but still read-only afterwards
    assert _names(tmp_path) == ["g.toml"]


def test_fmt_refuses_a_read_only_file(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "g.toml"
    target.write_text(MESSY)
    target.chmod(0o444)
    assert main(["fmt", str(target)]) == 2
    assert target.read_text() == MESSY
    assert "read-only" in capsys.readouterr().err


def test_editor_save_refuses_a_read_only_file(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    shutil.copy(GRAPHS / "meeting_summary.toml", target)
    target.chmod(0o444)
    before = target.read_text()
    state = EditorState.open(target)
    state.add_verdict("order")
    with pytest.raises(ReadOnlyFile):
        state.save()
    assert target.read_text() == before and state.dirty


def test_mode_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    target.write_text("old\n")
    target.chmod(0o640)
    atomic_write(target, "new\n")
    assert _mode(target) == 0o640


@pytest.mark.usefixtures("umask_022")
def test_new_file_gets_the_umask_default_mode(tmp_path: Path) -> None:
    target = tmp_path / "new.toml"
    atomic_write(target, "x = 1\n")
    assert _mode(target) == 0o644


@pytest.mark.usefixtures("umask_022")
def test_export_output_is_0644_and_an_existing_ones_mode_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "g.mmd"
    graph = str(GRAPHS / "meeting_summary.toml")
    assert main(["export", graph, "--to", "mermaid", "-o", str(out)]) == 0
    assert _mode(out) == 0o644
    out.chmod(0o600)
    assert main(["export", graph, "--to", "dot", "-o", str(out)]) == 0
    assert _mode(out) == 0o600 and out.read_text().startswith("digraph")
    out.chmod(0o444)
    assert main(["export", graph, "--to", "mermaid", "-o", str(out)]) == 2
    assert out.read_text().startswith("digraph")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="only root can give a file to another user")
def test_owner_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    target.write_text("old\n")
    os.chown(target, 1000, 1000)
    atomic_write(target, "new\n")
    st = target.stat()
    assert (st.st_uid, st.st_gid) == (1000, 1000)
    assert target.read_text() == "new\n"


# ------------------------------------------------------------------------------------------
# hard links


def test_hard_link_is_not_split(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    target.write_text("old and longer than the new text\n")
    target.chmod(0o640)
    other = tmp_path / "other-name.toml"
    os.link(target, other)
    inode = target.stat().st_ino
    atomic_write(target, "new\n")
    assert target.stat().st_ino == inode == other.stat().st_ino
    assert other.read_text() == "new\n" and target.stat().st_nlink == 2
    assert _mode(target) == 0o640
    assert _names(tmp_path) == ["g.toml", "other-name.toml"]  # the backup copy is gone


def test_hard_link_write_refuses_a_change_on_disk_too(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    target.write_text("read\n")
    os.link(target, tmp_path / "b.toml")
    _, stamp = safewrite.read_text(target)
    target.write_text("theirs\n")
    with pytest.raises(ChangedOnDisk):
        atomic_write(target, "mine\n", expected=stamp)
    assert target.read_text() == "theirs\n"
    assert _names(tmp_path) == ["b.toml", "g.toml"]


# ------------------------------------------------------------------------------------------
# a change on disk between read and write


def test_change_between_read_and_write_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    target.write_text("read\n")
    text, stamp = safewrite.read_text(target)
    assert atomic_write(target, "mine\n", expected=stamp).digest  # unchanged: written
    _, stamp = safewrite.read_text(target)
    target.write_text("their\n")  # same size, maybe the same mtime tick: the digest tells
    os.utime(target, ns=(stamp.mtime_ns, stamp.mtime_ns))
    with pytest.raises(ChangedOnDisk, match="changed on disk"):
        atomic_write(target, "again\n", expected=stamp)
    assert target.read_text() == "their\n"
    assert _names(tmp_path) == ["g.toml"]


def test_a_file_created_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    target.write_text("someone else's\n")
    with pytest.raises(ChangedOnDisk, match="was created"):
        atomic_write(target, "mine\n", expected=Stamp.absent())
    assert target.read_text() == "someone else's\n"


def test_a_touched_but_unchanged_file_is_written(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    target.write_text("read\n")
    _, stamp = safewrite.read_text(target)
    os.utime(target, ns=(1, 1))
    atomic_write(target, "mine\n", expected=stamp)
    assert target.read_text() == "mine\n"


def test_fmt_refuses_when_the_file_changes_while_it_runs(tmp_path: Path, monkeypatch,
                                                         capsys) -> None:  # type: ignore[no-untyped-def]
    import dagtui.graph.tomlio as tomlio

    target = tmp_path / "g.toml"
    target.write_text(MESSY)
    real_format = tomlio.format_text
    theirs = MESSY.replace('name="M"', 'name="Theirs"')

    def format_while_someone_edits(text: str, **given: object) -> str:
        target.write_text(theirs)  # someone saves between fmt's read and its write
        return real_format(text, **given)  # type: ignore[arg-type]

    monkeypatch.setattr(tomlio, "format_text", format_while_someone_edits)
    assert main(["fmt", str(target)]) == 2
    assert target.read_text() == theirs
    assert "changed on disk" in capsys.readouterr().err
    assert _names(tmp_path) == ["g.toml"]


def test_editor_save_refuses_a_change_made_on_disk_after_loading(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    shutil.copy(GRAPHS / "meeting_summary.toml", target)
    state = EditorState.open(target)
    state.add_verdict("order")
    theirs = target.read_text().replace('"Heading order"', '"Theirs"')
    target.write_text(theirs)
    with pytest.raises(ChangedOnDisk):
        state.save()
    assert target.read_text() == theirs and state.dirty
    state.accept_disk_version()  # "overwrite it with my version"
    written = state.save()
    assert target.read_text() == written and not state.dirty
    state.add_verdict("order")
    state.save()  # the stamp follows our own writes: a second save is not refused


def test_editor_new_file_is_not_written_over_one_created_meanwhile(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    state = EditorState.open(target, starter="blank")
    target.write_text("# someone else's\n")
    with pytest.raises(ChangedOnDisk):
        state.save()
    assert target.read_text() == "# someone else's\n"


# ------------------------------------------------------------------------------------------
# temp files


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temp_files_of_dead_writers_are_cleaned(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    target.write_text("old\n")
    dead = _dead_pid()
    stale = [tmp_path / f".g.toml.dagtui-{dead}.tmp", tmp_path / f".x.toml.dagtui-{dead}-2.tmp"]
    live = tmp_path / f".g.toml.dagtui-{os.getppid()}.tmp"  # its writer still runs
    backup = tmp_path / f".g.toml.dagtui-{dead}.bak"  # maybe the only intact copy: kept
    for p in (*stale, live, backup):
        p.write_text("half")
    atomic_write(target, "new\n")
    assert _names(tmp_path) == sorted([live.name, backup.name, "g.toml"])


def test_temp_file_is_named_recognisably_and_removed_on_failure(tmp_path: Path,
                                                                monkeypatch) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "g.toml"
    target.write_text("precious\n")
    seen: list[str] = []

    def boom(src, dst):  # type: ignore[no-untyped-def]
        seen.append(Path(src).name)
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, "new\n")
    assert seen == [f".g.toml.dagtui-{os.getpid()}.tmp"]
    assert target.read_text() == "precious\n" and _names(tmp_path) == ["g.toml"]


def test_a_fifo_put_in_place_of_the_file_is_a_change_not_a_hang(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    target.write_text("read\n")
    _, stamp = safewrite.read_text(target)
    target.unlink()
    os.mkfifo(target)
    assert Stamp.of_path(target).size == -2  # not read: no hang, and not "the same"
    with pytest.raises(safewrite.WriteRefused, match="not a regular file"):
        atomic_write(target, "mine\n", expected=stamp)
    assert stat.S_ISFIFO(target.stat().st_mode)


def test_import_force_writes_over_a_read_only_output_keeping_its_mode(tmp_path: Path) -> None:
    dag = tmp_path / "dag.json"
    assert main(["export", str(GRAPHS / "meeting_summary.toml"), "--to", "deepeval-json",
                 "-o", str(dag)]) == 0
    out = tmp_path / "g.toml"
    out.write_text("# mine\n")
    out.chmod(0o444)
    assert main(["import", str(dag), "-o", str(out)]) == 2  # exists: refused
    assert out.read_text() == "# mine\n"
    assert main(["import", str(dag), "-o", str(out), "--force"]) == 0
    assert "[metric]" in out.read_text() and _mode(out) == 0o444
