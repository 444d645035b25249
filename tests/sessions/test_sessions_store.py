"""SessionStore: sessions, lossless messages, the compaction archive, threads."""

from __future__ import annotations

import copy
import sqlite3
import threading
from contextlib import closing
from typing import Any

import pytest

from mnemo.errors import StoreError, UsageError
from mnemo.messages import Message
from mnemo.sessions import SessionStore

CALL = {"id": "call_1", "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "src/app.py"}'}}

ROUND_TRIP: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "plain text"},
    {"role": "user", "content": [{"type": "text", "text": "look at this"},
                                 {"type": "image_url", "image_url": {"url": "data:x"}}]},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "print(1)"},
    {"role": "assistant", "tool_calls": [CALL]},  # no content key at all
    {"role": "assistant", "content": "", "reasoning": {"steps": 3}, "refusal": None},
    {"role": "user", "content": "emoji 🎉 and 中文 and \u0000 nul"},
]


def _count(store: SessionStore) -> int:
    return store.count_messages()


def test_create_and_get_session(store: SessionStore) -> None:
    sid = store.create_session(source="telegram", model="gpt-x", system_prompt="be kind",
                               title="Trip planning")
    info = store.get_session(sid)
    assert info is not None
    assert (info.source, info.model, info.system_prompt, info.title) == (
        "telegram", "gpt-x", "be kind", "Trip planning")
    assert info.ended_at is None and info.message_count == 0
    assert store.get_session("nope") is None


def test_session_ids_are_unique_and_can_be_chosen(store: SessionStore) -> None:
    ids = {store.create_session() for _ in range(50)}
    assert len(ids) == 50
    assert store.create_session(session_id="mine") == "mine"
    with pytest.raises(UsageError, match="already exists"):
        store.create_session(session_id="mine")


def test_parent_session_must_exist(store: SessionStore) -> None:
    parent = store.create_session()
    child = store.create_session(parent_id=parent)
    info = store.get_session(child)
    assert info is not None and info.parent_id == parent
    with pytest.raises(UsageError, match="parent session"):
        store.create_session(parent_id="ghost")


def test_session_updates(store: SessionStore) -> None:
    sid = store.create_session()
    store.update_system_prompt(sid, "new prompt")
    store.set_title(sid, "Named")
    store.set_model(sid, "m2")
    store.add_token_usage(sid, 100, 20)
    store.add_token_usage(sid, 50, 5)
    store.end_session(sid, reason="user_exit")
    info = store.get_session(sid)
    assert info is not None
    assert (info.system_prompt, info.title, info.model) == ("new prompt", "Named", "m2")
    assert (info.prompt_tokens, info.completion_tokens) == (150, 25)
    assert info.ended_at is not None and info.end_reason == "user_exit"
    with pytest.raises(UsageError, match="no session 'ghost'"):
        store.set_title("ghost", "x")
    with pytest.raises(UsageError, match="no session 'ghost'"):
        store.set_model("ghost", "m3")
    store.set_model(sid, "m3")  # a model switch mid-session
    assert (info := store.get_session(sid)) is not None and info.model == "m3"
    with pytest.raises(UsageError, match="no session 'ghost'"):
        store.end_session("ghost")
    with pytest.raises(UsageError, match="no session 'ghost'"):
        store.add_token_usage("ghost", 1, 1)


def test_messages_round_trip_exactly(store: SessionStore) -> None:
    sid = store.create_session()
    original = copy.deepcopy(ROUND_TRIP)
    ids = store.append_messages(sid, ROUND_TRIP)
    assert original == ROUND_TRIP  # the caller's dicts are untouched
    loaded = store.load_messages(sid)
    assert [m.id for m in loaded] == ids
    assert [m.to_message() for m in loaded] == ROUND_TRIP
    assert loaded[2].text == "look at this\n[image_url]"
    # to_message gives new dicts each time
    first = loaded[1].to_message()
    first["content"] = "changed"
    assert store.load_messages(sid)[1].to_message()["content"] == "plain text"


def test_append_message_with_metadata(store: SessionStore) -> None:
    sid = store.create_session()
    mid = store.append_message(sid, {"role": "user", "content": "hi"}, timestamp=1000.0,
                               external_id="D1:3", meta={"speaker": "Ana"})
    message = store.get_message(mid)
    assert message is not None
    assert (message.timestamp, message.external_id, message.meta) == (1000.0, "D1:3",
                                                                       {"speaker": "Ana"})
    assert message.active and not message.compacted


@pytest.mark.parametrize("bad", [
    "just a string",
    {"content": "no role"},
    {"role": "robot", "content": "x"},
    {"role": "user", "content": 42},
    {"role": "user", "content": ["not a dict"]},
    {"role": "assistant", "tool_calls": "nope"},
    {"role": "tool", "tool_call_id": 7, "content": "x"},
    {"role": "user", "content": "x", "extra": object()},
])
def test_a_bad_message_in_a_batch_stores_nothing(store: SessionStore, bad: Any) -> None:
    sid = store.create_session()
    store.append_message(sid, {"role": "user", "content": "kept"})
    with pytest.raises(UsageError, match="message 1"):
        store.append_messages(sid, [{"role": "user", "content": "fine"}, bad])
    assert [m.text for m in store.load_messages(sid)] == ["kept"]
    assert _count(store) == 1


def test_append_to_a_missing_session_is_refused(store: SessionStore) -> None:
    with pytest.raises(UsageError, match="no session 'ghost'"):
        store.append_message("ghost", {"role": "user", "content": "x"})
    with pytest.raises(UsageError, match="list of messages"):
        store.append_messages(store.create_session(), {"role": "user"})  # type: ignore[arg-type]
    assert _count(store) == 0


def test_create_session_with_messages_is_all_or_nothing(store: SessionStore) -> None:
    sid = store.create_session(messages=[{"role": "user", "content": "a"},
                                         {"role": "assistant", "content": "b"}])
    assert [m.text for m in store.load_messages(sid)] == ["a", "b"]
    with pytest.raises(UsageError):
        store.create_session(session_id="half", messages=[{"role": "user", "content": "a"},
                                                          {"role": "bad"}])
    assert store.get_session("half") is None


def _conversation(store: SessionStore, n: int = 8) -> tuple[str, list[int]]:
    sid = store.create_session()
    messages: list[Message] = [{"role": "system", "content": "sys"}]
    for i in range(n):
        messages.append({"role": "user", "content": f"question {i} about topic{i}"})
        messages.append({"role": "assistant", "content": f"answer {i} mentions zebra{i}"})
    return sid, store.append_messages(sid, messages)


def test_archive_and_replace_keeps_order_and_never_deletes(store: SessionStore) -> None:
    sid, ids = _conversation(store)
    middle = ids[3:11]
    summary: Message = {"role": "user", "content": "[CONTEXT COMPACTION] summary of 1-4"}
    (sid_summary,) = store.archive_and_replace(sid, middle, [summary])

    live = store.load_messages(sid)
    assert [m.id for m in live] == [*ids[:3], sid_summary, *ids[11:]]
    assert live[3].meta["replaces"] == middle
    everything = store.load_messages(sid, active_only=False)
    assert len(everything) == len(ids) + 1
    # One role's messages, archived ones too, in the same order.
    assert [m.id for m in store.load_messages(sid, active_only=False, role="user")] == [
        m.id for m in everything if m.role == "user"]
    assert [m.id for m in store.load_messages(sid, role="user")] == [
        m.id for m in everything if m.role == "user" and m.active]
    archived = [m for m in everything if m.compacted]
    assert [m.id for m in archived] == middle and not any(m.active for m in archived)
    assert [m.id for m in store.originals_of(sid_summary)] == middle
    # the summary sits right after the last archived message in the full history
    order = [m.id for m in everything]
    assert order.index(sid_summary) == order.index(middle[-1]) + 1

    # later appends go after everything
    tail = store.append_message(sid, {"role": "user", "content": "next"})
    assert store.load_messages(sid)[-1].id == tail

    # a second compaction can archive the summary itself (summaries of summaries)
    (second,) = store.archive_and_replace(sid, [ids[1], ids[2], sid_summary],
                                          [{"role": "user", "content": "summary 2"}])
    assert [m.id for m in store.load_messages(sid)][:3] == [ids[0], second, ids[11]]
    info = store.get_session(sid)
    assert info is not None and info.archived_count == len(middle) + 3


def test_archived_messages_stay_searchable(store: SessionStore) -> None:
    sid, ids = _conversation(store)
    store.archive_and_replace(sid, ids[3:11], [{"role": "user", "content": "summary"}])
    hits = [h for h in store.search("zebra2") if h.matched]
    assert [h.message_id for h in hits] == [ids[6]]
    assert hits[0].compacted and not hits[0].active
    assert store.search("zebra2", include_archived=False) == []


def test_archive_rejects_bad_ids_and_changes_nothing(store: SessionStore) -> None:
    sid, ids = _conversation(store, 2)
    _, other_ids = _conversation(store, 1)
    before = [(m.id, m.active) for m in store.load_messages(sid, active_only=False)]
    with pytest.raises(UsageError, match="not in session"):
        store.archive_and_replace(sid, [ids[1], other_ids[1]], [{"role": "user", "content": "s"}])
    with pytest.raises(UsageError, match="at least one"):
        store.archive_and_replace(sid, [], [{"role": "user", "content": "s"}])
    with pytest.raises(UsageError, match="role"):
        store.archive_and_replace(sid, [ids[1]], [{"role": "nobody"}])
    store.archive_and_replace(sid, [ids[1]], [])
    with pytest.raises(UsageError, match="already archived"):
        store.archive_and_replace(sid, [ids[1], ids[2]], [{"role": "user", "content": "s"}])
    after = [(m.id, m.active) for m in store.load_messages(sid, active_only=False)]
    assert after == [(i, i != ids[1]) for i, _ in before]


def test_read_session_and_messages_around(store: SessionStore) -> None:
    sid, ids = _conversation(store, 5)
    assert [m.id for m in store.read_session(sid, offset=2, limit=3)] == ids[2:5]
    assert [m.id for m in store.read_session(sid, limit=None)] == ids
    assert [m.id for m in store.messages_around(ids[5], before=2, after=1)] == ids[3:7]
    assert [m.id for m in store.messages_around(ids[0], before=3, after=0)] == ids[:1]
    with pytest.raises(UsageError, match="no message"):
        store.messages_around(999_999)


def test_list_and_recent_sessions(store: SessionStore) -> None:
    a = store.create_session(title="a", started_at=100.0)
    b = store.create_session(title="b", started_at=200.0, source="import")
    store.append_message(a, {"role": "user", "content": "first ask of a"}, timestamp=300.0)
    assert [s.id for s in store.list_sessions()] == [b, a]
    assert [s.id for s in store.list_sessions(source="import")] == [b]
    assert [s.id for s in store.list_sessions(limit=1, offset=1)] == [a]
    recent = store.recent_sessions(5)
    assert [s.id for s in recent] == [a, b]
    assert recent[0].preview == "first ask of a" and recent[0].message_count == 1
    assert [s.id for s in store.recent_sessions(5, exclude_session_id=a)] == [b]


@pytest.mark.sqlite_only
def test_delete_session_removes_its_index_rows(store: SessionStore) -> None:
    sid, _ = _conversation(store, 3)
    keep, _ = _conversation(store, 1)
    assert store.delete_session(sid) == 7
    assert store.get_session(sid) is None
    assert all(h.session_id == keep for h in store.search("question answer zebra0 zebra2"))
    with closing(sqlite3.connect(store.path)) as conn, conn:
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
        conn.execute("INSERT INTO messages_trigram(messages_trigram) VALUES ('integrity-check')")
    with pytest.raises(UsageError):
        store.delete_session(sid)


def test_each_thread_gets_its_own_connection(store: SessionStore) -> None:
    sid = store.create_session()
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(20):
                store.append_message(sid, {"role": "user", "content": f"thread {n} msg {i}"})
            store.search(f"thread {n}")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    texts = [m.text for m in store.load_messages(sid)]
    assert sorted(texts) == sorted(f"thread {n} msg {i}" for n in range(4) for i in range(20))
    positions = [m.position for m in store.load_messages(sid)]
    assert positions == sorted(set(positions))


def test_closed_store_refuses_work(store: SessionStore) -> None:
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.create_session()


@pytest.mark.sqlite_only
def test_a_writer_that_holds_the_lock_too_long_is_a_clear_store_error(
    store: SessionStore,
) -> None:
    sid = store.create_session()
    impatient = SessionStore(store.path, busy_timeout=0.05)
    holder = sqlite3.connect(store.path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreError, match="busy"):
            impatient.append_message(sid, {"role": "user", "content": "x"})
        assert impatient.load_messages(sid) == []  # readers are not blocked (WAL)
        holder.execute("ROLLBACK")
        impatient.append_message(sid, {"role": "user", "content": "x"})
    finally:
        holder.close()
        impatient.close()
    assert [m.text for m in store.load_messages(sid)] == ["x"]
