"""``AnthropicChatClient``: Claude models through the official ``anthropic`` SDK.

An optional extra (``pip install "mnemo[anthropic]"``): the SDK is imported when a client
is made, never at package import, and its absence is an ``ImportError`` naming the extra.
Messages are converted at this boundary only (``anthropic_format``); the system prompt
carries a cache breakpoint. Retries and error mapping are the same as for OpenAI
endpoints (``RetryPolicy``, ``sdk_errors.call_once``).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from mnemo.llm.anthropic_format import (
    from_anthropic_response,
    to_anthropic_messages,
    to_anthropic_tools,
)
from mnemo.llm.endpoint_client import EndpointClient
from mnemo.llm.retry import RetryPolicy
from mnemo.llm.sdk_errors import call_once
from mnemo.llm.types import ChatResponse
from mnemo.messages import Message

__all__ = ["DEFAULT_ANTHROPIC_MAX_TOKENS", "AnthropicChatClient", "import_anthropic"]

log = logging.getLogger("mnemo.llm")

# The Messages API requires max_tokens on every call; this is used when neither the
# caller nor model.max_tokens gives one.
DEFAULT_ANTHROPIC_MAX_TOKENS = 4096


def import_anthropic() -> ModuleType:
    """The ``anthropic`` module, or an ImportError that says how to install it."""
    try:
        import anthropic
    except ImportError as exc:
        raise ImportError(
            'the Anthropic client needs the anthropic extra: pip install "mnemo[anthropic]"'
        ) from exc
    return anthropic


class AnthropicChatClient(EndpointClient):
    """A ``ChatClient`` for one Claude model (or an Anthropic-compatible endpoint)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "",
        api_key: str | None = None,
        key_source: str = "",
        timeout: float = 120.0,
        max_retries: int = 3,
        context_length: int | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._sdk_module = import_anthropic()
        super().__init__(model, timeout=timeout, max_retries=max_retries,
                         context_length=context_length, max_tokens=max_tokens,
                         temperature=temperature, retry=retry)
        self._bind(self._sdk_module.Anthropic(api_key=api_key, base_url=base_url or None,
                                              timeout=timeout, max_retries=0),
                   key_source=key_source, api_key=api_key)
        # Recent SDKs dropped sampling parameters from messages.create; send only what the
        # installed one accepts rather than fail every call.
        self._accepted = frozenset(inspect.signature(self._sdk.messages.create).parameters)

    def build_request(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for this call (no network)."""
        system, turns = to_anthropic_messages(messages)
        limit = max_tokens if max_tokens is not None else self.default_max_tokens
        request: dict[str, Any] = {
            "model": self._model,
            "max_tokens": limit if limit is not None else DEFAULT_ANTHROPIC_MAX_TOKENS,
            "messages": turns,
        }
        if system:
            request["system"] = system
        if tools:
            request["tools"] = to_anthropic_tools(tools)
        temp = temperature if temperature is not None else self.default_temperature
        if temp is not None:
            request["temperature"] = min(temp, 1.0)  # Anthropic's range is 0–1
        return request

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatResponse:
        request = self.build_request(messages, tools=tools, max_tokens=max_tokens,
                                     temperature=temperature)
        for unsupported in [key for key in request if key not in self._accepted]:
            log.debug("the installed anthropic SDK does not take %r; not sent", unsupported)
            del request[unsupported]
        raw = self.retry.run(lambda number: call_once(
            self._sdk_module,
            lambda: self._sdk.messages.create(**request),
            self._endpoint,
            timeout=self.timeout,
            attempt=number,
        ))
        return from_anthropic_response(raw, model=self._model)
