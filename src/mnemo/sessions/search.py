"""Ranking archived messages for a query: the search behind ``session_search``.

Words go through the FTS5 index (porter-stemmed, so "painted" finds "painting"; a word of
four or more letters also matches as a prefix) as an OR of the query's content words,
ranked by BM25. Then the best candidates are rescored (``SearchTuning``):

* coverage: a message holding more of the distinct query words beats one that repeats a
  single frequent word (plain OR-BM25's weak spot);
* neighbours: a match next to another match of the same conversation gains a share of
  its score, and the turn right after a strong match joins the results even without the
  words (``SearchHit.matched`` is False for it): in conversation the answer usually
  follows the question that names the topic.

Cost is bounded on a large archive: words found in more than ``term_budget`` messages
(together) are left out of the ranking when rarer ones exist (they still count for
coverage), and BM25 ranks at most the latest ``rank_budget`` matches. When that cuts the
ranking short, the messages holding *every* query word found in the archive are ranked
too (an AND of the words, with the same budget): far fewer, so older matches are not out
of reach.

CJK runs go through the trigram index (3+ characters) or a substring scan of the rows
flagged as holding CJK text (1–2 characters, too short for trigrams); their candidates
are scored by which query terms they contain. A query with no words at all (emoji,
punctuation) is matched as a literal substring. Long queries are cut to ``MAX_TERMS``
terms by ``parse_query`` (see ``query.py``), so no query costs more than a short one.
``bench/locomo_recall.py`` measures what each step is worth; ``bench/search_bench.py``
what it costs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from mnemo.sessions.hits import BODY_SQL, build_hits, snippet_around
from mnemo.sessions.query import ParsedQuery, Term, escape_like, fts_quote, parse_query
from mnemo.sessions.records import SearchHit
from mnemo.sessions.rescore import coverage_boost, neighbour_scores
from mnemo.sessions.rows import id_chunks

__all__ = ["SearchFilters", "SearchTuning", "run_search", "snippet_around"]

_BODY = BODY_SQL


@dataclass(frozen=True)
class SearchTuning:
    """Knobs of the ranking; the defaults are the ones the LoCoMo benchmark chose."""

    stop_words: bool = True  # drop function words unless nothing else is left
    prefix: bool = True  # "research" also finds "researcher", "researching"
    rescore: bool = True  # coverage and neighbours (off: plain OR-BM25)
    coverage: float = 1.0  # score x (1 + coverage x share of distinct terms matched)
    neighbour: float = 0.5  # plus this share of the best adjacent match's score
    reply: float = 0.7  # the unmatched turn after a match gets this share (before: half)
    pool: int = 50  # how many BM25 candidates are rescored
    rank_budget: int = 2_000  # most rows BM25 ranks per query (the latest matches)
    term_budget: int = 10_000  # a word in more messages is not ranked by if rarer ones are
    literal_scan: int = 20_000  # latest messages a symbols-only query reads
    cjk_scan: int = 5_000  # latest CJK messages a 1-2 character CJK run reads
    context_pool: int = 50  # how many of the best look at their neighbours


@dataclass(frozen=True)
class SearchFilters:
    session_id: str | None = None
    exclude_session_id: str | None = None
    exclude_active_of: str | None = None  # hide what is still live in this session
    roles: tuple[str, ...] = ()
    include_archived: bool = True
    id_span: tuple[int, int] | None = None  # lowest and highest id of ``session_id``

    def span_sql(self, column: str) -> tuple[str, list[Any]]:
        """A rowid range on an FTS table: its index skips everything outside it."""
        if self.id_span is None:
            return "", []
        return f"AND {column} BETWEEN ? AND ?", list(self.id_span)

    def sql(self) -> tuple[str, list[Any]]:
        """A WHERE fragment over ``messages m`` and its parameters."""
        clauses: list[str] = []
        params: list[Any] = []
        if self.session_id is not None:
            clauses.append("m.session_id = ?")
            params.append(self.session_id)
        if self.exclude_session_id is not None:
            clauses.append("m.session_id != ?")
            params.append(self.exclude_session_id)
        if self.exclude_active_of is not None:
            clauses.append("NOT (m.session_id = ? AND m.active = 1)")
            params.append(self.exclude_active_of)
        if self.roles:
            clauses.append(f"m.role IN ({', '.join('?' for _ in self.roles)})")
            params.extend(self.roles)
        if not self.include_archived:
            clauses.append("m.active = 1")
        return (" AND ".join(clauses) or "1"), params


def run_search(
    conn: sqlite3.Connection,
    query: str,
    *,
    limit: int,
    filters: SearchFilters,
    tuning: SearchTuning,
) -> list[SearchHit]:
    """The best ``limit`` messages for ``query``, best first."""
    parsed = parse_query(query, stop_words=tuning.stop_words)
    if limit <= 0 or parsed.is_empty:
        return []
    if limit > tuning.pool:  # a long result list needs at least that many candidates
        tuning = replace(tuning, pool=limit, context_pool=max(tuning.context_pool, limit))
    if filters.session_id is not None:
        low, high = conn.execute(
            "SELECT min(id), max(id) FROM messages WHERE session_id = ?", (filters.session_id,)
        ).fetchone()
        if low is None:
            return []
        filters = replace(filters, id_span=(int(low), int(high)))
    added: set[int] = set()  # turns next to a match that hold none of the words
    if parsed.cjk:
        scores = _cjk_scores(conn, parsed, filters, tuning)
    elif parsed.terms:
        scores = _word_scores(conn, parsed, filters, tuning, added)
    else:
        scores = _literal_scores(conn, parsed.literal, filters, limit, tuning.literal_scan)
    best = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))[:limit]
    return build_hits(conn, parsed, best, added)


# -- words -----------------------------------------------------------------------------


def _word_scores(
    conn: sqlite3.Connection,
    parsed: ParsedQuery,
    filters: SearchFilters,
    tuning: SearchTuning,
    added: set[int],
) -> dict[int, float]:
    # Within one session every word counts (global frequencies say little there, and
    # the session's id span keeps the index walk short).
    present: list[str] = []
    if filters.id_span:
        terms, saturated = [t.fts(prefix=tuning.prefix) for t in parsed.terms], False
    else:
        terms, present, saturated = _ranking_terms(conn, parsed.terms, tuning)
    if not terms:
        return {}
    scores = _bm25(conn, " OR ".join(terms), filters, tuning)
    if saturated and len(present) > 1:
        # The OR ranking only saw the latest matches. Messages holding every word found
        # in the archive are far fewer, so ranking them apart reaches back to older ones.
        every = " AND ".join(present)
        for i, score in _bm25(conn, every, filters, tuning).items():
            scores[i] = max(score, scores.get(i, score))
    if not tuning.rescore or not scores:
        return scores
    return _rescore(conn, parsed, scores, filters, tuning, added)


def _bm25(
    conn: sqlite3.Connection, expression: str, filters: SearchFilters, tuning: SearchTuning
) -> dict[int, float]:
    """The ``pool`` best of the latest ``rank_budget`` matches of an FTS5 expression."""
    where, params = filters.sql()
    span, span_params = filters.span_sql("f.rowid")
    # BM25 costs a few microseconds per matching row, so at most ``rank_budget`` rows are
    # ranked: the most recent matches (FTS5 walks its rowids backwards and stops).
    # Without filters the messages table is not joined: reading each matching row of it
    # cost twice what ranking the row does.
    source = "messages_fts f" if where == "1" else (
        "messages_fts f JOIN messages m ON m.id = f.rowid")
    rows = conn.execute(
        f"SELECT id, rank FROM ("
        f"  SELECT f.rowid AS id, bm25(messages_fts) AS rank FROM {source} "
        f"  WHERE messages_fts MATCH ? {span} AND {where} ORDER BY f.rowid DESC LIMIT ?"
        f") ORDER BY rank LIMIT ?",
        [expression, *span_params, *params, tuning.rank_budget, tuning.pool],
    ).fetchall()
    return {int(r["id"]): -float(r["rank"]) for r in rows}


def _ranking_terms(
    conn: sqlite3.Connection, terms: Sequence[Term], tuning: SearchTuning
) -> tuple[list[str], list[str], bool]:
    """The terms worth ranking by (as FTS5 strings): rarest first, common ones dropped
    when rare ones exist.

    A word in tens of thousands of messages adds little to the ranking but most of its
    cost; it still counts in the coverage bonus. Counts stop at the budget, so this step
    is cheap however common a word is. Also returned: the terms found at all (in query
    order), and whether the ranking will be cut short (a term dropped, or more matches
    than the budget).

    A word found in more than ``rank_budget`` messages is searched as itself, without
    its prefix expansion: FTS5 merges the whole index entries of every word a prefix
    covers before it can return a row ("path*": path, pathlib, paths, … across the
    archive), while a plain word is read lazily, newest first. The rare word keeps its
    prefix, so a small archive (LoCoMo) searches exactly as before.
    """
    counted: list[tuple[int, int, str]] = []
    for index, term in enumerate(terms):
        expression = term.fts(prefix=tuning.prefix)
        plain = term.fts(prefix=False)
        cap = tuning.term_budget + 1
        if expression != plain:
            common = _count(conn, plain, tuning.rank_budget + 1)
            if common > tuning.rank_budget:
                expression = plain
        if len(terms) == 1:  # nothing to choose between: counting would only cost time
            return [expression], [expression], False
        count = _count(conn, expression, cap)
        if count:
            counted.append((count, index, expression))
    kept: list[str] = []
    total = 0
    for count, _, expression in sorted(counted):
        if kept and total + count > tuning.term_budget:
            break
        kept.append(expression)
        total += count
    present = [expression for _, _, expression in counted]
    return kept, present, len(kept) < len(counted) or total > tuning.rank_budget


def _count(conn: sqlite3.Connection, expression: str, cap: int) -> int:
    """Messages matching an FTS5 expression, counted up to ``cap``."""
    return int(conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?)",
        [expression, cap]).fetchone()[0])


def _rescore(
    conn: sqlite3.Connection,
    parsed: ParsedQuery,
    scores: dict[int, float],
    filters: SearchFilters,
    tuning: SearchTuning,
    added: set[int],
) -> dict[int, float]:
    # Coverage is checked in Python on the candidates' text: asking FTS5 once per term
    # and candidate costs more than the whole ranking on a large index.
    boosted = (coverage_boost(parsed, scores, _bodies(conn, list(scores)), tuning)
               if len(parsed.terms) >= 2 and tuning.coverage > 0 else scores)
    if tuning.neighbour <= 0 and tuning.reply <= 0:
        return boosted
    top = sorted(boosted, key=lambda i: -boosted[i])[: tuning.context_pool]
    # A turn right after (or before) a strong match is likely its answer (or question),
    # even when it repeats none of the words: it joins the results with a share of the
    # match's score.
    out, borrowed = neighbour_scores(boosted, top, _adjacent(conn, top), tuning)
    if borrowed:
        allowed = _passing(conn, list(borrowed), filters)
        out.update({n: v for n, v in borrowed.items() if n in allowed})
        added.update(n for n in borrowed if n in allowed)
    return out


def _adjacent(
    conn: sqlite3.Connection, ids: Sequence[int]
) -> dict[int, tuple[int | None, int | None]]:
    """The messages just before and after each message in its session."""
    links: dict[int, tuple[int | None, int | None]] = {}
    for i in ids:
        row = conn.execute(
            "SELECT "
            "(SELECT p.id FROM messages p WHERE p.session_id = m.session_id "
            " AND p.position < m.position ORDER BY p.position DESC LIMIT 1), "
            "(SELECT n.id FROM messages n WHERE n.session_id = m.session_id "
            " AND n.position > m.position ORDER BY n.position LIMIT 1) "
            "FROM messages m WHERE m.id = ?",
            (i,),
        ).fetchone()
        if row is not None:
            links[i] = (row[0], row[1])
    return links


def _passing(conn: sqlite3.Connection, ids: Sequence[int], filters: SearchFilters) -> set[int]:
    """Those of ``ids`` that the filters allow."""
    where, params = filters.sql()
    allowed: set[int] = set()
    for part, marks in id_chunks(ids):
        allowed.update(int(r[0]) for r in conn.execute(
            f"SELECT m.id FROM messages m WHERE m.id IN ({marks}) AND {where}", [*part, *params]
        ))
    return allowed


# -- CJK and literal text --------------------------------------------------------------


def _cjk_scores(
    conn: sqlite3.Connection, parsed: ParsedQuery, filters: SearchFilters, tuning: SearchTuning
) -> dict[int, float]:
    where, params = filters.sql()
    candidates: set[int] = set()
    long_runs = [r for r in parsed.cjk if len(r) >= 3]
    short_runs = [r for r in parsed.cjk if len(r) < 3]
    if long_runs:
        expression = " OR ".join(fts_quote(r) for r in long_runs)
        span, span_params = filters.span_sql("t.rowid")
        candidates.update(
            int(r[0]) for r in conn.execute(
                f"SELECT t.rowid FROM messages_trigram t JOIN messages m ON m.id = t.rowid "
                f"WHERE messages_trigram MATCH ? {span} AND {where} ORDER BY rank LIMIT ?",
                [expression, *span_params, *params, tuning.pool],
            )
        )
    if short_runs:
        likes = " OR ".join(f"{_BODY} LIKE ? ESCAPE '\\'" for _ in short_runs)
        # Too short for trigrams: a substring test of the CJK messages, newest first, of
        # the latest ``cjk_scan`` only (a rare pair of characters would read them all);
        # within one session all of them.
        window, window_params = "", []
        if filters.session_id is None:
            window = ("AND m.id >= (SELECT coalesce(min(id), 0) FROM (SELECT id FROM "
                      "messages WHERE cjk = 1 ORDER BY id DESC LIMIT ?))")
            window_params = [tuning.cjk_scan]
        candidates.update(
            int(r[0]) for r in conn.execute(
                f"SELECT m.id FROM messages m WHERE m.cjk = 1 AND ({likes}) AND {where} "
                f"{window} ORDER BY m.id DESC LIMIT ?",
                [*(f"%{escape_like(r)}%" for r in short_runs), *params, *window_params,
                 tuning.pool],
            )
        )
    if parsed.terms:
        candidates.update(_word_scores(conn, parsed, filters, tuning, set()))
    if not candidates:
        return {}
    needles = [*parsed.cjk, *(t.text for t in parsed.terms)]
    scores: dict[int, float] = {}
    for i, body in _bodies(conn, candidates).items():
        folded = body.casefold()
        found = [n for n in needles if n in folded]
        if found:
            # Longer matched runs are more specific; each distinct term counts once.
            scores[i] = sum(1.0 + len(n) / 4 for n in found)
    return scores


def _literal_scores(
    conn: sqlite3.Connection, literal: str, filters: SearchFilters, limit: int, scan: int
) -> dict[int, float]:
    """Messages containing ``literal`` as is, newest first (no index can hold emoji).

    Across all sessions only the latest ``scan`` messages are read, so a query of
    symbols stays fast on a large archive; within one session everything is read.
    """
    where, params = filters.sql()
    window = ""
    if filters.session_id is None:
        window = "AND m.id > (SELECT coalesce(max(id), 0) FROM messages) - ?"
        params = [*params, scan]
    # instr(), not LIKE: SQLite refuses LIKE patterns over 50,000 bytes, and a query with
    # no letters or digits has no case to fold, so an exact substring test is the same.
    rows = conn.execute(
        f"SELECT m.id FROM messages m WHERE instr({_BODY}, ?) > 0 AND {where} {window} "
        f"ORDER BY m.id DESC LIMIT ?",
        [literal, *params, limit],
    ).fetchall()
    return {int(r[0]): 1.0 for r in rows}


def _bodies(conn: sqlite3.Connection, ids: Sequence[int] | set[int]) -> dict[int, str]:
    bodies: dict[int, str] = {}
    for part, marks in id_chunks(list(ids)):
        bodies.update((int(r[0]), str(r[1])) for r in conn.execute(
            f"SELECT id, body FROM message_docs WHERE id IN ({marks})", part))
    return bodies
