"""``scan(text, scope)``: the one threat scanner for memory, context files and recall.

The text is NFKC-normalised first, so full-width or compatibility look-alikes of a
pattern ("ｉｇｎｏｒｅ") match like the plain letters. Invisible characters are looked for in
the raw text (normalisation would not remove them, but the raw offsets give the right
line). At most ``MAX_SCAN_CHARS`` characters are examined; if a text is longer, a
``scan_limit`` finding says so, so a caller that blocks on findings never trusts text
that was not read. Callers truncate what they load before scanning it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Literal

from mnemo.security.patterns import INVISIBLE_CHARS, PATTERNS, SCOPES

__all__ = ["MAX_SCAN_CHARS", "Finding", "Scope", "scan"]

Scope = Literal["strict", "context"]

MAX_SCAN_CHARS = 64 * 1024


@dataclass(frozen=True)
class Finding:
    """One threat found: which pattern, on which line (1-based), and a short excerpt."""

    pattern_id: str
    line: int
    excerpt: str
    description: str


def _excerpt(line_text: str, limit: int = 80) -> str:
    cleaned = "".join(ch if ch not in INVISIBLE_CHARS else f"<U+{ord(ch):04X}>"
                      for ch in line_text.strip())
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def scan(text: str, scope: Scope = "context") -> list[Finding]:
    """Every threat in ``text`` for ``scope`` (``strict`` or ``context``), in line order.

    Each pattern is reported once per line it matches; invisible characters once per
    distinct character and line.
    """
    if scope not in SCOPES:
        raise ValueError(f"unknown scan scope {scope!r}; use one of {', '.join(SCOPES)}")
    findings: list[Finding] = []
    if len(text) > MAX_SCAN_CHARS:
        findings.append(Finding(
            "scan_limit", 1, f"{len(text):,} chars",
            f"text longer than {MAX_SCAN_CHARS:,} chars; only the start was scanned",
        ))
        text = text[:MAX_SCAN_CHARS]
    raw_lines = text.split("\n")

    for number, line_text in enumerate(raw_lines, start=1):
        seen: set[str] = set()
        for ch in line_text:
            if ch in INVISIBLE_CHARS and ch not in seen:
                seen.add(ch)
                findings.append(Finding(
                    "invisible_unicode", number, _excerpt(line_text),
                    f"invisible character U+{ord(ch):04X} {INVISIBLE_CHARS[ch]}",
                ))

    # Normalise line by line so match offsets map back to the original line numbers.
    normal_lines = [_normalise(line) for line in raw_lines]
    normal = "\n".join(normal_lines)
    line_starts = [0]
    for line in normal_lines[:-1]:
        line_starts.append(line_starts[-1] + len(line) + 1)

    for pattern in PATTERNS:
        if scope not in pattern.scopes:
            continue
        reported: set[int] = set()
        for offset in pattern.matcher(normal):
            number = _line_of(line_starts, offset)
            if number in reported:
                continue
            reported.add(number)
            findings.append(Finding(pattern.id, number, _excerpt(raw_lines[number - 1]),
                                    pattern.description))
    findings.sort(key=lambda f: f.line)
    return findings


def _normalise(line: str) -> str:
    """NFKC, without invisible format characters that could split a keyword.

    "ig\u00adnore" (a soft hyphen) or "ig\u034fnore" (a grapheme joiner) must match like
    "ignore"; every Unicode format character (category Cf) and U+034F is dropped before
    matching. Only the characters of ``INVISIBLE_CHARS`` are reported on their own.
    """
    if not line.isascii():
        line = "".join(ch for ch in line
                       if ch != "\u034f" and unicodedata.category(ch) != "Cf")
        line = unicodedata.normalize("NFKC", line)
    return line.replace("\n", " ")


def _line_of(line_starts: list[int], offset: int) -> int:
    """1-based line number of ``offset`` (binary search over line start offsets)."""
    lo, hi = 0, len(line_starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if line_starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1
