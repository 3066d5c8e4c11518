"""Replacing a file the way a careful editor does: the one place dagtui writes user files.

`dagtui fmt`, the editor's save, `export -o`, `import -o` and the suite editor all write
through `atomic_write`; `dagtui run`'s JSON and JUnit reports, written piece by piece,
through its streaming form `atomic_writer` (the one implementation of both), which

* writes a temp file in the target's directory (`.<name>.dagtui-<pid>.tmp`), fsyncs it,
  renames it over the target and fsyncs the directory, so a crash leaves the old file or
  the new one, never half of either;
* follows a symlink and replaces its target (the link stays a link);
* refuses a read-only file unless `force` (the mode is kept when forced);
* keeps the file's mode and, where the process may (root), its owner and group; a new
  file gets the default mode the umask allows (0644 under umask 022), not mkstemp's 0600;
* writes a file with several hard links in place (after a backup copy of the old
  content, `.<name>.dagtui-<pid>.bak`, removed once the write is complete), since a
  rename would split it from its other names;
* with `expected` (the `Stamp` of what the caller read), refuses when the file on disk is
  no longer that content, so an edit someone else made meanwhile is never discarded;
* removes temp files a killed dagtui left in that directory (their pid no longer runs on
  this machine). A stale `.bak` is left alone: after a kill mid in-place write it is the
  intact copy.

Refusals are `WriteRefused` (an `OSError`, so a caller's `except OSError` reports them).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import io
import os
import re
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from dagtui.inputs import CASES_LIMIT, TOML_LIMIT, InputError, read_bytes_stat
from dagtui.record import FrozenRecord, frozen

__all__ = [
    "ChangedOnDisk",
    "ReadOnlyFile",
    "Stamp",
    "WriteRefused",
    "atomic_write",
    "atomic_writer",
    "read_bytes",
    "read_text",
]

_TEMP = re.compile(r"^\..+\.dagtui-(\d+)(?:-\d+)?\.tmp$")


class WriteRefused(OSError):
    """The write was refused on purpose; the file on disk was not touched."""


class ReadOnlyFile(WriteRefused):
    """The target is read-only and the caller did not force the write."""


class ChangedOnDisk(WriteRefused):
    """The target no longer holds what the caller read: someone else changed it."""


@frozen
class Stamp(FrozenRecord):
    """What a file held when it was read: enough to notice any later change.

    `size == -1` means the file did not exist (-2: not readable). The digest decides: a file merely touched
    (new mtime, same bytes) is not a change, and an edit within the mtime's granularity is.
    """

    mtime_ns: int
    size: int
    digest: str

    @classmethod
    def absent(cls) -> Stamp:
        return cls(0, -1, "")

    @classmethod
    def of_bytes(cls, data: bytes, st: os.stat_result | None = None) -> Stamp:
        return cls(st.st_mtime_ns if st else 0, len(data), hashlib.sha256(data).hexdigest())

    @classmethod
    def of_path(cls, path: str | os.PathLike[str]) -> Stamp:
        """The stamp of the file as it is now (`absent()` when there is none; size -2 when
        it is no longer a readable regular file, e.g. a FIFO put in its place: a change)."""
        try:
            return read_bytes(path)[1]
        except FileNotFoundError:
            return cls.absent()
        except (OSError, InputError):
            return cls(0, -2, "")

    @property
    def exists(self) -> bool:
        return self.size >= 0


def read_bytes(path: str | os.PathLike[str], *, limit: int = CASES_LIMIT,
               ) -> tuple[bytes, Stamp]:
    """The file's bytes and the stamp to pass to `atomic_write(expected=...)` later.

    Read through `dagtui.inputs`: a FIFO, device or directory raises `InputError` (a
    `ValueError`) instead of blocking or filling memory, as does a file over `limit` bytes.
    """
    try:
        data, st = read_bytes_stat(path, limit=limit)
    except InputError as exc:
        if exc.kind == "missing":  # what callers (`Stamp.of_path`) expect for "no file"
            raise FileNotFoundError(errno.ENOENT, "No such file", os.fspath(path)) from None
        raise
    return data, Stamp.of_bytes(data, st)


def read_text(path: str | os.PathLike[str], *, universal_newlines: bool = True,
              limit: int = TOML_LIMIT) -> tuple[str, Stamp]:
    """The file as UTF-8 text (newlines translated as `Path.read_text` does, unless
    `universal_newlines=False`) with the stamp of the bytes read; `limit` defaults to a
    graph or suite file's (the TOML files dagtui edits)."""
    data, st = read_bytes(path, limit=limit)
    if universal_newlines:
        return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read(), st
    return data.decode("utf-8"), st


def atomic_write(path: str | os.PathLike[str], text: str | bytes, *,
                 expected: Stamp | None = None, force: bool = False) -> Stamp:
    """Replace the file at `path` with `text` (UTF-8, newlines written as given).

    `expected`: the stamp of what the caller read (`Stamp.absent()` for "must not exist");
    when the file no longer matches it, `ChangedOnDisk` is raised and nothing is written.
    `force`: write over a read-only file (its mode stays read-only). Returns the stamp of
    what was written. The whole-text call of `atomic_writer`, which does the work.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    with atomic_writer(path, expected=expected, force=force, binary=True) as fh:
        fh.write(data)
    return Stamp.of_bytes(data, os.stat(os.path.realpath(path)))


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, expected: Stamp | None = None,
                  force: bool = False, binary: bool = False) -> Iterator[IO[Any]]:
    """`atomic_write` for content that comes in pieces (a report of 100,000 cases need not
    be one string in memory): yields a file (UTF-8 text, newlines written as given; bytes
    with `binary`) open on a temp file beside the target.

    Refusals (not a regular file, read-only without `force`, `expected` no longer on disk)
    are raised on entry, before anything is written. On a clean exit the content replaces
    the target by the module's rules (symlink followed, owner and mode kept, a hard-linked
    file written in place); when the block raises, the temp file is removed and the target
    is untouched.
    """
    target = Path(os.path.realpath(path))  # a symlink: write where it points
    _remove_stale_temps(target.parent)
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise WriteRefused(f"{path} is not a regular file; not overwriting it")
    if st is not None and not force and _read_only(target, st):
        mode = stat.S_IMODE(st.st_mode)
        whose = "" if not mode & 0o222 else f" for this user (owner uid {st.st_uid})"
        raise ReadOnlyFile(f"{path} is read-only{whose} (mode {mode:04o}); not overwritten")
    _check_unchanged(path, target, expected)
    in_place = st is not None and st.st_nlink > 1
    fd, tmp = _temp_path(target.parent, target.name, ".tmp")
    try:
        fh = (os.fdopen(fd, "wb") if binary
              else os.fdopen(fd, "w", encoding="utf-8", newline=""))
        with fh:
            if st is not None and not in_place:
                _keep_owner_and_mode(fh.fileno(), st)
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if st is not None and in_place:
            _write_in_place(target, tmp, st, expected, path)
            os.unlink(tmp)
            return
        _replace_unless_changed(path, tmp, target, expected)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def _replace_unless_changed(shown: str | os.PathLike[str], tmp: Path, target: Path,
                            expected: Stamp | None) -> None:
    """Rename `tmp` over `target`; with `expected`, only if `target` still holds what was
    read. Where the kernel can swap two names atomically (Linux `renameat2`
    RENAME_EXCHANGE), the check is made on the very file the swap displaced, after the
    swap, so no edit made before it can be lost however long anything before it takes: on
    a mismatch the two are swapped back and `ChangedOnDisk` raised. Elsewhere the check is
    made immediately before the rename (a window of microseconds)."""
    if expected is None:
        os.replace(tmp, target)
        return
    _check_unchanged(shown, target, expected)  # cheap early refusal, nothing swapped yet
    ours = os.stat(tmp)
    try:
        swapped = expected.exists and _exchange(tmp, target)
    except FileNotFoundError:  # deleted since the check above
        raise ChangedOnDisk(f"{shown} was deleted on disk since it was read (by another "
                            "program?); not written, so that change is not lost") from None
    if not swapped:
        # nothing to swap with (a new file), or no atomic swap here: check, then rename
        _check_unchanged(shown, target, expected)
        os.replace(tmp, target)
        return
    displaced = Stamp.of_path(tmp)  # what `target` held at the instant of the swap
    if displaced.size == expected.size and displaced.digest == expected.digest:
        os.unlink(tmp)
        return
    changed = (f"{shown} was changed on disk since it was read (by another program?); not "
               "overwritten, so that change is not lost")
    if _same_inode(ours, _stat_or_none(target)):
        _exchange(tmp, target)  # theirs back in place; ours, now at tmp, is removed
        raise ChangedOnDisk(changed)
    # a third writer replaced the file after the swap: it stays; the edit the swap
    # displaced is kept beside it rather than removed with the temp file
    kept = target.with_name(f"{target.name}.dagtui-conflict-{os.getpid()}")
    os.replace(tmp, kept)
    raise ChangedOnDisk(f"{changed}; the version it had is kept as {kept.name}")


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap the files named `a` and `b` in one step (Linux `renameat2` RENAME_EXCHANGE);
    False, with nothing done, where the system or the file system cannot."""
    libc = _libc()
    if libc is None:
        return False
    if libc.renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b),
                      _RENAME_EXCHANGE) == 0:
        return True
    import ctypes

    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # not on this file system / kernel: the plain rename is used
    raise OSError(code, os.strerror(code), os.fspath(b))


@functools.cache
def _libc() -> Any:
    """The C library when it has `renameat2` (glibc 2.28+), else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here, on the first save: ~1.5 ms that the editor's first frame paid

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                   ctypes.c_uint]
    fn.restype = ctypes.c_int
    return libc


def _stat_or_none(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _same_inode(a: os.stat_result | None, b: os.stat_result | None) -> bool:
    return a is not None and b is not None and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _read_only(target: Path, st: os.stat_result) -> bool:
    """No write bit at all (root could write it, but the owner said no), or this user may
    not write it (a rename would get round the permission; it must not)."""
    return not st.st_mode & 0o222 or not os.access(target, os.W_OK)


def _check_unchanged(shown: str | os.PathLike[str], target: Path,
                     expected: Stamp | None) -> None:
    if expected is None:
        return
    now = Stamp.of_path(target)
    if now.size == expected.size and now.digest == expected.digest:
        return
    what = "was created" if not expected.exists else (
        "was deleted" if now.size == -1 else "was changed")
    raise ChangedOnDisk(f"{shown} {what} on disk since it was read (by another program?); "
                        "not overwritten, so that change is not lost")


def _temp_path(directory: Path, name: str, suffix: str) -> tuple[int, Path]:
    """Create `.<name>.dagtui-<pid>[-k]<suffix>` exclusively; the kernel applies the umask
    to 0o666, which is exactly the default mode of a new file."""
    base = f".{name}.dagtui-{os.getpid()}"
    for k in range(100):
        tmp = directory / (f"{base}{suffix}" if k == 0 else f"{base}-{k}{suffix}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                         0o666)
        except FileExistsError:
            continue
        return fd, tmp
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(directory / base))


def _keep_owner_and_mode(fd: int, st: os.stat_result) -> None:
    if hasattr(os, "fchown"):  # POSIX only
        with contextlib.suppress(OSError):  # EPERM unless root (or a group member): the
            os.fchown(fd, st.st_uid, st.st_gid)  # file is then ours, the save still goes on
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(st.st_mode))  # after chown, which may clear setuid bits


def _write_in_place(target: Path, source: Path, st: os.stat_result, expected: Stamp | None,
                    shown: str | os.PathLike[str]) -> None:
    """Overwrite the file's own inode with `source`'s content so its other hard links see
    it; a backup copy of the old content stands beside it until the write is complete."""
    with open(target, "rb") as old:
        fd, backup = _temp_path(target.parent, target.name, ".bak")
        try:
            _keep_owner_and_mode(fd, st)
            with open(fd, "wb", closefd=False) as copy:
                shutil.copyfileobj(old, copy)
            os.fsync(fd)
        finally:
            os.close(fd)
    _fsync_dir(target.parent)
    _check_unchanged(shown, target, expected)
    restore: int | None = None
    try:
        out = os.open(target, os.O_WRONLY)
    except PermissionError:
        if not st.st_mode & 0o200 and st.st_uid == getattr(os, "geteuid", lambda: -1)():
            # forced over a read-only file of ours: writable just for this write
            restore = stat.S_IMODE(st.st_mode)
            os.chmod(target, restore | 0o200)
            out = os.open(target, os.O_WRONLY)
        else:
            os.unlink(backup)
            raise
    try:
        with open(source, "rb") as src, open(out, "wb", closefd=False) as dst:
            shutil.copyfileobj(src, dst)
            size = dst.tell()
        os.ftruncate(out, size)
        os.fsync(out)
    finally:
        os.close(out)
        if restore is not None:
            os.chmod(target, restore)
    os.unlink(backup)
    _fsync_dir(target.parent)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # make the rename durable where the OS allows it
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _remove_stale_temps(directory: Path) -> None:
    """Delete `.*.dagtui-<pid>.tmp` files whose writer no longer runs (killed mid-write)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        m = _TEMP.match(name)
        if m is None or _alive(int(m.group(1))):
            continue
        path = directory / name
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(path).st_mode):
                os.unlink(path)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name == "nt":  # no signal-0 probe there (os.kill would stop it): keep its files
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it runs, as another user
        return True
    return True
