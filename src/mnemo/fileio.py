"""Durable file writes and cross-process locks, shared by every file mnemo owns.

``atomic_write_text`` is the one way mnemo replaces a file: a temp file in the same
directory, flushed and fsynced, ``os.replace``d over the target, then the directory
fsynced so the rename itself survives a power cut. Readers never lock and always see a
whole old or a whole new file.

``exclusive_lock`` takes an ``fcntl.flock`` on a separate lock file (``<name>.lock``), so
the lock is never on the file being replaced. flock locks belong to the open file, so
they vanish with the process that held them: a lock file left behind by a crashed
process is just an empty file and never blocks anyone.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "atomic_write_text",
    "atomic_writer",
    "exclusive_lock",
    "fsync_dir",
    "is_read_only",
    "lock_path_for",
    "remove_stale_temps",
    "temp_prefix",
]


def lock_path_for(path: Path) -> Path:
    """The lock file guarding ``path`` (``MEMORY.md`` → ``MEMORY.md.lock``)."""
    return path.with_name(path.name + ".lock")


def temp_prefix(path: Path) -> str:
    """The prefix of temp files written for ``path``: ``.mem_<name>.``.

    Naming the target in the prefix lets a writer that holds the target's lock remove
    temp files a killed writer left behind without touching another file's temps.
    """
    return f".mem_{path.name}."


@functools.cache
def _umask() -> int:
    """The process umask (read once: setting it is the only way to read it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def fsync_dir(directory: Path) -> None:
    """Flush a directory entry change (a rename) to disk; a no-op where unsupported."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the rename is still atomic
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_writer(path: Path, *, binary: bool = False) -> Iterator[IO[Any]]:
    """A handle on a temp file that replaces ``path`` when the block ends without error.

    The temp file sits next to ``path`` (``.mem_<name>.*.tmp``), is flushed and fsynced,
    then renamed over ``path`` and the folder fsynced. If the block raises, the temp file
    is removed and ``path`` is untouched. A new file gets the permissions ``open()``
    would give it (the umask applies); an existing file keeps its own.
    """
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix(path), suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        handle: IO[Any]
        with (os.fdopen(fd, "wb") if binary
              else os.fdopen(fd, "w", encoding="utf-8", newline="")) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            # Keep the permissions a user gave the file (mkstemp creates 0600).
            tmp.chmod(path.stat().st_mode & 0o7777)
        else:
            tmp.chmod(0o666 & ~_umask())  # what open() would have made
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) so readers see all of it or none of it."""
    with atomic_writer(path) as handle:
        handle.write(text)


def is_read_only(path: Path) -> bool:
    """True when the owner's write bit is off: the user asked for the file to be left alone.

    Checked through the mode bits rather than ``os.access`` because root may write
    anything, and an atomic replace would otherwise quietly override the user's choice.
    """
    try:
        return not path.stat().st_mode & stat.S_IWUSR
    except FileNotFoundError:
        return False


def remove_stale_temps(path: Path) -> int:
    """Delete temp files a killed writer left for ``path``; call only under its lock."""
    removed = 0
    for stale in path.parent.glob(temp_prefix(path) + "*.tmp"):
        with contextlib.suppress(OSError):
            stale.unlink()
            removed += 1
    return removed


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive cross-process lock for ``path`` (on ``<path>.lock``)."""
    lock_file = lock_path_for(path)
    with open(lock_file, "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
