"""What every chat client speaks: the ``ChatClient`` protocol and its reply objects.

A client takes OpenAI-format messages (``mnemo.messages.Message``) and tool schemas in
their inner form (``{"name", "description", "parameters"}``, like
``mnemo.memory.MEMORY_SCHEMA``) and returns a ``ChatResponse``: the assistant message
(with ``tool_calls`` when the model called tools), the token usage, the finish reason and
the model that answered. Whatever wire format a provider uses is converted inside its
client, so the agent loop and the compressor see one shape only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from mnemo.messages import Message

__all__ = [
    "ChatClient",
    "ChatResponse",
    "GrammarChatClient",
    "Usage",
    "wrap_tools",
]


@dataclass(frozen=True)
class Usage:
    """Tokens one call cost, as the endpoint reported them.

    ``prompt_tokens`` is the whole prompt the model saw, cached parts included, because
    that is what fills the context window and drives compression (C3).
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    @classmethod
    def of(cls, prompt_tokens: int, completion_tokens: int) -> Usage:
        return cls(prompt_tokens, completion_tokens, prompt_tokens + completion_tokens)

    def as_dict(self) -> dict[str, int]:
        """The OpenAI ``usage`` shape, as ``ContextEngine.update_from_response`` takes it."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass(frozen=True)
class ChatResponse:
    """One reply of a chat model.

    ``message`` is a new assistant message dict: ``content`` is the text (``None`` when
    the model only called tools) and ``tool_calls`` is present only when it called some.
    ``finish_reason`` is the OpenAI vocabulary (``stop``, ``length``, ``tool_calls``,
    ``content_filter``) whatever the provider.
    """

    message: Message
    usage: Usage
    finish_reason: str
    model: str

    @property
    def text(self) -> str:
        content = self.message.get("content")
        return content if isinstance(content, str) else ""

    @property
    def tool_calls(self) -> list[Any]:
        return list(self.message.get("tool_calls") or [])


@runtime_checkable
class ChatClient(Protocol):
    """A chat model mnemo can call.

    ``model`` is the name of the model answering; ``context_length`` its window in tokens,
    or ``None`` when neither the config nor the endpoint says. ``complete`` raises the
    ``mnemo.errors.ProviderError`` family, never a provider SDK's own exceptions.
    """

    @property
    def model(self) -> str: ...

    @property
    def context_length(self) -> int | None: ...

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatResponse: ...


class GrammarChatClient(ChatClient, Protocol):
    """A client whose server constrains output with a GBNF grammar (llama.cpp).

    Such a client says so with ``supports_grammar = True``; callers check that flag (a
    capability as data) rather than the client's type.
    """

    supports_grammar: bool

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        grammar: str | None = None,
    ) -> ChatResponse: ...


def wrap_tools(tools: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """Inner function schemas → the OpenAI ``tools`` list (``{"type": "function", ...}``).

    A schema that is already wrapped is passed through, so callers holding either form
    work.
    """
    wrapped: list[dict[str, Any]] = []
    for tool in tools or ():
        if tool.get("type") == "function" and "function" in tool:
            wrapped.append({"type": "function", "function": dict(tool["function"])})
        else:
            wrapped.append({"type": "function", "function": dict(tool)})
    return wrapped
