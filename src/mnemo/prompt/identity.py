"""Who the agent is (SPEC B2): the user's ``SOUL.md``, or mnemo's default identity.

``$MNEMO_HOME/SOUL.md`` replaces the default identity when it has any text. It is
screened and capped exactly like a context file (it can come from anywhere a user copied
it from). If it is blocked, the default identity is used and the BLOCKED line follows it,
so the agent still knows who it is and the user sees why their file was not used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mnemo.prompt.context_files import CONTEXT_FILE_MAX_CHARS, load_prompt_file
from mnemo.prompt.screening import PromptFinding

__all__ = ["DEFAULT_IDENTITY", "Identity", "load_identity"]

DEFAULT_IDENTITY = (
    "You are mnemo, an AI assistant that works alongside the user over many sessions. "
    "You remember what matters between conversations and use the tools you are given to "
    "get real work done. Be direct and accurate: say plainly what you know, what you "
    "checked and what you are unsure of. Prefer doing the work to describing it, keep "
    "answers as short as the question allows, and match the user's language and tone."
)


@dataclass(frozen=True)
class Identity:
    """The identity part: its text, where it came from, and SOUL.md's findings."""

    text: str
    source: str  # "soul", "default", or "default+blocked"
    findings: tuple[PromptFinding, ...] = ()


def load_identity(
    soul_file: Path,
    *,
    max_chars: int = CONTEXT_FILE_MAX_CHARS,
    allow_patterns: Mapping[str, Sequence[str]] | None = None,
) -> Identity:
    """The identity text: ``soul_file`` if it has text (screened, capped), else the default."""
    if not soul_file.is_file():
        return Identity(DEFAULT_IDENTITY, "default")
    loaded = load_prompt_file(soul_file, soul_file.name, max_chars=max_chars,
                              allow_patterns=allow_patterns, strip_front_matter=False)
    if loaded.blocked:
        return Identity(f"{DEFAULT_IDENTITY}\n\n{loaded.text}", "default+blocked",
                        loaded.findings)
    if not loaded.text:
        return Identity(DEFAULT_IDENTITY, "default", loaded.findings)
    return Identity(loaded.text, "soul", loaded.findings)
