"""The request a small model answers in words once its tools are withheld
(``mnemo.agent.answer_only``): the turn's calls folded into a note, the tool guidance
left out of the system prompt."""

from __future__ import annotations

import json
from typing import Any

from mnemo.agent.answer_only import (
    ANSWER_NOW,
    ANSWER_PLAIN,
    COPIED_SUMMARY,
    answer_only_request,
    answer_only_system,
    copied_call_openings,
    without_copied_note,
)
from mnemo.context.validity import validate_c12
from mnemo.messages import Message, content_text, tool_calls_of
from mnemo.prompt import SystemPrompt
from mnemo.prompt.builder import PromptPart


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> Message:
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": call_id, "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def _result(call_id: str, text: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


EARLIER: list[Message] = [
    {"role": "user", "content": "Hello"},
    _call("a", "session_search", {"query": "old"}),
    _result("a", '{"count": 0}'),
    {"role": "assistant", "content": "Nothing earlier."},
]


def test_the_turns_calls_become_one_note_each_told_once() -> None:
    turn: list[Message] = [
        {"role": "user", "content": "What did we say about Porto?"},
        _call("1", "session_search", {"query": "Porto"}),
        _result("1", "Porto: the wedding is on June 12th."),
        _call("2", "session_search", {"query": "Porto"}),
        _result("2", "Porto: the wedding is on June 12th."),
    ]
    request = answer_only_request("SYSTEM", [*EARLIER, *turn], "")
    assert request[:5] == [{"role": "system", "content": "SYSTEM"}, *EARLIER]
    assert len(request) == 6 and request[-1]["role"] == "user"
    note = content_text(request[-1])
    assert note.startswith("What did we say about Porto?\n\n[Your tool calls this turn")
    assert note.count("- session_search Porto: Porto: the wedding is on June 12th.") == 1
    assert note.endswith(ANSWER_PLAIN) and note.count(ANSWER_PLAIN) == 1
    assert ANSWER_NOW not in note
    assert validate_c12(request) == []


def test_the_turns_memory_calls_are_not_in_the_note() -> None:
    # With the README's first message, told "- memory add user "Name: Ana. …": done",
    # the embedded model answered "I'm sorry, but I can't assist with that request.";
    # other first messages got "The user has already saved their message as …".
    turn: list[Message] = [
        {"role": "user", "content": "Hi! I'm Ana and I like short answers. What can you do?"},
        _call("1", "memory", {"action": "add", "content": "Name: Ana. Prefers short answers."}),
        _result("1", '{"success": true, "message": "Entry added."}'),
        _call("2", "session_search", {"query": "Ana"}),
        _result("2", '{"count": 0}'),
    ]
    note = content_text(answer_only_request("S", turn, "")[-1])
    assert "memory" not in note and "Entry added" not in note
    assert '- session_search Ana: {"count": 0}' in note
    only_memory = content_text(answer_only_request("S", turn[:3], "")[-1])
    assert only_memory == f"{content_text(turn[0])}\n\n{ANSWER_PLAIN}"


def test_earlier_turns_are_sent_without_their_memory_calls() -> None:
    # By hand (3,072 tokens): with every earlier turn opening on a memory call, the
    # embedded model answered nearly every request without tools with another one.
    both: Message = {"role": "assistant", "content": "Let me look.", "tool_calls": [
        *tool_calls_of(_call("b", "memory", {"action": "add"})),
        *tool_calls_of(_call("c", "session_search", {"query": "x"}))]}
    earlier: list[Message] = [
        {"role": "user", "content": "I'm Ana."},
        _call("a", "memory", {"action": "add", "content": "Name: Ana"}),
        _result("a", '{"message": "Entry added."}'),
        {"role": "assistant", "content": "Nice to meet you, Ana."},
        {"role": "user", "content": "What did we do?"},
        both, _result("b", "{}"), _result("c", '{"count": 0}'),
        {"role": "assistant", "content": "Nothing yet."},
    ]
    request = answer_only_request("S", [*earlier, {"role": "user", "content": "Hi"}], "")
    assert [m["role"] for m in request] == [
        "system", "user", "assistant", "user", "assistant", "tool", "assistant", "user"]
    assert content_text(request[4]) == "Let me look."
    assert [c["id"] for c in tool_calls_of(request[4])] == ["c"]
    assert request[5].get("tool_call_id") == "c"
    assert validate_c12(request) == []


def test_the_note_tells_the_calls_in_words_not_json() -> None:
    # Seen by hand (a chat in Chinese, 3,072 tokens): told as "memory {…} returned: {…}",
    # the calls were what the embedded model wrote as its answer, with made-up results,
    # and a refusal's advice to call again was followed in a reply without tools.
    refusal = ("Not saved: the file is outside the project. Call write_file again with a "
               "path under the project.")
    turn: list[Message] = [
        {"role": "user", "content": "Write the notes to ../notes.txt."},
        _call("1", "write_file", {"path": "../notes.txt", "content": "我对花生过敏。"}),
        _result("1", json.dumps({"success": False, "error": refusal}, ensure_ascii=False)),
        _call("2", "write_file", {"path": "notes.txt", "content": "我对花生过敏。"}),
        _result("2", json.dumps({"success": True, "message": "Written."})),
    ]
    note = content_text(answer_only_request("S", turn, "")[-1])
    assert '- write_file "../notes.txt" "我对花生过敏。": not done: Not saved: the file is ' \
           "outside the project." in note
    assert '- write_file "notes.txt" "我对花生过敏。": done (Written.)' in note
    assert "{" not in note and "Call write_file again" not in note


def test_extra_comes_before_the_instruction_and_the_instruction_is_not_doubled() -> None:
    turn: list[Message] = [{"role": "user", "content": "Hi"}]
    once = content_text(answer_only_request("S", turn, "recalled: Ana")[-1])
    assert once == f"Hi\n\nrecalled: Ana\n\n{ANSWER_PLAIN}"
    # The agent's retry asks with ANSWER_NOW: a small model gets ANSWER_PLAIN in its place.
    retry = content_text(answer_only_request("S", turn, ANSWER_NOW)[-1])
    assert retry == f"Hi\n\n{ANSWER_PLAIN}"


def test_without_a_user_message_the_note_is_a_message_of_its_own() -> None:
    only_calls: list[Message] = [
        {"role": "assistant", "content": "[summary of earlier turns]"},
        _call("1", "session_search", {"query": "port"}),
        _result("1", '{"count": 2}'),
    ]
    request = answer_only_request("S", only_calls, "")
    assert [m["role"] for m in request] == ["system", "user"]
    assert '- session_search port: {"count": 2}' in content_text(request[1])


def test_content_in_parts_gets_the_note_as_a_part() -> None:
    asked: Message = {"role": "user", "content": [{"type": "text", "text": "What is this?"}]}
    request = answer_only_request("S", [asked], "")
    parts: Any = request[-1]["content"]
    assert parts[0] == {"type": "text", "text": "What is this?"}
    assert parts[-1] == {"type": "text", "text": ANSWER_PLAIN}
    assert asked["content"] == [{"type": "text", "text": "What is this?"}]  # not mutated


def test_the_system_prompt_keeps_everything_but_the_tool_guidance() -> None:
    parts = tuple(PromptPart(name, text, len(text), 1) for name, text in (
        ("identity", "You are mnemo."), ("user", "USER PROFILE: Ana"),
        ("memory_guidance", "# Memory ..."), ("session_search_guidance", "# Past ..."),
        ("tool_use_guidance", "# Tools ..."), ("date", "Conversation started: today")))
    prompt = SystemPrompt(text="\n\n".join(p.text for p in parts), parts=parts)
    assert answer_only_system(prompt) == (
        "You are mnemo.\n\nUSER PROFILE: Ana\n\nConversation started: today")


def test_a_copy_of_the_note_or_the_instruction_is_cut_from_the_answer() -> None:
    request = answer_only_request("S", [{"role": "user", "content": "Hi"},
                                        _call("1", "memory", {"action": "add"}),
                                        _result("1", "{}")], "")
    note = content_text(request[-1]).removeprefix("Hi\n\n")
    assert without_copied_note(f"Hello!\n\n{note}") == "Hello!"
    assert without_copied_note(f"Hello! {ANSWER_NOW}") == "Hello!"
    assert without_copied_note(note) == ""
    assert without_copied_note("Your tool calls were fine.") == "Your tool calls were fine."
    # The sentence the copy began in goes too, when a whole one stands before it.
    assert without_copied_note(f'Hello! I did this: "{note}') == "Hello!"
    assert without_copied_note(f"I did this: {note}") == "I did this:"
    assert without_copied_note(f"Done.\n```\nx = 1\n```\n{note}") == "Done.\n```\nx = 1\n```"
    # By hand: an answer, then the summary's end marker in other letters, then more.
    copied = ("You work in York.\n\n---\n\nEnd of Context Summary ---\n\nWhat should I "
              "eat before a long run?")
    assert without_copied_note(copied, COPIED_SUMMARY) == "You work in York."


def test_a_tools_instruction_retold_to_the_user_is_cut_with_the_clause_before_it() -> None:
    # By hand (3,072 tokens) the embedded model answered five messages of one chat with a
    # memory refusal's "call memory again, for example with content '…'", reworded.
    openings = copied_call_openings(["memory", "session_search"])
    assert without_copied_note("Call memory with content 'Parking is free.'", openings) == ""
    assert without_copied_note("To bring your BIG registration number and two payslips, "
                               "call memory with content 'BIG registration number.'",
                               openings) == ""
    assert without_copied_note("Noted. To keep it, call memory again.", openings) == "Noted."
    assert without_copied_note("Sure, call session_search with 'York'.", openings) == ""
    # A call the user makes is no tool's.
    assert without_copied_note("Call Karin with the news, she is your reference.",
                               openings) == "Call Karin with the news, she is your reference."
    # Only a copy begun after a clause takes the clause: "done:" stays as it was.
    assert without_copied_note('done: {"success": true}', openings) == "done:"


def test_a_copy_of_the_agents_retry_hint_or_a_reminder_is_cut() -> None:
    # By hand (3,072 tokens), the embedded model's answer to a correction, stored whole.
    copied = ("Hi there! I'm Tomas. I work as a nurse in Leeds.\n[Your last reply was a "
              "memory call written as text, and it was not run: arguments.target is "
              "missing. Call the tool with the parameters its schema lists, or answer the "
              "user in plain words.]")
    assert without_copied_note(copied) == "Hi there! I'm Tomas. I work as a nurse in Leeds."
    assert without_copied_note('Porto it is. [Reminder: the user just corrected') == (
        "Porto it is.")
    assert without_copied_note("Your last reply was great.") == "Your last reply was great."


def test_a_summary_heading_an_answer_ends_on_is_cut() -> None:
    # By hand, in Chinese: the answer, then the first heading of the summary it was given.
    assert without_copied_note("您好！我叫李明，推荐菜谱的时候不要用花生。\n\n## Goal",
                               COPIED_SUMMARY) == "您好！我叫李明，推荐菜谱的时候不要用花生。"
    assert without_copied_note("Done.\n## Goal\n## Progress\n") == "Done."
    # … while one that opens an answer's own part stays.
    assert without_copied_note("## Goal\nShip the parser by Friday.") == (
        "## Goal\nShip the parser by Friday.")
    # By hand: an answer went on with the summary's goal, as the summary writes it.
    assert without_copied_note(
        "I'm learning Portuguese.\n\n## Goal\n- To help Biscuit remember to avoid peanuts.",
        COPIED_SUMMARY) == "I'm learning Portuguese."
    assert without_copied_note("## Goal\nShip the parser by Friday.", COPIED_SUMMARY) == (
        "## Goal\nShip the parser by Friday.")
    # By hand: an answer went on in the summary's layout, its Progress parts and a last
    # heading of one "#".
    echo = ("Her best friend Noor is coming.\n\n### Done\n- Mia has turned from 10 to 12."
            "\n\n### In Progress\n- The conversation is being detailed.\n\n### Blocked\n")
    assert without_copied_note(echo, COPIED_SUMMARY) == "Her best friend Noor is coming."
    assert without_copied_note("Noor cannot eat gluten.\n\n# Tools & Patterns\n- (none)",
                               COPIED_SUMMARY) == "Noor cannot eat gluten."
    # … and a value correction's mark, its values made up.
    assert without_copied_note("We fly home on the 15th. [Since changed: 4500 euros, not "
                               "3500 euros.]", COPIED_SUMMARY) == "We fly home on the 15th."
