"""Search work is bounded by the tuning, not by the archive size: counted, never timed.

``coverage_boost`` is the rescoring step both backends share; the number of candidates it
is handed is the work that grows with the archive if ranking is not bounded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mnemo.sessions import SearchTuning, SessionStore, pg_search, search
from mnemo.sessions.pg_plan import MARGIN, ReadPlan, _index_forms
from mnemo.sessions.query import parse_query
from mnemo.sessions.search import SearchFilters


def _record_rescored(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []
    original = search.coverage_boost

    def counting(parsed: Any, scores: Mapping[int, float], *rest: Any) -> dict[int, float]:
        seen.append(len(scores))
        return original(parsed, scores, *rest)

    monkeypatch.setattr(search, "coverage_boost", counting)
    monkeypatch.setattr(pg_search, "coverage_boost", counting)
    return seen


def test_rescored_candidates_stay_bounded_as_the_archive_grows(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.search_tuning = SearchTuning(rank_budget=30, term_budget=30, pool=10, context_pool=10)
    seen = _record_rescored(monkeypatch)
    rescored: list[int] = []
    for _ in range(4):  # 60, 120, 180, 240 matching messages
        sid = store.create_session()
        store.append_messages(sid, [{"role": "user", "content": f"walrus sighting {i} by the "
                                     "harbour"} for i in range(60)])
        seen.clear()
        assert len(store.search("walrus harbour", limit=5)) == 5
        rescored.append(sum(seen))
    # The OR ranking and the AND ranking each hand over at most ``pool`` candidates.
    assert all(0 < n <= 2 * 10 for n in rescored)
    assert rescored[-1] == rescored[0]  # four times the matches, the same work


def test_pg_plan_reads_a_common_term_from_the_newest_ids_only() -> None:
    plan = ReadPlan(ranked=[], present=[], saturated=True, or_matches=0.0, and_matches=0.0,
                 top_id=1_000_000, budget=2_000)
    assert plan.window(1_500) == 0  # under the budget: every match is read
    # Just over it, the id range would span most of the archive to skip a few hundred
    # rows: every match is read too.
    assert plan.window(3_000) == 0
    assert plan.window(10_000, budget=500) > 0  # a smaller budget: the newest ids only
    low = plan.window(50_000)  # 5% of the archive: about MARGIN budgets of its rows
    assert 0 < low < 1_000_000
    assert (1_000_000 - low) * 50_000 / 1_000_000 == pytest.approx(MARGIN * 2_000, rel=0.01)
    assert plan.window(400_000) == -1  # dense: walked newest first, no index read
    assert plan.window(1_000_000) == -1


def test_a_rare_cjk_pair_reads_only_the_latest_cjk_messages(store: SessionStore) -> None:
    # 1-2 CJK characters have no trigram: a substring test of the CJK messages, newest
    # first, bounded by ``cjk_scan`` across sessions (all of them within one session).
    store.search_tuning = SearchTuning(cjk_scan=20)
    old = store.create_session()
    store.append_messages(old, [{"role": "user", "content": "索引会议很长"}])
    new = store.create_session()
    store.append_messages(new, [{"role": "user", "content": f"部署数据库 {i}"}
                                for i in range(40)])
    assert store.search("引会", limit=5) == []  # 40 newer CJK messages: out of reach
    assert [h.session_id for h in store.search("引会", session_id=old)] == [old]
    assert len(store.search("部署", limit=5)) == 5  # a common pair is found at once
    store.search_tuning = SearchTuning(cjk_scan=100)
    assert [h.session_id for h in store.search("引会", limit=5)] == [old]


def _pg_archive(store: SessionStore, rows: int) -> None:
    """``rows`` tool outputs, every one holding 'src' and 'py', one in ten also 'walrus
    harbour'; then ANALYZE, so the planner has the lexeme statistics a large archive has."""
    sid = store.create_session()
    words = [f"{a}{b}" for a in ("ka", "lo", "mi", "nu", "po") for b in ("rt", "sk", "vy", "zed")]
    store.append_messages(sid, [
        {"role": "user", "content": f"src/{words[i % 20]}/{words[(i // 20) % 20]}_{i}.py "
                                    + ("walrus harbour" if i % 10 == 0 else words[i % 7])}
        for i in range(rows)])
    store.append_messages(sid, [
        {"role": "user", "content": "see src/walrus/harbour_tide.py for the fix"},
        {"role": "user", "content": "tide harbour walrus, py src"},  # the words, no path
    ])
    store.db.run(lambda conn: conn.execute("ANALYZE mnemo_messages"))  # type: ignore[attr-defined]


@pytest.mark.parametrize("store", ["postgres"], indirect=True)
def test_pg_phrase_reaches_the_index_without_its_dense_lexemes(store: SessionStore) -> None:
    _pg_archive(store, 400)
    tuning = SearchTuning()
    parsed = parse_query("src/walrus/harbour_tide.py")

    def run(conn: Any) -> tuple[dict[str, str], dict[int, float], dict[int, float]]:
        query = pg_search._tsqueries(conn, parsed.terms, True)[0][1]
        forms = _index_forms(conn, [query], 402.0)
        narrowed = pg_search._rank(conn, [(query, 1.0)], " || ", SearchFilters(), tuning,
                                   0, 2_000, forms)
        plain = pg_search._rank(conn, [(query, 1.0)], " || ", SearchFilters(), tuning,
                                0, 2_000, {})
        return forms, narrowed, plain

    forms, narrowed, plain = store.db.run(run)  # type: ignore[attr-defined]
    (form,) = forms.values()
    assert "'src'" not in form and "'py'" not in form and "'tide'" in form
    # The phrase is still checked: the message holding its words out of order is not found.
    assert narrowed == plain and len(narrowed) == 1


@pytest.mark.parametrize("store", ["postgres"], indirect=True)
def test_pg_or_pass_shrinks_when_the_and_pass_fills_the_results(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mnemo.sessions import pg_plan

    _pg_archive(store, 400)
    # The planner-statistics path, as above 50k messages, on this small archive.
    monkeypatch.setattr(pg_plan, "_COUNT_BELOW", 0)
    budgets: list[tuple[str, int]] = []
    original = pg_search._rank

    def recording(conn: Any, weighted: Any, joiner: str, *rest: Any) -> dict[int, float]:
        budgets.append((joiner.strip(), rest[3]))
        return original(conn, weighted, joiner, *rest)

    monkeypatch.setattr(pg_search, "_rank", recording)
    store.search_tuning = SearchTuning(rank_budget=40, term_budget=40, pool=10)
    assert store.search("walrus harbour", limit=5)
    # 'walrus harbour': 42 messages hold both, at least twice the 5 asked for.
    assert budgets == [("&&", 40), ("||", 40 // pg_search.OR_SHARE)]
    budgets.clear()
    assert store.search("walrus harbour", limit=30)  # fewer than twice 30: half the budget
    assert budgets == [("&&", 40), ("||", 20)]
