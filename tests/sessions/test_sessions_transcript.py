"""Reading transcript files: JSON list, {"messages": [...]}, JSON Lines, and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemo.errors import UsageError
from mnemo.sessions import SessionStore
from mnemo.sessions.transcript import import_transcript, parse_transcript, read_transcript

MESSAGES = [
    {"role": "system", "content": "You are a helper."},
    {"role": "user", "content": "hello"},
    {"role": "assistant", "content": "hi there"},
]


def test_json_list_object_and_jsonl_read_the_same(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    a.write_text(json.dumps(MESSAGES))
    b = tmp_path / "b.json"
    b.write_text(json.dumps({"messages": MESSAGES, "title": "x"}))
    c = tmp_path / "c.jsonl"
    c.write_text("\n".join(json.dumps(m) for m in MESSAGES) + "\n\n")
    assert read_transcript(a) == read_transcript(b) == read_transcript(c) == MESSAGES


@pytest.mark.parametrize(("text", "needle"), [
    ("", "is empty"),
    ("[]", "no messages found"),
    ('{"role": "user", "content": "x"}\n{"role": "user", "content": ', "line 2: not valid JSON"),
    ('[{"role": "user", "content": "x"},', "not valid JSON"),
    ('{"role": "user", "content": "x"}\n{"role": "bot", "content": "y"}', "line 2: role 'bot'"),
    ('[{"role": "user", "content": "x"}, {"content": "y"}]', "index 1: no 'role'"),
    ('"just a string"', "must be a JSON object"),
    ('{"role": "user", "content": "x"}\n[1, 2]', "line 2: a message must be a JSON object"),
])
def test_malformed_transcripts_name_where(text: str, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        parse_transcript(text, "t.jsonl")


def test_import_creates_one_session(store: SessionStore, tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in MESSAGES))
    sid, count = import_transcript(store, path)
    info = store.get_session(sid)
    assert count == 3 and info is not None
    assert (info.title, info.source, info.system_prompt) == ("chat", "import", "You are a helper.")
    assert [m.to_message() for m in store.load_messages(sid)] == MESSAGES


def test_bad_import_leaves_nothing(store: SessionStore, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(MESSAGES[1]) + "\n" + json.dumps({"role": "user", "content": 3}))
    with pytest.raises(UsageError, match="line 2"):
        import_transcript(store, path)
    assert store.list_sessions() == [] and store.count_messages() == 0
    with pytest.raises(UsageError, match="does not exist"):
        import_transcript(store, tmp_path / "missing.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(UsageError, match="UTF-8"):
        import_transcript(store, binary)
