"""``OpenAIChatClient`` against a real HTTP server on 127.0.0.1 speaking the wire format."""

from __future__ import annotations

import copy
import json
import random
import socket

import pytest

from mnemo.errors import (
    ContextLengthExceededError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)
from mnemo.llm import OpenAIChatClient, RetryPolicy
from mnemo.memory import MEMORY_SCHEMA
from mnemo.messages import Message
from support.fake_openai import (
    FakeOpenAIServer,
    Reply,
    chat_reply,
    context_length_reply,
    error_reply,
    tool_call,
)

HELLO: list[Message] = [{"role": "user", "content": "hello"}]


class RecordingSleep:
    """A ``sleep`` that records the waits instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def make_client(server: FakeOpenAIServer, *, retries: int = 3, timeout: float = 5.0,
                sleep: RecordingSleep | None = None, **kwargs: object) -> OpenAIChatClient:
    policy = RetryPolicy(max_retries=retries, sleep=sleep or RecordingSleep(),
                         rng=random.Random(7))
    return OpenAIChatClient("fake-model", base_url=server.base_url, api_key="sk-test",
                            key_source="TEST_KEY", timeout=timeout, retry=policy,
                            **kwargs)  # type: ignore[arg-type]


def test_success_returns_text_usage_and_finish_reason(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(chat_reply("hi there", usage=(21, 4), model="served-model"))
    response = make_client(fake_openai).complete(HELLO)
    assert response.text == "hi there"
    assert response.message == {"role": "assistant", "content": "hi there"}
    assert (response.usage.prompt_tokens, response.usage.completion_tokens,
            response.usage.total_tokens) == (21, 4, 25)
    assert response.finish_reason == "stop"
    assert response.model == "served-model"


def test_request_carries_model_messages_options_and_key(fake_openai: FakeOpenAIServer) -> None:
    client = make_client(fake_openai)
    client.complete(HELLO, max_tokens=33, temperature=0.2)
    request = fake_openai.requests[-1]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["model"] == "fake-model"
    assert request.body["messages"] == HELLO
    assert request.body["max_tokens"] == 33
    assert request.body["temperature"] == 0.2
    assert "tools" not in request.body


def test_defaults_from_config_apply_when_the_call_gives_none(
        fake_openai: FakeOpenAIServer) -> None:
    make_client(fake_openai, max_tokens=99, temperature=0.7).complete(HELLO)
    body = fake_openai.requests[-1].body
    assert (body["max_tokens"], body["temperature"]) == (99, 0.7)


def test_inner_tool_schemas_are_wrapped_and_tool_calls_parsed(
        fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(chat_reply(None, tool_calls=[
        tool_call("memory", {"action": "read", "target": "user"}, "call_a"),
        tool_call("memory", {"action": "read", "target": "memory"}, "call_b"),
    ]))
    response = make_client(fake_openai).complete(HELLO, tools=[MEMORY_SCHEMA])
    sent = fake_openai.requests[-1].body["tools"]
    assert sent == [{"type": "function", "function": MEMORY_SCHEMA}]
    assert response.finish_reason == "tool_calls"
    assert response.message["content"] is None
    calls = response.message["tool_calls"]
    assert [c["id"] for c in calls] == ["call_a", "call_b"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"action": "read", "target": "user"}
    assert calls[0]["type"] == "function" and calls[0]["function"]["name"] == "memory"


def test_caller_messages_are_not_mutated(fake_openai: FakeOpenAIServer) -> None:
    messages: list[Message] = [{"role": "system", "content": "be brief"}, *HELLO]
    before = copy.deepcopy(messages)
    make_client(fake_openai).complete(messages, tools=[MEMORY_SCHEMA])
    assert messages == before


def test_missing_usage_falls_back_to_the_rough_estimate(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(chat_reply("x" * 40, usage=None))
    response = make_client(fake_openai).complete([{"role": "user", "content": "y" * 400}])
    assert response.usage.prompt_tokens == 400 // 4 + 10
    assert response.usage.completion_tokens == 10


def test_401_is_an_auth_error_naming_the_key_variable_and_not_retried(
        fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(error_reply(401, "Incorrect API key provided", code="invalid_api_key"))
    sleep = RecordingSleep()
    with pytest.raises(ProviderAuthError) as caught:
        make_client(fake_openai, sleep=sleep).complete(HELLO)
    message = str(caught.value)
    assert "$TEST_KEY" in message and "401" in message and "\n" not in message
    assert len(fake_openai.requests) == 1 and sleep.waits == []


def test_a_key_echoed_by_the_server_is_blanked_out(fake_openai: FakeOpenAIServer) -> None:
    client = make_client(fake_openai)
    key = client._endpoint.secret
    assert len(key) >= 6
    fake_openai.queue(error_reply(401, f"Incorrect API key provided: {key}"))
    with pytest.raises(ProviderAuthError) as caught:
        client.complete(HELLO)
    assert key not in str(caught.value) and "***" in str(caught.value)
    assert key not in repr(client._endpoint)


def test_403_is_an_auth_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(error_reply(403, "forbidden"))
    with pytest.raises(ProviderAuthError):
        make_client(fake_openai).complete(HELLO)


def test_429_then_success_is_retried_with_backoff(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(error_reply(429, "Rate limit reached", type="rate_limit_error"),
                      error_reply(429, "Rate limit reached", type="rate_limit_error"),
                      chat_reply("finally"))
    sleep = RecordingSleep()
    response = make_client(fake_openai, sleep=sleep).complete(HELLO)
    assert response.text == "finally"
    assert len(fake_openai.requests) == 3  # ours, not the SDK's: no hidden extra attempts
    assert len(sleep.waits) == 2
    assert 0.5 <= sleep.waits[0] <= 1.0 and 1.0 <= sleep.waits[1] <= 2.0  # 1 s, 2 s, jittered


def test_retry_after_header_sets_the_wait(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(error_reply(429, "slow down", headers={"Retry-After": "3"}), chat_reply())
    sleep = RecordingSleep()
    make_client(fake_openai, sleep=sleep).complete(HELLO)
    assert sleep.waits == [3.0]


def test_429_after_all_retries_is_a_rate_limit_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(*[error_reply(429, "Rate limit reached")] * 3)
    sleep = RecordingSleep()
    with pytest.raises(RateLimitError) as caught:
        make_client(fake_openai, retries=2, sleep=sleep).complete(HELLO)
    assert len(fake_openai.requests) == 3 and len(sleep.waits) == 2
    assert "3 attempt(s)" in str(caught.value)


def test_5xx_is_retried_then_reported(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(Reply(status=502, body="bad gateway"), chat_reply("recovered"))
    assert make_client(fake_openai).complete(HELLO).text == "recovered"
    fake_openai.queue(*[Reply(status=503, body="unavailable")] * 2)
    with pytest.raises(ProviderError) as caught:
        make_client(fake_openai, retries=1).complete(HELLO)
    assert "503" in str(caught.value)
    assert not isinstance(caught.value, (RateLimitError, ProviderConnectionError))


def test_connection_reset_is_retried(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(Reply(drop=True), chat_reply("after reset"))
    sleep = RecordingSleep()
    assert make_client(fake_openai, sleep=sleep).complete(HELLO).text == "after reset"
    assert len(sleep.waits) == 1


def test_connection_refused_is_a_connection_error_without_retries() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleep = RecordingSleep()
    client = OpenAIChatClient("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k",
                              retry=RetryPolicy(max_retries=3, sleep=sleep))
    with pytest.raises(ProviderConnectionError) as caught:
        client.complete(HELLO)
    assert not isinstance(caught.value, ProviderTimeoutError)
    assert f"127.0.0.1:{port}" in str(caught.value) and "model.base_url" in str(caught.value)
    assert sleep.waits == []


def test_context_length_400_is_mapped_and_not_retried(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(context_length_reply())
    with pytest.raises(ContextLengthExceededError) as caught:
        make_client(fake_openai).complete(HELLO)
    assert "maximum context length" in str(caught.value)
    assert len(fake_openai.requests) == 1


def test_llama_cpp_context_error_is_recognised(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(error_reply(
        400, "the request exceeds the available context size, try increasing it",
        type="exceed_context_size_error"))
    with pytest.raises(ContextLengthExceededError):
        make_client(fake_openai).complete(HELLO)


def test_other_400_is_a_plain_provider_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(error_reply(400, "temperature must be at most 2"))
    with pytest.raises(ProviderError) as caught:
        make_client(fake_openai).complete(HELLO)
    assert type(caught.value) is ProviderError
    assert "temperature must be at most 2" in str(caught.value)


def test_hung_server_times_out_within_the_configured_time(
        fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(Reply(hang=True))
    client = make_client(fake_openai, timeout=0.5)
    with pytest.raises(ProviderTimeoutError) as caught:
        client.complete(HELLO)
    assert len(fake_openai.requests) == 1  # one attempt: timeouts are not retried
    assert "0.5 s" in str(caught.value) and "model.timeout" in str(caught.value)
    assert isinstance(caught.value, ProviderConnectionError)


def test_a_reply_without_choices_is_a_provider_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue(Reply(body={"id": "x", "object": "chat.completion", "choices": [],
                                  "model": "m"}))
    with pytest.raises(ProviderError, match="no answer"):
        make_client(fake_openai).complete(HELLO)


def test_keyless_endpoint_gets_a_placeholder_key(fake_openai: FakeOpenAIServer) -> None:
    client = OpenAIChatClient("m", base_url=fake_openai.base_url, api_key=None)
    client.complete(HELLO)
    assert fake_openai.requests[-1].headers["authorization"] == "Bearer not-needed"


def test_client_satisfies_the_protocol(fake_openai: FakeOpenAIServer) -> None:
    from mnemo.llm import ChatClient

    client = make_client(fake_openai, context_length=32_000)
    assert isinstance(client, ChatClient)
    assert client.model == "fake-model" and client.context_length == 32_000


def test_extra_body_fields_reach_the_server(fake_openai: FakeOpenAIServer) -> None:
    client = make_client(fake_openai, extra_body={"repeat_penalty": 1.1})
    client.complete(HELLO, extra_body={"grammar": 'root ::= "ok"'})
    body = fake_openai.requests[-1].body
    assert body["grammar"] == 'root ::= "ok"' and body["repeat_penalty"] == 1.1
