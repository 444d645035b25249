"""Memory files as they really are on disk: wrong encodings, symlinks, hand-made giants.

The store (``store.py``) assumes a small UTF-8 file it owns. Users edit these files by
hand, sync them between machines and link them into dotfile repositories, so three
cases get a defined answer here instead of an exception that stops the agent:

* **Not UTF-8.** The file is decoded with replacement characters so the agent still
  starts and the prompt still shows what is readable; the store treats that file as
  read-only (no tool write could keep the original bytes) and the warning names the
  byte, the line and the command that converts it. ``mnemo memory edit`` is the other
  way out: it backs the original up first.
* **A symlink.** Followed: the lock, the temp file and the atomic rename happen at the
  link's target, so the link stays a link and the target is replaced atomically. A link
  that loops or points into a folder that does not exist is refused with a clear error;
  the link is never replaced by a regular file.
* **Far over the limit.** ``fit_entries`` picks, in file order, the entries that fit the
  store's limit; the snapshot shows those and one line saying what was left out and how
  to fix it. Nothing is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mnemo.errors import StoreError
from mnemo.memory.entries import ENTRY_DELIMITER, FILENAMES, Target

__all__ = ["FileText", "fit_entries", "left_out_notice", "read_memory_file", "write_path"]


@dataclass(frozen=True)
class FileText:
    """A memory file's text and, when it is not valid UTF-8, why writes are refused."""

    text: str
    encoding_problem: str | None = None


def read_memory_file(path: Path) -> FileText:
    """The text of ``path`` ("" when missing), decoded leniently when it is not UTF-8."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return FileText("")
    except IsADirectoryError as exc:
        raise StoreError(f"{path} cannot be read: it is a folder, not a file; move it "
                         "aside") from exc
    except OSError as exc:
        raise StoreError(f"{path} cannot be read ({exc.strerror or exc}); check that it "
                         "is a file you can read (chmod 644)") from exc
    try:
        return FileText(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problem = (
            f"{path.name} is not valid UTF-8 (byte {exc.start:,}, line {line}), so memory "
            f"keeps it read-only. Convert it: iconv -f WINDOWS-1252 -t UTF-8 '{path}' > "
            f"'{path}.utf8' && mv '{path}.utf8' '{path}' (use the encoding it was saved "
            "in), or fix it with `mnemo memory edit`, which backs up the original first."
        )
        return FileText(data.decode("utf-8", errors="replace"), problem)


def write_path(path: Path) -> Path:
    """Where a write to ``path`` must land: the file itself, or a symlink's target.

    Writing through the link keeps it a link; replacing the link with a temp file would
    silently cut the user's file loose from where it lives.
    """
    if not path.is_symlink():
        return path
    try:
        target = path.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # a loop of links
        raise StoreError(f"{path} is a symlink that cannot be followed ({exc}); point it at "
                         "a file or replace it with one") from exc
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise StoreError(f"{path} is a symlink to {target}, which is not a file; point it "
                         "at a file or replace it with one")
    if not target.parent.is_dir():
        raise StoreError(f"{path} is a symlink to {target}, whose folder does not exist; "
                         "create the folder, or point the link elsewhere")
    return target


def fit_entries(entries: list[str], limit: int) -> tuple[list[str], list[str]]:
    """The entries that fit ``limit`` chars (in file order, skipping any that do not),
    and the ones left out."""
    kept: list[str] = []
    left: list[str] = []
    used = 0
    for entry in entries:
        cost = len(entry) + (len(ENTRY_DELIMITER) if kept else 0)
        if used + cost <= limit:
            kept.append(entry)
            used += cost
        else:
            left.append(entry)
    return kept, left


def left_out_notice(target: Target, total: int, left: list[str], limit: int) -> str:
    """One line for the user (and the prompt) about entries an oversized file lost."""
    name = FILENAMES[target]
    size = sum(len(e) for e in left)
    setting = "memory_char_limit" if target == "memory" else "user_char_limit"
    return (f"{name} holds {total:,} chars, over its {limit:,}-char limit: "
            f"{len(left)} entr{'y' if len(left) == 1 else 'ies'} ({size:,} chars) left out "
            f"of the prompt; nothing was deleted. Shorten it with `mnemo memory edit "
            f"--target {target}` or raise memory.{setting} in config.yaml.")
