"""mnemo in the OpenAI Agents SDK: lossless item conversion, and a 60-turn session."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    Model,
    ModelResponse,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from mnemo.config import MnemoConfig
from mnemo.context.validity import validate_c12
from mnemo.integrations.openai_agents import (
    MnemoSession,
    mnemo_instructions,
    mnemo_tools,
)
from mnemo.integrations.openai_agents_items import from_mnemo, to_mnemo
from mnemo.integrations.runtime import MnemoRuntime
from mnemo.messages import Message
from mnemo.tokens import estimate_messages_tokens_rough
from support import integration_scenario as scenario

set_tracing_disabled(True)  # no trace export (it would want a key)

ITEMS: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "developer", "content": "Prefer tools."},
    {"role": "user", "content": [{"type": "input_text", "text": "Look at this"},
                                 {"type": "input_image", "image_url": "https://x.test/a.png",
                                  "detail": "auto"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "read"}]},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Reading it.", "annotations": []}]},
    {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "read",
     "arguments": '{"path": "a.txt"}', "status": "completed"},
    {"type": "function_call", "call_id": "c2", "name": "grep", "arguments": '{"p": "x"}'},
    {"type": "function_call_output", "call_id": "c1", "output": "line 1\nline 2"},
    {"type": "function_call_output", "call_id": "c2",
     "output": [{"type": "input_text", "text": "An error occurred: bad pattern"}]},
    {"type": "web_search_call", "id": "ws_1", "status": "completed",
     "action": {"type": "search", "query": "x"}},
    {"role": "assistant", "content": "Done."},
    {"role": "user", "content": "thanks"},
]


def test_every_item_kind_round_trips_exactly() -> None:
    converted = to_mnemo(ITEMS)
    assert [m["role"] for m in converted] == [
        "system", "developer", "user", "assistant", "tool", "tool", "assistant", "user"]
    assert converted[3]["content"] == "Reading it."
    assert [c["id"] for c in converted[3]["tool_calls"]] == ["c1", "c2"]
    assert converted[5]["content"] == "An error occurred: bad pattern"
    assert validate_c12(converted) == []
    assert from_mnemo(converted) == ITEMS
    assert to_mnemo(from_mnemo(converted)) == converted
    json.dumps(converted)  # storable as it is


def test_changed_messages_are_rebuilt_as_items_of_their_kind() -> None:
    converted = to_mnemo(ITEMS)
    pruned: dict[str, Any] = dict(converted[4])
    pruned["content"] = "[Old tool output cleared]"
    summary: Message = {"role": "user", "content": "[CONTEXT COMPACTION] earlier turns"}
    back = from_mnemo([summary, *converted[3:4], pruned, *converted[5:]])
    assert back[0] == {"role": "user", "content": summary["content"]}
    assert {"type": "function_call_output", "call_id": "c1",
            "output": "[Old tool output cleared]"} in back
    merged: dict[str, Any] = dict(converted[3])
    merged["content"] = "summary\n\nReading it."
    rebuilt = from_mnemo([merged])
    assert rebuilt[0]["type"] == "reasoning"  # what has no chat form is kept
    assert rebuilt[1] == {"role": "assistant", "content": "summary\n\nReading it."}
    assert rebuilt[2] == ITEMS[5]  # unchanged calls are the original items


class ScriptedModel(Model):
    """The scenario's model as an Agents SDK ``Model`` that checks every request."""

    def __init__(self) -> None:
        self.requests: list[list[Message]] = []
        self.instructions: list[str] = []
        self.search_results: list[str] = []

    async def get_response(self, system_instructions: str | None, input: Any,
                           *args: Any, **kwargs: Any) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else input
        request = [{"role": "system", "content": system_instructions or ""}, *to_mnemo(items)]
        problems = validate_c12(request)
        assert problems == [], problems
        self.requests.append(request)
        self.instructions.append(system_instructions or "")
        turn = scenario.turn_of(next(str(m["content"]) for m in reversed(request)
                                     if m["role"] == "user" and str(m["content"])
                                     .startswith("Turn ")))
        last = items[-1]
        usage = Usage(requests=1, input_tokens=estimate_messages_tokens_rough(request),
                      output_tokens=10)
        if last.get("type") != "function_call_output":
            if turn == scenario.SEARCH_TURN:
                calls = [("session_search", scenario.search_args())]
            else:
                calls = [("lookup", {"item": turn})]
                if turn == scenario.MEMORY_TURN:
                    calls.append(("memory", scenario.memory_args()))
            output: list[Any] = [
                ResponseFunctionToolCall(type="function_call", call_id=f"{name}{turn}",
                                         name=name, arguments=json.dumps(args))
                for name, args in calls]
            return ModelResponse(output=output, usage=usage, response_id=None)
        for item in items[::-1]:
            if item.get("type") != "function_call_output":
                break
            if str(item.get("call_id", "")).startswith("session_search"):
                self.search_results.append(str(item["output"]))
        text = ResponseOutputText(type="output_text", text=scenario.answer_text(turn),
                                  annotations=[])
        message = ResponseOutputMessage(id=f"msg{turn}", type="message", role="assistant",
                                        status="completed", content=[text])
        return ModelResponse(output=[message], usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted model does not stream")


@function_tool
def lookup(item: int) -> str:
    """Look up one item's record."""
    return scenario.lookup(item)


def _runtime(home: Path) -> MnemoRuntime:
    return MnemoRuntime(config=MnemoConfig(), home=home, context_length=scenario.WINDOW,
                        source="openai-agents")


def _agent(runtime: MnemoRuntime, model: ScriptedModel) -> Agent[Any]:
    return Agent(name="assistant", instructions=mnemo_instructions(runtime, "Be brief."),
                 tools=[lookup, *mnemo_tools(runtime)], model=model)


async def _session(home: Path, model: ScriptedModel, turns: range) -> MnemoRuntime:
    runtime = _runtime(home)
    agent = _agent(runtime, model)
    session = MnemoSession(runtime)
    for turn in turns:
        await Runner.run(agent, scenario.user_text(turn), session=session)
    return runtime


def test_a_60_turn_session_stays_in_the_window_and_remembers(mnemo_home: Any) -> None:
    model = ScriptedModel()
    runtime = asyncio.run(_session(mnemo_home.root, model, range(scenario.TURNS)))

    assert len(model.requests) == 2 * scenario.TURNS
    assert max(estimate_messages_tokens_rough(r) for r in model.requests) < scenario.WINDOW
    assert runtime.engine.compression_count >= 3
    assert model.search_results and scenario.found_planted(model.search_results[-1])
    assert runtime.sessions.count_messages(runtime.session_id) > 4 * scenario.TURNS
    # Frozen: the instructions change only where a compaction rebuilt them (C14).
    assert len(set(model.instructions)) <= runtime.engine.compression_count + 1
    runtime.close()

    model2 = ScriptedModel()
    asyncio.run(_session(mnemo_home.root, model2, range(1))).close()
    assert scenario.PREFERENCE in model2.instructions[0]


def test_the_session_protocol(mnemo_home: Any) -> None:
    async def run() -> None:
        runtime = _runtime(mnemo_home.root)
        session = MnemoSession(runtime)
        await session.add_items(ITEMS[:5])
        await session.add_items(ITEMS[5:])  # the calls join the assistant message stored before
        assert await session.get_items() == ITEMS
        assert await session.get_items(limit=2) == ITEMS[-2:]
        assert await session.pop_item() == ITEMS[-1]
        assert await session.get_items() == ITEMS[:-1]
        resumed = MnemoSession(MnemoRuntime(config=MnemoConfig(), home=mnemo_home.root,
                                            session_id=session.session_id))
        assert await resumed.get_items() == ITEMS[:-1]
        await session.clear_session()
        assert await session.get_items() == []
        # Cleared from the live context, not from the archive.
        assert runtime.sessions.count_messages(session.session_id) >= len(to_mnemo(ITEMS))
        runtime.close()
        resumed.runtime.close()

    asyncio.run(run())
