"""mnemo in a pydantic-ai agent: lossless conversion, and a 60-turn session on FunctionModel."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from mnemo.config import MnemoConfig
from mnemo.context.validity import validate_c12
from mnemo.integrations.pydantic_ai import MnemoCapability, MnemoHistory
from mnemo.integrations.pydantic_ai_messages import from_mnemo, to_mnemo
from mnemo.integrations.runtime import MnemoRuntime
from mnemo.messages import Message
from mnemo.tokens import estimate_messages_tokens_rough
from support import integration_scenario as scenario


def _history() -> list[ModelMessage]:
    return [
        ModelRequest(parts=[SystemPromptPart("You are terse."),
                            UserPromptPart(["Look at this", ImageUrl("https://x.test/a.png")])],
                     instructions="Answer in English."),
        ModelResponse(parts=[ThinkingPart("need the file"), TextPart("Reading it."),
                             ToolCallPart("read", {"path": "a.txt"}, "c1"),
                             ToolCallPart("grep", '{"pattern": "x"}', "c2")],
                      model_name="m1"),
        ModelRequest(parts=[ToolReturnPart("read", {"lines": [1, 2]}, "c1"),
                            ToolReturnPart("grep", "bad pattern", "c2", outcome="retried")]),
        ModelResponse(parts=[TextPart("Not valid")]),
        ModelRequest(parts=[RetryFeedbackPart("output invalid",
                                              retry=RetryInfo(cause="model_retry"))]),
        ModelResponse(parts=[TextPart("Fixed.")]),
        ModelRequest(parts=[UserPromptPart("thanks")], instructions="Answer in English."),
    ]


def test_every_message_kind_round_trips_exactly() -> None:
    history = _history()
    converted = to_mnemo(history)
    assert [m["role"] for m in converted] == [
        "system", "user", "assistant", "tool", "tool", "assistant", "user", "assistant", "user"]
    assert converted[2]["tool_calls"][1]["function"] == {"name": "grep",
                                                          "arguments": '{"pattern":"x"}'}
    assert "bad pattern" in str(converted[4]["content"])
    assert validate_c12(converted) == []
    assert from_mnemo(converted) == history
    assert to_mnemo(from_mnemo(converted)) == converted  # and back again: the same dicts


def test_the_legacy_retry_prompt_maps_like_its_replacements() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        legacy = [ModelRequest(parts=[RetryPromptPart("wrong", tool_name="f", tool_call_id="c9")])]
    converted = to_mnemo(legacy)
    assert converted[0]["role"] == "tool" and converted[0]["tool_call_id"] == "c9"
    assert to_mnemo(from_mnemo(converted))[0]["content"] == converted[0]["content"]


def test_changed_messages_are_rebuilt_on_their_originals() -> None:
    history = _history()
    converted = to_mnemo(history)
    pruned: dict[str, Any] = dict(converted[3])
    pruned["content"] = "[Old tool output cleared]"
    summary: Message = {"role": "user", "content": "[CONTEXT COMPACTION] earlier turns"}
    back = from_mnemo([*converted[:3], pruned, converted[4], summary, *converted[5:]])
    part = back[2].parts[0]
    assert isinstance(part, ToolReturnPart)
    assert (part.tool_name, part.content, part.tool_call_id) == ("read",
                                                                "[Old tool output cleared]", "c1")
    assert part.timestamp == history[2].parts[0].timestamp
    assert isinstance(back[3], ModelRequest) and back[3].parts[0].content == summary["content"]
    stub: Message = {"role": "tool", "tool_call_id": "c2", "content": "[Result from earlier]"}
    made = from_mnemo([*converted[:3], stub])[-1].parts[0]
    assert isinstance(made, ToolReturnPart) and made.tool_name == "grep"


class ScriptedModel:
    """The scenario's model, as a FunctionModel function that checks every request."""

    def __init__(self) -> None:
        self.requests: list[list[Message]] = []
        self.instructions: list[str] = []
        self.search_results: list[str] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        instructions = last.instructions or ""
        request = [{"role": "system", "content": instructions}, *to_mnemo(messages)]
        problems = validate_c12(request)
        assert problems == [], problems
        self.requests.append(request)
        self.instructions.append(instructions)
        turn = _turn_of(messages)
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            if turn == scenario.SEARCH_TURN:
                return ModelResponse(parts=[ToolCallPart("session_search",
                                                         scenario.search_args(), f"s{turn}")])
            calls = [ToolCallPart("lookup", {"item": turn}, f"l{turn}")]
            if turn == scenario.MEMORY_TURN:
                calls.append(ToolCallPart("memory", scenario.memory_args(), f"m{turn}"))
            return ModelResponse(parts=calls)
        for part in returns:
            if part.tool_name == "session_search":
                self.search_results.append(str(part.content))
        return ModelResponse(parts=[TextPart(scenario.answer_text(turn))])


def _turn_of(messages: list[ModelMessage]) -> int:
    for message in reversed(messages):
        for part in message.parts:
            if isinstance(part, UserPromptPart) and isinstance(part.content, str) \
                    and part.content.startswith("Turn "):
                return scenario.turn_of(part.content)
    raise AssertionError("no user turn in the history")


def _agent(runtime: MnemoRuntime, model: ScriptedModel) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(model), capabilities=[MnemoCapability(runtime)])

    @agent.tool_plain
    def lookup(item: int) -> str:
        return scenario.lookup(item)

    return agent


def _runtime(home: Path) -> MnemoRuntime:
    return MnemoRuntime(config=MnemoConfig(), home=home, context_length=scenario.WINDOW,
                        source="pydantic-ai")


def test_a_60_turn_session_stays_in_the_window_and_remembers(mnemo_home: Any) -> None:
    model = ScriptedModel()
    runtime = _runtime(mnemo_home.root)
    agent = _agent(runtime, model)
    history: list[ModelMessage] = []
    for turn in range(scenario.TURNS):
        result = agent.run_sync(scenario.user_text(turn), message_history=history)
        history = result.all_messages()
    runtime.close()

    sizes = [estimate_messages_tokens_rough(r) for r in model.requests]
    assert max(sizes) < scenario.WINDOW
    assert runtime.engine.compression_count >= 3
    assert len(model.requests) == 2 * scenario.TURNS
    # The framework's history was compacted too, not only the requests.
    assert len(history) < 4 * scenario.TURNS
    # What compaction removed is still found by the tool, from the archive.
    assert model.search_results and scenario.found_planted(model.search_results[-1])
    # Frozen: the instructions change only where a compaction rebuilt them (C14) ...
    assert len(set(model.instructions)) <= runtime.engine.compression_count + 1

    model2 = ScriptedModel()
    runtime2 = _runtime(mnemo_home.root)
    _agent(runtime2, model2).run_sync(scenario.user_text(0))
    runtime2.close()
    # ... and the memory written in session 1 is in session 2's from the start.
    assert scenario.PREFERENCE in model2.instructions[0]


def test_every_message_of_a_run_is_archived_by_its_end(mnemo_home: Any) -> None:
    model = ScriptedModel()
    runtime = _runtime(mnemo_home.root)
    result = _agent(runtime, model).run_sync(scenario.user_text(0))
    assert [m.role for m in runtime.sessions.load_messages(runtime.session_id)] == [
        "user", "assistant", "tool", "assistant"]
    assert runtime.live == to_mnemo(result.all_messages())
    runtime.close()


def test_the_processor_leaves_a_short_history_alone(mnemo_home: Any) -> None:
    runtime = _runtime(mnemo_home.root)
    processor = MnemoHistory(runtime)
    history = _history()
    assert processor(history) is history
    assert len(runtime.live) == len(to_mnemo(history))
    assert processor(history) is history  # nothing new: nothing stored twice
    assert runtime.sessions.count_messages(runtime.session_id) == len(to_mnemo(history))
    runtime.close()
