"""mnemo in LangChain 1.x / LangGraph agents: lossless conversion, and a 60-turn session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from mnemo.config import MnemoConfig
from mnemo.context.validity import validate_c12
from mnemo.integrations.langchain_messages import from_mnemo, to_mnemo
from mnemo.integrations.langgraph import MnemoMiddleware, mnemo_pre_model_hook
from mnemo.integrations.runtime import MnemoRuntime
from mnemo.messages import Message
from mnemo.tokens import estimate_messages_tokens_rough
from support import integration_scenario as scenario

HISTORY: list[BaseMessage] = [
    SystemMessage("You are terse.", id="s1"),
    HumanMessage(content=[{"type": "text", "text": "Look at this"},
                          {"type": "image", "url": "https://x.test/a.png"}], id="h1"),
    AIMessage(content="Reading it.", id="a1",
              tool_calls=[{"name": "read", "args": {"path": "a.txt"}, "id": "c1"},
                          {"name": "grep", "args": {"p": "x"}, "id": "c2"}],
              usage_metadata={"input_tokens": 20, "output_tokens": 5, "total_tokens": 25},
              response_metadata={"model_name": "m1"}),
    ToolMessage("line 1\nline 2", tool_call_id="c1", name="read", id="t1",
                artifact={"raw": [1, 2]}),
    ToolMessage("Error: bad pattern. Fix it and retry.", tool_call_id="c2", name="grep",
                status="error", id="t2"),
    AIMessage(content="Done.", id="a2"),
    ChatMessage(role="developer", content="Prefer tools.", id="d1"),
    HumanMessage("thanks", id="h2"),
]


def test_every_message_kind_round_trips_exactly() -> None:
    converted = to_mnemo(HISTORY)
    assert [m["role"] for m in converted] == [
        "system", "user", "assistant", "tool", "tool", "assistant", "developer", "user"]
    assert converted[2]["tool_calls"][0]["function"] == {"name": "read",
                                                          "arguments": '{"path": "a.txt"}'}
    assert validate_c12(converted) == []
    assert from_mnemo(converted) == HISTORY
    assert to_mnemo(from_mnemo(converted)) == converted
    json.dumps(converted)


def test_changed_messages_keep_their_ids() -> None:
    converted = to_mnemo(HISTORY)
    pruned: dict[str, Any] = dict(converted[3])
    pruned["content"] = "[Old tool output cleared]"
    stub: Message = {"role": "tool", "tool_call_id": "c2", "content": "[Result from earlier]"}
    summary: Message = {"role": "user", "content": "[CONTEXT COMPACTION] earlier turns"}
    back = from_mnemo([summary, converted[2], pruned, stub])
    assert isinstance(back[0], HumanMessage) and back[0].id is None
    assert back[1] == HISTORY[2]
    assert isinstance(back[2], ToolMessage)
    assert (back[2].id, back[2].content, back[2].name) == ("t1", "[Old tool output cleared]",
                                                           "read")
    assert isinstance(back[3], ToolMessage) and back[3].name == "grep"


class ScriptedChat(GenericFakeChatModel):
    """The scenario's model as a LangChain fake chat model that checks every request."""

    log: dict[str, list[Any]]

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        request = to_mnemo(messages)
        problems = validate_c12(request)
        assert problems == [], problems
        self.log["requests"].append(request)
        self.log["instructions"].append(str(messages[0].content))
        turn = scenario.turn_of(next(str(m.content) for m in reversed(messages)
                                     if isinstance(m, HumanMessage)
                                     and str(m.content).startswith("Turn ")))
        last = messages[-1]
        usage = {"input_tokens": estimate_messages_tokens_rough(request), "output_tokens": 10,
                 "total_tokens": estimate_messages_tokens_rough(request) + 10}
        if not isinstance(last, ToolMessage):
            if turn == scenario.SEARCH_TURN:
                calls = [("session_search", scenario.search_args())]
            else:
                calls = [("lookup", {"item": turn})]
                if turn == scenario.MEMORY_TURN:
                    calls.append(("memory", scenario.memory_args()))
            reply = AIMessage(content="", usage_metadata=usage, tool_calls=[
                {"name": name, "args": args, "id": f"{name}{turn}"} for name, args in calls])
        else:
            for message in messages[::-1]:
                if not isinstance(message, ToolMessage):
                    break
                if message.name == "session_search":
                    self.log["search"].append(str(message.content))
            reply = AIMessage(content=scenario.answer_text(turn), usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def lookup(item: int) -> str:
    """Look up one item's record."""
    return scenario.lookup(item)


def scripted_chat() -> ScriptedChat:
    return ScriptedChat(messages=iter(()),
                         log={"requests": [], "instructions": [], "search": []})


def _runtime(home: Path) -> MnemoRuntime:
    return MnemoRuntime(config=MnemoConfig(), home=home, context_length=scenario.WINDOW,
                        source="langgraph")


def _run(home: Path, model: ScriptedChat, turns: range) -> tuple[MnemoRuntime, list[Any]]:
    runtime = _runtime(home)
    agent = create_agent(model, tools=[lookup], system_prompt="Be brief.",
                         middleware=[MnemoMiddleware(runtime, system_prompt="Be brief.")])
    messages: list[Any] = []
    for turn in turns:
        state = agent.invoke({"messages": [*messages, HumanMessage(scenario.user_text(turn))]})
        messages = state["messages"]
    return runtime, messages


def test_a_60_turn_session_stays_in_the_window_and_remembers(mnemo_home: Any) -> None:
    model = scripted_chat()
    runtime, messages = _run(mnemo_home.root, model, range(scenario.TURNS))
    requests = model.log["requests"]
    assert len(requests) == 2 * scenario.TURNS
    assert max(estimate_messages_tokens_rough(r) for r in requests) < scenario.WINDOW
    assert runtime.engine.compression_count >= 3
    assert len(messages) < 4 * scenario.TURNS  # the state itself was compacted
    assert model.log["search"] and scenario.found_planted(model.log["search"][-1])
    assert len(set(model.log["instructions"])) <= runtime.engine.compression_count + 1
    runtime.close()

    model2 = scripted_chat()
    runtime2, _ = _run(mnemo_home.root, model2, range(1))
    runtime2.close()
    assert scenario.PREFERENCE in model2.log["instructions"][0]


def test_the_pre_model_hook_compacts_the_state(mnemo_home: Any) -> None:
    runtime = MnemoRuntime(config=MnemoConfig(), home=mnemo_home.root, context_length=2_000)
    hook = mnemo_pre_model_hook(runtime)
    messages: list[BaseMessage] = []
    for turn in range(12):
        messages += [HumanMessage(scenario.user_text(turn), id=f"h{turn}"),
                     AIMessage("", id=f"a{turn}", tool_calls=[
                         {"name": "lookup", "args": {"item": turn}, "id": f"c{turn}"}]),
                     ToolMessage(scenario.lookup(turn), tool_call_id=f"c{turn}", id=f"t{turn}"),
                     AIMessage(scenario.answer_text(turn), id=f"r{turn}")]
    update = hook({"messages": messages})
    assert "messages" in update and len(update["messages"]) < len(messages)
    assert validate_c12(to_mnemo(update["messages"][1:])) == []
    assert hook({"messages": messages[:2]}) == {"llm_input_messages": messages[:2]}
    runtime.close()


def test_the_middleware_works_asynchronously_too(mnemo_home: Any) -> None:
    import asyncio

    model = scripted_chat()
    runtime = _runtime(mnemo_home.root)
    agent = create_agent(model, tools=[lookup], system_prompt="Be brief.",
                         middleware=[MnemoMiddleware(runtime)])
    state = asyncio.run(agent.ainvoke({"messages": [HumanMessage(scenario.user_text(0))]}))
    assert state["messages"][-1].content == scenario.answer_text(0)
    assert model.log["instructions"][0].startswith("Be brief.\n\n")
    assert "# Memory" in model.log["instructions"][0]
    assert runtime.sessions.count_messages(runtime.session_id) == 4  # the answer too
    runtime.close()
