"""The rescoring steps of session search as pure functions (no database in here).

``search`` (SQLite) explains the two steps: *coverage* (a message holding more of the
distinct query words beats one repeating a single frequent word) and *neighbours* (a
match next to another match gains a share of its score, and the turn right after a
strong match joins the results). The PostgreSQL backend (``pg_search``) fetches the same
inputs — candidate bodies, each candidate's previous and next message — with its own SQL
and applies these functions, so both backends rank with the same arithmetic and the same
``SearchTuning`` defaults.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from mnemo.sessions.query import ParsedQuery

if TYPE_CHECKING:  # search.py imports this module: the tuning is only a type here
    from mnemo.sessions.search import SearchTuning

__all__ = ["Links", "coverage_boost", "neighbour_scores", "stem_prefix"]

_WORDS = re.compile(r"[^\W_]+")

# message id -> (previous message id, next message id) in its session
Links = Mapping[int, tuple[int | None, int | None]]


def stem_prefix(word: str) -> str:
    """A prefix shared by the inflected forms of ``word`` ("painting" -> "paint")."""
    for suffix in ("ing", "ies", "ied", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] in "ey":
        word = word[:-1]
    return word


def coverage_boost(
    parsed: ParsedQuery, scores: Mapping[int, float], bodies: Mapping[int, str],
    tuning: SearchTuning,
) -> dict[int, float]:
    """``scores`` times (1 + coverage x share of the distinct query terms each body holds)."""
    if len(parsed.terms) < 2 or tuning.coverage <= 0:
        return dict(scores)
    stems = [tuple(stem_prefix(t) for t in term.tokens) for term in parsed.terms]
    out = dict(scores)
    for i, body in bodies.items():
        if i not in scores:
            continue
        words = set(_WORDS.findall(body.casefold()))
        matched = sum(1 for term in stems if all(
            any(w.startswith(s) for w in words) for s in term))
        out[i] = scores[i] * (1.0 + tuning.coverage * matched / len(stems))
    return out


def neighbour_scores(
    boosted: Mapping[int, float], top: list[int], links: Links, tuning: SearchTuning
) -> tuple[dict[int, float], dict[int, float]]:
    """Scores with the neighbour bonus, and the unmatched turns that borrow a share.

    ``top`` are the candidates that look at their neighbours (best first). The second
    mapping holds messages next to a strong match that hold none of the words; the caller
    keeps those its filters allow.
    """
    out = dict(boosted)
    for i in top:
        before, after = links.get(i, (None, None))
        around = [boosted[n] for n in (before, after) if n is not None and n in boosted]
        out[i] = boosted[i] + tuning.neighbour * max(around, default=0.0)
    borrowed: dict[int, float] = {}
    for i in top:
        before, after = links.get(i, (None, None))
        for n, share in ((after, tuning.reply), (before, tuning.reply / 2)):
            if n is not None and n not in boosted and share > 0:
                borrowed[n] = max(borrowed.get(n, 0.0), share * boosted[i])
    return out, borrowed
