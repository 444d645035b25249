"""The JSON objects a text is made of (``mnemo.textjson``), shared by the provider side
(a call written as text) and the summariser (an assistant text that imitates a call)."""

from __future__ import annotations

import pytest

from mnemo.context.summary.reading import is_call_text
from mnemo.textjson import call_line_names, json_objects, made_of_json


def test_every_top_level_object_is_found_with_its_place() -> None:
    text = 'a {"x": 1} b {"y": {"z": 2}} c'
    assert json_objects(text) == [(2, 10, {"x": 1}), (13, 28, {"y": {"z": 2}})]
    assert json_objects("no braces here") == []
    assert json_objects("{ not json } {also not}") == []


def test_an_object_a_brace_or_two_short_at_the_end_counts() -> None:
    # The embedded model stops before the last "}" of a call, or writes ")" in its place.
    assert made_of_json('{"name": "memory", "arguments": {"action": "add"}') == [
        {"name": "memory", "arguments": {"action": "add"}}]
    assert made_of_json('{"name": "memory", "arguments": {"q": "Omar"})') == [
        {"name": "memory", "arguments": {"q": "Omar"}}]
    assert made_of_json('{"name": "memory", "arguments": {"q": "Om') is None  # cut inside


@pytest.mark.parametrize("text", [
    '{"a": 1} and more words', 'Here it is: {"a": 1}', '{"a": 1} 2', "plain prose", ""])
def test_words_around_the_objects_make_it_no_json_text(text: str) -> None:
    assert made_of_json(text) is None


def test_marks_around_and_between_are_not_words() -> None:
    assert made_of_json('>{"a": 1},\n {"b": 2}.') == [{"a": 1}, {"b": 2}]


@pytest.mark.parametrize(("text", "is_call"), [
    ('{"name": "memory", "arguments": {"action": "add"}}', True),
    ('{"name": "memory", "parameters": {}}', True),
    ('<tool_call>{"name": "memory", "arguments": {}}</tool_call>', True),
    ('returned: {"success": true, "entry_count": 6}\n'
     '{"name": "memory", "arguments": {"action": "add", "content": "Meera"}}', True),
    ('{"name": "memory", "arguments": {"action": "add"}', True),
    ('{"city": "Lisbon", "days": 3}', False),  # a JSON answer the user asked for
    ('{"name": "Ana", "age": 3}', False),
    ('Saved: {"name": "memory", "arguments": {}}', False),
    ('{"name": "memory", "arguments": {}} and I saved it for you', False),
    ('returned: {"x": 1} so it worked', False),
    ("I'll remember that.", False),
])
def test_an_assistant_text_of_calls_or_their_results_is_call_text(text: str,
                                                                    is_call: bool) -> None:
    assert is_call_text(text) is is_call


@pytest.mark.parametrize(("text", "is_call"), [
    ('Memory target=user action=add usage=15% — 210/1,375 chars target=memory '
     'entry_count=5 message="Entry added. "', True),
    ("memory target=user action=add content=Name: Tomas.", True),
    ("session_search query=marathon limit=5", True),
    ("Memory is a funny thing: target=user is what the tool wants.", False),
    ("Set FOO=1 and BAR=2 before you run it.", False),
])
def test_a_talk_tools_call_as_a_summary_prints_it_is_call_text(text: str,
                                                                 is_call: bool) -> None:
    # By hand the embedded model copied a summary's Done line of its memory call, with
    # the result's fields after it, as its reply.
    assert is_call_text(text) is is_call


# Seen by hand: the embedded model's calls with made-up results inside them, a call a
# line, neither JSON nor an answer.
MALFORMED = (
    '{"name": "memory", "arguments": {"action": "replace", "target": "user", "old_text": '
    '"Name: Tomas."} returned: {"success": false, "error": "Multiple entries matched."}}\n'
    '{"name": "memory", "arguments": {"action": "add", "target": "user", "content": '
    '"Quick dinner."} returned: {"success": false, "terminal": true}\n')


def test_a_call_a_line_however_malformed_is_told_by_its_openings() -> None:
    assert made_of_json(MALFORMED) is None
    assert call_line_names(MALFORMED) == ["memory", "memory"]
    assert is_call_text(MALFORMED)
    assert call_line_names('{"name": "Ana", "age": 3} is what you asked for') is None
    assert call_line_names(MALFORMED + "Sorry, I could not save that.") is None
    assert call_line_names("") is None
