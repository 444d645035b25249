"""Moving curated memory in and out as Hermes-format files (``mnemo memory export|import``).

The format is the one the file store keeps on disk (SPEC M2): ``MEMORY.md`` and
``USER.md``, entries separated by a line holding only ``§``. Export writes what the store
holds now, from any backend; import goes through the store's own operations — a batch of
adds by default, a ``rewrite`` with ``replace`` — so every entry meets the same scan and
limit as a model's write, and a file that breaks a rule changes nothing in that store.
"""

from __future__ import annotations

from pathlib import Path

from mnemo.errors import UsageError
from mnemo.fileio import atomic_write_text
from mnemo.memory.entries import FILENAMES, TARGETS, Target, parse_entries, serialize_entries
from mnemo.memory.store import MemoryStore, Result

__all__ = ["export_memory", "import_memory"]


def export_memory(store: MemoryStore, directory: Path) -> list[str]:
    """Write both stores into ``directory``; return one line per file written."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {directory} ({exc.strerror}); pick a folder you "
                         "can write.") from exc
    lines: list[str] = []
    for target in TARGETS:
        entries = store.read(target)["entries"]
        path = directory / FILENAMES[target]
        atomic_write_text(path, serialize_entries(entries))
        lines.append(f"{path}: {len(entries)} entries")
    return lines


def import_memory(store: MemoryStore, directory: Path, *, replace: bool = False
                  ) -> dict[Target, Result]:
    """Load the files of ``directory`` that exist into ``store``; one result per store."""
    results: dict[Target, Result] = {}
    for target in TARGETS:
        path = directory / FILENAMES[target]
        if not path.exists():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            results[target] = {"success": False,
                               "error": f"{path} cannot be read ({exc}); nothing imported."}
            continue
        if replace:
            results[target] = store.rewrite(target, text)
            continue
        current = store.read(target)["entries"]
        new = [e for e in parse_entries(text) if e not in current]
        if not new:
            results[target] = {"success": True, "message": "nothing new to import",
                               "usage": store.usage(target)}
            continue
        results[target] = store.batch(target, [{"action": "add", "content": e} for e in new])
    if not results:
        raise UsageError(f"{directory} holds neither {FILENAMES['memory']} nor "
                         f"{FILENAMES['user']}; nothing to import.")
    return results
