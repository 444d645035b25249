"""Search results as the caller sees them: ``SearchHit`` rows with a marked snippet.

The snippet is cut in Python on both backends: ``mark_snippet`` takes a window of the
text from just before the first needle found (a query term — its words with any
punctuation between —, a CJK run or the literal) and marks every needle in it
``>>like this<<``; ``snippet_around`` is its plain fallback. (FTS5's ``snippet()`` was used
before; asking it for ten rows re-ran the whole match, the costliest step of a search on
a large archive.)
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

from mnemo.sessions.query import ParsedQuery
from mnemo.sessions.records import SearchHit
from mnemo.sessions.rows import id_chunks

__all__ = ["BODY_SQL", "build_hits", "mark_snippet", "snippet_around"]

_SNIPPET_START, _SNIPPET_END, _ELLIPSIS = ">>", "<<", "…"
_SNIPPET_CHARS = 160
BODY_SQL = "coalesce(m.search_text, m.content, '')"  # the indexed text of ``messages m``


def snippet_around(body: str, needles: Sequence[str], width: int = _SNIPPET_CHARS) -> str:
    """A window of ``body`` around the first needle found, the needle marked."""
    folded = body.casefold()
    found = [(folded.find(n.casefold()), n) for n in needles if n and n.casefold() in folded]
    if not found:
        flat = " ".join(body.split())
        return flat if len(flat) <= width else flat[:width].rstrip() + _ELLIPSIS
    start, needle = min(found)
    end = start + len(needle)
    left = max(0, start - (width - len(needle)) // 2)
    right = min(len(body), max(end, left + width))
    text = (
        body[left:start] + _SNIPPET_START + body[start:end] + _SNIPPET_END + body[end:right]
    )
    text = " ".join(text.split())
    return (_ELLIPSIS if left > 0 else "") + text + (_ELLIPSIS if right < len(body) else "")


def mark_snippet(body: str, needles: Sequence[str], width: int = _SNIPPET_CHARS) -> str:
    """The window of ``body`` around the first needle found, every needle in it marked.

    A needle of several words (a phrase term: ``src/app.py`` is searched as the words
    src, app, py) matches them with any punctuation between, as the index saw them.
    """
    pattern = _needle_pattern(needles)
    first = pattern.search(body) if pattern is not None else None
    if pattern is None or first is None:  # e.g. a reply added next to a match
        return snippet_around(body, needles, width)
    start, end = first.span()
    # A quarter of the room before the match, the rest after (as FTS5's snippets read):
    # the start of the snippet is then near the match, which callers (memory recall)
    # look for in the full text — repeated text before it would be found first.
    left = max(0, start - (width - (end - start)) // 4)
    right = min(len(body), max(end, left + width))
    marked = pattern.sub(lambda m: f"{_SNIPPET_START}{m.group(0)}{_SNIPPET_END}",
                         body[left:right])
    text = " ".join(marked.split())
    return (_ELLIPSIS if left > 0 else "") + text + (_ELLIPSIS if right < len(body) else "")


def _needle_pattern(needles: Sequence[str]) -> re.Pattern[str] | None:
    """One pattern for all needles, longest first; None when there are none."""
    parts = []
    for needle in sorted({n for n in needles if n.strip()}, key=len, reverse=True):
        words = needle.split()
        # Only words (a term's tokens) may have punctuation between them; a literal of
        # symbols is matched as it is (split, "_" would be both a word and a gap).
        gap = r"[\W_]+" if all(w.isalnum() for w in words) else re.escape(" ")
        parts.append(gap.join(re.escape(w) for w in words))
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


def build_hits(
    conn: sqlite3.Connection,
    parsed: ParsedQuery,
    best: list[tuple[int, float]],
    added: set[int],
) -> list[SearchHit]:
    """``best`` (message id, score) pairs, in order, as hits with their snippets.

    ``added`` holds the ids that contain no query word (replies next to a match).
    """
    if not best:
        return []
    ids = [i for i, _ in best]
    rows: dict[int, sqlite3.Row] = {}
    for part, marks in id_chunks(ids):
        rows.update((int(r["id"]), r) for r in conn.execute(
            f"SELECT m.id, m.session_id, m.role, m.timestamp, m.active, m.compacted, "
            f"m.position, m.external_id, {BODY_SQL} AS body "
            f"FROM messages m WHERE m.id IN ({marks})",
            part,
        ))
    needles = [*parsed.cjk, *(t.text for t in parsed.terms)] or [parsed.literal]
    hits: list[SearchHit] = []
    for i, score in best:
        row = rows.get(i)
        if row is None:
            continue
        body = str(row["body"])
        hits.append(SearchHit(
            session_id=row["session_id"],
            message_id=i,
            role=row["role"],
            content=body,
            snippet=mark_snippet(body, needles),
            score=score,
            timestamp=row["timestamp"],
            compacted=bool(row["compacted"]),
            active=bool(row["active"]),
            position=row["position"],
            external_id=row["external_id"],
            matched=i not in added,
        ))
    return hits
