"""Every request the agent sends is API-valid (SPEC C12, M8), not only compressed lists.

All tests here use ``ScriptedChatClient``: scripted replies, strict by default, so each
request is checked with ``validate_c12`` as it is made.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from mnemo.agent import Agent, build_agent
from mnemo.agent.answer_only import ANSWER_PLAIN
from mnemo.agent.nudges import FLUSH_PROMPT
from mnemo.config import MnemoConfig
from mnemo.context import validate_c12
from mnemo.errors import ProviderConnectionError
from mnemo.home import Home
from mnemo.llm.testing import (
    ChatRequest,
    InvalidRequestError,
    ScriptedChatClient,
    assistant_tool_call,
    take_violations,
)
from mnemo.messages import content_text
from mnemo.sessions import SessionStore


def make_agent(home: Home, client: ScriptedChatClient, tmp_path: Path, **config: Any) -> Agent:
    return build_agent(MnemoConfig.model_validate(config), home=home, cwd=tmp_path,
                       client=client)


def test_flush_before_a_compaction_joins_the_users_message(mnemo_home: Home,
                                                           tmp_path: Path) -> None:
    """Regression: the flush turn runs right before a compaction, when the conversation
    ends with the user's message; its prompt used to follow as a second user message."""
    paste = "a line of a pasted log with some detail in it\n" * 60
    client = ScriptedChatClient(default="noted", context_length=6000)
    agent = make_agent(mnemo_home, client, tmp_path,
                       memory={"flush_min_turns": 1, "nudge_interval": 0})
    with agent:
        for i in range(12):
            agent.run_turn(f"step {i}: here is the log\n{paste}")
            if agent.engine.compression_count:
                break
    assert agent.engine.compression_count, "the threshold was never reached"
    flushes = [r for r in client.requests if r.tool_names == ["memory"]]
    assert flushes, "no flush turn ran before the compaction"
    flush = flushes[0]
    assert validate_c12(flush.messages) == []
    last = flush.messages[-1]
    assert last["role"] == "user"
    # The user's own message and the flush prompt travel together, in that order.
    assert content_text(last).startswith("step ")
    assert content_text(last).endswith(FLUSH_PROMPT.format(reason="it is being compacted"))
    assert client.violations == []


def test_flush_at_session_end_follows_the_answer(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient(default="ok")
    agent = make_agent(mnemo_home, client, tmp_path, memory={"flush_min_turns": 1})
    agent.run_turn("I always use tabs")
    agent.close()
    flush = client.requests[-1]
    assert flush.tool_names == ["memory"]
    assert [m["role"] for m in flush.messages] == ["system", "user", "assistant", "user"]


def test_a_failed_turn_does_not_leave_two_user_messages_in_the_next_request(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient(["first", ProviderConnectionError("refused"), "third"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("one")
        with pytest.raises(ProviderConnectionError):
            agent.run_turn("two")
        agent.run_turn("three")
        # The failed turn is closed with a note, so the next request alternates.
        texts = [content_text(m) for m in agent.messages]
    assert texts[:3] == ["one", "first", "two"] and texts[-2:] == ["three", "third"]
    assert texts[3].startswith("[no answer")
    last_request = client.requests[-1].messages
    # The note is the agent's, not the model's: the request leaves it out, and the
    # message it did not answer is joined to the next one.
    assert [m["role"] for m in last_request] == ["system", "user", "assistant", "user"]
    assert content_text(last_request[-1]) == "two\n\nthree"


def test_a_conversation_with_two_user_messages_in_a_row_is_joined_in_the_request(
        mnemo_home: Home, tmp_path: Path) -> None:
    """A session stored by an older version (or edited by hand) may hold an unanswered
    user message followed by the next one; the request joins them (C12 c)."""
    store = SessionStore(mnemo_home.state_db)
    sid = store.create_session(title="old")
    for role, text in (("user", "one"), ("assistant", "first"), ("user", "two")):
        store.append_message(sid, {"role": role, "content": text})
    store.close()
    client = ScriptedChatClient(["third"])
    with build_agent(MnemoConfig(), home=mnemo_home, cwd=tmp_path, client=client,
                     resume_session_id=sid) as agent:
        agent.run_turn("three")
    last_request = client.requests[-1].messages
    assert [m["role"] for m in last_request] == ["system", "user", "assistant", "user"]
    assert content_text(last_request[-1]) == "two\n\nthree"


def test_an_interrupted_tool_call_gets_a_result_in_the_request(mnemo_home: Home,
                                                               tmp_path: Path) -> None:
    store = SessionStore(mnemo_home.state_db)
    sid = store.create_session(title="crashed")
    store.append_message(sid, {"role": "user", "content": "look it up"})
    store.append_message(sid, assistant_tool_call("session_search", {"query": "x"},
                                                  call_id="lost"))
    store.close()  # the process died before the tool's result was stored
    client = ScriptedChatClient(["back"])
    agent = build_agent(MnemoConfig(), home=mnemo_home, cwd=tmp_path, client=client,
                        resume_session_id=sid)
    with agent:
        agent.run_turn("are you there?")
    roles = [m["role"] for m in client.requests[0].messages]
    assert roles == ["system", "user", "assistant", "tool", "user"]


def test_validate_requests_logs_the_shape_never_the_content(
        mnemo_home: Home, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = SessionStore(mnemo_home.state_db)
    sid = store.create_session(title="old")
    for role, text in (("user", "secret-one"), ("assistant", "first"), ("user", "secret-two")):
        store.append_message(sid, {"role": role, "content": text})
    store.close()
    client = ScriptedChatClient(["third"])
    config = MnemoConfig.model_validate({"agent": {"validate_requests": True}})
    with caplog.at_level(logging.WARNING, logger="mnemo.agent"), build_agent(
            config, home=mnemo_home, cwd=tmp_path, client=client,
            resume_session_id=sid) as agent:
        agent.run_turn("secret-three")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("system user assistant user user" in w and "(c)" in w for w in warnings)
    assert not any("secret" in w for w in warnings)


def test_the_strict_client_refuses_an_invalid_request() -> None:
    client = ScriptedChatClient(default="ok")
    with pytest.raises(InvalidRequestError, match=r"\(c\) messages 0 and 1 are both user"):
        client.complete([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    assert len(client.violations) == 1
    # The runner's check sees it even where the code under test swallowed the error.
    assert take_violations() == client.violations


def test_the_strict_client_names_roles_and_ids_only() -> None:
    client = ScriptedChatClient(default="ok")
    request: list[Any] = [{"role": "user", "content": "private words"},
                          assistant_tool_call("memory", {}, call_id="c1")]
    with pytest.raises(InvalidRequestError) as caught:
        client.complete(request)
    take_violations()
    assert "user assistant[c1]" in str(caught.value)
    assert "private" not in str(caught.value)


def test_a_lenient_client_accepts_an_invalid_request_when_a_test_needs_one() -> None:
    client = ScriptedChatClient(default="ok", strict=False)
    client.complete([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    assert client.violations == [] and take_violations() == []


def test_valid_requests_pass(mnemo_home: Home, tmp_path: Path) -> None:
    def reply(request: ChatRequest) -> Any:
        if request.messages[-1]["role"] == "user":
            return assistant_tool_call("memory", {"action": "read", "target": "user"})
        return "done"

    client = ScriptedChatClient(default=reply)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        for i in range(3):
            agent.run_turn(f"turn {i}")
    assert client.violations == [] and len(client.requests) == 6


def test_a_tool_call_written_as_text_when_tools_are_withheld_gets_a_plain_retry(
        mnemo_home: Home, tmp_path: Path) -> None:
    loop = assistant_tool_call("memory", {"action": "read", "target": "user"})
    as_text = '{"name": "session_search", "arguments": {"query": "like"}}'
    client = ScriptedChatClient([loop, as_text, "Here is my answer."])
    with make_agent(mnemo_home, client, tmp_path, agent={"max_tool_iterations": 1}) as agent:
        result = agent.run_turn("what do you know about me?")
        stored = [content_text(m) for m in agent.messages]
    assert result.text == "Here is my answer."
    assert as_text not in stored  # the non-answer never reached the conversation
    asked = [m for m in client.requests[-1].messages if m["role"] == "user"][-1]
    assert ANSWER_PLAIN in content_text(asked)  # in the request only
