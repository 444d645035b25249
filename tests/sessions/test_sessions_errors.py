"""Failures of the store: each one named for what it is, none hiding another, none fatal.

Text SQLite cannot store (lone surrogates) is cleaned, not refused; values SQLite cannot
bind are the caller's mistake (``UsageError``); only a damaged file is "unreadable"; and a
transaction SQLite already rolled back reports the error that ended it.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mnemo.errors import DatabaseDamagedError, StoreError, UsageError
from mnemo.sessions import SessionStore
from mnemo.sessions.db import store_errors
from mnemo.sessions.records import clean_text
from mnemo.sessions.transcript import import_transcript

BAD_NAME = os.fsdecode(b"bad\xffname.txt")  # what listing a non-UTF-8 file name gives


def test_clean_text_replaces_lone_surrogates_and_joins_pairs() -> None:
    assert BAD_NAME == "bad\udcffname.txt"
    assert clean_text(BAD_NAME) == "bad\ufffdname.txt"
    assert clean_text("\ud800 x \udfff") == "\ufffd x \ufffd"
    assert clean_text("a\ud83d\ude00b") == "a\U0001f600b"
    for fine in ("plain", "café 你好 😀", ""):
        assert clean_text(fine) is fine


def test_tool_output_with_a_lone_surrogate_is_stored_cleaned(store: SessionStore) -> None:
    sid = store.create_session()
    call = {"id": "c1", "type": "function",
            "function": {"name": "ls", "arguments": json.dumps({"path": BAD_NAME},
                                                              ensure_ascii=False)}}
    raw = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": f"{BAD_NAME}\nreadme.md",
         "note\udc80": "\ud800"},
        {"role": "user", "content": [{"type": "text", "text": f"open {BAD_NAME}"}],
         "name": "al\udcffice"},
    ]
    ids = store.append_messages(sid, raw)
    store.append_message(sid, {"role": "assistant", "content": "x\ud800"},
                         external_id="e\udc80", meta={"k": "\udcff"})
    stored = [m.to_message() for m in store.load_messages(sid)]
    clean = BAD_NAME.replace("\udcff", "\ufffd")
    assert stored[1] == {"role": "tool", "tool_call_id": "c1",
                         "content": f"{clean}\nreadme.md", "note\ufffd": "\ufffd"}
    assert json.loads(stored[0]["tool_calls"][0]["function"]["arguments"]) == {"path": clean}
    assert stored[2]["name"] == "al\ufffdice"
    assert stored[2]["content"] == [{"type": "text", "text": f"open {clean}"}]
    last = store.load_messages(sid)[-1]
    assert (last.content, last.external_id, last.meta) == ("x\ufffd", "e\ufffd", {"k": "\ufffd"})
    assert [h.message_id for h in store.search("readme") if h.matched] == [ids[1]]
    # the agent still holds the raw dicts: they match what was stored
    assert not store.sync_live(sid, [*raw, {"role": "assistant", "content": "x\ud800"}]).changed


def test_session_fields_with_lone_surrogates_are_cleaned(store: SessionStore) -> None:
    sid = store.create_session(title=BAD_NAME, system_prompt="p\ud800", model="m\udcff")
    store.end_session(sid, reason="r\udc80")
    info = store.get_session(sid)
    assert info is not None
    assert (info.title, info.system_prompt, info.model, info.end_reason) == (
        "bad\ufffdname.txt", "p\ufffd", "m\ufffd", "r\ufffd")


def test_a_transcript_with_a_lone_surrogate_imports(store: SessionStore, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('[{"role": "user", "content": "broken \\ud800 escape"}]', encoding="utf-8")
    sid, count = import_transcript(store, path)
    assert count == 1
    assert store.load_messages(sid)[0].content == "broken \ufffd escape"


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@example("\ud800")
@example("tool_calls")
@example("role")
@given(st.text(st.characters() | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
               max_size=40))
def test_any_text_is_stored_and_read_back_cleaned(store: SessionStore, text: str) -> None:
    sid = store.create_session()
    message: dict[str, Any] = {"role": "tool", "tool_call_id": text, "content": text,
                               "name": text}
    # The text as a key of its own too, unless it names a field the message has or one
    # with a shape of its own ("tool_calls": a list of dicts) — hypothesis found that one.
    if text not in message and text != "tool_calls":
        message[text] = [text]
    (mid,) = store.append_messages(sid, [message])
    stored = store.get_message(mid)
    assert stored is not None
    expected = json.loads(clean_text(json.dumps(message, ensure_ascii=False)))
    assert stored.to_message() == expected


def test_a_lone_surrogate_to_look_up_is_a_usage_error(store: SessionStore) -> None:
    # Found by the session tool's property test on PostgreSQL, where it had escaped as a
    # UnicodeEncodeError ("mnemo sessions show" gets one from a badly encoded argument).
    store.create_session()
    with pytest.raises(UsageError, match="cannot store or look up"):
        store.get_session("\ud800")
    with pytest.raises(UsageError, match="cannot store or look up"):
        store.search("deploy", session_id="\udcff")


def test_values_sqlite_cannot_bind_are_usage_errors(store: SessionStore) -> None:
    sid = store.create_session()
    with pytest.raises(UsageError, match="cannot store or look up"):
        store.get_session(["x"])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="cannot store or look up"):
        store.load_messages({"a": 1})  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="cannot store or look up"):
        store.search("x", session_id=["x"])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="must be text"):
        store.search(["x"])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="whole number"):
        store.read_session(sid, offset="3")  # type: ignore[arg-type]
    # huge numbers are not errors: nothing that far away exists
    assert store.get_message(2**70) is None
    assert store.read_session(sid, offset=2**70, limit=2**70) == []
    assert store.list_sessions(limit=2**70, offset=0)[0].id == sid
    with pytest.raises(UsageError, match="no message"):
        store.messages_around(2**70)
    with pytest.raises(UsageError, match="no message"):
        store.originals_of(-(2**70))


def test_only_a_damaged_file_is_called_damaged(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database, just some text" * 200)
    with pytest.raises(DatabaseDamagedError, match=r"damaged.*mnemo sessions repair"):
        SessionStore(garbage)
    for exc in (sqlite3.IntegrityError("UNIQUE constraint failed: sessions.id"),
                sqlite3.NotSupportedError("not supported"),
                sqlite3.DatabaseError("something else")):
        with pytest.raises(StoreError) as caught, store_errors("state.db"):
            raise exc
        assert not isinstance(caught.value, DatabaseDamagedError)
        assert "damaged" not in str(caught.value) and "repair" not in str(caught.value)
    with pytest.raises(DatabaseDamagedError, match="damaged"), store_errors("state.db"):
        raise sqlite3.DatabaseError("database disk image is malformed")


@pytest.mark.sqlite_only
def test_a_full_disk_is_reported_and_writes_nothing(store: SessionStore) -> None:
    sid = store.create_session()
    store.append_message(sid, {"role": "user", "content": "before"})
    conn = store._db.connection()  # this thread's connection, the one the store uses
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(StoreError, match="full") as caught:
        store.append_messages(sid, [{"role": "user", "content": f"{i} " + "x" * 5000}
                                    for i in range(40)])
    assert "no transaction" not in str(caught.value)
    assert not conn.in_transaction
    conn.execute("PRAGMA max_page_count = 1073741823")
    assert [m.content for m in store.load_messages(sid)] == ["before"]  # nothing half-written
    store.append_message(sid, {"role": "user", "content": "after"})  # and the store works on
    assert store.count_messages(sid) == 2


@pytest.mark.sqlite_only
def test_an_interrupted_write_reports_itself_not_a_failed_rollback(store: SessionStore) -> None:
    """An interrupted INSERT makes SQLite roll the whole transaction back by itself (as an
    I/O error can); the store must report that error, not "no transaction is active"."""
    sid = store.create_session()
    store.append_message(sid, {"role": "user", "content": "before"})
    conn = store._db.connection()
    base = conn.total_changes
    fired: list[bool] = []

    def interrupt_once() -> int:
        if conn.total_changes > base and not fired:  # after the first row of the batch
            fired.append(conn.in_transaction)
            return 1
        return 0

    conn.set_progress_handler(interrupt_once, 1)
    try:
        with pytest.raises(StoreError, match="interrupted") as caught:
            store.append_messages(sid, [{"role": "user", "content": f"m{i}"} for i in range(3)])
    finally:
        conn.set_progress_handler(None, 1)
    assert fired == [True] and "no transaction" not in str(caught.value)
    assert not conn.in_transaction
    assert [m.content for m in store.load_messages(sid)] == ["before"]
    store.append_message(sid, {"role": "user", "content": "after"})
    assert store.count_messages(sid) == 2
