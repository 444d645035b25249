"""Tool calls written as text: accepted only when they name an offered tool and validate."""

from __future__ import annotations

import json
import re

import pytest

from mnemo.llm.text_tool_calls import (
    DROP,
    HOLD,
    SHOW,
    StreamGate,
    accept_text_tool_calls,
    call_attempt,
    echoes_results,
    instruction_openings,
    parse_text_tool_calls,
    schema_problem,
)
from mnemo.llm.types import ChatResponse, Usage
from mnemo.memory import MEMORY_SCHEMA
from mnemo.sessions import SESSION_SEARCH_SCHEMA

TOOLS = [MEMORY_SCHEMA, SESSION_SEARCH_SCHEMA]
ADD = {"action": "add", "target": "user", "content": "Name: Ana; likes short answers"}


def reply(text: str) -> ChatResponse:
    return ChatResponse({"role": "assistant", "content": text}, Usage.of(10, 5), "stop", "m")


def test_a_bare_json_call_becomes_a_tool_call() -> None:
    text = json.dumps({"name": "memory", "arguments": ADD})
    calls, left = parse_text_tool_calls(text, TOOLS)
    assert [c["function"]["name"] for c in calls] == ["memory"]
    assert json.loads(calls[0]["function"]["arguments"]) == ADD
    assert left == ""


def test_a_tool_call_block_with_prose_around_it() -> None:
    text = ("Nice to meet you!\n<tool_call>\n"
            + json.dumps({"name": "memory", "arguments": ADD}) + "\n</tool_call>")
    response = accept_text_tool_calls(reply(text), TOOLS)
    assert response.finish_reason == "tool_calls"
    assert response.message["content"] == "Nice to meet you!"
    assert json.loads(response.tool_calls[0]["function"]["arguments"]) == ADD


def test_arguments_as_a_json_string_and_the_wire_shape_are_accepted() -> None:
    text = "```json\n" + json.dumps({"function": {"name": "memory",
                                                  "arguments": json.dumps(ADD)}}) + "\n```"
    calls, left = parse_text_tool_calls(text, TOOLS)
    assert len(calls) == 1 and left == ""


def test_arguments_that_do_not_validate_stay_text() -> None:
    bad_enum = {"name": "memory", "arguments": {**ADD, "target": "everyone"}}
    missing = {"name": "memory", "arguments": {"content": "x"}}  # no action, no target
    wrong_type = {"name": "memory", "arguments": {**ADD, "content": 42}}
    for value in (bad_enum, missing, wrong_type):
        text = json.dumps(value)
        response = accept_text_tool_calls(reply(text), TOOLS)
        assert response.tool_calls == [] and response.text == text


def test_an_unknown_tool_stays_text() -> None:
    text = json.dumps({"name": "terminal", "arguments": {"command": "ls"}})
    response = reply(text)
    assert accept_text_tool_calls(response, TOOLS) is response


def test_a_tool_that_was_not_offered_stays_text() -> None:
    text = json.dumps({"name": "session_search", "arguments": {"query": "bug"}})
    assert parse_text_tool_calls(text, [MEMORY_SCHEMA]) == ([], text)


def test_plain_json_and_prose_are_left_alone() -> None:
    for text in ('{"a": 1}', "Use {braces} freely.", "no json here", '{"name": "memory"'):
        assert parse_text_tool_calls(text, TOOLS) == ([], text)


def test_structured_calls_are_not_touched() -> None:
    call = {"id": "c1", "type": "function",
            "function": {"name": "memory", "arguments": json.dumps(ADD)}}
    response = ChatResponse({"role": "assistant", "content": json.dumps(
        {"name": "memory", "arguments": ADD}), "tool_calls": [call]}, Usage(), "tool_calls", "m")
    assert accept_text_tool_calls(response, TOOLS) is response


def test_schema_problem_names_the_field() -> None:
    schema = MEMORY_SCHEMA["parameters"]
    assert schema_problem(ADD, schema) is None
    assert schema_problem({"action": "add"}, schema) == "arguments.target is missing"
    assert schema_problem({**ADD, "action": True}, schema) == "arguments.action should be string"


def test_a_reply_that_is_only_a_call_is_a_call_attempt() -> None:
    bad = json.dumps({"name": "memory", "arguments": {"action": "add", "target": "boss"}})
    assert call_attempt(bad, TOOLS) == ("memory", "arguments.target should be one of "
                                                  "['memory', 'user']")
    fenced = "```json\n" + json.dumps({"name": "memory", "arguments": ADD}) + "\n```"
    assert call_attempt(fenced, TOOLS) == ("memory", None)
    assert call_attempt(f"<tool_call>{bad}</tool_call>", TOOLS) is not None


def test_a_tools_arguments_under_another_name_are_an_attempt_at_that_tool() -> None:
    # By hand the embedded model answered a first message with this, and it was shown.
    misnamed = json.dumps({"name": "user", "arguments": {
        "action": "replace", "target": "memory", "content": "My dog is Pixel.",
        "old_text": "I am Pixel."}})
    assert call_attempt(misnamed, TOOLS) == ("memory", 'it is named "user", not "memory"')
    # Arguments no offered tool takes, or none at all: a call of another tool, or data.
    for other in ({"name": "terminal", "arguments": {"command": "ls"}},
                  {"name": "user", "arguments": {}},
                  {"name": "Ana", "arguments": {"action": "add"}, "likes": "tea"}):
        assert call_attempt(json.dumps(other), TOOLS) is None


def test_a_tools_arguments_written_without_its_name_are_an_attempt_at_that_tool() -> None:
    # By hand (3,072 tokens) the embedded model answered "Our budget is 18,000 euros."
    # with a session_search's arguments, one JSON object a line, shown as the reply.
    reply = '{"mode": "search"}\n{"query": "budget = \'18,000 euros\' and price > 18,000"}'
    assert call_attempt(reply, TOOLS) == ("session_search", "it names no tool")
    # … the tool's name after them as a one-key object's value (seen by hand as well).
    named = '{"mode": "search"} {"query": "budget"} {"target": "session_search"}'
    assert call_attempt(named, TOOLS) == ("session_search", "it names no tool")
    assert call_attempt(json.dumps({"action": "add", "target": "user", "content": "x"}),
                        TOOLS) == ("memory", "it names no tool")
    # Keys no one tool takes, values that do not fit, or data beside prose: no attempt.
    for other in ('{"mode": "search", "action": "add"}', '{"mode": "nearby"}',
                  '{"target": "session_search"}', '{"query": "budget"} {"target": "memory"}',
                  '{"city": "Ghent", "budget": 18000}', '{}',
                  'Here it is: {"query": "budget"}'):
        assert call_attempt(other, TOOLS) is None, other


def test_calls_written_out_with_made_up_results_are_a_call_attempt() -> None:
    # By hand (3,072-token window) the embedded model answered with its calls and their
    # results as a conversation writes them out ("… returned: {…}"), one per line, and
    # the user was shown the JSON.
    reply = ('{"name": "memory", "arguments": {"action": "add", "target": "user", '
             '"content": "Set in Manchester."}} returned: {"success": true, "note": '
             '"Already saved."}\n{"name": "memory", "arguments": {"action": "replace", '
             '"target": "user", "old_text": "1:52", "current_entries": ["x"]}} returned: '
             '{"success": false, "error": "3 memory calls failed in this turn."}')
    assert call_attempt(reply, TOOLS) == ("memory", None)
    assert call_attempt("The search returned: {\"count\": 2}", TOOLS) is None  # words
    # … and with the results inside the calls, one a line: no JSON, still no answer.
    inside = ('{"name": "memory", "arguments": {"action": "replace", "target": "user", '
              '"old_text": "1:52"} returned: {"success": false}}\n'
              '{"name": "memory", "arguments": {"action": "add", "content": "x"} returned: '
              '{"success": true}')
    assert call_attempt(inside, TOOLS) == ("memory", "its JSON is not valid")
    assert call_attempt(inside.replace("memory", "terminal"), TOOLS) is None  # not offered


def test_words_around_the_json_or_an_unknown_name_are_no_call_attempt() -> None:
    bad = json.dumps({"name": "memory", "arguments": {"action": "fly"}})
    assert call_attempt(f"Here is the call: {bad}", TOOLS) is None
    assert call_attempt(json.dumps({"name": "terminal", "arguments": {}}), TOOLS) is None
    assert call_attempt('{"name": "memory"} and {"a": 1}', TOOLS) is None
    assert call_attempt(bad, []) is None


def test_a_copy_of_tool_results_is_an_echo_and_other_json_is_not() -> None:
    results = ['{"success": true, "usage": "1%", "entry_count": 1, "message": "Entry added."}']
    echo = '{"usage": "1%", "entry_count": 1} {"message": "Entry added."}'
    assert echoes_results(echo, results)
    assert not echoes_results('{"usage": "1%", "colour": "red"}', results)
    assert not echoes_results('Done: {"usage": "1%"}', results)
    assert not echoes_results(echo, [])
    # What is left of a reply once its call is run: the result it made up for it.
    assert echoes_results('returned: {"usage": "1%", "message": "Entry added."}', results)


def test_a_reply_made_of_what_a_tool_told_the_model_is_an_echo() -> None:
    """By hand, "Can you suggest a quick breakfast before a run?" got session_search's
    hint back as the answer."""
    hint = ("To read more, call again with mode 'around' and a message_id, or mode 'read' "
            "and a session_id.")
    results = [json.dumps({"success": True, "count": 1, "results": [], "hint": hint}),
               '{"success": true, "message": "Entry added."}']
    assert echoes_results("Certainly! " + hint, results)
    assert echoes_results(hint.upper(), results)
    # By hand the result was cut in the middle by the window guard: no JSON any more.
    cut = results[0][:30] + " [… 2,731 characters cut here …] " + results[0][-120:]
    assert echoes_results("Certainly! " + hint, [cut])
    # An answer beside it, a short sentence only, or no tool result: not an echo.
    assert not echoes_results(f"{hint} Try porridge with a banana before you run.", results)
    assert not echoes_results("Entry added.", results)
    assert not echoes_results("Certainly! " + hint, [])
    # What a tool quotes of the user is the user's: saying it again may be the answer.
    saved = ['{"success": true, "note": "Already saved as \'I don\'t like emojis in '
             'answers.\'; nothing added (the rest of the entry was not said by the user)."}']
    assert not echoes_results("I don't like emojis in answers.", saved)
    assert echoes_results("Got it! The rest of the entry was not said by the user.", saved)
    # By hand: a memory result's usage and message as the answer, in words.
    added = ['{"success": true, "target": "user", "usage": "3% — 54/1,375 chars", '
             '"entry_count": 1, "message": "Entry added."}']
    assert echoes_results("3% — 54/1,375 chars\n\nEntry added.", added)
    assert not echoes_results("3% of the memory is used: it holds your lesson.", added)


def test_a_call_one_closing_brace_short_is_still_a_call() -> None:
    # Seen on the embedded model, shown to the user as the answer to "Call me Kenji".
    short = ('{"name": "memory", "arguments": {"action": "add", "target": "user", '
             '"content": "Kenji"}')
    calls, left = parse_text_tool_calls(short, TOOLS)
    assert [c["function"]["name"] for c in calls] == ["memory"] and left == ""
    assert json.loads(calls[0]["function"]["arguments"])["content"] == "Kenji"
    assert call_attempt(short + "\n", TOOLS) == ("memory", None)
    # A mark in place of the last brace (seen by hand: '… "content": "Omar"})').
    assert call_attempt(short + ")", TOOLS) == ("memory", None)
    assert [c["function"]["name"] for c in parse_text_tool_calls(short + ");", TOOLS)[0]] == [
        "memory"]
    # Cut inside a value, or words after it: not a call.
    assert parse_text_tool_calls(short[:-3], TOOLS)[0] == []
    assert call_attempt('{"name": "memory", "arguments": {"action": "ad', TOOLS) is None
    assert parse_text_tool_calls('Use {"a": 1 like this', TOOLS) == ([], 'Use {"a": 1 like this')


def test_a_copy_in_the_templates_result_tags_is_an_echo() -> None:
    # Seen on the embedded model, as its whole answer to "My name is Lee…".
    results = ['{"success": true, "usage": "1% — 40/2,200 chars", "entry_count": 1, '
               '"message": "Entry added."}',
               '{"success": true, "mode": "search", "query": "work", "count": 0}']
    echo = ('{"usage": "1% — 40/2,200 chars", "entry_count": 1, "message": "Entry added."}\n'
            '<tool_response>\n{"success": true, "mode": "search", "count": 0}\n'
            '</tool_response>')
    assert echoes_results(echo, results)
    assert not echoes_results("<tool_response> is the tag: " + echo, results)


def test_stream_gate_passes_prose_and_holds_a_possible_call() -> None:
    shown: list[str] = []
    gate = StreamGate(shown.append)
    for piece in ("Hel", "lo ", "Ana"):
        gate.feed(piece)
    gate.finish(was_call=False)
    assert "".join(shown) == "Hello Ana"

    shown.clear()
    for piece in ("  <tool", "_call>", '{"name": "memory"}', "</tool_call>"):
        gate.feed(piece)
    assert shown == []  # held while it may be a call
    gate.finish(was_call=True)
    assert shown == []

    for piece in ("<tool_", "response>", '{"message": "Entry added."}'):
        gate.feed(piece)
    assert shown == []  # held: it may be the tools' results copied out
    gate.finish(was_call=True)

    for piece in ("{not", " a call}"):
        gate.feed(piece)
    gate.finish(was_call=False)
    assert "".join(shown) == "{not a call}"


def test_a_stray_mark_before_the_json_is_no_word() -> None:
    # Seen on the embedded model: ``>{"name": "session_search", …}`` as the whole reply.
    call = json.dumps({"name": "session_search", "arguments": {"query": "port 6543"}})
    assert call_attempt(f">{call}", TOOLS) == ("session_search", None)
    assert call_attempt(f"> quoted: {call}", TOOLS) is None  # words: an answer
    response = accept_text_tool_calls(reply(f">{call}"), TOOLS)
    assert response.finish_reason == "tool_calls"
    assert response.message["content"] is None  # nothing but the mark was left
    results = ['{"success": true, "message": "Entry added."}']
    assert echoes_results('> {"message": "Entry added."}', results)


def test_stream_gate_looks_past_a_stray_mark() -> None:
    shown: list[str] = []
    gate = StreamGate(shown.append)
    for piece in (">", '{"name": "session_search", ', '"arguments": {}}'):
        gate.feed(piece)
    assert shown == []  # held: it may be a call
    gate.finish(was_call=True)
    assert shown == []

    for piece in ("> ", "Quoted", " text"):  # a blockquote is shown whole
        gate.feed(piece)
    gate.finish(was_call=False)
    assert "".join(shown) == "> Quoted text"

    shown.clear()
    for piece in ("**", "Bold", "** move"):
        gate.feed(piece)
    gate.finish(was_call=False)
    assert "".join(shown) == "**Bold** move"


STOP = ("[Your tool calls this turn", "[Tools are not available")


@pytest.mark.parametrize("pieces", [
    # The note copied after the answer, its opening cut anywhere between deltas.
    ("Pixel is your ", "dog.\n\n[Your", " tool calls this turn, and what they returned:",
     "\n- memory {} returned: ok]"),
    ("Pixel is your dog.", "\n", "\n", "[", "Your tool", " calls this turn, and …]"),
    ("Pixel is your dog. [Tools are not available for this reply.]",),
])
def test_stream_gate_stops_at_a_copied_note(pieces: tuple[str, ...]) -> None:
    shown: list[str] = []
    gate = StreamGate(shown.append, STOP)
    for piece in pieces:
        gate.feed(piece)
    gate.finish(was_call=False)
    assert "".join(shown) == "Pixel is your dog."


def test_stream_gate_shows_text_that_only_looks_like_a_stop_string() -> None:
    shown: list[str] = []
    gate = StreamGate(shown.append, STOP)
    for piece in ("Brackets: [Your", " turn] and ", "[Tools", " list]\n"):
        gate.feed(piece)
    assert "".join(shown) == "Brackets: [Your turn] and [Tools list]"  # the end held back
    gate.finish(was_call=False)
    assert "".join(shown) == "Brackets: [Your turn] and [Tools list]\n"
    shown.clear()
    gate.feed("[Your tool calls this turn, and what they returned: …]")  # nothing else
    gate.finish(was_call=False)
    assert shown == []


QUESTION = "What instrument does my brother play, and where?"


def test_stream_gate_holds_a_repeat_of_the_question_and_drops_it() -> None:
    shown: list[str] = []
    gate = StreamGate(shown.append, echo_of=[QUESTION])
    for piece in ("What instrument", " does my brother", " play, and where?"):
        gate.feed(piece)
    assert shown == []  # held: word for word the question so far
    gate.finish(was_call=True)  # the caller found it a repeat
    assert shown == []


@pytest.mark.parametrize("pieces", [
    ("What instrument", " does he play? The cello, ", "in the Porto orchestra."),
    ("Your brother Rui", " plays the cello."),
    ("WHAT INSTRUMENT", "\n- does", " my brother play"),  # held to the end: the caller tells
])
def test_stream_gate_shows_a_reply_from_where_it_leaves_the_question(
        pieces: tuple[str, ...]) -> None:
    shown: list[str] = []
    gate = StreamGate(shown.append, echo_of=[QUESTION])
    for piece in pieces:
        gate.feed(piece)
    gate.finish(was_call=False)
    assert "".join(shown) == "".join(pieces)


def test_stream_gate_holds_a_repeat_of_any_of_the_questions_it_is_given() -> None:
    asked = "I'm allergic to peanuts. What should I cook tonight?"
    shown: list[str] = []
    gate = StreamGate(shown.append, echo_of=[asked, "What should I cook tonight?"])
    for piece in ("What should", " I cook", " tonight?"):
        gate.feed(piece)
    assert shown == []  # the start of the second question, not of the message
    gate.finish(was_call=True)
    assert shown == []
    gate = StreamGate(shown.append, echo_of=[asked, "What should I cook tonight?"])
    for piece in ("What should", " you cook? A lentil curry."):
        gate.feed(piece)
    gate.finish(was_call=False)
    assert "".join(shown) == "What should you cook? A lentil curry."


EARLIER = "The tool was used to add the user's name, and it was saved in memory."


def test_stream_gate_holds_a_reply_that_opens_like_an_earlier_one_to_its_end() -> None:
    shown: list[str] = []
    gate = StreamGate(shown.append, copy_openings=["The tool was used to add the"])
    for piece in ("The tool was", " used to add the user's", " partner, and it was saved."):
        gate.feed(piece)
    assert shown == []  # held whole: only the end tells whether it is a copy
    gate.finish(was_call=True)  # the caller found it one
    assert shown == []
    gate = StreamGate(shown.append, copy_openings=["The tool was used to add the"])
    pieces = ("The tool was", " used to add the", " partner: Sam, a nurse.")
    for piece in pieces:
        gate.feed(piece)
    gate.finish(was_call=False)
    assert "".join(shown) == "".join(pieces)


def test_stream_gate_shows_a_reply_once_it_leaves_every_earlier_opening() -> None:
    shown: list[str] = []
    gate = StreamGate(shown.append, copy_openings=["The tool was used to add the"])
    gate.feed("The tool")
    assert shown == []  # it may still open like the earlier reply
    gate.feed(" belt is in the shed.")
    assert "".join(shown).startswith("The tool belt")  # from then on, as it comes
    gate.finish(was_call=False)
    assert "".join(shown) == "The tool belt is in the shed."


def test_stream_gate_still_holds_a_call_after_a_question() -> None:
    shown: list[str] = []
    gate = StreamGate(shown.append, echo_of=[QUESTION])
    for piece in ('{"name": "session_search", ', '"arguments": {}}'):
        gate.feed(piece)
    gate.finish(was_call=True)
    assert shown == []


def _note_judge(clause: str) -> str:
    """Drops a clause naming "the secret note", holds one that has said only "the"."""
    words = re.findall(r"[a-z]+", clause.lower())
    if "the secret note" in " ".join(words):
        return DROP
    return HOLD if words and set(words) <= {"the", "secret", "and"} else SHOW


def _streamed(text: str, size: int) -> tuple[str, list[str]]:
    shown: list[str] = []
    gate = StreamGate(shown.append, withheld=_note_judge)
    for at in range(0, len(text), size):
        gate.feed(text[at:at + size])
    during = "".join(shown)
    gate.finish(was_call=False)
    return "".join(shown), [during]


@pytest.mark.parametrize(("text", "expected"), [
    ("Pixel is a beagle, and the secret note goes here. Rui plays the cello.",
     "Pixel is a beagle. Rui plays the cello."),
    ("The secret note first. Then the answer, in two clauses.",
     "Then the answer, in two clauses."),
    ("An answer - the secret note (the secret), and the rest", "An answer and the rest"),
    ("An answer, and the secret note (the secret), the.", "An answer."),
    ("Nothing to hide: 3.5 kg, (two) items - done.\n- one\n- two",
     "Nothing to hide: 3.5 kg, (two) items - done.\n- one\n- two"),
    ("The the the answer", "The the the answer"),  # held, then shown whole
    ("def f(x, y):\n    return (x - y)", "def f(x, y):\n    return (x - y)"),
    # What follows a dropped sentence stays apart from the one before it (by hand, "… in
    # Leeds." and "I'm allergic …" had met as "Leeds.I'm"), by its line break if it had one.
    ("In Leeds. The secret note here.\n\nI'm allergic.", "In Leeds.\nI'm allergic."),
    ("In Leeds. The secret note here. I'm allergic.", "In Leeds. I'm allergic."),
])
def test_the_clause_filter_shows_what_its_judge_lets_through(text: str, expected: str) -> None:
    for size in (1, 2, 3, 5, 8, len(text) or 1):
        assert _streamed(text, size)[0] == expected, size


def test_a_word_is_shown_only_once_the_next_begins() -> None:
    # "the secr" could still become the note: nothing of a word is shown half-written.
    shown: list[str] = []
    gate = StreamGate(shown.append, withheld=_note_judge)
    gate.feed("Rui plays the cel")
    assert "".join(shown) == "Rui plays the"
    gate.feed("lo in Porto, and the secr")
    assert "".join(shown) == "Rui plays the cello in Porto"  # ", and the" waits
    gate.feed("et note")
    gate.finish(was_call=False)
    assert "".join(shown) == "Rui plays the cello in Porto."


def test_a_streamed_retelling_of_a_tools_words_is_held_and_dropped() -> None:
    """By hand the session_search hint was shown as it streamed, then again as the
    retry: the gate now holds a reply that opens like what a tool told the model."""
    hint = ("To read more, call again with mode 'around' and a message_id, or mode 'read' "
            "and a session_id.")
    openings = instruction_openings([json.dumps({"success": True, "hint": hint})])
    for was_echo, reply in ((True, "Certainly! " + hint), (False, "To read more, try this.")):
        shown: list[str] = []
        gate = StreamGate(shown.append, copy_openings=openings)
        for piece in (reply[:7], reply[7:20], reply[20:]):
            gate.feed(piece)
        assert (shown == []) is was_echo  # held while it may be the hint
        gate.finish(was_call=was_echo)
        assert "".join(shown) == ("" if was_echo else reply)
    # … or like a memory result's usage (by hand: "3% — 54/1,375 chars\n\nEntry added.").
    usage = instruction_openings(['{"success": true, "usage": "3% — 54/1,375 chars", '
                                  '"message": "Entry added."}'])
    shown = []
    gate = StreamGate(shown.append, copy_openings=usage)
    for piece in ("3% — ", "54/1,375", " chars\n\nEntry added."):
        gate.feed(piece)
    assert shown == []
    # Any other reply streams at once.
    shown = []
    gate = StreamGate(shown.append, copy_openings=openings)
    gate.feed("Porridge with a banana ")
    assert "".join(shown).startswith("Porridge")
