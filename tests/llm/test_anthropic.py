"""Anthropic: message conversion both ways (no SDK needed) and the client (SDK needed)."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from mnemo.errors import ContextLengthExceededError, ProviderAuthError
from mnemo.llm.anthropic_format import (
    from_anthropic_response,
    to_anthropic_messages,
    to_anthropic_tools,
)
from mnemo.llm.retry import RetryPolicy
from mnemo.memory import MEMORY_SCHEMA
from mnemo.messages import Message
from support.fake_openai import FakeOpenAIServer, Reply

CONVERSATION: list[Message] = [
    {"role": "system", "content": "You are mnemo. Frozen prompt."},
    {"role": "user", "content": "read my profile"},
    {"role": "assistant", "content": "Looking.", "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "memory", "arguments": '{"action": "read", "target": "user"}'}},
        {"id": "call_2", "type": "function",
         "function": {"name": "memory", "arguments": '{"action": "read"}'}},
    ]},
    {"role": "tool", "tool_call_id": "call_1", "content": "name: Ada"},
    {"role": "tool", "tool_call_id": "call_2", "content": ""},
    {"role": "user", "content": "thanks"},
]


def test_system_prompt_becomes_a_cached_system_block() -> None:
    system, _ = to_anthropic_messages(CONVERSATION)
    assert system == [{"type": "text", "text": "You are mnemo. Frozen prompt.",
                       "cache_control": {"type": "ephemeral"}}]


def test_tool_calls_and_results_become_blocks_in_alternating_turns() -> None:
    _, turns = to_anthropic_messages(CONVERSATION)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assistant = turns[1]["content"]
    assert assistant[0] == {"type": "text", "text": "Looking."}
    assert assistant[1] == {"type": "tool_use", "id": "call_1", "name": "memory",
                            "input": {"action": "read", "target": "user"}}
    results = turns[2]["content"]
    # Both results and the next user text travel in one user turn, in order.
    assert results[0] == {"type": "tool_result", "tool_use_id": "call_1", "content": "name: Ada"}
    assert results[1]["tool_use_id"] == "call_2" and results[1]["content"]
    assert results[2] == {"type": "text", "text": "thanks"}


def test_conversion_does_not_mutate_the_input() -> None:
    before = copy.deepcopy(CONVERSATION)
    system, turns = to_anthropic_messages(CONVERSATION)
    turns[0]["content"].append({"type": "text", "text": "x"})
    system[0]["text"] = "changed"
    assert before == CONVERSATION


def test_conversation_must_open_with_a_user_turn_and_late_system_is_a_note() -> None:
    _, turns = to_anthropic_messages([
        {"role": "assistant", "content": "summary of earlier turns"},
        {"role": "system", "content": "be terse"},
        {"role": "user", "content": "go on"},
    ])
    assert turns[0]["role"] == "user"
    assert turns[-1]["content"][0]["text"] == "[System note] be terse"


def test_bad_tool_arguments_are_kept_not_fatal() -> None:
    _, turns = to_anthropic_messages([
        {"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
                                              "function": {"name": "f", "arguments": "{oops"}}]},
    ])
    assert turns[1]["content"][0]["input"] == {"_raw_arguments": "{oops"}


def test_images_convert() -> None:
    _, turns = to_anthropic_messages([{"role": "user", "content": [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
    ]}])
    blocks = turns[0]["content"]
    assert blocks[1]["source"] == {"type": "base64", "media_type": "image/png", "data": "AAAA"}
    assert blocks[2]["source"] == {"type": "url", "url": "https://example.com/a.png"}


def test_tools_convert_from_inner_and_wrapped_forms() -> None:
    inner = to_anthropic_tools([MEMORY_SCHEMA])
    wrapped = to_anthropic_tools([{"type": "function", "function": MEMORY_SCHEMA}])
    assert inner == wrapped
    assert inner[0]["name"] == "memory"
    assert inner[0]["input_schema"] == MEMORY_SCHEMA["parameters"]


def _anthropic_reply(**overrides: Any) -> dict[str, Any]:
    reply: dict[str, Any] = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": "Let me check. "},
                    {"type": "tool_use", "id": "toolu_1", "name": "memory",
                     "input": {"action": "read"}}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20,
                  "cache_read_input_tokens": 900, "cache_creation_input_tokens": 0},
    }
    reply.update(overrides)
    return reply


def test_response_converts_back_to_openai_shape() -> None:
    response = from_anthropic_response(_anthropic_reply())
    assert response.message["content"] == "Let me check. "
    call = response.message["tool_calls"][0]
    assert call["id"] == "toolu_1" and json.loads(call["function"]["arguments"]) == {
        "action": "read"}
    assert response.finish_reason == "tool_calls"
    # Cached input still fills the window, so it counts as prompt tokens.
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (1000, 20)
    assert response.model == "claude-test"


@pytest.mark.parametrize(("stop", "finish"), [("end_turn", "stop"), ("max_tokens", "length"),
                                              ("refusal", "content_filter")])
def test_stop_reasons_map(stop: str, finish: str) -> None:
    reply = _anthropic_reply(stop_reason=stop, content=[{"type": "text", "text": "ok"}])
    assert from_anthropic_response(reply).finish_reason == finish


# -- the client (needs the anthropic SDK) ------------------------------------------------
def _client(server: FakeOpenAIServer, **kwargs: Any) -> Any:
    pytest.importorskip("anthropic",
                        reason='needs the anthropic extra: pip install "mnemo[anthropic]"')
    from mnemo.llm.anthropic_client import AnthropicChatClient

    policy = RetryPolicy(max_retries=2, sleep=lambda s: None, rng=random.Random(1))
    return AnthropicChatClient("claude-test", base_url=server.base_url.removesuffix("/v1"),
                               api_key="sk-ant-test", key_source="ANTHROPIC_API_KEY",
                               timeout=5, retry=policy, **kwargs)


def test_client_sends_converted_request_and_parses_reply(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(Reply(body=_anthropic_reply()))
    client = _client(fake_openai)
    response = client.complete(CONVERSATION, tools=[MEMORY_SCHEMA], temperature=0.0)
    request = fake_openai.requests[-1]
    assert request.path == "/v1/messages"
    # Older SDKs send x-api-key, newer ones a bearer token: either carries our key.
    assert "sk-ant-test" in (request.headers.get("x-api-key", "")
                             + request.headers.get("authorization", ""))
    assert request.body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert request.body["max_tokens"] == 4096  # required by the API; our default
    assert request.body["tools"][0]["name"] == "memory"
    assert response.message["tool_calls"][0]["function"]["name"] == "memory"
    # temperature is sent only where the installed SDK still accepts it.
    assert ("temperature" in request.body) == ("temperature" in client._accepted)
    assert client.build_request(CONVERSATION, temperature=1.5)["temperature"] == 1.0


def test_client_maps_errors(fake_openai: FakeOpenAIServer) -> None:
    client = _client(fake_openai)
    fake_openai.queue(Reply(status=401, body={"type": "error", "error": {
        "type": "authentication_error", "message": "invalid x-api-key"}}))
    with pytest.raises(ProviderAuthError, match=r"\$ANTHROPIC_API_KEY"):
        client.complete(CONVERSATION)
    fake_openai.queue(Reply(status=400, body={"type": "error", "error": {
        "type": "invalid_request_error", "message": "prompt is too long: 250000 tokens"}}))
    with pytest.raises(ContextLengthExceededError):
        client.complete(CONVERSATION)
    fake_openai.queue(Reply(status=529, body={"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}}), Reply(body=_anthropic_reply()))
    assert client.complete(CONVERSATION).finish_reason == "tool_calls"


def test_missing_sdk_is_an_import_error_with_the_install_hint(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def refuse(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "anthropic":
            raise ImportError("No module named 'anthropic'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    from mnemo.llm.anthropic_client import AnthropicChatClient

    with pytest.raises(ImportError, match=r'pip install "mnemo\[anthropic\]"'):
        AnthropicChatClient("claude-test", api_key="k")
