"""Screening project files before they reach the system prompt (SPEC S2).

Context files and SOUL.md are written by whoever wrote the repository, so they are
scanned with the ``context`` scope of ``mnemo.security.scan`` before they are loaded. A
file with a finding is not loaded: its text becomes one ``[BLOCKED: …]`` line, and every
finding is logged on ``mnemo.prompt`` (at WARNING, with the word BLOCKED, the file and the
line) and returned, so the CLI can show it when a session starts.

``security.allow_patterns`` maps a file to pattern ids it may contain — the answer to
"my document *describes* prompt injection and gets blocked". A key matches a file by its
base name (``AGENTS.md``), by the name shown in the prompt (``.cursor/rules/x.mdc``) or
by its path (``~`` allowed). Allowed findings are still returned and logged (at INFO),
marked ``allowed``.

Only what will be loaded is scanned (a truncated file's head and tail, not the middle
that is cut), but line numbers are those of the file on disk: callers hand in segments
with the line each one starts on. ``scan`` reads at most 64 KiB, so a longer segment is
scanned in overlapping chunks rather than being blocked for its length.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mnemo.security import MAX_SCAN_CHARS, scan

__all__ = ["PromptFinding", "allowed_ids_for", "blocked_notice", "screen_segments"]

log = logging.getLogger("mnemo.prompt")

# How far chunks of a long segment overlap, so a pattern that spans a chunk boundary
# (an HTML comment over a few lines) is still seen whole in one of them.
_CHUNK_OVERLAP = 4096


@dataclass(frozen=True)
class PromptFinding:
    """A threat found in a file meant for the system prompt.

    ``file`` is the name shown in the prompt, ``path`` the file on disk, ``line`` the
    1-based line in that file. ``allowed`` is True when ``security.allow_patterns``
    accepts this pattern for this file; any finding that is not allowed blocks the file.
    """

    file: str
    path: str
    line: int
    pattern_id: str
    description: str
    excerpt: str
    allowed: bool

    @property
    def blocked(self) -> bool:
        return not self.allowed

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "blocked": self.blocked}


def blocked_notice(filename: str, pattern_ids: Sequence[str]) -> str:
    """The line that replaces a blocked file's content (the seed's wording)."""
    return (f"[BLOCKED: {filename} contained potential prompt injection "
            f"({', '.join(pattern_ids)}). Content not loaded.]")


def allowed_ids_for(allow_patterns: Mapping[str, Sequence[str]] | None, path: Path,
                    display: str) -> frozenset[str]:
    """The pattern ids ``allow_patterns`` accepts for the file at ``path``."""
    if not allow_patterns:
        return frozenset()
    absolute = path.absolute()
    allowed: set[str] = set()
    for key, ids in allow_patterns.items():
        if key in (path.name, display) or _same_path(key, absolute):
            allowed.update(ids)
    return frozenset(allowed)


def _same_path(key: str, absolute: Path) -> bool:
    if "/" not in key:
        return False
    candidate = Path(key).expanduser()
    return candidate.is_absolute() and candidate == absolute


def screen_segments(
    segments: Iterable[tuple[str, int]],
    *,
    file: str,
    path: Path,
    allowed_ids: frozenset[str] = frozenset(),
) -> list[PromptFinding]:
    """Scan each ``(text, first_line)`` segment of one file; log and return the findings.

    ``first_line`` is the line of the file on which the segment's text starts. Findings
    come back in line order, one per pattern and line.
    """
    seen: set[tuple[str, int]] = set()
    findings: list[PromptFinding] = []
    for text, first_line in segments:
        for chunk, chunk_line in _chunks(text, first_line):
            for found in scan(chunk, "context"):
                line = chunk_line + found.line - 1
                if (found.pattern_id, line) in seen:
                    continue
                seen.add((found.pattern_id, line))
                findings.append(PromptFinding(
                    file=file, path=str(path), line=line, pattern_id=found.pattern_id,
                    description=found.description, excerpt=found.excerpt,
                    allowed=found.pattern_id in allowed_ids,
                ))
    findings.sort(key=lambda f: (f.line, f.pattern_id))
    for finding in findings:
        if finding.allowed:
            log.info("allowed %s line %d: %s (%s) accepted by security.allow_patterns",
                     finding.file, finding.line, finding.pattern_id, finding.excerpt)
        else:
            log.warning("BLOCKED %s line %d: %s — %s: %s (%s)", finding.file, finding.line,
                        finding.pattern_id, finding.description, finding.excerpt, finding.path)
    return findings


def _chunks(text: str, first_line: int) -> Iterable[tuple[str, int]]:
    """``text`` in pieces ``scan`` reads whole, each with the file line it starts on."""
    if len(text) <= MAX_SCAN_CHARS:
        yield text, first_line
        return
    start = 0
    while start < len(text):
        end = min(len(text), start + MAX_SCAN_CHARS)
        if end < len(text):
            # Prefer to end a chunk at a line break so no line is split.
            newline = text.rfind("\n", start + MAX_SCAN_CHARS // 2, end)
            if newline > start:
                end = newline + 1
        yield text[start:end], first_line + text.count("\n", 0, start)
        if end >= len(text):
            return
        restart = max(start + 1, end - _CHUNK_OVERLAP)
        newline = text.find("\n", restart, end)
        start = newline + 1 if newline >= 0 else restart
