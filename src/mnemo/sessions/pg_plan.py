"""How PostgreSQL search reads each term: counts or estimates, and the read they choose.

``search`` on SQLite asks FTS5 for "the newest N matches" of a word, which FTS5 walks
lazily. A GIN index has no order: a bitmap scan reads every match, a walk newest-first
tests every row's tsvector. So ``plan_terms`` finds how frequent each term is — counted
exactly on a small archive (as before, so rankings there are unchanged), from the
planner's lexeme statistics (``EXPLAIN``, no row read) on a large one — and
``ReadPlan.window`` turns a frequency into the cheapest read of about ``rank_budget``
of the newest matches (or every match, when the id range's bitmap would cost more). It
also picks the ranked terms (rarest first, up to ``term_budget`` matches), the AND
pass's terms, and the form in which a phrase reaches the index. Used by ``pg_search``
only.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mnemo.sessions.search import SearchTuning

__all__ = ["AND_READ", "DENSE", "ID_ENTRY_COST", "MARGIN", "ReadPlan", "plan_terms"]

Conn = Any  # psycopg.Connection[Any]; kept loose so this module imports without psycopg


@dataclass(frozen=True)
class ReadPlan:
    """What to rank by: the terms with their rarity weights (rarest first), the terms
    present in the archive (query order), and the expected matches of their OR and AND."""

    ranked: list[tuple[str, float]]
    present: list[str]
    saturated: bool
    or_matches: float
    and_matches: float
    top_id: int
    budget: int
    estimated: bool = False  # frequencies from the planner (a large archive), not counts
    # A term's query as the full-text index reads it, when that differs (``_index_forms``)
    index: Mapping[str, str] = field(default_factory=dict)

    def window(self, matches: float, budget: int | None = None) -> int:
        """How to read about ``budget`` of ``matches`` rows spread over the archive: 0 =
        every match (cheap enough), -1 = walk the ids newest first (the matches are
        dense), else the lowest id of the newest stretch that should hold ``MARGIN``
        times that. ``budget`` stands in for the plan's own when given."""
        budget = self.budget if budget is None else budget
        if matches <= budget or self.top_id <= 0:
            return 0
        if matches >= DENSE * self.top_id:
            return -1
        span = int(MARGIN * budget * self.top_id / matches)
        # The id range costs a bitmap entry per id; reading every match instead costs a
        # heap row per match older than the range. Just over the budget, the range
        # would span most of the archive for a few hundred rows saved.
        if matches - MARGIN * budget <= ID_ENTRY_COST * span:
            return 0
        return max(0, self.top_id - span)


# A term in at least this share of the messages is read by walking the newest ids and
# testing each row: its next match is a few rows away, while its index entries (a tenth
# of the archive or more) cost more to read than the walk.
DENSE = 0.1
# The id stretch read for a common term holds this many budgets of its matches by the
# estimate: a margin for the estimate's error and for matches that are not spread evenly.
MARGIN = 1.25
# How many index entries (in rank budgets) the AND pass may read on a large archive.
AND_READ = 100
# An id of the primary key's bitmap for an id range, in heap rows: 270,000 ids cost what
# 10,000-16,000 rows in memory do (EXPLAIN ANALYZE at 1M messages), and a row not in
# the buffer cache costs several times that, so the id is counted high.
ID_ENTRY_COST = 0.02


# Below this many rows counting the matches of each term is cheap (it reads at most
# ``term_budget`` rows per term); above it the planner's statistics stand in for counts.
_COUNT_BELOW = 50_000


def plan_terms(
    conn: Conn, pairs: list[tuple[str, str]], tuning: SearchTuning, *, whole: bool
) -> ReadPlan:
    """``search._ranking_terms`` on PostgreSQL, with a cost bound on a large archive.

    Each term's matches are counted exactly (capped at the budget) while the archive is
    small. On a large one they are the planner's estimates from ANALYZE's lexeme
    statistics (``EXPLAIN``: no row is read), since counting a common word reads a heap
    row per match. A common term is searched as the exact word, without its prefix
    expansion: "back" also matching "backup", "backoff", … multiplies what the index
    returns for a word that discriminates little anyway (coverage still sees prefixes).
    """
    row = conn.execute(
        "SELECT (SELECT greatest(reltuples::bigint, 0) FROM pg_class "
        " WHERE oid = 'mnemo_messages'::regclass) AS total, "
        "(SELECT coalesce(max(id), 0) FROM mnemo_messages) AS top").fetchone()
    total, top = float(row["total"] or 0), int(row["top"] or 0)
    exact = total < _COUNT_BELOW
    if whole or len(pairs) == 1:
        # Within one session every word counts, prefixes too; one term has nothing to
        # choose between, and counting it would cost what ranking it does.
        single = [p for _, p in pairs]
        return ReadPlan([(p, 1.0) for p in single], single, False, 0.0, 0.0, top,
                        tuning.rank_budget,
                        index={} if whole or exact else _index_forms(conn, single, total))
    cap = tuning.term_budget + 1
    known: dict[str, float] = {}
    if not exact:  # every estimate below in one round trip
        known = _prefetch(conn, ["'\u2400'", *(a for pair in pairs for q in pair
                                                 for a in q.split(" | "))])
    unknown = 0.0 if exact else _estimate(conn, "'\u2400'", known)  # no text holds it
    chosen: list[tuple[float, int, str]] = []
    for index, (plain, prefixed) in enumerate(pairs):
        query, count = prefixed, 0.0
        if not exact and plain != prefixed:
            # A word the planner knows as common is searched without its prefix: the
            # prefix's own estimate is no better, and counting it reads every match.
            count = _estimate(conn, plain, known)
            if count >= 2 * unknown and count > tuning.rank_budget:
                query = plain
            else:
                count = 0.0
        if not count:
            count = (_count(conn, prefixed, cap) if exact
                     else _guess(conn, prefixed, unknown, known))
        if not exact and query != plain and count > tuning.rank_budget:
            query, count = plain, _guess(conn, plain, unknown, known)
        if count:
            chosen.append((count, index, query))
    size = max(total, 1.0)
    forms = {} if exact else _index_forms(conn, [q for _, _, q in chosen], total)
    if len(chosen) == 1:  # nothing to choose between
        count, _, q = chosen[0]
        return ReadPlan([(q, 1.0)], [q], False, count, 0.0, top, tuning.rank_budget,
                        estimated=not exact, index=forms)
    kept: list[tuple[str, float]] = []
    used = 0.0
    for count, _, q in sorted(chosen):
        if kept and used + count > tuning.term_budget:
            break
        kept.append((q, math.log(1.0 + size / count)))
        used += count
    # The AND pass reads every index entry of its terms. On a large archive it takes the
    # rarest terms while their entries add up to ``AND_READ`` budgets (two at least, or
    # no AND pass): the most frequent words are left out of it, as search engines leave
    # out stop words — they select little and cost the most (coverage still counts them).
    selective = chosen
    if not exact:
        selective, read = [], 0.0
        for entry in sorted(chosen):
            if len(selective) >= 2 and read + entry[0] > AND_READ * tuning.rank_budget:
                break
            selective.append(entry)
            read += entry[0]
        if read > AND_READ * tuning.rank_budget:
            selective = []
    present = [q for _, _, q in sorted(selective, key=lambda c: c[1])]
    every = size * math.prod(min(1.0, c / size) for c, _, _ in selective)
    return ReadPlan(kept, present, len(kept) < len(chosen) or used > tuning.rank_budget,
                 used, every, top, tuning.rank_budget, estimated=not exact, index=forms)


def _count(conn: Conn, query: str, cap: int) -> float:
    row = conn.execute("SELECT count(*) AS n FROM (SELECT 1 FROM mnemo_messages "
                       "WHERE tsv @@ %s::tsquery LIMIT %s) c", (query, cap)).fetchone()
    return float(row["n"])


# A term is counted up to this many matches even on a large archive: the planner knows
# only the frequent lexemes and guesses the same few thousand for every other one
# (absent or in three messages alike), and a rare term's true count decides whether it
# is searched at all and how much it weighs.
_COUNT_UP_TO = 500


def _guess(conn: Conn, query: str, unknown: float, known: Mapping[str, float]) -> float:
    """Matches of ``query``: the planner's estimate when it knows the lexemes (twice
    ``unknown`` or more; ``unknown`` is its guess for a lexeme it has no statistics
    of), else a count (exact below ``_COUNT_UP_TO``: reading a rare term's index
    entries is cheap)."""
    estimate = _estimate(conn, query, known)
    # A lexeme of the statistics is estimated at its sampled frequency, at least the
    # least frequent one kept (twice ``unknown``); any other is guessed at ``unknown``.
    if estimate >= 2 * unknown:
        return estimate
    counted = _count(conn, query, _COUNT_UP_TO)
    return counted if counted < _COUNT_UP_TO else max(counted, estimate)


def _estimate(conn: Conn, query: str, known: Mapping[str, float]) -> float:
    """The planner's estimate of the rows matching ``query`` (no row is read), from
    ``known`` when it holds it."""
    # A term's alternatives (English stem, the word as typed, its prefix) match mostly
    # the same messages, which the planner would add up as if independent ("'error' |
    # 'error'" twice 'error'): the largest of them is the better estimate. The generated
    # queries are ORs of phrases and prefixes (``|`` binds loosest), so they split as text.
    return max(known[alternative] if alternative in known
               else _planned_rows(conn.execute(_EXPLAIN, (alternative,)).fetchone())
               for alternative in dict.fromkeys(query.split(" | ")))


_EXPLAIN = "EXPLAIN (FORMAT JSON) SELECT 1 FROM mnemo_messages WHERE tsv @@ %s::tsquery"


def _prefetch(conn: Conn, queries: list[str]) -> dict[str, float]:
    """The planner's estimates of ``queries``, sent in one pipeline: one round trip
    instead of one per query (on a busy machine each costs a wake-up of both sides)."""
    todo = list(dict.fromkeys(queries))
    with conn.pipeline():
        cursors = [conn.execute(_EXPLAIN, (q,)) for q in todo]
    return {q: _planned_rows(c.fetchone()) for q, c in zip(todo, cursors, strict=True)}


def _planned_rows(row: Any) -> float:
    plan = next(iter(row.values()))
    if isinstance(plan, str):
        plan = json.loads(plan)
    return float(plan[0]["Plan"]["Plan Rows"])


_LEXEME = re.compile(r"'(?:[^']|'')*'")


def _index_forms(conn: Conn, queries: list[str], total: float) -> dict[str, str]:
    """The phrases of ``queries`` as the index should read them: the AND of their lexemes
    found in fewer than ``DENSE`` of the messages (the phrase itself is then checked on
    the rows found, without the index).

    A path or a code is searched as a phrase ("src/app/main.py": 'src' <-> 'app' <->
    'main' <-> 'py'); GIN has to look up every lexeme of it for every candidate row,
    and 'src' or 'py' are in half the archive: their posting trees cost more than the
    rest of the search. Only queries that change are returned."""
    dense = DENSE * max(total, 1.0)
    phrases = [a for q in queries for a in q.split(" | ")
               if "<" in a and ":*" not in a and len(set(_LEXEME.findall(a))) >= 2]
    rows = _prefetch(conn, [x for a in phrases for x in _LEXEME.findall(a)]) if phrases else {}
    out: dict[str, str] = {}
    for query in queries:
        parts: list[str] = []
        for alternative in query.split(" | "):
            lexemes = list(dict.fromkeys(_LEXEME.findall(alternative)))
            if "<" not in alternative or ":*" in alternative or len(lexemes) < 2:
                parts.append(alternative)
                continue
            keep = [x for x in lexemes if rows[x] < dense]
            parts.append(" & ".join(keep) if keep and len(keep) < len(lexemes)
                         else alternative)
        narrowed = " | ".join(parts)
        if narrowed != query:
            out[query] = narrowed
    return out
