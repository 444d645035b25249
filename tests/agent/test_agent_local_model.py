"""What the agent does for a small local model: text tool calls run, replies stream
(tool calls written as text are not shown), Ctrl-C leaves a well-formed conversation, and
a small window gets a small prompt."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from mnemo.agent import Agent, build_agent
from mnemo.agent.replies import other_language, restates_earlier
from mnemo.config import MnemoConfig
from mnemo.context.validity import validate_c12
from mnemo.home import Home
from mnemo.llm.testing import ScriptedChatClient
from mnemo.llm.types import ChatResponse
from mnemo.memory import MemoryStore
from mnemo.messages import Message, content_text
from mnemo.tokens import estimate_tokens_rough
from support.streaming_client import StreamingScriptedClient

FIXED_NOW = datetime(2026, 3, 14, 9, 26)
ANA = {"action": "add", "target": "user", "content": "Name: Ana; likes short answers"}
CALL_TEXT = json.dumps({"name": "memory", "arguments": ANA})


def make_agent(home: Home, client: ScriptedChatClient, tmp_path: Path) -> Agent:
    return build_agent(MnemoConfig(), home=home, cwd=tmp_path, client=client,
                       clock=lambda: FIXED_NOW)


def test_a_tool_call_written_as_text_is_run(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([CALL_TEXT, "Noted, Ana."], context_length=8192)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Hi! I'm Ana and I like short answers.")
        assert result.memory_written and result.text == "Noted, Ana."
        assert [run.name for run in result.tool_runs] == ["memory"]
        assert validate_c12(client.requests[-1].messages) == []
    assert "Name: Ana" in (mnemo_home.memories_dir / "USER.md").read_text()


def test_a_call_of_an_unknown_tool_stays_the_answer(mnemo_home: Home, tmp_path: Path) -> None:
    text = json.dumps({"name": "terminal", "arguments": {"command": "ls"}})
    client = ScriptedChatClient([text], context_length=8192)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("list my files")
    assert result.text == text and result.tool_runs == []


def test_a_memory_call_under_another_name_is_asked_again_not_shown(
        mnemo_home: Home, tmp_path: Path) -> None:
    # By hand on the embedded model: '{"name": "user", "arguments": {"action":
    # "replace", "target": "memory", …}}' was the answer the user saw.
    misnamed = json.dumps({"name": "user", "arguments": {
        "action": "add", "target": "memory", "content": "My dog is named Pixel."}})
    client = StreamingScriptedClient([misnamed, "Pixel is a lovely name."],
                                     context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn("My dog is named Pixel and I mention him a lot.")
    assert result.text == "Pixel is a lovely name." and result.tool_runs == []
    assert "".join(shown) == result.text
    assert 'it is named "user", not "memory"' in content_text(client.requests[-1].messages[-1])


def test_streamed_text_is_shown_but_a_text_tool_call_is_not(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = StreamingScriptedClient([CALL_TEXT, "Noted, Ana."], context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn("I'm Ana.")
    assert "".join(shown) == "Noted, Ana." == result.text


BAD_SEARCH = json.dumps({"name": "session_search", "arguments": {"mode": 3}})


def test_a_text_call_that_does_not_fit_gets_one_retry_saying_why(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = StreamingScriptedClient([BAD_SEARCH, "Nothing about that yet."],
                                     context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn("what did we talk about last week?")
        stored = [content_text(m) for m in agent.messages]
    assert "".join(shown) == "Nothing about that yet." == result.text
    assert BAD_SEARCH not in stored
    asked = [m for m in client.requests[-1].messages if m["role"] == "user"][-1]
    assert "arguments.mode should be string" in content_text(asked)
    assert client.requests[-1].tools  # the retry may still call the tool, rightly this time


def test_a_text_call_written_twice_is_not_shown_to_the_user(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = StreamingScriptedClient([BAD_SEARCH, "```json\n" + BAD_SEARCH + "\n```"],
                                     context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn("what did we talk about last week?")
        assert validate_c12(agent.messages) == []
    assert shown == [] and "{" not in result.text
    assert result.text.startswith("[The model replied with a session_search call")


def test_tool_results_copied_out_as_the_answer_are_not_shown(
        mnemo_home: Home, tmp_path: Path) -> None:
    echo = '{"usage": "1% — 40/1,375 chars", "entry_count": 1, "message": "Entry added."}'
    client = StreamingScriptedClient([CALL_TEXT, echo, "Noted, Ana."], context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn("I'm Ana.")
    assert "".join(shown) == "Noted, Ana." == result.text
    assert client.requests[-1].tools is None  # the retry is asked to answer, no tools


def test_tool_results_copied_out_twice_become_a_notice(mnemo_home: Home,
                                                       tmp_path: Path) -> None:
    echo = '{"usage": "1% — 40/1,375 chars", "message": "Entry added."}'
    client = StreamingScriptedClient([CALL_TEXT, echo, echo], context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn("I'm Ana.")
    assert shown == [] and result.text.startswith("[The model repeated its tools' results")
    assert "mnemo memory show" in result.text


def test_made_up_results_in_a_later_turn_are_no_answer_either(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand in a long `mnemo chat`: after one turn that saved a memory, the
    # embedded model answered later statements with results of the same shape, made up
    # ("10% — 64/1,375 chars"), and called no tool at all.
    made_up = '{"usage": "10% — 64/1,375 chars", "entry_count": 1, "message": "Entry added."}'
    client = StreamingScriptedClient([CALL_TEXT, "Noted, Ana.", made_up, "Pixel is a fine name."],
                                     context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("I'm Ana.")
        agent.caller.on_text = shown.append
        result = agent.run_turn("Yesterday I adopted a beagle called Pixel.")
        stored = [content_text(m) for m in agent.messages if m.get("role") == "assistant"]
    assert "".join(shown) == result.text == "Pixel is a fine name."
    assert not any("usage" in text for text in stored)


def test_results_copied_beside_a_call_are_not_kept(mnemo_home: Home, tmp_path: Path) -> None:
    # Kept, they were the example the next replies imitated (the test above).
    echo = '{"usage": "1% — 40/1,375 chars", "entry_count": 1, "message": "Entry added."}'
    second = {"action": "add", "target": "user", "content": "Has a beagle called Pixel"}
    both = echo + "\n" + json.dumps({"name": "memory", "arguments": second})
    client = ScriptedChatClient([CALL_TEXT, both, "Noted."], context_length=8192)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("I'm Ana and I have a beagle called Pixel.")
        assert [run.name for run in result.tool_runs] == ["memory", "memory"]
        calling = [m for m in agent.messages if m.get("tool_calls")]
        assert [m.get("content") for m in calling] == [None, None]
        assert validate_c12(agent.messages) == []


def test_a_call_with_the_result_it_made_up_runs_and_the_result_is_not_kept(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand (3,072-token window): the embedded model wrote its call and a result
    # for it as a conversation shows them ("… returned: {…}"). The call runs; the
    # made-up result is no text to keep beside it (the next replies copied it).
    made_up = CALL_TEXT + ' returned: {"success": true, "message": "Entry added."}'
    client = ScriptedChatClient([made_up, "Noted, Ana."], context_length=8192)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("I'm Ana and I like short answers.")
        calling = [m for m in agent.messages if m.get("tool_calls")]
        assert [m.get("content") for m in calling] == [None]
    assert [run.name for run in result.tool_runs] == ["memory"]
    assert result.text == "Noted, Ana."


def test_malformed_calls_one_a_line_are_never_shown(mnemo_home: Home,
                                                    tmp_path: Path) -> None:
    # Seen by hand: the results written inside the calls, a call a line; the user was
    # shown four such lines as the answer, and the next replies copied them.
    lines = "\n".join(
        '{"name": "memory", "arguments": {"action": "add", "target": "user", "content": '
        f'"Fact {n}"}} returned: {{"success": false, "error": "Not saved."}}}}'
        for n in range(3))
    client = StreamingScriptedClient([lines, lines], context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn("We now live in York too.")
        assert validate_c12(agent.messages) == []
    assert result.tool_runs == [] and "".join(shown) == ""
    assert result.text.startswith("[The model replied with a memory call instead of an answer")


def test_an_empty_answer_twice_becomes_a_notice(mnemo_home: Home, tmp_path: Path) -> None:
    # Seen with the README's first command: the embedded model ended both replies at
    # its first token, and the user saw no answer at all.
    client = StreamingScriptedClient([CALL_TEXT, "", ""], context_length=8192)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("I'm Ana.")
        assert validate_c12(agent.messages) == []
    assert result.text.startswith("[The model gave no answer. Memory was updated")
    assert client.requests[-1].tools is None  # the retry was asked to answer


def test_without_tools_a_small_model_is_asked_with_its_calls_as_a_note(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Seen with the README's first command: after its tool messages, with no tools
    # offered, the embedded model ended its reply at the first token; with the tool
    # guidance still in the system prompt it wrote the memory call as text again.
    search = json.dumps({"name": "session_search", "arguments": {"query": "Ana"}})
    client = ScriptedChatClient([CALL_TEXT, search, search, "Hi Ana. I keep it short."],
                                context_length=8192)
    MemoryStore(mnemo_home.memories_dir).add("user", "Works on a bakery's website.")
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("I'm Ana and I like short answers.")
        stored = agent.messages
        assert validate_c12(stored) == []
    asked = client.requests[-1]
    assert result.text == "Hi Ana. I keep it short."
    assert asked.tools is None
    assert [m["role"] for m in asked.messages] == ["system", "user"]
    system, note = (content_text(m) for m in asked.messages)
    assert "Works on a bakery's website." in system  # the memory notes stay
    assert "Conversation started: 2026-03-14" in system
    assert "# Memory" not in system and "tool_call" not in system  # no tool guidance
    assert note.startswith("I'm Ana and I like short answers.")
    assert "memory" not in note  # what it saved, the model talked about instead
    assert note.count("- session_search Ana:") == 1
    assert note.endswith("[Answer the message above directly, in plain words.]")
    # Only the request changed: the conversation keeps its calls and results.
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant", "tool",
                                           "assistant", "tool", "assistant"]


def test_a_copy_of_the_note_is_not_kept_in_the_conversation(mnemo_home: Home,
                                                            tmp_path: Path) -> None:
    # Seen by hand: the answer went on with the note written out, and the next turn's
    # answer copied it again from the conversation.
    copied = ("Hi Omar.\n\n[Your tool calls this turn, and what they returned:\n"
              f"- memory {json.dumps(ANA)} returned: Entry added.]")
    client = ScriptedChatClient([CALL_TEXT, CALL_TEXT, copied], context_length=8192)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Call me Omar.")
        stored = content_text(agent.messages[-1])
    assert result.text == stored == "Hi Omar."


def test_a_restated_memory_reminder_is_not_kept_in_the_conversation(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand: the embedded model ended an answer with the reminder in its own words,
    # and then every later answer the same way.
    restated = ("A red Fiat 500 was bought in 2019, and since this conversation revealed "
                "a user preference (a car preference), save it with the memory tool.")
    client = ScriptedChatClient([restated], context_length=8192)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("My car is a red Fiat 500 that I bought in 2019.")
        stored = content_text(agent.messages[-1])
    assert result.text == stored == "A red Fiat 500 was bought in 2019."


def test_a_restated_memory_reminder_is_not_shown_as_it_streams(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand in `mnemo chat`: the restatement was cut from what was kept, but the
    # user had seen it stream by. Streamed a word at a time (``StreamingScriptedClient``).
    restated = ('Pixel and Joana read "The Shadow of the Wind" on Sunday, and since this '
                "conversation revealed a durable fact (a user preference, a correction, an "
                "environment detail, a convention), save it with the memory tool. Pixel is "
                "a beagle, and you adopted him from the Oakland shelter.")
    client = StreamingScriptedClient([restated], context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn("On Sunday I read a book with Joana and Pixel.")
        stored = content_text(agent.messages[-1])
    assert "".join(shown) == result.text == stored == (
        'Pixel and Joana read "The Shadow of the Wind" on Sunday. Pixel is a beagle, and you '
        "adopted him from the Oakland shelter.")


def test_an_answer_that_talks_about_the_memory_tool_is_kept_whole() -> None:
    from mnemo.agent.nudges import without_restated_reminder

    for answer in ("Done. I saved it with the memory tool for you.",
                   "Save it with the memory tool.",  # nothing else: kept as it is
                   "- Buy milk\n- Call Rui"):
        assert without_restated_reminder(answer) == answer
    assert without_restated_reminder(
        "- Buy milk\n- since this conversation revealed a durable fact, save it with the "
        "memory tool\n- Call Rui") == "- Buy milk\n- Call Rui"


def test_a_copy_of_the_note_is_not_shown_as_it_streams(mnemo_home: Home,
                                                       tmp_path: Path) -> None:
    # Seen by hand on the README's first command: the streamed answer showed the note.
    copied = ("Hi Omar.\n\n[Your tool calls this turn, and what they returned:\n"
              f"- memory {json.dumps(ANA)} returned: Entry added.]")
    client = StreamingScriptedClient([CALL_TEXT, CALL_TEXT, copied], context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn("Call me Omar.")
    assert "".join(shown) == result.text == "Hi Omar."


def _copy_in_a_small_window(home: Home, tmp_path: Path, before: list[str], copied: str,
                            all_copy: str, answer: str, said: str, again_said: str
                            ) -> tuple[str, str, str, list[str]]:
    """Two turns in an 8k window: ``before`` then ``copied`` (an answer that goes on
    copying something out), then ``all_copy`` (nothing but a copy, asked again) and
    ``answer``. (first turn's text, shown of the second, its text, assistant texts
    kept after the first) — and in a 128k window ``copied`` is left whole."""
    client = StreamingScriptedClient([*before, copied, all_copy, answer], context_length=8192)
    shown: list[str] = []
    with make_agent(home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn(said)
        stored = [content_text(m) for m in agent.messages if m.get("role") == "assistant"]
        shown.clear()
        again = agent.run_turn(again_said)
    client = StreamingScriptedClient([copied], context_length=128_000)
    with make_agent(home, client, tmp_path) as agent:
        assert agent.run_turn(said).text == copied
    return result.text, "".join(shown), again.text, stored


def test_a_copy_of_the_memory_example_line_is_neither_shown_nor_kept(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand (3,072-token window), as the answer to "What do you remember about my
    # food rules?": 'To "I'm Sam and I prefer tabs" your reply starts with:'.
    copied = "No peanuts, ever.\nTo \"I'm Sam and I prefer tabs\" your reply starts with:"
    whole = "To \"I'm Sam and I prefer tabs\" your reply starts with:\n<tool_call>"
    first, shown, again, stored = _copy_in_a_small_window(
        mnemo_home, tmp_path, [], copied, whole, "Porto, in June.",
        "What do you remember about my food rules?", "Where are we travelling?")
    assert first == "No peanuts, ever."
    assert shown == again == "Porto, in June."
    assert not any("prefer tabs" in text for text in stored)


def test_a_reply_copying_the_worked_example_keeps_only_its_own_words(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = StreamingScriptedClient(["Tomas. I prefer tabs. Nice to meet you!"],
                                     context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn("Hi, I'm Tomas. I work as a nurse in Leeds.")
        stored = [content_text(m) for m in agent.messages]
    assert result.text == "Tomas. Nice to meet you!"
    assert stored[-1] == result.text
    assert "tabs" not in "".join(shown) and "Nice to meet you!" in "".join(shown)


def test_a_copy_of_the_small_prompts_guidance_is_neither_shown_nor_kept(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand (3,072-token window): the embedded model ended its answers by copying
    # its memory guidance out, "me" for "you", and the next answers copied it again.
    # A large window's prompt has no such guidance: its answers are left whole.
    copied = ("Congratulations on the new job!\n# Memory\nWhen the user tells me their "
              "name, a preference, how they like answers, your reply starts with a memory "
              "tool call.")
    whole = "# Tools\nCall a tool through the tool-call format, never by describing it."
    first, shown, again, stored = _copy_in_a_small_window(
        mnemo_home, tmp_path, [], copied, whole, "Welcome to York!",
        "I now work at the York hospital pharmacy.", "We live in York now.")
    assert first == "Congratulations on the new job!"
    assert shown == again == "Welcome to York!"
    assert not any("# Memory" in text for text in stored)


def test_calls_written_out_after_the_answer_are_neither_shown_nor_kept(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand (3,072-token window, a chat in Chinese): after its answer the embedded
    # model wrote each call of the turn in brackets with what it returned. In a large
    # window the answer is left whole.
    copied = (f"Nice to meet you, Li Ming.\n\n[Memory {json.dumps(ANA)} returned: "
              '{"success": true}]\n\n- memory {"action": "add"} returned: {}')
    first, shown, again, stored = _copy_in_a_small_window(
        mnemo_home, tmp_path, [CALL_TEXT], copied, '[Memory {"action": "add"}]',
        "Hello again.", "Hi, I'm Li Ming.", "Hello?")
    assert first == "Nice to meet you, Li Ming."
    assert shown == again == "Hello again."
    assert not any("returned:" in text for text in stored)


# Seen by hand (3,072-token window, English): (1) the embedded model wrote a memory call
# with the note's words inside its arguments (no JSON a call could be made of), a
# "tool_response" of its own, then the summary's last lines; (2) the results it copied
# compacted away, it answered with a memory result, then every reply copied it with a
# refusal after it, braces unbalanced. Each was shown to the user.
@pytest.mark.parametrize(("copied", "all_copy", "answer", "never_kept"), [
    ("Welcome to York!\n- User: We now live in York too, near the Minster.\n\n"
     "## Tools & Patterns\n- memory ×5",
     '{"name": "memory", "arguments": {"action": "add", "target": "user", '
     '"content=We now live in York.": done (Already saved.)}}\n'
     '{"name": "tool_response", "arguments": {"old_text": "Prefer tabs."',
     "Welcome to York!", ("Tools & Patterns", "tool_response")),
    ('Noted, you live in York.\n{"usage": "4% — 59/1,375 chars"}',
     '{"usage": "4% — 59/1,375 chars"}\n\n{"error": "Not saved: the entry says '
     'things nobody in this conversation said."}}',
     "Noted, you live in York.", ('"usage"', '"error"')),
    # (3) by hand after 0a5a55c: the note's line for a call, without its dash.
    ('Good morning! You live in York now. In my previous turn, I returned "memory add '
     'user "Name: Tomas. Prefer tabs."": done (Entry added.)',
     'memory add user "Name: Tomas. Prefer tabs.": done (Entry added.)',
     "Good morning! You live in York now.", ("memory add", "Prefer tabs")),
    # (4) by hand: the chat template's tag for a tool's answer after the answer.
    ("We're going to Lisbon in May.\n\n<tool_response>", "<tool_response>\n",
     "We're going to Lisbon in May.", ("<tool_response>", "<tool")),
    # (5) by hand: the chat template's preamble to the tools after an answer, with a
    # heading of the model's own before it ("# Memory & Past Sessions").
    ("We're going to Lisbon in May.\n\n# Memory & Past Sessions\nWhen the user mentions "
     "an earlier conversation, call session_search with a few keywords before answering."
     "\n\n# Tools\n\nYou may call one or more functions to "
     "assist with the user query. You are provided with function signatures within "
     '<tools></tools> XML tags:\n<tools>\n{"type": "function"}',
     '<tools>\n{"type": "function", "function": {"name": "memory"}}\n</tools>',
     "We're going to Lisbon in May.", ("You may call", "# Memory")),
    # (6) by hand: the note that follows a summary's frame, then its first heading.
    ("The exam moved to Friday the 18th. Here's the updated schedule:\n\n[Note: Some "
     "earlier conversation turns have been compacted into a handoff summary to preserve "
     "context space.]\n\n## Goal\n\n#",
     "[Note: Some earlier conversation turns have been compacted into a handoff summary.]",
     "The exam moved to Friday the 18th.", ("Some earlier", "schedule")),
    ("Your exam is on Friday at 9 in Amersfoort. Do NOT answer questions or fulfill "
     "requests mentioned in this summary; they were already addressed.",
     "Do NOT answer questions or fulfill requests mentioned in this summary.",
     "Your exam is on Friday at 9 in Amersfoort.", ("Do NOT", "addressed")),
    # (7) by hand: the memory block copied out, its entries between "§" lines.
    ("Nice to meet you, Priya.\n§\nI run 5 km every Saturday.\n§\nMy brother Ravi lives "
     "in Manchester.", "§\nI run 5 km every Saturday.",
     "Nice to meet you, Priya.", ("§", "every Saturday")),
    # (8) by hand: a memory refusal's instruction to the model, reworded to the user.
    ("You live in York now. To bring your BIG registration number, call memory with "
     "content 'We now live in York.'",
     "Call memory with content 'We now live in York.'",
     "You live in York now.", ("call memory", "BIG registration")),
], ids=["broken call and summary copy", "copied tool result", "note line copied",
        "template tag", "template preamble", "compaction note", "summary frame",
        "memory block", "tool instruction"])
def test_a_broken_call_a_summary_or_a_result_copied_is_neither_shown_nor_kept(
        mnemo_home: Home, tmp_path: Path, copied: str, all_copy: str, answer: str,
        never_kept: tuple[str, str]) -> None:
    first, shown, again, stored = _copy_in_a_small_window(
        mnemo_home, tmp_path, [], copied, all_copy, "York is lovely.",
        "We now live in York.", "Do you like York?")
    assert first == answer
    assert shown == again == "York is lovely."
    assert not any(mark in text for text in stored for mark in never_kept)


def test_without_tools_a_large_model_gets_the_conversation_as_it_is(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([CALL_TEXT, CALL_TEXT, "Hi Ana."], context_length=128_000)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("I'm Ana and I like short answers.")
        system = agent.system_prompt.text if agent.system_prompt else ""
    asked = client.requests[-1]
    assert asked.tools is None
    assert content_text(asked.messages[0]) == system
    assert [m["role"] for m in asked.messages][-2:] == ["assistant", "tool"]


def test_a_call_repeated_in_one_reply_is_run_and_kept_once(mnemo_home: Home,
                                                           tmp_path: Path) -> None:
    search = json.dumps({"name": "session_search", "arguments": {"query": "Ana"}})
    client = ScriptedChatClient(["\n".join([CALL_TEXT, search, CALL_TEXT, search, CALL_TEXT]),
                                 "Saved."], context_length=8192)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("I'm Ana and I like short answers.")
        stored = agent.messages
    assert [run.name for run in result.tool_runs] == ["memory", "session_search"]
    calls = stored[1].get("tool_calls") or []
    assert [c["function"]["name"] for c in calls] == ["memory", "session_search"]
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "tool", "assistant"]
    assert validate_c12(stored) == []


def test_json_the_user_may_want_is_still_an_answer(mnemo_home: Home, tmp_path: Path) -> None:
    answer = '{"name": "Ana", "likes": "short answers"}'
    client = ScriptedChatClient([CALL_TEXT, answer], context_length=8192)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("I'm Ana. Show my profile as JSON.")
    assert result.text == answer


def test_ctrl_c_keeps_what_was_shown_and_the_next_turn_runs(
        mnemo_home: Home, tmp_path: Path) -> None:
    class HalfStreamed(StreamingScriptedClient):
        interrupted = False

        def complete(self, messages: Sequence[Message], **kwargs: Any) -> ChatResponse:
            stream = kwargs.get("stream")
            if not self.interrupted and stream is not None:  # a few words, then Ctrl-C
                self.interrupted = True
                # (A word is shown once the space after it comes: ``ClauseFilter``; in a
                # small window, once a word tells the reply's language: "It".)
                stream.on_text("It was once ")
                raise KeyboardInterrupt
            return super().complete(messages, **kwargs)

    client = HalfStreamed(["Short answer."], context_length=8192)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = lambda text: None
        with pytest.raises(KeyboardInterrupt):
            agent.run_turn("tell me a long story")
        assert content_text(agent.messages[-1]) == "It was once [interrupted by the user]"
        result = agent.run_turn("just a short answer then")
        assert result.text == "Short answer."
        assert validate_c12(client.requests[-1].messages) == []


def test_a_small_window_gets_a_small_prompt(mnemo_home: Home, tmp_path: Path) -> None:
    small = ScriptedChatClient(["hi"], context_length=8192)
    large = ScriptedChatClient(["hi"], context_length=128_000)
    for client in (small, large):
        with make_agent(mnemo_home, client, tmp_path) as agent:
            agent.run_turn("hello")

    def prefix_tokens(client: ScriptedChatClient) -> int:
        request = client.requests[0]
        return (estimate_tokens_rough(content_text(request.messages[0]))
                + estimate_tokens_rough(json.dumps(request.tools)))

    assert prefix_tokens(small) <= 0.12 * 8192  # SPEC: ≤ 12% of an 8k window
    assert prefix_tokens(small) < prefix_tokens(large) / 2
    names = [t["function"]["name"] for t in small.requests[0].tools or []]
    assert names == ["memory", "session_search"]  # no skills installed: no skill_view


def test_a_reply_that_only_repeats_the_question_is_asked_again(mnemo_home: Home,
                                                              tmp_path: Path) -> None:
    # Seen by hand on the embedded model, late in a long chat where it had restated the
    # user's messages: every question came back as the answer.
    question = "What instrument does my brother play, and where?"
    client = StreamingScriptedClient(
        [question, "Your brother Rui plays the cello in the Porto orchestra."],
        context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn(question)
        stored = list(agent.messages)
    assert result.text == "Your brother Rui plays the cello in the Porto orchestra."
    assert "".join(shown) == result.text  # the repeat was never shown
    assert "only repeated the question" in content_text(client.requests[-1].messages[-1])
    assert client.requests[-1].tools is None
    assert [content_text(m) for m in stored] == [question, result.text]


def test_a_reply_that_only_repeats_one_question_of_the_message_is_asked_again(
        mnemo_home: Home, tmp_path: Path) -> None:
    # By hand on the embedded model: the message's last question came back as the answer.
    message = ("Please remember: I'm allergic to peanuts, so never suggest recipes with "
               "peanuts. What should I cook tonight?")
    answer = "A lentil curry with rice: quick, and no peanuts in it."
    client = StreamingScriptedClient(["What should I cook tonight?", answer],
                                     context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        result = agent.run_turn(message)
    assert result.text == answer and result.model_calls == 2
    assert "".join(shown) == answer  # the repeat was never shown
    assert "only repeated the question" in content_text(client.requests[-1].messages[-1])


def test_a_reply_restating_earlier_messages_about_something_else_is_asked_again(
        mnemo_home: Home, tmp_path: Path) -> None:
    # By hand (3,072 tokens): the user's first message came back as the answer to later,
    # unrelated ones.
    first = "Hi! I'm Tomas, I work as a nurse in Leeds."
    client = StreamingScriptedClient(
        ["Nice to meet you, Tomas.", first, "Obrigado.", first, first,
         "We have a dog called Biscuit."], context_length=3072)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        agent.run_turn(first)
        shown.clear()
        result = agent.run_turn("How do I say thank you in Portuguese?")
        assert result.text == "Obrigado." and result.model_calls == 2
        assert "".join(shown) == "Obrigado."  # the restatement was held, never shown
        assert "only repeated earlier messages" in content_text(
            client.requests[-1].messages[-1])
        again = agent.run_turn("Which days are my night shifts?")
        assert again.text.startswith("[The model repeated earlier messages")
        # About the message, a restatement may be the answer: no second call.
        dog = agent.run_turn("We have a dog called Biscuit. What's my dog called?")
    assert dog.text == "We have a dog called Biscuit." and dog.model_calls == 1
    # The notice is the agent's: the model is not shown it (by hand it wrote notices
    # out as its answers), and the message it left unanswered joins the next one.
    request = client.requests[-1].messages
    assert not any("[The model" in content_text(m) for m in request)
    assert content_text(request[-1]).startswith(
        "Which days are my night shifts?\n\nWe have a dog called Biscuit.")


def test_a_reply_in_another_language_is_asked_again_and_the_second_taken(
        mnemo_home: Home, tmp_path: Path) -> None:
    # By hand (3,072 tokens): after answering "How do I say thank you in Portuguese?" in
    # Portuguese, the embedded model answered every later English message in it too.
    portuguese = "Olá! O nome do seu cachorro é Biscuit."
    client = StreamingScriptedClient(
        ["Obrigado, ou obrigada se você for mulher.", portuguese,
         "Your dog is called Biscuit.", "Nosso destino é Porto.", "Nosso destino é Porto."],
        context_length=3072)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        # A message that names a language may get its answer in it.
        thanks = agent.run_turn("How do I say thank you in Portuguese?")
        assert thanks.model_calls == 1
        shown.clear()
        dog = agent.run_turn("What's my dog's name?")
        assert dog.text == "Your dog is called Biscuit." and dog.model_calls == 2
        assert "".join(shown) == dog.text  # the Portuguese reply was held, never shown
        assert "not in the language of the user's message" in content_text(
            client.requests[-1].messages[-1])
        shown.clear()
        # Asked once: a second reply in another language is the answer, printed whole.
        trip = agent.run_turn("Where are we going in May?")
    assert trip.text == "Nosso destino é Porto." and trip.model_calls == 2
    assert shown == [] and agent.caller.partial_text == ""


@pytest.mark.parametrize(("reply", "asked", "other"), [
    ("O nome de Biscuit é Tom.", "What's my dog's name?", True),
    ("Para evitar amendoim, não use receitas com amendoim.", "What do I need to avoid?", True),
    ("Nosso destino é Porto.", "Where are we going in May?", True),
    ("Lentil curry, rice, salad.", "What should I cook tonight?", False),  # no marker
    ("Café Nero, Leeds city centre.", "Where do we meet?", False),
    ("No peanuts, no cashews, no almonds.", "What do I avoid?", False),
    ("Obrigado!", "What is the word?", False),  # too short to tell
    ("Onde fica a estação?", "How do I say 'where is the station' in Portuguese?", False),
    ("Your dog is called Biscuit.", "What's my dog's name?", False),
    ("Tu perro se llama Biscuit.", "¿Cómo se llama mi perro?", False),  # not English
])
def test_a_reply_in_another_language_than_an_english_message(reply: str, asked: str,
                                                               other: bool) -> None:
    assert other_language(reply, asked) is other


def test_the_turns_message_is_what_was_asked_after_a_compaction_took_it(
        mnemo_home: Home, tmp_path: Path) -> None:
    # By hand (3,072 tokens): a compaction in the middle of the turn summarised the
    # question away; read from the live list, the turn had asked nothing, and five
    # answers in a row were taken for restatements about something else.
    client = StreamingScriptedClient(["Tuesdays and Thursdays."], context_length=3072)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("Which days are my night shifts?")
        agent.messages = [{"role": "user", "content": "[CONTEXT COMPACTION — REFERENCE "
                           "ONLY] Earlier turns were compacted into the summary below."}]
        assert agent._asked() == "Which days are my night shifts?"
        said = "My night shifts are on Tuesdays and Thursdays."
        assert not restates_earlier(said, agent._asked(), [said])


# Seen by hand on the embedded model: its reply about its first memory call came back,
# another name quoted in it, as the answer to each of the next five messages.
_META = ("The user's last message is: \"Hi, I'm Tomas, a nurse in Leeds.\" The tool was "
         "used to add the user's name, and the name was saved in memory.")
_META_COPY = ("The user's last message is: \"Hi, I'm Tom, a nurse in Leeds.\" The tool was "
              "used to add the user's name, and the name was saved in memory.")


def test_a_reply_copying_an_earlier_answer_is_asked_again_without_it(
        mnemo_home: Home, tmp_path: Path) -> None:
    answer = "Try a lentil curry with rice: twenty minutes, and no peanuts in it."
    client = StreamingScriptedClient([_META, _META_COPY, answer], context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        agent.run_turn("Hi, I'm Tomas, a nurse in Leeds.")
        shown.clear()
        result = agent.run_turn("Can you suggest a quick dinner for two tonight?")
        stored = [content_text(m) for m in agent.messages]
    assert result.text == answer and result.model_calls == 2
    assert "".join(shown) == answer  # the copy was held and never shown
    retry = client.requests[-1]
    assert "copied an earlier answer" in content_text(retry.messages[-1])
    assert retry.tools is None
    assert not any("The tool was used" in content_text(m) for m in retry.messages)
    assert stored == ["Hi, I'm Tomas, a nurse in Leeds.", _META,
                      "Can you suggest a quick dinner for two tonight?", answer]


def test_an_answer_copied_twice_becomes_a_notice_and_the_same_question_may_get_it_again(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = StreamingScriptedClient([_META, _META_COPY, _META_COPY, _META],
                                     context_length=8192)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("Hi, I'm Tomas, a nurse in Leeds.")
        copied = agent.run_turn("My partner is called Sam.")
        assert copied.text.startswith("[The model repeated an earlier answer")
        assert copied.model_calls == 2
        # The same message again may well get the same answer: no second call.
        again = agent.run_turn("Hi, I'm Tomas, a nurse in Leeds.")
    assert again.text == _META and again.model_calls == 1


def test_a_question_repeated_twice_becomes_a_notice_and_a_statement_is_left_alone(
        mnemo_home: Home, tmp_path: Path) -> None:
    question = "Can you suggest a name for my basil plant?"
    near = "Can you suggest a name for your basil plant?"
    statement = "Money update: my car's brakes got fixed for 280 euros."
    restated = "Money update:\n- my car's brakes got fixed for 280 euros."
    client = StreamingScriptedClient([near, question, restated], context_length=8192)
    shown: list[str] = []
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.caller.on_text = shown.append
        asked = agent.run_turn(question)
        assert asked.text.startswith("[The model repeated your question")
        assert asked.model_calls == 2
        told = agent.run_turn(statement)
    # A statement restated is a (poor) answer, not a repeated question: no second call.
    assert told.text == restated and told.model_calls == 1
    # A near repeat ("your" for "my") leaves the question's words at the first letter
    # that differs, so it was shown up to the end as it came; the exact repeat was not.
    assert "".join(shown).endswith(restated)
    assert question not in "".join(shown)


def test_a_reply_that_only_restates_a_saved_entry_about_something_else_is_asked_again(
        mnemo_home: Home, tmp_path: Path) -> None:
    # By hand (3,072 tokens) the embedded model answered "When do my parents land?" with
    # a saved entry of the user's, word for word (scripted replies).
    entry = "We planned a day trip to the Ardennes on Saturday."
    answer = "Your parents land on Wednesday at 14:20."
    client = StreamingScriptedClient([entry, answer], context_length=3072)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", entry)
        result = agent.run_turn("When do my parents land?")
    assert result.text == answer and result.model_calls == 2
