"""Session search on PostgreSQL: full-text candidates, then the same rescoring as SQLite.

The query is cut into terms by the same ``query.parse_query`` (so any text is valid and
none of it ever reaches PostgreSQL as syntax: each term goes through
``phraseto_tsquery``/``to_tsquery`` as a bound parameter, a prefix as a quoted lexeme).
Each term becomes a ``tsquery`` over both configurations the ``tsv`` column holds: stemmed
English ("painted" finds "painting") and ``simple`` (names, codes and stop words kept as
typed; a word of four or more letters also matches as a prefix there).

Candidates: the latest ``rank_budget`` messages matching any term, scored by
``ts_rank`` weighted with each term's rarity (an inverse document frequency, the part of
BM25 ``ts_rank`` lacks), the ``pool`` best kept. Common terms are left out of that
ranking when rarer ones exist, and when the ranking is cut short the messages holding
every present term are ranked too — the same steps and ``SearchTuning`` as ``search``;
then ``rescore`` applies coverage and neighbours.

A GIN index cannot return "the latest N matches" (a bitmap scan reads every match, a
walk newest-first tests every row), so on a large archive (``pg_plan``) each term's
frequency comes from the planner's lexeme statistics instead of a count, and the read is
chosen by it: every match of a rare term; the newest stretch of ids that should hold
about the budget for a common one; a newest-first walk for a dense one. The AND pass
leaves out the most frequent words (their index entries cost the most and select least)
and runs first: once it found rows, the OR pass ranks fewer of the newest matches
(``OR_SHARE``), since each ranked match costs a heap row. A phrase reaches the index
without its dense lexemes and is checked on the rows found (``pg_plan._index_forms``).
The read plan is the only difference from SQLite; a small archive is counted exactly, as
before, so rankings there (LoCoMo) are unchanged.

CJK runs and symbol-only queries are substring matches (``LIKE``), the CJK ones over the
rows flagged ``cjk`` under a ``pg_trgm`` index (1-2 characters: the latest ``cjk_scan``
CJK rows). Snippets are cut in Python
(``hits.mark_snippet``), the match marked ``>>like this<<``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mnemo.sessions.hits import mark_snippet
from mnemo.sessions.pg_plan import plan_terms
from mnemo.sessions.query import ParsedQuery, Term, escape_like, parse_query
from mnemo.sessions.records import SearchHit
from mnemo.sessions.rescore import coverage_boost, neighbour_scores
from mnemo.sessions.search import SearchFilters, SearchTuning

if TYPE_CHECKING:
    import psycopg

__all__ = ["run_pg_search"]

Conn = Any  # psycopg.Connection[Any]; kept loose so this module imports without psycopg
# On a large archive, when the AND pass fills the pool, the OR pass ranks this fraction
# of ``rank_budget`` (its rows are the costliest part of a search: one heap row each).
OR_SHARE = 4
_BODY = "coalesce(m.search_text, m.content, '')"
_MIN_PREFIX_CHARS = 4


def _filter_sql(filters: SearchFilters) -> tuple[str, list[Any]]:
    """A WHERE fragment over ``mnemo_messages m`` and its parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if filters.session_id is not None:
        clauses.append("m.session_id = %s")
        params.append(filters.session_id)
    if filters.exclude_session_id is not None:
        clauses.append("m.session_id <> %s")
        params.append(filters.exclude_session_id)
    if filters.exclude_active_of is not None:
        clauses.append("NOT (m.session_id = %s AND m.active = 1)")
        params.append(filters.exclude_active_of)
    if filters.roles:
        clauses.append("m.role = ANY(%s)")
        params.append(list(filters.roles))
    if not filters.include_archived:
        clauses.append("m.active = 1")
    return (" AND ".join(clauses) or "TRUE"), params


def run_pg_search(
    conn: psycopg.Connection[Any],
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
    if limit > tuning.pool:
        tuning = replace(tuning, pool=limit, context_pool=max(tuning.context_pool, limit))
    # The budgeted queries ("the latest N matches") tempt the planner into walking the
    # table newest-first and testing every row's tsvector, which reads the whole archive
    # for a common word; index lookups through the GIN and trigram indexes (bitmap scans)
    # cost only the matching rows. This transaction is the search alone.
    conn.execute("SET LOCAL enable_seqscan = off")
    added: set[int] = set()
    if parsed.cjk:
        scores = _cjk_scores(conn, parsed, filters, tuning)
    elif parsed.terms:
        scores = _word_scores(conn, parsed, filters, tuning, added, limit)
    else:
        scores = _literal_scores(conn, parsed.literal, filters, limit, tuning.literal_scan)
    best = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))[:limit]
    return _hits(conn, parsed, best, added)


# -- words -----------------------------------------------------------------------------


def _tsqueries(conn: Conn, terms: Sequence[Term], prefix: bool) -> list[tuple[str, str]]:
    """Each term as the text of two ``tsquery``: exact words, and with the last word also
    as a prefix ('' when the term holds no lexeme; both the same when no prefix applies)."""
    parts: list[str] = []
    params: list[Any] = []
    for term in terms:
        exact = "(phraseto_tsquery('english', %s) || phraseto_tsquery('simple', %s))"
        params += [term.text, term.text]
        last = term.tokens[-1]
        if prefix and len(term.tokens) == 1 and len(last) >= _MIN_PREFIX_CHARS:
            parts.append(f"{exact}::text, ({exact} || "
                         "to_tsquery('simple', quote_literal(%s) || ':*'))::text")
            params += [term.text, term.text, last]
        else:
            parts.append(f"{exact}::text, {exact}::text")
            params += [term.text, term.text]
    row = conn.execute(f"SELECT ARRAY[{', '.join(parts)}] AS q", params).fetchone()
    flat = [str(q or "") for q in row["q"]]
    return list(zip(flat[0::2], flat[1::2], strict=True))


def _word_scores(
    conn: Conn, parsed: ParsedQuery, filters: SearchFilters, tuning: SearchTuning,
    added: set[int], limit: int,
) -> dict[int, float]:
    pairs = [(e, p) for e, p in _tsqueries(conn, parsed.terms, tuning.prefix) if e]
    if not pairs:
        return {}
    plan = plan_terms(conn, pairs, tuning, whole=filters.session_id is not None)
    if not plan.ranked:
        return {}
    both: dict[int, float] = {}
    if plan.saturated and len(plan.present) > 1:
        # The OR ranking only sees the latest matches; those holding every term are
        # far fewer, so ranking them apart reaches back to older ones.
        weights = dict(plan.ranked)
        every = [(q, weights.get(q, 1.0)) for q in plan.present]
        both = _rank(conn, every, " && ", filters, tuning, plan.window(plan.and_matches),
                     tuning.rank_budget, plan.index)
    budget = tuning.rank_budget
    if plan.estimated and both:
        budget = tuning.rank_budget // 2
    if plan.estimated and len(both) >= OR_SHARE // 2 * limit:
        # Twice the results asked for hold every term, and coverage ranks those first:
        # the OR ranking only adds the best partial matches, which the newest few
        # hundred supply.
        budget = max(tuning.pool, tuning.rank_budget // OR_SHARE)
    scores = _rank(conn, plan.ranked, " || ", filters, tuning,
                   plan.window(plan.or_matches, budget), budget, plan.index)
    for i, score in both.items():
        scores[i] = max(score, scores.get(i, score))
    if not tuning.rescore or not scores:
        return scores
    return _rescore(conn, parsed, scores, filters, tuning, added)


def _rank(
    conn: Conn, weighted: list[tuple[str, float]], joiner: str, filters: SearchFilters,
    tuning: SearchTuning, low_id: int, budget: int, index_forms: Mapping[str, str],
) -> dict[int, float]:
    """The ``pool`` best of the latest ``budget`` rows matching the joined terms.

    ``low_id`` (``ReadPlan.window``) chooses the read. 0: every match, through the GIN
    index (bitmap scans cost only the matching rows; a walk newest-first would test every
    row's tsvector). -1: the dense case, where that walk is the cheap one. Else the read
    is kept to the newest stretch of ids that should hold about ``MARGIN`` budgets of the
    matches (a bitmap of that id range ANDed with the full-text index); should it hold
    fewer than ``pool`` after all (the estimate was high), the whole archive is ranked.
    """
    where, params = _filter_sql(filters)
    match = joiner.join("%s::tsquery" for _ in weighted)
    index = [index_forms.get(q, q) for q, _ in weighted]
    if index != [q for q, _ in weighted]:
        # The index reads the narrowed phrases (``pg_plan._index_forms``); the phrases
        # themselves are then checked on what it found (ts_match_vq is ``@@`` without
        # the index).
        index += [q for q, _ in weighted]
        condition = f"m.tsv @@ ({match}) AND ts_match_vq(m.tsv, {match})"
    else:
        condition = f"m.tsv @@ ({match})"
    score = " + ".join("%s * ts_rank(m.tsv, %s::tsquery, 1)" for _ in weighted)
    setting = "enable_bitmapscan" if low_id < 0 else "enable_indexscan"
    low_id = max(low_id, 0)
    for low in ([low_id, 0] if low_id else [0]):
        # The planner setting, the query and the setting's reset go in one round trip.
        with conn.pipeline():
            conn.execute(f"SET LOCAL {setting} = off")
            cursor = conn.execute(
                f"SELECT id, score FROM ("
                f"  SELECT m.id, {score} AS score FROM mnemo_messages m "
                f"  WHERE {condition} AND m.id > %s AND {where} "
                f"  ORDER BY m.id DESC LIMIT %s"
                f") c ORDER BY score DESC LIMIT %s",
                [*(v for q, w in weighted for v in (w, q)), *index, low,
                 *params, budget, tuning.pool],
            )
            conn.execute(f"SET LOCAL {setting} = on")
        rows = cursor.fetchall()
        if len(rows) >= tuning.pool:
            break
    return {int(r["id"]): float(r["score"]) for r in rows}


def _rescore(
    conn: Conn, parsed: ParsedQuery, scores: dict[int, float], filters: SearchFilters,
    tuning: SearchTuning, added: set[int],
) -> dict[int, float]:
    boosted = coverage_boost(parsed, scores, _bodies(conn, list(scores)), tuning)
    if tuning.neighbour <= 0 and tuning.reply <= 0:
        return boosted
    top = sorted(boosted, key=lambda i: -boosted[i])[: tuning.context_pool]
    rows = conn.execute(
        "SELECT m.id, "
        "(SELECT p.id FROM mnemo_messages p WHERE p.session_id = m.session_id "
        " AND p.position < m.position ORDER BY p.position DESC LIMIT 1) AS prev, "
        "(SELECT n.id FROM mnemo_messages n WHERE n.session_id = m.session_id "
        " AND n.position > m.position ORDER BY n.position LIMIT 1) AS next "
        "FROM mnemo_messages m WHERE m.id = ANY(%s)", (top,)).fetchall()
    links = {int(r["id"]): (r["prev"], r["next"]) for r in rows}
    out, borrowed = neighbour_scores(boosted, top, links, tuning)
    if borrowed:
        where, params = _filter_sql(filters)
        allowed = {int(r["id"]) for r in conn.execute(
            f"SELECT m.id FROM mnemo_messages m WHERE m.id = ANY(%s) AND {where}",
            [list(borrowed), *params]).fetchall()}
        out.update({n: v for n, v in borrowed.items() if n in allowed})
        added.update(n for n in borrowed if n in allowed)
    return out


# -- CJK and literal text --------------------------------------------------------------


def _cjk_scores(
    conn: Conn, parsed: ParsedQuery, filters: SearchFilters, tuning: SearchTuning
) -> dict[int, float]:
    where, params = _filter_sql(filters)
    candidates: set[int] = set()
    # Runs of 3+ characters go through the trigram index (a bitmap of its matches; the
    # planner would rather walk every CJK row newest first when it expects many); shorter
    # ones have no trigram, so the CJK rows are walked newest first until ``pool`` match,
    # the latest ``cjk_scan`` of them only (all within one session).
    for runs, walk in (([r for r in parsed.cjk if len(r) >= 3], "off"),
                       ([r for r in parsed.cjk if len(r) < 3], "on")):
        if not runs:
            continue
        conn.execute(f"SET LOCAL enable_indexscan = {walk}")
        likes = " OR ".join(f"{_BODY} LIKE %s" for _ in runs)
        window, window_params = "", []
        if walk == "on" and filters.session_id is None:
            window = ("AND m.id >= (SELECT coalesce(min(id), 0) FROM (SELECT id FROM "
                      "mnemo_messages WHERE cjk ORDER BY id DESC LIMIT %s) w)")
            window_params = [tuning.cjk_scan]
        candidates.update(int(r["id"]) for r in conn.execute(
            f"SELECT m.id FROM mnemo_messages m WHERE m.cjk AND ({likes}) AND {where} "
            f"{window} ORDER BY m.id DESC LIMIT %s",
            [*(f"%{escape_like(r)}%" for r in runs), *params, *window_params,
             tuning.pool]).fetchall())
    conn.execute("SET LOCAL enable_indexscan = on")
    if parsed.terms:
        candidates.update(_word_scores(conn, parsed, filters, tuning, set(), tuning.pool))
    if not candidates:
        return {}
    needles = [*parsed.cjk, *(t.text for t in parsed.terms)]
    scores: dict[int, float] = {}
    for i, body in _bodies(conn, list(candidates)).items():
        folded = body.casefold()
        found = [n for n in needles if n in folded]
        if found:
            scores[i] = sum(1.0 + len(n) / 4 for n in found)
    return scores


def _literal_scores(
    conn: Conn, literal: str, filters: SearchFilters, limit: int, scan: int
) -> dict[int, float]:
    """Messages containing ``literal`` as is, newest first (the latest ``scan`` only,
    unless the search is within one session)."""
    where, params = _filter_sql(filters)
    window = ""
    if filters.session_id is None:
        window = "AND m.id > (SELECT coalesce(max(id), 0) FROM mnemo_messages) - %s"
        params = [*params, scan]
    rows = conn.execute(
        f"SELECT m.id FROM mnemo_messages m WHERE strpos({_BODY}, %s) > 0 AND {where} "
        f"{window} ORDER BY m.id DESC LIMIT %s",
        [literal, *params, limit]).fetchall()
    return {int(r["id"]): 1.0 for r in rows}


def _bodies(conn: Conn, ids: list[int]) -> dict[int, str]:
    rows = conn.execute(f"SELECT m.id, {_BODY} AS body FROM mnemo_messages m "
                        "WHERE m.id = ANY(%s)", (ids,)).fetchall()
    return {int(r["id"]): str(r["body"]) for r in rows}


def _hits(
    conn: Conn, parsed: ParsedQuery, best: list[tuple[int, float]], added: set[int]
) -> list[SearchHit]:
    if not best:
        return []
    rows = {int(r["id"]): r for r in conn.execute(
        f"SELECT m.id, m.session_id, m.role, m.timestamp, m.active, m.compacted, "
        f"m.position, m.external_id, {_BODY} AS body FROM mnemo_messages m "
        f"WHERE m.id = ANY(%s)", ([i for i, _ in best],)).fetchall()}
    needles = [*parsed.cjk, *(t.text for t in parsed.terms)] or [parsed.literal]
    hits: list[SearchHit] = []
    for i, score in best:
        row = rows.get(i)
        if row is None:
            continue
        body = str(row["body"])
        hits.append(SearchHit(
            session_id=row["session_id"], message_id=i, role=row["role"], content=body,
            snippet=mark_snippet(body, needles), score=score, timestamp=row["timestamp"],
            compacted=bool(row["compacted"]), active=bool(row["active"]),
            position=row["position"], external_id=row["external_id"],
            matched=i not in added,
        ))
    return hits
