"""The agent grounds the model's memory writes in what was said (SPEC M9).

Scripted model replies (``ScriptedChatClient``), a real ``MemoryStore`` and session store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mnemo.agent import Agent, build_agent
from mnemo.config import MnemoConfig
from mnemo.context.markers import SUMMARY_END_MARKER, summary_content
from mnemo.home import Home
from mnemo.llm.testing import ScriptedChatClient, assistant_tool_call
from mnemo.messages import Message, content_text


def make_agent(home: Home, client: ScriptedChatClient, tmp_path: Path,
               grounding: str | None = "strict", **config: Any) -> Agent:
    memory = {**config.pop("memory", {}), "grounding": grounding}
    return build_agent(MnemoConfig.model_validate({"memory": memory, **config}), home=home,
                       cwd=tmp_path, client=client)


def add(content: str, target: str = "user", call_id: str = "call_1") -> Any:
    return assistant_tool_call("memory", {"action": "add", "target": target,
                                          "content": content}, call_id=call_id)


def user_md(home: Home) -> str:
    path = home.memories_dir / "USER.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_a_fabricated_write_is_refused_and_the_retry_in_the_users_words_passes(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([
        add("I love eating cookies and playing with my pets."),
        add("Ana likes short answers", call_id="call_2"),
        "Nice to meet you, Ana.",
    ])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Hi! I'm Ana and I like short answers.")
        line = agent.status_line()
    first, second = (json.loads(run.result) for run in result.tool_runs)
    assert not first["success"] and "user's own words" in first["error"]
    assert second["success"]
    assert user_md(mnemo_home) == "Ana likes short answers"
    assert result.memory_written and "memory writes refused 1" in line


def test_an_add_keeps_only_its_sentences_the_user_said(mnemo_home: Home,
                                                        tmp_path: Path) -> None:
    client = ScriptedChatClient([add("Name: Boris. Likes cats."), "Noted, Boris."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("My name is Boris. Please remember that.")
        line = agent.status_line()
    answer = json.loads(result.tool_runs[0].result)
    assert answer["success"] and "'Likes cats.'" in answer["note"]
    assert user_md(mnemo_home) == "Name: Boris."
    assert "memory writes refused 1" in line


@pytest.mark.parametrize(("entry", "noted"), [
    ("Name: Boris. Prefers tabs.", None), ("Name: Boris. Prefer tabs.", None),
    ("Name: Boris. Prefers tabs. Likes cats.", "'Likes cats.'")])
def test_a_copy_of_the_prompts_example_is_left_out_without_a_word(
        mnemo_home: Home, tmp_path: Path, entry: str, noted: str | None) -> None:
    # Seen by hand: told "the rest ('Prefer tabs.') was not said by the user", the
    # embedded model tried to replace that note, then answered the user with it.
    client = ScriptedChatClient([add(entry), "Noted, Boris."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("My name is Boris. Please remember that.")
    answer = json.loads(result.tool_runs[0].result)
    assert answer["success"] and "tabs" not in result.tool_runs[0].result
    assert (answer.get("note") is None) if noted is None else noted in answer["note"]
    assert user_md(mnemo_home) == "Name: Boris."


def test_a_copied_example_is_refused_with_the_users_message_offered(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([
        add("Name: Sam. Prefers tabs."),
        add("Please always answer in French.", call_id="c2"), "D'accord."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Please always answer in French.")
    refused = json.loads(result.tool_runs[0].result)
    assert not refused["success"] and "'Please always answer in French.'" in refused["error"]
    assert user_md(mnemo_home) == "Please always answer in French."


def test_an_embellished_write_is_refused(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([
        add("Carla has worked on the billing service for over a year"), "ok"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("I'm Carla, I work on the billing service and I hate long "
                       "explanations")
    assert user_md(mnemo_home) == ""


def test_what_only_the_assistant_said_is_not_evidence(mnemo_home: Home,
                                                      tmp_path: Path) -> None:
    client = ScriptedChatClient([
        "You seem to be a Rust developer living in Berlin.",
        add("User is a Rust developer living in Berlin"), "ok"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("hello")
        result = agent.run_turn("yes, please remember that")
    assert not json.loads(result.tool_runs[0].result)["success"]
    assert user_md(mnemo_home) == ""


def test_a_tool_result_is_evidence(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([
        assistant_tool_call("session_search", {"mode": "recent"}),
        add("The staging server listens on port 8443", target="memory", call_id="c2"),
        "Noted.",
    ])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.sessions.create_session(title="the staging server listens on port 8443")
        result = agent.run_turn("what did we find out about staging last time?")
    assert json.loads(result.tool_runs[1].result)["success"]


def test_a_past_reply_found_by_session_search_is_not_evidence(mnemo_home: Home,
                                                             tmp_path: Path) -> None:
    # A past session where the assistant invented a fact and the user said something else.
    client = ScriptedChatClient([
        assistant_tool_call("session_search", {"query": "staging server"}),
        add("The staging server listens on port 9443", target="memory", call_id="c2"),
        add("The staging server runs on Debian", target="memory", call_id="c3"),
        "Noted.",
    ])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        past = agent.sessions.create_session(title="deploy notes")
        agent.sessions.append_message(past, {"role": "user", "content":
                                             "the staging server runs on Debian"})
        agent.sessions.append_message(past, {"role": "assistant", "content":
                                             "So the staging server listens on port 9443."})
        result = agent.run_turn("what did we find out about the staging server last time?")
    invented, said = (json.loads(run.result) for run in result.tool_runs[1:3])
    assert "9443" in result.tool_runs[0].result  # the search did quote the past reply
    assert not invented["success"] and said["success"]


def test_a_replace_with_nothing_to_replace_is_an_add(mnemo_home: Home,
                                                     tmp_path: Path) -> None:
    client = ScriptedChatClient([
        assistant_tool_call("memory", {"action": "replace", "target": "user",
                                       "old_text": "", "content": "Ana likes short answers"}),
        "ok"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Hi! I'm Ana and I like short answers.")
    answer = json.loads(result.tool_runs[0].result)
    assert answer["success"] and "added as a new entry" in answer["note"]
    assert user_md(mnemo_home) == "Ana likes short answers"
    assert result.memory_written


def test_a_replace_of_the_offered_entry_by_refused_words_adds_the_offer(
        mnemo_home: Home, tmp_path: Path) -> None:
    # By hand (the README's first command, on some days' prompts) the embedded model
    # answered the refusal's offer with a replace of exactly that text by its refused
    # words, three times, and nothing was saved.
    def replace(old: str, call_id: str) -> Any:
        return assistant_tool_call("memory", {
            "action": "replace", "target": "user", "old_text": old,
            "content": "Great answers are great for quick information."}, call_id=call_id)

    client = ScriptedChatClient([
        add("Short answers are great for quick information."),
        replace("I'm Ana and I like short answers.", "call_2"), "Hello Ana!"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Hi! I'm Ana and I like short answers. What can you do?")
    refused, taken = (json.loads(run.result) for run in result.tool_runs)
    assert "for example with content \"I'm Ana and I like short answers.\"" in \
        refused["error"]
    assert taken["success"] and "entry offered in the user's own words" in taken["note"]
    assert user_md(mnemo_home) == "I'm Ana and I like short answers."
    # Another old text is no offer taken: the refused words stay refused.
    other = Home(tmp_path / "other")
    client = ScriptedChatClient([
        add("Short answers are great for quick information."),
        replace("I'm Ana.", "call_2"), "Hello Ana!"])
    with make_agent(other, client, tmp_path) as agent:
        result = agent.run_turn("Hi! I'm Ana and I like short answers. What can you do?")
    assert not json.loads(result.tool_runs[1].result)["success"]
    assert user_md(other) == ""


def test_a_replace_into_an_empty_store_is_an_add_but_a_miss_among_entries_is_not(
        mnemo_home: Home, tmp_path: Path) -> None:
    def replace(old: str, new: str, call_id: str) -> Any:
        return assistant_tool_call("memory", {"action": "replace", "target": "user",
                                              "old_text": old, "content": new},
                                   call_id=call_id)

    client = ScriptedChatClient([
        replace("joined now", "Call me Kenji from now on.", "c1"),
        replace("Kenji from Osaka", "Call me Kenji.", "c2"),
        "ok"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Call me Kenji from now on.")
    added, missed = (json.loads(run.result) for run in result.tool_runs)
    assert added["success"] and not missed["success"]
    assert user_md(mnemo_home) == "Call me Kenji from now on."


def test_a_write_to_the_wrong_store_is_moved_with_a_note(mnemo_home: Home,
                                                         tmp_path: Path) -> None:
    client = ScriptedChatClient([add("User prefers tabs over spaces", target="memory"), "ok"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("I prefer tabs over spaces, always")
    answer = json.loads(result.tool_runs[0].result)
    assert answer["success"] and "target 'user'" in answer["note"]
    assert user_md(mnemo_home) == "User prefers tabs over spaces"
    assert not (mnemo_home.memories_dir / "MEMORY.md").exists() or \
        "tabs" not in (mnemo_home.memories_dir / "MEMORY.md").read_text(encoding="utf-8")


def test_a_replace_in_the_wrong_store_changes_the_entry_where_it_is(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([
        add("I like short answers", target="memory"),  # moved to 'user' on the way in
        assistant_tool_call("memory", {"action": "replace", "target": "memory",
                                       "old_text": "short answers",
                                       "content": "I like very short answers"},
                            call_id="c2"),
        "ok"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("I like short answers, very short answers.")
    answer = json.loads(result.tool_runs[1].result)
    assert answer["success"] and "target 'user'" in answer["note"]
    assert user_md(mnemo_home) == "I like very short answers"


def test_after_a_save_a_round_of_only_memory_calls_is_the_last_with_tools(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([
        add("Ana likes short answers"),
        assistant_tool_call("memory", {"action": "replace", "target": "user",
                                       "old_text": "Entry added.", "content": "x"},
                            call_id="c2"),
        "Hi Ana."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Hi! I'm Ana and I like short answers.")
    assert [bool(request.tools) for request in client.requests] == [True, True, False]
    assert result.text == "Hi Ana." and user_md(mnemo_home) == "Ana likes short answers"


def test_after_the_loop_breaker_the_memory_tool_is_not_offered_again(
        mnemo_home: Home, tmp_path: Path) -> None:
    invented = [add(f"Ana owns {n} boats", call_id=f"c{n}") for n in range(3, 7)]
    client = ScriptedChatClient([*invented, "Hi Ana."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Hi! I'm Ana.")
    last = json.loads(result.tool_runs[-1].result)
    assert len(result.tool_runs) == 4 and last.get("terminal")
    assert [bool(request.tools) for request in client.requests] == [True] * 4 + [False]
    assert result.text == "Hi Ana."


def test_an_add_without_a_target_gets_no_routing_note(mnemo_home: Home,
                                                      tmp_path: Path) -> None:
    client = ScriptedChatClient([
        assistant_tool_call("memory", {"action": "add",
                                       "content": "The staging API runs on port 8443"}),
        "ok"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("FYI the staging API runs on port 8443.")
    answer = json.loads(result.tool_runs[0].result)
    assert answer["success"] and "note" not in answer


def test_a_batch_is_refused_whole_when_one_entry_is_invented(mnemo_home: Home,
                                                             tmp_path: Path) -> None:
    client = ScriptedChatClient([
        assistant_tool_call("memory", {"action": "batch", "target": "user", "operations": [
            {"action": "add", "content": "Ana likes short answers"},
            {"action": "add", "content": "Ana owns a sailing boat"}]}),
        "ok"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("Hi! I'm Ana and I like short answers.")
    assert user_md(mnemo_home) == ""


def test_replace_may_reuse_the_words_of_the_entry_it_rewrites(mnemo_home: Home,
                                                              tmp_path: Path) -> None:
    client = ScriptedChatClient([
        assistant_tool_call("memory", {"action": "replace", "target": "user",
                                       "old_text": "Lisbon",
                                       "content": "Ana lives in Porto, works remotely"}),
        "ok"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", "Ana lives in Lisbon, works remotely")
        result = agent.run_turn("I moved to Porto last month")
    assert json.loads(result.tool_runs[0].result)["success"]
    assert user_md(mnemo_home) == "Ana lives in Porto, works remotely"


@pytest.mark.parametrize(("mode", "stored"), [("lenient", True), ("off", True),
                                              ("strict", False)])
def test_modes(mode: str, stored: bool, mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([
        add("Carla works on the billing service and hates long explanations today"), "ok"])
    with make_agent(mnemo_home, client, tmp_path, grounding=mode) as agent:
        agent.run_turn("I'm Carla, I work on the billing service and I hate long "
                       "explanations")
    assert bool(user_md(mnemo_home)) is stored


def test_hosted_models_default_to_lenient_and_cli_writes_are_never_checked(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient(["ok"])
    with make_agent(mnemo_home, client, tmp_path, grounding=None) as agent:
        assert agent.writes.mode == "lenient"
        agent.memory.add("user", "Anything the user types by hand")  # the CLI's path
    assert user_md(mnemo_home) == "Anything the user types by hand"


def test_repeated_refusals_trip_the_loop_breaker(mnemo_home: Home, tmp_path: Path) -> None:
    invented = [add(f"User collects {thing}", call_id=f"c{i}")
                for i, thing in enumerate(["stamps", "coins", "shells", "cards"])]
    client = ScriptedChatClient([*invented, "ok"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("hello there")
    last = json.loads(result.tool_runs[-1].result)
    assert last.get("terminal") and "Stop calling the memory tool" in last["error"]


def test_the_same_fact_saved_twice_is_stored_once(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([
        add("I like short answers."),
        add("I prefer shorter answers.", call_id="call_2"),
        "ok"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Hi! I'm Ana and I like short answers.")
    second = json.loads(result.tool_runs[1].result)
    assert second["success"] and "Already saved" in second["note"]
    assert user_md(mnemo_home) == "I like short answers."


def test_an_embedded_model_client_passed_in_gets_the_strict_check(
        mnemo_home: Home, tmp_path: Path) -> None:
    from mnemo.llm import LocalChatClient

    client = LocalChatClient(tmp_path / "model.gguf", home=mnemo_home)  # never started
    with build_agent(MnemoConfig(), home=mnemo_home, cwd=tmp_path, client=client) as agent:
        assert agent.writes.mode == "strict"
    scripted = ScriptedChatClient(default="ok")
    with build_agent(MnemoConfig(), home=mnemo_home, cwd=tmp_path, client=scripted) as agent:
        assert agent.writes.mode == "lenient"


def test_a_saved_fact_echoed_with_the_tool_result_is_already_saved(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Found on the embedded model: after a save it adds the same fact again with the
    # tool's usage line ("2% — 40/1,375 chars") appended.
    client = ScriptedChatClient([
        add("I prefer tabs over spaces in every file."),
        add("I prefer tabs over spaces in every file. \n\n2% — 40/1,375 chars",
            call_id="call_2"),
        "Noted.",
    ])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Please remember that I prefer tabs over spaces in every file.")
        line = agent.status_line()
    second = json.loads(result.tool_runs[1].result)
    assert second["success"] and "Already saved" in second["note"]
    assert user_md(mnemo_home) == "I prefer tabs over spaces in every file."
    assert "refused" not in line


def test_invented_words_beside_a_saved_fact_are_not_stored(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([
        add("I prefer tabs over spaces in every file."),
        add("I prefer tabs. I also love cookies.", call_id="call_2"),
        "Noted.",
    ])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Please remember that I prefer tabs over spaces in every file.")
    second = json.loads(result.tool_runs[1].result)
    # "I prefer tabs." is saved already, but "I also love cookies." was never said.
    assert second["success"] and "Already saved" in second["note"]
    assert "cookies" not in user_md(mnemo_home)


def test_what_the_user_said_in_a_turn_merged_into_a_summary_is_evidence(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand in a 3,072-token window: the user's turn was merged into the summary
    # after it (C12 c), and the model's save of the user's own sentence was refused as
    # "things nobody in this conversation said".
    merged = summary_content("## Critical Context\n- User: We have a beagle.") + (
        SUMMARY_END_MARKER + "My husband Arjun is a civil engineer in Bristol.")
    messages: list[Message] = [{"role": "user", "content": merged},
                               {"role": "assistant", "content": "Noted."},
                               {"role": "user", "content": "What's new?"}]
    with make_agent(mnemo_home, ScriptedChatClient([]), tmp_path) as agent:
        agent.start()
        assert agent.manager is not None
        answer, refused = agent.writes.handle(
            {"action": "add", "target": "user",
             "content": "My husband Arjun is a civil engineer in Bristol."},
            messages, agent.manager)
        # What the summary retells is not: only what the user said in a turn counts.
        retold, refused_too = agent.writes.handle(
            {"action": "add", "target": "user", "content": "We have a beagle."},
            messages, agent.manager)
    assert not refused and json.loads(answer)["success"]
    assert refused_too and not json.loads(retold)["success"]
    assert "Arjun" in user_md(mnemo_home) and "beagle" not in user_md(mnemo_home)


def test_what_the_user_said_before_a_compaction_is_evidence_in_that_session_only(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand (3,072-token window): the user's sentence was compacted before the
    # model saved it, and the save, in the user's own words, was refused.
    said = "I'm allergic to peanuts, so keep that in mind when you suggest recipes."
    client = ScriptedChatClient([add(said), "Noted.", add(said, call_id="c2"), "Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.start()
        assert agent.session_id is not None
        agent.messages = [{"role": "user", "content": said},
                          {"role": "assistant", "content": "Noted."}]
        agent.sessions.sync_live(agent.session_id, agent.messages)
        agent.messages = [{"role": "user", "content": summary_content(
            "## Critical Context\n- User: peanut allergy.")},
            {"role": "assistant", "content": "Noted."}]
        agent.sessions.sync_live(agent.session_id, agent.messages)  # the original archived
        saved = agent.run_turn("What should I cook tonight?")
        agent.new_session(flush=False)
        again = agent.run_turn("What should I cook tonight?")
    assert json.loads(saved.tool_runs[0].result)["success"]
    assert said in user_md(mnemo_home)
    # Another session's archive is not this conversation.
    assert not json.loads(again.tool_runs[0].result)["success"]


def test_an_archived_memory_refusal_is_no_evidence(mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand: a window cut archived a refusal that quoted the entry's words, its
    # call still live after it; read before the call, it counted as a tool's words and
    # the entry it refused twice was saved.
    entry = "Quick dinner idea: slice a banana into a salad."
    refusal = json.dumps({"success": False, "error": "Not saved: the entry says things "
                          "nobody said ('idea', 'slice', 'banana', 'salad')."})
    live: list[Message] = [
        {"role": "user", "content": "Can you suggest a quick dinner for tonight?"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "m1", "type": "function", "function": {
                "name": "memory", "arguments": json.dumps({"action": "add",
                                                           "content": entry})}}]},
        {"role": "tool", "tool_call_id": "m1", "content": refusal[:40] + " [… cut …]"}]
    archived: list[Message] = [{"role": "tool", "tool_call_id": "m1", "content": refusal}]
    with make_agent(mnemo_home, ScriptedChatClient([]), tmp_path) as agent:
        agent.start()
        assert agent.manager is not None
        answer, refused = agent.writes.handle(
            {"action": "add", "target": "user", "content": entry}, live, agent.manager,
            earlier=archived)
    assert refused and not json.loads(answer)["success"]
    assert user_md(mnemo_home) == ""


@pytest.mark.parametrize(("said", "why"), [
    # Seen by hand: the embedded model saved the user's question (every word theirs) …
    ("Where do I work now, and what am I allergic to?", "is a question"),
    ("Where did we go last Christmas? Where do we go last Christmas?", "is a question"),
    ("我住在哪里？", "is a question"),
    # … and "thank you." (grounded too) for "My name is Li and I'm learning Japanese.
    # How do I say thank you?".
    ("thank you.", "tells nothing to remember"), ("Great!", "tells nothing to remember"),
    ("谢谢你！", "tells nothing to remember"), ("¡Muchas gracias!", "tells nothing to remember"),
    ("Vielen Dank für deine Hilfe!", "tells nothing to remember")])
def test_a_question_or_chit_chat_is_not_saved_as_a_fact(mnemo_home: Home, tmp_path: Path,
                                                         said: str, why: str) -> None:
    client = ScriptedChatClient([add(said), add("I live in York.", call_id="c2"), "Ok."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn(f"I live in York. {said}")
    refused = json.loads(result.tool_runs[0].result)
    assert not refused["success"] and why in refused["error"]
    assert user_md(mnemo_home) == "I live in York."


def test_an_entry_that_opens_with_someone_it_does_not_name_is_refused(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand: "She bakes the cake herself." was saved; in a later session "she" is
    # nobody.
    said = "My wife Kersti is baking the cake herself, she's a pastry chef."
    client = ScriptedChatClient([add("She bakes the cake herself."),
                                 add("My wife Kersti is baking the cake herself.", call_id="c2"),
                                 add("Herbert, my neighbour, helps her.", call_id="c3"),
                                 "Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn(f"{said} Herbert, my neighbour, helps her.")
    refused = json.loads(result.tool_runs[0].result)
    assert not refused["success"] and "opens with 'She'" in refused["error"]
    assert user_md(mnemo_home) == ("My wife Kersti is baking the cake herself.\n§\n"
                                   "Herbert, my neighbour, helps her.")


def test_the_user_is_not_saved_as_the_partner_they_named(mnemo_home: Home,
                                                         tmp_path: Path) -> None:
    # Seen by hand: "I am Jonas. I have a cat called Figo." was saved for Marta.
    client = ScriptedChatClient([add("Name: Marta. Teaches maths in Porto."), "Hi Marta!",
                                 add("I am Jonas. I have a cat called Figo.", call_id="c2"),
                                 add("Name: Jonas", call_id="c3"), "Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("Hi, I'm Marta. I teach maths at a secondary school in Porto.")
        result = agent.run_turn("My partner Jonas is a nurse; we have a cat called Figo.")
    trimmed, refused = (json.loads(run.result) for run in result.tool_runs)
    assert trimmed["success"] and "'I am Jonas.'" in trimmed["note"]  # left out
    assert not refused["success"] and "not theirs" in refused["error"]
    assert user_md(mnemo_home) == ("Name: Marta. Teaches maths in Porto.\n§\n"
                                   "I have a cat called Figo.")


def test_an_entry_whose_said_part_is_only_chit_chat_is_not_saved(
        mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand: "Thank you! It was a pleasure working for you." was trimmed to the
    # part the user said, "Thank you!", and that was saved.
    client = ScriptedChatClient([add("Thank you! It was a pleasure working for you."),
                                 "Obrigado."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("How do I say thank you! in Portuguese?")
    assert not json.loads(result.tool_runs[0].result)["success"]
    assert user_md(mnemo_home) == ""


def test_the_tool_results_keep_chinese_as_written(mnemo_home: Home, tmp_path: Path) -> None:
    # Seen by hand: every Chinese character of a refusal came back to the model as
    # "\u6211…" (several tokens each, in a 3,072-token window), and the model copied
    # the escapes into its next calls.
    said = "我对花生过敏，推荐菜谱的时候请记住。"
    client = ScriptedChatClient([add("Li Ming is allergic to peanuts."), add(said, call_id="c2"),
                                 add(said, call_id="c3"), "好的，我记住了。"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn(said)
    refused, saved, again = (run.result for run in result.tool_runs)
    assert said in refused and "\\u" not in refused  # the suggestion, in the user's words
    assert json.loads(saved)["success"]
    assert said in again and "\\u" not in again  # "Already saved as …"


def test_a_correction_replaces_the_entry_it_takes_back(mnemo_home: Home,
                                                       tmp_path: Path) -> None:
    """By hand the embedded model added the corrected fact beside the old one, and
    answered from the old one. Unrelated entries naming the old value stay."""
    client = ScriptedChatClient([
        add("My brother Ravi lives in Manchester."), "Noted.",
        add("My brother Ravi now lives in Glasgow.", call_id="call_2"), "Got it."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", "I grew up in Manchester.")
        agent.run_turn("My brother Ravi lives in Manchester.")
        result = agent.run_turn("Actually Ravi moved: he lives in Glasgow now, not Manchester.")
    answer = json.loads(result.tool_runs[0].result)
    assert answer["success"] and answer["message"] == "Entry replaced."
    assert "took back" in answer["note"] and "nothing to replace" not in answer["note"]
    assert user_md(mnemo_home) == ("I grew up in Manchester.\n§\n"
                                   "My brother Ravi now lives in Glasgow.")


@pytest.mark.parametrize("old_text", ["", "3% — 49/1,375 chars"])
def test_a_replace_whose_old_text_matches_nothing_replaces_the_corrected_entry(
        old_text: str, mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([
        assistant_tool_call("memory", {"action": "replace", "target": "user",
                                       "old_text": old_text,
                                       "content": "We are going to Porto in May."}),
        "Porto it is."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", "We are going to Lisbon in May.")
        agent.memory.add("user", "Our dog is called Biscuit.")
        agent.run_turn("Actually we're going to Porto in May now, not Lisbon.")
    assert user_md(mnemo_home) == "We are going to Porto in May.\n§\nOur dog is called Biscuit."


def test_a_correction_of_a_saved_entry_asks_for_its_replace_until_it_is_done(
        mnemo_home: Home, tmp_path: Path) -> None:
    """By hand the embedded model answered "it's Porto now, not Lisbon" in words and
    saved nothing: "…going to Lisbon in May." stayed for every later session. The turn's
    request now quotes the entry and the replace to make, until the entry is gone; the
    rewrite with the new name is grounded (the user put Porto in Lisbon's place), though
    the user never said "Porto" beside "learning" or "May"."""
    entry = "I'm learning Portuguese because we're going to Lisbon in May."
    client = ScriptedChatClient([
        assistant_tool_call("memory", {
            "action": "replace", "target": "user", "old_text": "going to Lisbon",
            "content": "I'm learning Portuguese because we're going to Porto in May."}),
        "Porto, noted.", "Enjoy the trip."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", entry)
        agent.memory.add("user", "Our dog Biscuit is a beagle.")
        result = agent.run_turn("Actually we changed the trip: it's Porto now, not Lisbon.")
        agent.run_turn("Thanks!")
    first, after_write, next_turn = (_last_user_text(r.messages) for r in client.requests)
    call = {"name": "memory", "arguments": {"action": "replace", "target": "user",
                                            "old_text": entry,
                                            "content": entry.replace("Lisbon", "Porto")}}
    assert (f'corrected a saved memory entry: "{entry}". Replace it with this call: '
            f'{json.dumps(call)}]') in first
    assert "corrected a saved memory entry" not in after_write
    assert "corrected a saved memory entry" not in next_turn
    assert json.loads(result.tool_runs[0].result)["success"]
    assert user_md(mnemo_home) == ("I'm learning Portuguese because we're going to Porto in "
                                   "May.\n§\nOur dog Biscuit is a beagle.")
    assert all("Reminder" not in content_text(m) for m in agent.messages)  # requests only


def test_a_correction_of_two_saved_entries_asks_for_the_second_after_the_first(
        mnemo_home: Home, tmp_path: Path) -> None:
    """By hand (German) two entries held the old budget, "My budget is 40 Euro." and
    "Mein Budget für das Geschenk ist 40 Euro."; the model replaced the one the reminder
    named, and answered "40 Euro" from the other. The reminder now names the next."""
    first, second = "Our budget is about 4000 euros.", "Budget: 4000 euros for the trip."
    client = ScriptedChatClient([
        assistant_tool_call("memory", {"action": "replace", "target": "user",
                                       "old_text": first,
                                       "content": "Our budget is about 3500 euros."}),
        assistant_tool_call("memory", {"action": "replace", "target": "user",
                                       "old_text": second,
                                       "content": "Budget: 3500 euros for the trip."},
                            call_id="call_2"),
        "Noted: 3500 euros."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", first)
        agent.memory.add("user", "Our dog is called Biscuit.")
        agent.memory.add("user", second)
        agent.run_turn("Actually our budget is now 3500 euros, not 4000.")
    asked = [_last_user_text(r.messages) for r in client.requests]
    assert f'corrected a saved memory entry: "{first}"' in asked[0]
    assert f'corrected a saved memory entry: "{second}"' in asked[1]
    assert "corrected a saved memory entry" not in asked[2]
    assert user_md(mnemo_home) == ("Our budget is about 3500 euros.\n§\nOur dog is called "
                                   "Biscuit.\n§\nBudget: 3500 euros for the trip.")


@pytest.mark.parametrize(("entry", "said"), [
    ("Mein Budget für das Geschenk ist 40 Euro.", "Das Budget ist jetzt 60 Euro."),
    ("La cena con mis suegros es el jueves a las 21h.",
     "Cambio de planes: la cena ahora es el viernes, no el jueves."),
])
def test_a_correction_in_another_language_asks_for_the_replace(
        entry: str, said: str, mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient(["Ok."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", entry)
        agent.memory.add("user", "Ich heiße Jonas.")
        agent.run_turn(said)
    assert f'corrected a saved memory entry: "{entry}"' in _last_user_text(
        client.requests[0].messages)


def test_a_correction_that_names_the_new_value_gets_the_call_to_copy(
        mnemo_home: Home, tmp_path: Path) -> None:
    """By hand, asked for the replace in words, the embedded model wrote the new fact as
    old_text ("My brother Ravi lives in Glasgow.") and the replace missed. When the
    correction names what takes the old value's place, the reminder gives the call; a
    replace that misses in such a turn still replaces the one entry taken back."""
    client = ScriptedChatClient([
        assistant_tool_call("memory", {
            "action": "replace", "target": "user",
            "old_text": "My brother Ravi lives in Glasgow.",
            "content": "My brother Ravi lives in Glasgow now."}), "Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", "My brother Ravi lives in Manchester.")
        agent.memory.add("user", "I grew up in Leeds.")
        result = agent.run_turn("Actually Ravi moved: he lives in Glasgow now, not Manchester.")
    sent = _last_user_text(client.requests[0].messages)
    assert ('"old_text": "My brother Ravi lives in Manchester.", "content": "My brother '
            'Ravi lives in Glasgow."') in sent
    answer = json.loads(result.tool_runs[0].result)
    assert answer["success"] and "took back" in answer["note"]
    assert user_md(mnemo_home) == "My brother Ravi lives in Glasgow now.\n§\nI grew up in Leeds."


def test_a_reply_that_copies_the_reminder_is_cut_where_the_copy_starts(
        mnemo_home: Home, tmp_path: Path) -> None:
    # By hand the embedded model streamed '[Reminder "I'm learning Portuguese…' to the
    # user, with tools offered (the cut had been for replies without tools only).
    client = ScriptedChatClient(['Porto it is!\n[Reminder "I\'m learning Portuguese '
                                 'because we\'re going to Lisbon in May." old_text'])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", "I'm learning Portuguese because we're going to Lisbon.")
        result = agent.run_turn("Actually we changed the trip: it's Porto now, not Lisbon.")
    assert client.requests[0].tools  # offered: the cut holds for every request
    assert result.text == "Porto it is!"


@pytest.mark.parametrize("said", [
    "My sister lives in Glasgow, not far from Manchester.",  # no change: nothing taken back
    "Actually Ravi lives in Glasgow now, not Leeds.",  # no entry names Leeds
])
def test_no_reminder_without_a_saved_entry_taken_back(said: str, mnemo_home: Home,
                                                      tmp_path: Path) -> None:
    client = ScriptedChatClient(["Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", "My brother Ravi lives in Manchester.")
        agent.memory.add("user", "Ravi lives in Glasgow, not Manchester.")
        agent.run_turn(said)
    assert "corrected a saved memory entry" not in _last_user_text(client.requests[0].messages)


def test_an_entry_that_already_says_not_is_not_stale(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient(["Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", "Ravi lives in Glasgow now, not Manchester.")
        agent.run_turn("Actually Ravi moved: he lives in Glasgow now, not Manchester.")
    assert "corrected a saved memory entry" not in _last_user_text(client.requests[0].messages)


def test_a_corrected_amount_replaces_the_entry_that_held_it(mnemo_home: Home,
                                                           tmp_path: Path) -> None:
    """By hand "Our budget is about 4000 euros" outlived "Actually our budget is now 3500
    euros, not 4000." in USER.md, for every later session. The turn's reminder now gives
    the replace; an add of the new amount replaces the entry; an entry that holds the
    same number about another thing stays."""
    budget = "Our budget is about 4000 euros, excluding flights."
    client = ScriptedChatClient([add("Our budget is now 3500 euros."), "Noted: 3500 euros."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", budget)
        agent.memory.add("user", "I swim 4000 metres every week.")
        result = agent.run_turn("Actually our budget is now 3500 euros, not 4000.")
    call = {"name": "memory", "arguments": {"action": "replace", "target": "user",
                                            "old_text": budget,
                                            "content": budget.replace("4000", "3500")}}
    assert json.dumps(call) in _last_user_text(client.requests[0].messages)
    answer = json.loads(result.tool_runs[0].result)
    assert answer["success"] and "took back" in answer["note"]
    assert user_md(mnemo_home) == ("Our budget is now 3500 euros.\n§\n"
                                   "I swim 4000 metres every week.")


def test_a_value_said_to_be_another_now_replaces_the_entry_that_held_it(
        mnemo_home: Home, tmp_path: Path) -> None:
    """By hand (3,072 tokens) the embedded model saved "Budget: $18,000. New oven."; the
    user's "Correction: the budget is 21,000 euros now, …" named no value it took back,
    the entry stayed, and the next answers said "$18,000" from it. (Scripted replies.)"""
    budget = "Budget: $18,000. New oven."
    client = ScriptedChatClient([add("The budget is 21,000 euros now."), "Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", budget)
        agent.memory.add("user", "The oven is 1,200 euros.")
        agent.run_turn("Correction: the budget is 21,000 euros now, the countertop costs "
                       "more than we thought.")
    call = {"name": "memory", "arguments": {"action": "replace", "target": "user",
                                            "old_text": budget,
                                            "content": "Budget: $21,000. New oven."}}
    assert json.dumps(call) in _last_user_text(client.requests[0].messages)
    assert user_md(mnemo_home) == ("The budget is 21,000 euros now.\n§\n"
                                   "The oven is 1,200 euros.")


def test_a_day_and_date_said_to_be_others_now_are_both_swapped_in_the_entry(
        mnemo_home: Home, tmp_path: Path) -> None:
    """By hand (3,072 tokens) the model saved the user's words, and after "Change of
    plans: the movers come on Friday the 15th now, same time." answered "Thursday the
    14th at 8:00" from the entry, which said the day of "they". (Scripted replies.)"""
    movers = "The movers are Van Dijk Verhuizingen and they come on Thursday the 14th at 8:00."
    client = ScriptedChatClient(["Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", movers)
        agent.run_turn("Change of plans: the movers come on Friday the 15th now, same time.")
    call = {"name": "memory", "arguments": {
        "action": "replace", "target": "user", "old_text": movers,
        "content": "The movers are Van Dijk Verhuizingen and they come on Friday the 15th at "
                   "8:00."}}
    assert json.dumps(call) in _last_user_text(client.requests[0].messages)


def test_a_write_that_puts_back_a_value_the_user_updated_is_refused(
        mnemo_home: Home, tmp_path: Path) -> None:
    """By hand (3,072 tokens) the model made the suggested replace "Budget: $21,000. New
    oven." and, turns later, put "Budget: $18,000. New oven." back: the user had said
    18,000 before, so grounding let it through. (Scripted replies.)"""
    newer = "Budget: $21,000. New oven."
    back = assistant_tool_call("memory", {"action": "replace", "target": "user",
                                          "old_text": newer,
                                          "content": "Budget: $18,000. New oven."})
    client = ScriptedChatClient(["Noted.", "Noted.", back, "Oak goes with white."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", newer)
        agent.run_turn("Our budget is 18,000 euros, including the new oven.")
        agent.run_turn("Correction: the budget is 21,000 euros now, the countertop costs "
                       "more than we thought.")
        agent.run_turn("Which paint colours go well with oak?")
    refusal = content_text(client.requests[-1].messages[-1])
    assert ("gives the old value; the user said 'Correction: the budget is 21,000 euros "
            "now, the countertop costs more than we thought.', so save 'Budget: $21,000. "
            "New oven.' instead.") in refusal
    assert user_md(mnemo_home) == newer
    # … also when the correction is only in a summary's "User:" line by then.
    client = ScriptedChatClient([back, "Oak goes with white."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.messages = [{"role": "user", "content": summary_content(
            "## Critical Context\n- User: Our budget is 18,000 euros. Correction: the "
            "budget is 21,000 euros now, the countertop costs more than we thought.")},
            {"role": "assistant", "content": "Noted."}]
        agent.run_turn("Which paint colours go well with oak?")
    assert "gives the old value" in content_text(client.requests[-1].messages[-1])
    assert user_md(mnemo_home) == newer
    # The same value, or a thing the update is not about, is written as asked.
    client = ScriptedChatClient([add("Our budget is 21,000 euros."), "Noted.",
                                 add("The oven is 1,200 euros.", call_id="call_2"), "Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("Correction: the budget is 21,000 euros now.")
        agent.run_turn("The oven is 1,200 euros.")
    assert "Our budget is 21,000 euros." in user_md(mnemo_home)
    assert "The oven is 1,200 euros." in user_md(mnemo_home)


@pytest.mark.parametrize(("said", "write"), [
    # The value about another thing: "turns 12" is no stay of 12 days.
    ("We'll stay 10 days instead of 12.", "We will stay 10 days."),
    # The 3rd of the landing is no birthday on the 3rd.
    ("Actually we land on October 5th instead of the 3rd.", "We land on October 5th."),
])
def test_an_entry_about_another_thing_outlives_a_corrected_value(
        said: str, write: str, mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([add(write), "Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", "My daughter turns 12 on the 3rd of May.")
        agent.run_turn(said)
    assert "corrected a saved memory entry" not in _last_user_text(client.requests[0].messages)
    assert user_md(mnemo_home) == f"My daughter turns 12 on the 3rd of May.\n§\n{write}"


def _last_user_text(messages: list[Message]) -> str:
    return next(content_text(m) for m in reversed(messages) if m.get("role") == "user")


def test_without_a_correction_an_add_beside_a_similar_entry_stays_an_add(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([add("My sister Ana lives in Glasgow."), "Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.memory.add("user", "My brother Ravi lives in Manchester.")
        agent.run_turn("My sister Ana lives in Glasgow, not far from Manchester.")
    assert user_md(mnemo_home) == ("My brother Ravi lives in Manchester.\n§\n"
                                   "My sister Ana lives in Glasgow.")


def test_an_add_of_saved_entries_run_together_adds_nothing(mnemo_home: Home,
                                                           tmp_path: Path) -> None:
    saved = ["I am Priya. I teach maths at a school in Bristol.",
             "My brother Ravi lives in Glasgow."]
    client = ScriptedChatClient([
        add("My brother Ravi lives in Glasgow. I am Priya. I now teach maths at a school "
            "in Bristol."),
        add("I am Priya. I run 5 km every Saturday.", call_id="call_2"), "Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        for entry in saved:
            agent.memory.add("user", entry)
        result = agent.run_turn("I'm Priya and I teach maths at a school in Bristol. My "
                                "brother Ravi lives in Glasgow. I run 5 km every Saturday.")
    first, second = (json.loads(run.result) for run in result.tool_runs)
    assert first["success"] and "nothing added" in first["note"]
    assert second["success"] and "added only 'I run 5 km every Saturday.'" in second["note"]
    assert user_md(mnemo_home) == "\n§\n".join([*saved, "I run 5 km every Saturday."])


def test_an_entry_that_only_retells_the_users_question_is_refused(mnemo_home: Home,
                                                                  tmp_path: Path) -> None:
    client = ScriptedChatClient([
        add("Cook tonight."),
        # By hand: the grounded part of an add is only the question retold.
        add("Cook tonight. Always make sure not to add peanuts.", call_id="call_2"),
        add("Allergic to peanuts.", call_id="call_3"), "Try a chickpea curry."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Please remember: I'm allergic to peanuts, so never suggest "
                                "recipes with peanuts. What should I cook tonight?")
    first, trimmed, third = (json.loads(run.result) for run in result.tool_runs)
    assert not first["success"]
    assert "only retells the user's question 'What should I cook tonight?'" in first["error"]
    assert not trimmed["success"] and "'make', 'sure', 'add'" in trimmed["error"]
    assert third["success"] and user_md(mnemo_home) == "Allergic to peanuts."


def test_a_sentence_an_entry_says_again_is_saved_once(mnemo_home: Home,
                                                      tmp_path: Path) -> None:
    # Seen by hand: the embedded model saved this sentence three times over as one entry.
    said = "We are planning a party, with Alina turning seven next Saturday at 2 pm."
    client = ScriptedChatClient([add(f"{said} {said} {said}"), "Noted."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn(f"Hi! {said}")
    assert json.loads(result.tool_runs[0].result)["success"]
    assert user_md(mnemo_home) == said


@pytest.mark.parametrize(("said", "kept"), [
    # Seen by hand: the embedded model saved the user's whole first message, question and
    # all, and "¿Qué puedes hacer?" stood in USER.md.
    ("Hola, soy Lucía y prefiero respuestas cortas. ¿Qué puedes hacer?",
     "Hola, soy Lucía y prefiero respuestas cortas."),
    ("Hi! I'm Ana and I like short answers. What can you do?",
     "I'm Ana and I like short answers."),
    # … with a stop after the question mark, as the model wrote it.
    ("Hola, soy Lucía y prefiero respuestas cortas. ¿Qué puedes hacer?.",
     "Hola, soy Lucía y prefiero respuestas cortas.")])
def test_an_entry_keeps_its_facts_and_not_the_question_or_greeting_around_them(
        mnemo_home: Home, tmp_path: Path, said: str, kept: str) -> None:
    client = ScriptedChatClient([add(said), "Ok."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn(said)
    answer = json.loads(result.tool_runs[0].result)
    assert answer["success"] and "asks or tells nothing" in answer["note"]
    assert user_md(mnemo_home) == kept
