"""The LLM summariser and the ``ScriptedChatClient`` test double."""

from __future__ import annotations

import pytest

from mnemo.errors import (
    CallStoppedError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderTimeoutError,
)
from mnemo.llm import ChatClient, ChatResponse, OpenAIChatClient, Usage, make_summarizer
from mnemo.llm.retry import RetryPolicy
from mnemo.llm.testing import ScriptedChatClient, assistant_tool_call
from mnemo.memory import MEMORY_SCHEMA
from mnemo.messages import Message
from support.fake_openai import FakeOpenAIServer, chat_reply, error_reply


def test_summarizer_sends_one_user_message_and_returns_the_text() -> None:
    client = ScriptedChatClient(["  ## Goal\nship it  \n"])
    summarize = make_summarizer(client, max_tokens=300)
    assert summarize("PROMPT") == "## Goal\nship it"
    request = client.requests[0]
    assert request.messages == [{"role": "user", "content": "PROMPT"}]
    assert (request.max_tokens, request.temperature, request.tools) == (300, 0.0, None)


def test_summarizer_empty_answer_is_empty_string() -> None:
    assert make_summarizer(ScriptedChatClient(["   "]))("p") == ""


def test_summarizer_raises_the_mapped_errors() -> None:
    summarize = make_summarizer(ScriptedChatClient([ProviderTimeoutError("slow")]))
    with pytest.raises(ProviderTimeoutError):
        summarize("p")


def test_a_summary_stopped_meanwhile_raises_call_stopped_whatever_the_call_did() -> None:
    stopped = [False]

    def server_stopped_under_it(request: object) -> str:
        stopped[0] = True  # the session ended, then its model server was stopped
        raise ProviderConnectionError("Server disconnected without sending a response.")

    summarize = make_summarizer(ScriptedChatClient([server_stopped_under_it, "## Goal\nx"]),
                                stop=lambda: stopped[0])
    with pytest.raises(CallStoppedError):
        summarize("p")
    with pytest.raises(CallStoppedError):  # not even sent: the stop is asked first
        summarize("p")
    stopped[0] = False
    assert summarize("p") == "## Goal\nx"
    # Not stopped, a failure is the failure.
    failing = make_summarizer(ScriptedChatClient([ProviderTimeoutError("slow")]),
                              stop=lambda: False)
    with pytest.raises(ProviderTimeoutError):
        failing("p")


def test_summarizer_over_http_maps_auth_errors(fake_openai: FakeOpenAIServer) -> None:
    client = OpenAIChatClient("m", base_url=fake_openai.base_url, api_key="k",
                              retry=RetryPolicy(sleep=lambda s: None))
    fake_openai.queue(chat_reply("## Goal\nx"), error_reply(401, "bad key"))
    summarize = make_summarizer(client)
    assert summarize("p") == "## Goal\nx"
    assert fake_openai.requests[0].body["temperature"] == 0.0
    with pytest.raises(ProviderAuthError):
        summarize("p")


def test_scripted_client_replays_texts_messages_errors_and_callables() -> None:
    response_obj = ChatResponse({"role": "assistant", "content": "fixed"}, Usage.of(1, 2),
                                "stop", "other")
    client = ScriptedChatClient([
        "plain",
        assistant_tool_call("memory", {"action": "read"}, call_id="c9"),
        ProviderAuthError("nope"),
        lambda request: f"you said {request.last_text}",
        response_obj,
    ], model="scripted", context_length=4096)
    assert isinstance(client, ChatClient)
    assert client.complete([{"role": "user", "content": "a"}]).text == "plain"
    tool_reply = client.complete([{"role": "user", "content": "b"}], tools=[MEMORY_SCHEMA])
    assert tool_reply.finish_reason == "tool_calls"
    assert tool_reply.tool_calls[0]["id"] == "c9"
    assert client.requests[1].tool_names == ["memory"]
    with pytest.raises(ProviderAuthError):
        client.complete([{"role": "user", "content": "c"}])
    assert client.complete([{"role": "user", "content": "d"}]).text == "you said d"
    assert client.complete([{"role": "user", "content": "e"}]) is response_obj
    assert client.remaining == 0 and len(client.requests) == 5


def test_scripted_usage_is_the_rough_estimate() -> None:
    client = ScriptedChatClient(["x" * 40])
    messages: list[Message] = [{"role": "user", "content": "y" * 400}]
    usage = client.complete(messages).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (110, 10, 120)


def test_scripted_requests_are_snapshots() -> None:
    client = ScriptedChatClient(["ok"])
    messages: list[Message] = [{"role": "user", "content": "before"}]
    client.complete(messages)
    messages[0]["content"] = "after"
    assert client.requests[0].messages[0]["content"] == "before"


def test_running_out_of_replies_is_loud_unless_a_default_is_given() -> None:
    with pytest.raises(RuntimeError, match="no reply left for call #1"):
        ScriptedChatClient().complete([{"role": "user", "content": "x"}])
    client = ScriptedChatClient(default="again")
    assert [client.complete([{"role": "user", "content": "x"}]).text for _ in range(2)] == [
        "again", "again"]


class GrammarClient(ScriptedChatClient):
    """A scripted client that takes grammars, recording them."""

    supports_grammar = True

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.grammars: list[str | None] = []

    def complete(self, messages: object, *, grammar: str | None = None,  # type: ignore[override]
                 **kwargs: object) -> ChatResponse:
        self.grammars.append(grammar)
        return super().complete(messages, **kwargs)  # type: ignore[arg-type]


def test_sections_become_a_grammar_for_clients_that_take_one() -> None:
    client = GrammarClient(["## A\nx\n## B\ny"])
    make_summarizer(client, max_tokens=200, sections=["A", "B"])("p")
    grammar = client.grammars[0]
    assert grammar is not None
    assert 'root ::= s0 s1' in grammar
    assert '"## A\\n"' in grammar and '"## B\\n"' in grammar


def test_sections_are_ignored_by_clients_without_grammars() -> None:
    client = ScriptedChatClient(["text"])
    assert make_summarizer(client, sections=["A"])("p") == "text"


def test_grammar_line_length_follows_the_token_cap() -> None:
    from mnemo.llm.structured import sections_grammar

    def cap(grammar: str) -> int:
        return int(grammar.split("[^\\n]{0,")[-1].split("}")[0]) + 1

    small = sections_grammar([f"S{i}" for i in range(10)], max_tokens=300)
    large = sections_grammar([f"S{i}" for i in range(10)], max_tokens=3000)
    assert cap(small) < cap(large) <= 240
    assert sections_grammar(["A & B"]).count('"## A & B\\n"') == 1
    with pytest.raises(ValueError):
        sections_grammar([])
