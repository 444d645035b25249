"""The memory file format: entries joined by ``"\\n§\\n"``, and the snapshot block.

This module is pure text in, text out: parsing, serialising, measuring, validating one
entry's text, and rendering a store as the block the system prompt shows. The store
(``store.py``) adds files, locks and the operations on top.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "ENTRY_DELIMITER",
    "FILENAMES",
    "SEPARATOR",
    "TARGETS",
    "Target",
    "blocked_placeholder",
    "canonical",
    "delimiter_problem",
    "format_usage",
    "near_delimiter_problem",
    "parse_entries",
    "render_block",
    "round_trips",
    "serialize_entries",
    "usage_of",
]

ENTRY_DELIMITER = "\n§\n"
SEPARATOR = "═" * 46

Target = Literal["memory", "user"]
TARGETS: tuple[Target, ...] = ("memory", "user")
FILENAMES: dict[Target, str] = {"memory": "MEMORY.md", "user": "USER.md"}
_TITLES: dict[Target, str] = {
    "memory": "MEMORY (your personal notes)",
    "user": "USER PROFILE (who the user is)",
}


def canonical(raw: str) -> str:
    """The text as mnemo would compare it: Unix newlines, no surrounding whitespace."""
    return raw.replace("\r\n", "\n").strip()


def parse_entries(raw: str) -> list[str]:
    """Split a file into entries: strip each, drop empty ones and later duplicates."""
    entries: list[str] = []
    seen: set[str] = set()
    for piece in raw.replace("\r\n", "\n").split(ENTRY_DELIMITER):
        entry = piece.strip()
        if entry and entry not in seen:
            seen.add(entry)
            entries.append(entry)
    return entries


def serialize_entries(entries: list[str]) -> str:
    return ENTRY_DELIMITER.join(entries)


def usage_of(entries: list[str]) -> int:
    """Characters the entries take in the file (the number the limit applies to)."""
    return len(serialize_entries(entries))


def round_trips(raw: str) -> bool:
    """True when parsing and writing back would reproduce the file (no hand edits lost)."""
    return serialize_entries(parse_entries(raw)) == canonical(raw)


def delimiter_problem(content: str) -> str | None:
    """Why ``content`` cannot be one entry (it holds a ``§`` line), or None if it can."""
    for number, line in enumerate(content.replace("\r\n", "\n").split("\n"), start=1):
        if line.strip() == "§":
            return (
                f"line {number} is a lone '§', which is the entry delimiter and would split "
                "this into several entries; remove that line or write the § inside text"
            )
    return None


def near_delimiter_problem(text: str) -> str | None:
    """A line that looks meant as a delimiter but is not one (``" § "``), or None.

    Such a line would silently join two entries into one, so a whole-file edit with one
    is refused rather than guessed at.
    """
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if line != "§" and line.strip() == "§":
            return (f"line {number} holds '§' with spaces around it; a delimiter line must "
                    "hold only '§', so remove the spaces")
    return None


def format_usage(used: int, limit: int) -> str:
    """``"42% — 924/2,200 chars"``; the percent is capped at 100."""
    percent = min(100, int(used / limit * 100)) if limit > 0 else 100
    return f"{percent}% — {used:,}/{limit:,} chars"


def blocked_placeholder(target: Target, pattern_ids: list[str]) -> str:
    return (
        f"[BLOCKED: {FILENAMES[target]} entry contained threat pattern(s): "
        f"{', '.join(pattern_ids)}. Removed from system prompt; use memory(action=remove) "
        "to delete the original.]"
    )


def render_block(target: Target, shown: list[str], used: int, limit: int) -> str:
    """The snapshot block of one store; ``shown`` are the entries as the prompt shows them.

    ``used`` is the usage of the real entries (blocked ones count with their real size).
    An empty store renders as "" (nothing in the prompt).
    """
    if not shown:
        return ""
    header = f"{_TITLES[target]} [{format_usage(used, limit)}]"
    return f"{SEPARATOR}\n{header}\n{SEPARATOR}\n{serialize_entries(shown)}"
