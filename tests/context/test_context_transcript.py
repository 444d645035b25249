"""Reading transcripts from outside: JSON, JSONL, request bodies, and one-line errors."""

from __future__ import annotations

import json

import pytest

from mnemo.context import parse_transcript
from mnemo.errors import UsageError

_MESSAGES = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "r"},
    {"role": "assistant", "content": "done"},
]


def test_json_list_jsonl_and_request_body_read_the_same() -> None:
    as_list = json.dumps(_MESSAGES, indent=2)
    as_lines = "\n".join(json.dumps(m) for m in _MESSAGES) + "\n\n"
    as_body = json.dumps({"model": "x", "messages": _MESSAGES}, indent=2)
    for text in (as_list, as_lines, as_body, "\ufeff" + as_list):
        assert parse_transcript(text) == _MESSAGES
    assert parse_transcript(json.dumps(_MESSAGES[1])) == [_MESSAGES[1]]


@pytest.mark.parametrize(("text", "message"), [
    ("", "the file is empty"),
    ('{"role": "user", "content": "a"}\n{"role": "user", "content": }\n',
     r"t\.jsonl line 2: not valid JSON \(Expecting value at column 29\)"),
    ('[{"role": "user", "content": "a"},\n {"content": "b"}]',
     "message at index 1: no 'role'; the role must be one of"),
    ('{"role": "user", "content": "a"}\n\n{"role": "robot", "content": "b"}\n',
     "line 3: role 'robot'"),
    ('[{"role": "user", "content": 5}]', "'content' must be a string, a list of parts or null"),
    ('[{"role": "user"}]', "a user message needs 'content'"),
    ('[{"role": "assistant", "content": null}]', "needs 'content' or 'tool_calls'"),
    ('[{"role": "tool", "content": "x"}]', "needs a 'tool_call_id'"),
    ('[{"role": "user", "content": "x", "tool_calls": []}]', "only assistant messages"),
    ('[{"role": "assistant", "content": "", "tool_calls": [{"function": {}}]}]',
     "tool call 0 needs an 'id'"),
    ('[{"role": "user", "content": ["x"]}]', "content part 0 must be an object"),
    ('{"messages": 3}', "line 1: no 'role'"),
    ('[1, 2]', "message at index 0: a message must be a JSON object, got a number"),
    ('"just text"', "line 1: a message must be a JSON object, got a string"),
    ("[]", "no messages found"),
])
def test_malformed_transcripts_name_the_place(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as info:
        parse_transcript(text, source="t.jsonl")
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("t.jsonl")


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a": ' * 100_000,
                                  '{"role": "user", "content": "x"}\n' + "[" * 100_000])
def test_absurd_nesting_is_a_one_line_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="nested too deeply") as info:
        parse_transcript(text, source="t.json")
    assert "\n" not in str(info.value)
