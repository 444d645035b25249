"""The session_search tool: modes, grouping, limits, and errors as JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mnemo.memory import MEMORY_SCHEMA
from mnemo.sessions import SESSION_SEARCH_SCHEMA, SessionStore, session_search


def call(store: SessionStore, *args: Any, **kwargs: Any) -> dict[str, Any]:
    out = session_search(*args, store=store, **kwargs)
    assert isinstance(out, str)
    result: dict[str, Any] = json.loads(out)
    return result


def _seed(store: SessionStore) -> dict[str, list[int]]:
    ids = {}
    for title, turns in {
        "deploy": ["the staging deploy failed", "rollback worked, ingress timeout was 30s",
                   "thanks"],
        "cooking": ["my risotto recipe needs saffron", "toast the rice first", "yum"],
        "deploy again": ["another deploy today", "deploy went fine", "great"],
    }.items():
        sid = store.create_session(title=title, session_id=title.replace(" ", "-"))
        ids[sid] = store.append_messages(
            sid, [{"role": "user" if i % 2 == 0 else "assistant", "content": t}
                  for i, t in enumerate(turns)])
    return ids


@pytest.fixture
def seeded(store: SessionStore) -> SessionStore:
    _seed(store)
    return store


def test_schema_has_the_memory_schema_shape() -> None:
    assert set(SESSION_SEARCH_SCHEMA) == set(MEMORY_SCHEMA) == {"name", "description",
                                                                 "parameters"}
    assert SESSION_SEARCH_SCHEMA["name"] == "session_search"
    props = SESSION_SEARCH_SCHEMA["parameters"]["properties"]
    assert props["mode"]["enum"] == ["search", "read", "around", "recent"]
    assert props["limit"]["maximum"] == 10
    json.dumps(SESSION_SEARCH_SCHEMA)


def test_search_groups_by_session_with_snippets_and_context(store: SessionStore) -> None:
    ids = _seed(store)
    result = call(store, "deploy", limit=10)
    assert result["success"] and result["mode"] == "search"
    sessions = [g["session_id"] for g in result["results"]]
    assert set(sessions) == {"deploy", "deploy-again"} and len(sessions) == 2
    group = next(g for g in result["results"] if g["session_id"] == "deploy")
    assert group["title"] == "deploy"
    match = group["matches"][0]
    assert match["message_id"] == ids["deploy"][0]
    assert ">>deploy<<" in match["snippet"]
    context_ids = [m["message_id"] for m in match["context"]]
    assert context_ids == ids["deploy"][:2]  # the match and the reply after it
    assert [m.get("match", False) for m in match["context"]] == [True, False]
    assert result["count"] == sum(len(g["matches"]) for g in result["results"])


def test_default_limit_is_3_and_at_most_10(store: SessionStore) -> None:
    sid = store.create_session()
    store.append_messages(sid, [{"role": "user", "content": f"walrus number {i}"}
                                for i in range(30)])
    assert call(store, "walrus")["count"] == 3
    assert call(store, "walrus", limit=50)["count"] == 10
    for bad in (0, -1, -5):
        refused = call(store, "walrus", limit=bad)
        assert refused["success"] is False and "limit must be between 1 and 10" in refused["error"]
    assert call(store, "walrus", limit="4")["count"] == 4


def test_no_match_says_what_to_try(store: SessionStore) -> None:
    _seed(store)
    result = call(store, "zeppelin")
    assert result["success"] and result["count"] == 0 and "recent" in result["message"]


def test_current_session_live_messages_are_skipped_but_archived_ones_found(
    store: SessionStore,
) -> None:
    ids = _seed(store)
    store.archive_and_replace("deploy", ids["deploy"][:1], [{"role": "user", "content": "sum"}])
    found = {m["message_id"]
             for g in call(store, "deploy", limit=10, current_session_id="deploy")["results"]
             for m in g["matches"]}
    assert ids["deploy"][0] in found  # archived: out of the live context
    assert not found & set(ids["deploy"][1:])
    recent = call(store, mode="recent", current_session_id="deploy")
    assert "deploy" not in [s["session_id"] for s in recent["sessions"]]


def test_read_mode_pages_through_a_session(store: SessionStore) -> None:
    sid = store.create_session(title="long")
    ids = store.append_messages(sid, [{"role": "user", "content": f"line {i}"}
                                      for i in range(25)])
    first = call(store, mode="read", session_id=sid)
    assert first["success"] and first["title"] == "long" and first["message_count"] == 25
    assert [m["message_id"] for m in first["messages"]] == ids[:20]
    assert first["next_offset"] == 20
    second = call(store, mode="read", session_id=sid, offset=20)
    assert [m["message_id"] for m in second["messages"]] == ids[20:]
    assert "next_offset" not in second


def test_around_mode_scrolls(store: SessionStore) -> None:
    sid = store.create_session()
    ids = store.append_messages(sid, [{"role": "user", "content": f"turn {i}"}
                                      for i in range(20)])
    result = call(store, mode="around", message_id=ids[10])
    assert [m["message_id"] for m in result["messages"]] == ids[5:16]
    assert [m["message_id"] for m in result["messages"] if m.get("match")] == [ids[10]]


def test_recent_mode(store: SessionStore) -> None:
    _seed(store)
    result = call(store, mode="recent", limit=2)
    assert result["success"] and len(result["sessions"]) == 2
    assert {"session_id", "title", "started_at", "last_active", "message_count",
            "first_request"} <= set(result["sessions"][0])


def test_tool_calls_and_archived_flags_are_shown(store: SessionStore) -> None:
    sid = store.create_session()
    ids = store.append_messages(sid, [
        {"role": "user", "content": "check the quokka config"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "c", "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "quokka.toml"}'}}]},
    ])
    store.archive_and_replace(sid, ids, [{"role": "user", "content": "summary"}])
    match = call(store, "quokka.toml")["results"][0]["matches"][0]
    assert match["archived"] is True
    view = next(m for m in match["context"] if m["message_id"] == ids[1])
    assert view["tool_calls"] == ['read_file({"path": "quokka.toml"})'] and view["archived"]


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"query": None}, "needs a query"),
    ({"query": "   "}, "needs a query"),
    ({"mode": "explode"}, "unknown mode"),
    ({"mode": "read"}, "needs a session_id"),
    ({"mode": "read", "session_id": "ghost"}, "no session 'ghost'"),
    ({"mode": "read", "session_id": "deploy", "offset": -1}, "offset must be"),
    ({"mode": "around"}, "needs a message_id"),
    ({"mode": "around", "message_id": 99999}, "no message 99999"),
    ({"mode": "around", "message_id": "abc"}, "whole number"),
    ({"query": "x", "limit": "lots"}, "whole number"),
    ({"query": "x", "limit": True}, "whole number"),
    ({"query": "x", "limit": "--5"}, "whole number"),
    ({"query": "x", "limit": 2.5}, "whole number"),
])
def test_every_error_is_json_that_says_what_to_do(store: SessionStore, kwargs: dict[str, Any],
                                                  needle: str) -> None:
    _seed(store)
    kwargs = dict(kwargs)  # the parameter dict is shared by both backends' runs
    query = kwargs.pop("query", "deploy")
    result = call(store, query, **kwargs)
    assert result["success"] is False
    assert needle in result["error"]


def test_store_failure_is_a_json_error(store: SessionStore) -> None:
    store.close()
    result = call(store, "anything")
    assert result["success"] is False and "closed" in result["error"]


@pytest.mark.parametrize("query", ['"', "AND OR", "(((", "🎉", "col:x*", "中"])
def test_hostile_queries_through_the_tool(store: SessionStore, query: str) -> None:
    _seed(store)
    assert call(store, query)["success"] is True


def test_replies_shown_as_context_do_not_take_the_place_of_matches(store: SessionStore) -> None:
    sid = store.create_session()
    ids = store.append_messages(sid, [
        {"role": "user", "content": "ECONNREFUSED ECONNREFUSED when calling the api"},
        {"role": "assistant", "content": "restart the proxy"},
        {"role": "user", "content": "unrelated"},
        {"role": "user", "content": "saw ECONNREFUSED once more, much later in a long line "
                                    "of log output that goes on and on and on"},
        {"role": "assistant", "content": "ok"},
    ])
    result = call(store, "econnrefused", limit=2)
    listed = [m["message_id"] for g in result["results"] for m in g["matches"]]
    assert listed == [ids[0], ids[3]]


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"mode": "around", "message_id": 2**70}, "no message"),
    ({"mode": "around", "message_id": -(2**70)}, "no message"),
    ({"mode": "read", "session_id": ["x"]}, "session_id must be a string"),
    ({"mode": "search", "query": "deploy", "session_id": {"a": 1}}, "session_id must be a string"),
    ({"mode": "search", "query": ["deploy"]}, "query must be a string"),
    ({"mode": ["search"]}, "unknown mode"),
    ({"mode": "recent", "current_session_id": 5}, "current_session_id must be a string"),
])
def test_arguments_of_the_wrong_kind_are_refused_clearly(
    store: SessionStore, kwargs: dict[str, Any], needle: str
) -> None:
    _seed(store)
    result = call(store, **kwargs)
    assert result["success"] is False and needle in result["error"]
    assert "unreadable" not in result["error"] and "could not be read" not in result["error"]


def test_an_offset_past_any_session_reads_nothing(store: SessionStore) -> None:
    _seed(store)
    result = call(store, mode="read", session_id="deploy", offset=2**70)
    assert result["success"] is True and result["messages"] == []
    assert "next_offset" not in result


def test_lone_surrogates_never_reach_the_json_text(store: SessionStore) -> None:
    sid = store.create_session()
    store.append_message(sid, {"role": "tool", "tool_call_id": "c", "content": "ls: bad\udcffname"})
    out = session_search("bad\udcffname", store=store)
    out.encode("utf-8")  # a client can send it on
    assert json.loads(out)["success"] is True


_JSON = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers()
    | st.integers(min_value=-(2**80), max_value=2**80) | st.text(max_size=20)
    | st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=6,
)
_MODE = st.sampled_from(["search", "read", "around", "recent"])
_NONE = {"query": None, "mode": "search", "session_id": None, "message_id": None,
         "limit": None, "offset": None, "current_session_id": None}


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(**{**_NONE, "mode": "around", "message_id": 2**70})
@example(**{**_NONE, "mode": "read", "session_id": "deploy", "offset": 2**70})
@example(**{**_NONE, "mode": "read", "session_id": ["x"]})
@example(**{**_NONE, "query": "deploy", "current_session_id": {"a": 1}})
# Found by this test on PostgreSQL: a lone surrogate could not be sent as a parameter.
@example(**{**_NONE, "query": "deploy", "session_id": "\ud800", "current_session_id": "deploy"})
@example(**{**_NONE, "query": "deploy \udc80", "current_session_id": "\ud800"})
@example(**{**_NONE, "mode": "read", "session_id": "\ud800"})
@given(query=_JSON | st.just("deploy"), mode=_MODE | _MODE | _JSON,
       session_id=_JSON | st.just("deploy"),
       message_id=_JSON | st.integers(1, 12), limit=_JSON, offset=_JSON,
       current_session_id=_JSON | st.just("deploy"))
def test_no_arguments_make_the_tool_raise(
    seeded: SessionStore, query: Any, mode: Any, session_id: Any, message_id: Any, limit: Any,
    offset: Any, current_session_id: Any,
) -> None:
    out = session_search(query, mode=mode, session_id=session_id, message_id=message_id,
                         limit=limit, offset=offset, store=seeded,
                         current_session_id=current_session_id)
    result = json.loads(out)
    assert isinstance(result, dict) and result["success"] in (True, False)
    if not result["success"]:
        assert isinstance(result["error"], str) and "unreadable" not in result["error"]


def test_a_long_query_is_not_echoed_whole_and_the_cut_is_reported(store: SessionStore) -> None:
    sid = store.create_session()
    store.append_messages(sid, [{"role": "user", "content": "the w3x walrus sings"}])
    query = " ".join(f"w{i}x" for i in range(5_000))
    result = call(store, query)
    assert result["success"] is True and result["count"] == 1
    assert len(result["query"]) < 300 and result["query"].endswith("more chars]")
    assert "only the first 32 were searched" in result["note"]
    assert "note" not in call(store, "walrus")
