"""Search: ranking sanity, what is searchable, filters, CJK, hostile input."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemo.sessions import SearchHit, SearchTuning, SessionStore

HOSTILE = [
    '"', '""', '"""', "'", "*", "**", ":", "-", "--", "^", "+", "(", ")", "()", "((a)",
    "AND", "OR", "NOT", "NEAR", "a AND", "OR b", "NOT NOT", "a OR OR b", "NEAR(a b, 2)",
    '"unbalanced quote', "col:value", "body:secret", "-exclude this", "prefix*", "*suffix",
    "a*b*c", "{a b}", "[x]", "a + b", "^start", "c++", "->", "::", "foo.bar()", "a\\b",
    "100%", "_under_", "%", "emoji 🎉 party", "🎉", "🔥🔥🔥", "\u200b", "\u0000", "\ufeff",
    "'; DROP TABLE messages; --", "rank:", "rowid", "messages_fts", "\n\t ",
    "Ω≈ç√∫", "ﷺ", "🏳️‍🌈", "e\u0301", "ＡＢＣ", "x" * 5000, "and " * 300,
]


def _session(store: SessionStore, *texts: str, role: str = "user") -> tuple[str, list[int]]:
    sid = store.create_session()
    messages: list[dict[str, Any]] = [{"role": role, "content": t} for t in texts]
    return sid, store.append_messages(sid, messages)


def test_message_with_more_query_words_ranks_first(store: SessionStore) -> None:
    _, ids = _session(
        store,
        "the deploy failed",
        "unrelated chatter about lunch",
        "the deploy to kubernetes failed with a timeout",
        "kubernetes is great",
        "more lunch talk",
    )
    hits = store.search("kubernetes deploy timeout")
    assert hits[0].message_id == ids[2]
    assert {h.message_id for h in hits if h.matched} == {ids[0], ids[2], ids[3]}
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_rare_word_beats_common_word(store: SessionStore) -> None:
    common = [f"we talked about the project plan {i}" for i in range(30)]
    _, ids = _session(store, *common, "the project codename is bluefin")
    assert store.search("project bluefin")[0].message_id == ids[-1]


def test_stemming_and_prefixes(store: SessionStore) -> None:
    _, ids = _session(store, "She painted a sunrise over the lake", "he is a researcher now")
    assert store.search("painting")[0].message_id == ids[0]
    assert store.search("research")[0].message_id == ids[1]


def test_tool_output_and_tool_call_arguments_are_searchable(store: SessionStore) -> None:
    sid = store.create_session()
    ids = store.append_messages(sid, [
        {"role": "user", "content": "why does the app crash?"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "c1", "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "config/prod_db.yaml"}'}}]},
        {"role": "tool", "tool_call_id": "c1",
         "content": "Traceback: psycopg.OperationalError: FATAL password authentication"},
    ])
    assert store.search("prod_db.yaml")[0].message_id == ids[1]
    assert store.search("read_file")[0].message_id == ids[1]
    hit = store.search("password authentication")[0]
    assert hit.message_id == ids[2] and hit.role == "tool"
    assert ">>password<<" in hit.snippet and ">>authentication<<" in hit.snippet


def test_list_content_and_names_are_searchable(store: SessionStore) -> None:
    sid = store.create_session()
    mid = store.append_message(sid, {"role": "user", "name": "Melanie", "content": [
        {"type": "text", "text": "my pottery bowl"}, {"type": "image_url", "image_url": {}}]})
    assert store.search("pottery")[0].message_id == mid
    assert store.search("melanie")[0].message_id == mid


def test_reply_after_a_match_is_offered_and_marked(store: SessionStore) -> None:
    _, ids = _session(store, "unrelated opener", "what colour was the harbourmaster's boat?",
                      "It was bright orange.", "ok thanks")
    hits = store.search("harbourmaster boat")
    assert hits[0].message_id == ids[1] and hits[0].matched
    reply = next(h for h in hits if h.message_id == ids[2])
    assert not reply.matched and reply.score < hits[0].score


def matched(hits: list[SearchHit]) -> set[int]:
    return {h.message_id for h in hits if h.matched}


def test_filters(store: SessionStore) -> None:
    a, a_ids = _session(store, "alpha marmalade one", "alpha marmalade two")
    b, b_ids = _session(store, "beta marmalade")
    store.append_message(b, {"role": "assistant", "content": "assistant marmalade"})
    assert matched(store.search("marmalade", session_id=a)) == set(a_ids)
    assert {h.session_id for h in store.search("marmalade", exclude_session_id=a)} == {b}
    assert {h.role for h in store.search("marmalade", role="assistant")} == {"assistant"}
    assert {h.role for h in store.search("marmalade", role=["user"])} == {"user"}
    store.archive_and_replace(a, a_ids[:1], [{"role": "user", "content": "summary"}])
    # current session a: its live messages are hidden, its archived one is not
    visible = matched(store.search("marmalade", exclude_active_of=a))
    assert a_ids[0] in visible and a_ids[1] not in visible and b_ids[0] in visible
    assert store.search("marmalade", limit=0) == []
    assert len(store.search("marmalade", limit=2)) == 2


@pytest.mark.parametrize(("query", "expected"), [
    ("苹", {0, 2}),              # 1 character: substring scan
    ("苹果", {0, 2}),            # 2 characters: substring scan
    ("吃苹果", {0}),             # 3 characters: trigram index
    ("我喜欢吃苹果", {0}),
    ("東京タワー", {1}),         # Japanese kana + kanji
    ("학교에서", {3}),           # Korean
    ("苹果 python", {0, 2, 4}),  # mixed: either part
])
def test_cjk_queries(store: SessionStore, query: str, expected: set[int]) -> None:
    _, ids = _session(store, "我喜欢吃苹果", "東京タワーに行きました", "苹果手机坏了",
                      "오늘 학교에서 공부했어요", "python scripts", "nothing relevant")
    hits = store.search(query)
    assert {ids.index(h.message_id) for h in hits} == expected
    assert all(">>" in h.snippet for h in hits)


def test_cjk_query_ranks_the_fuller_match_first(store: SessionStore) -> None:
    _, ids = _session(store, "数据库", "数据库连接超时了", "超时")
    assert store.search("数据库 超时")[0].message_id == ids[1]


def test_emoji_and_symbols_are_searched_literally(store: SessionStore) -> None:
    _, ids = _session(store, "party time 🎉", "100% done", "plain")
    assert [h.message_id for h in store.search("🎉")] == [ids[0]]
    assert [h.message_id for h in store.search("%")] == [ids[1]]
    assert store.search("") == [] and store.search("   ") == []


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(store: SessionStore, query: str) -> None:
    _session(store, 'say "hi" AND (bye) NOT col:value -x c++ 100% 🎉', "normal text")
    hits = store.search(query)
    assert isinstance(hits, list)


def test_hostile_query_terms_are_matched_literally(store: SessionStore) -> None:
    _, ids = _session(store, "the NOT operator", "col:value pairs", "nothing here")
    assert store.search("NOT operator")[0].message_id == ids[0]
    assert store.search("col:value")[0].message_id == ids[1]
    assert store.search('"unbalanced col:value')[0].message_id == ids[1]


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=60))
def test_no_string_raises(store: SessionStore, query: str) -> None:
    if not store.search("seed"):
        _session(store, "seed text with words", "中文内容测试", 'quote " and * and :')
    store.search(query)
    store.search(query, role="user", include_archived=False)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(alphabet=st.sampled_from(list('"*:-()^+ aAoOrRnNdDtT中文🎉\\%_')),
                     max_size=30))
def test_no_operator_soup_raises(store: SessionStore, query: str) -> None:
    store.search(query)


@pytest.mark.sqlite_only
def test_index_stays_consistent(store: SessionStore) -> None:
    sid, ids = _session(store, "alpha 中文内容", "beta", "gamma")
    store.archive_and_replace(sid, ids[:2], [{"role": "user", "content": "summary 中文总结"}])
    store.delete_session(_session(store, "to be deleted 中文")[0])
    with closing(sqlite3.connect(store.path)) as conn, conn:
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
        conn.execute("INSERT INTO messages_trigram(messages_trigram) VALUES ('integrity-check')")
        flagged = conn.execute("SELECT count(*) FROM messages WHERE cjk = 1").fetchone()[0]
    assert flagged == 2


def test_limit_above_the_candidate_pool_returns_that_many(store: SessionStore) -> None:
    _session(store, *(f"walrus sighting number {i}" for i in range(130)))
    assert len(store.search("walrus", limit=120)) == 120
    assert len(store.search("walrus sighting", limit=3)) == 3


def test_common_words_are_left_out_of_ranking_but_not_of_session_search(
    store: SessionStore,
) -> None:
    store.search_tuning = SearchTuning(rank_budget=5, term_budget=5)
    a, a_ids = _session(store, *(f"deploy step {i}" for i in range(10)))
    b, b_ids = _session(store, "kubernetes deploy finished", "kubernetes again")
    # over the whole archive "deploy" (11 messages) is too common to rank by
    hits = store.search("kubernetes deploy")
    assert hits[0].message_id == b_ids[0]  # both words: coverage puts it first
    assert {h.session_id for h in hits if h.matched} == {b}
    # within session a every word counts, so its "deploy" messages are found; BM25
    # ranks at most the latest 5 (the budget) of them
    assert matched(store.search("kubernetes deploy", session_id=a)) == set(a_ids[-5:])
    assert store.search("kubernetes", session_id="no-such-session") == []


def test_an_old_message_with_every_common_word_is_still_found(store: SessionStore) -> None:
    """Both words are too common to rank every match (the budget keeps the latest ones),
    but the one old message holding both is reached by ranking the messages with all."""
    store.search_tuning = SearchTuning(rank_budget=20, term_budget=20)
    _, old = _session(store, "the walrus migration broke on tuesday")
    _session(store, *(f"walrus note {i}" for i in range(60)))
    _session(store, *(f"migration step {i}" for i in range(60)))
    assert store.search("walrus migration", limit=3)[0].message_id == old[0]
    assert store.search("walrus migration zzyzx", limit=3)[0].message_id == old[0]


# -- queries of any length (issue 14, class 7) -------------------------------------------


def _count_statements(store: SessionStore) -> list[str]:
    """Every SQL statement the store's connection in this thread runs from now on."""
    seen: list[str] = []

    def record(statement: str) -> None:
        if not statement.startswith("--"):  # statements FTS5 runs inside one are marked --
            seen.append(statement)

    store._db.connection().set_trace_callback(record)
    return seen


@pytest.mark.parametrize("query", ["!@#$%^&*()" * 6_000, "→" * 60_000, "% _ \\ " * 20_000])
def test_symbol_only_queries_of_50kb_are_valid(store: SessionStore, query: str) -> None:
    _, ids = _session(store, "plain words", f"prefix {query[:3000]} suffix")
    hits = store.search(query)
    assert [h.message_id for h in hits] == [ids[1]]  # its first 2,000 characters match


@pytest.mark.sqlite_only  # counts SQLite statements; PostgreSQL's cap is the same parser's
def test_a_100000_word_query_costs_what_a_short_one_costs(store: SessionStore) -> None:
    _, ids = _session(store, *(f"note about w{i}x and other things" for i in range(50)))
    statements = _count_statements(store)
    short = store.search("w1x w2x w3x")
    assert statements  # the trace sees the work
    statements.clear()
    long = store.search(" ".join(f"w{i}x" for i in range(100_000)))
    # One count per kept term (32), the ranking, and a neighbour look-up per candidate
    # (at most 50): bounded by constants, where one look-up per word would be 100,000.
    assert len(statements) <= 32 + 50 + 20
    assert short and long
    assert {h.message_id for h in long if h.matched} <= set(ids[:32])  # the first 32 words


def test_parse_query_caps_terms_and_says_so() -> None:
    from mnemo.sessions.query import MAX_TERMS, limits_note, parse_query

    words = [f"w{i}x" for i in range(100_000)]
    parsed = parse_query(" ".join(words))
    assert parsed.truncated and [t.text for t in parsed.terms] == words[:MAX_TERMS]
    assert "only the first 32" in str(limits_note(" ".join(words)))
    assert not parse_query("deploy failed again").truncated
    assert limits_note("deploy failed again") is None
    assert "first 2,000 characters" in str(limits_note("!" * 3000))
    cjk = parse_query(" ".join(f"猫{chr(0x4E00 + i)}" for i in range(200)))
    assert cjk.truncated and len(cjk.cjk) == MAX_TERMS
