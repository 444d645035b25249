"""``OpenAIChatClient``: any OpenAI-compatible chat endpoint through the official SDK.

OpenAI, OpenRouter, vLLM, Ollama, llama.cpp's server and the embedded local model all
speak this wire format. The SDK is built with ``max_retries=0`` and wrapped in our own
``RetryPolicy`` so retries are bounded, visible in the log and testable (the SDK's
hidden loop would otherwise multiply ours). Every SDK exception is mapped to the
``mnemo.errors`` family by ``failures``; nothing from ``openai`` leaks to callers.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from mnemo.errors import ProviderError
from mnemo.llm.endpoint_client import EndpointClient
from mnemo.llm.retry import RetryableFailure, RetryPolicy
from mnemo.llm.sdk_errors import call_once
from mnemo.llm.streaming import StreamedReply, StreamHandlers, collect_stream
from mnemo.llm.types import ChatResponse, Usage, wrap_tools
from mnemo.messages import Message, ToolCall
from mnemo.tokens import estimate_messages_tokens_rough, estimate_tokens_rough

__all__ = ["OpenAIChatClient"]

log = logging.getLogger("mnemo.llm")

# Keyless servers (llama.cpp, Ollama, vLLM without --api-key) ignore the header, but the
# SDK insists on some key.
_NO_KEY = "not-needed"


class OpenAIChatClient(EndpointClient):
    """A ``ChatClient`` for one model behind an OpenAI-compatible endpoint.

    ``base_url`` empty means OpenAI's own API. ``timeout`` bounds each attempt (seconds);
    ``max_retries`` extra attempts are made on 429, 5xx and connection resets. Pass a
    ``retry`` policy to control the backoff (tests inject one whose ``sleep`` records).
    ``context_length`` is reported as given (``None`` = unknown).
    """

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
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(model, timeout=timeout, max_retries=max_retries,
                         context_length=context_length, max_tokens=max_tokens,
                         temperature=temperature, retry=retry)
        self._extra_body = dict(extra_body or {})
        # Imported here, not at module level: the SDK takes half a second to import and
        # commands that never call a model should not pay for it.
        import openai

        self._openai = openai
        self._bind(openai.OpenAI(api_key=api_key or _NO_KEY, base_url=base_url or None,
                                 timeout=timeout, max_retries=0),
                   key_source=key_source, api_key=api_key)
        # OpenAI's own API wants max_completion_tokens (its reasoning models reject
        # max_tokens); most other servers know only max_tokens.
        self._max_tokens_field = (
            "max_completion_tokens" if "api.openai.com" in self.base_url else "max_tokens"
        )
        # llama.cpp's ``timings`` of the last reply (prompt tokens read vs. taken from
        # its cache, speeds); None from servers that send none.
        self.last_timings: dict[str, Any] | None = None

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: Mapping[str, Any] | None = None,
        stream: StreamHandlers | None = None,
        timeout: float | None = None,
    ) -> ChatResponse:
        """One chat completion. ``extra_body`` adds server-specific request fields for
        this call (over the client's own), e.g. a llama.cpp ``grammar``. With ``stream``
        the reply is streamed and its text handed to ``stream.on_text`` as it arrives;
        ``timeout`` replaces the client's for this call (with streaming it bounds the wait
        between two chunks)."""
        request: dict[str, Any] = {
            "model": self._model,
            "messages": [dict(m) for m in messages],
        }
        if tools:
            request["tools"] = wrap_tools(tools)
        limit = max_tokens if max_tokens is not None else self.default_max_tokens
        if limit is not None:
            request[self._max_tokens_field] = limit
        temp = temperature if temperature is not None else self.default_temperature
        if temp is not None:
            request["temperature"] = temp
        extra = {**self._extra_body, **(extra_body or {})}
        if extra:
            request["extra_body"] = extra

        if timeout is not None:
            request["timeout"] = timeout
        started = time.monotonic()
        if stream is not None:
            request["stream"] = True
            request["stream_options"] = {"include_usage": True}
            reply = self.retry.run(lambda number: self._attempt_stream(request, number, stream))
            response = self._streamed_response(reply, messages)
        else:
            completion = self.retry.run(lambda number: self._attempt(request, number))
            timings = getattr(completion, "timings", None)
            self.last_timings = dict(timings) if isinstance(timings, Mapping) else None
            response = self._to_response(completion, messages)
        log.debug("model %s answered in %.2f s (%d prompt + %d completion tokens)",
                  response.model, time.monotonic() - started,
                  response.usage.prompt_tokens, response.usage.completion_tokens)
        return response

    # -- one attempt -----------------------------------------------------------------
    def _attempt(self, request: dict[str, Any], number: int) -> Any:
        return call_once(
            self._openai,
            lambda: self._sdk.chat.completions.create(**request),
            self._endpoint,
            timeout=request.get("timeout", self.timeout),
            attempt=number,
        )

    def _attempt_stream(self, request: dict[str, Any], number: int,
                        handlers: StreamHandlers) -> StreamedReply:
        reply = StreamedReply()

        def read() -> StreamedReply:
            # ``with``: an exception in a handler (or Ctrl-C) closes the connection, and
            # llama.cpp stops generating for a client that went away.
            with self._sdk.chat.completions.create(**request) as chunks:
                return collect_stream(chunks, handlers, into=reply)

        try:
            return call_once(self._openai, read, self._endpoint,
                             timeout=request.get("timeout", self.timeout), attempt=number)
        except RetryableFailure as failure:
            if reply.started:  # part of the answer is on screen: a retry would repeat it
                raise failure.final from failure
            raise

    def _streamed_response(self, reply: StreamedReply,
                           messages: Sequence[Message]) -> ChatResponse:
        self.last_timings = reply.prompt_timings()
        message = reply.message()
        if not reply.chunks:
            raise ProviderError(
                f"{self._endpoint} returned an empty stream; check that the endpoint "
                "serves streamed chat completions"
            )
        finish = reply.finish_reason or ("tool_calls" if message.get("tool_calls") else "stop")
        prompt = int(reply.progress.get("total", 0) or 0) if reply.progress else None
        return ChatResponse(message=message, usage=_usage(reply.usage, messages, message, prompt),
                            finish_reason=str(finish), model=str(reply.model or self._model))

    # -- the reply ---------------------------------------------------------------------
    def _to_response(self, completion: Any, messages: Sequence[Message]) -> ChatResponse:
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise ProviderError(
                f"{self._endpoint} returned no answer (no choices in the reply); "
                "check that the endpoint serves chat completions"
            )
        choice = choices[0]
        message = _assistant_message(choice.message)
        finish = choice.finish_reason or ("tool_calls" if message.get("tool_calls") else "stop")
        return ChatResponse(
            message=message,
            usage=_usage(getattr(completion, "usage", None), messages, message),
            finish_reason=str(finish),
            model=str(getattr(completion, "model", None) or self._model),
        )


def _assistant_message(raw: Any) -> Message:
    """The SDK's message object → a new plain assistant ``Message``."""
    content = getattr(raw, "content", None)
    message: Message = {"role": "assistant", "content": content}
    calls: list[ToolCall] = []
    for number, call in enumerate(getattr(raw, "tool_calls", None) or [], start=1):
        function = getattr(call, "function", None)
        if function is None:
            continue
        args = getattr(function, "arguments", "")
        if not isinstance(args, str):  # some servers send an object instead of JSON text
            args = json.dumps(args, ensure_ascii=False)
        calls.append({
            "id": getattr(call, "id", None) or f"call_{number}",
            "type": "function",
            "function": {"name": str(getattr(function, "name", "")), "arguments": args},
        })
    if calls:
        message["tool_calls"] = calls
    return message


def _usage(raw: Any, messages: Sequence[Message], reply: Message,
           prompt_counted: int | None = None) -> Usage:
    """The reported usage; when the server sent none (no reply at all, or a stream stopped
    before its last chunk), the prompt as counted by its progress reports, or the rough
    estimate."""
    if raw is not None and getattr(raw, "prompt_tokens", None) is not None:
        prompt = int(raw.prompt_tokens or 0)
        completion = int(getattr(raw, "completion_tokens", 0) or 0)
        total = int(getattr(raw, "total_tokens", 0) or prompt + completion)
        return Usage(prompt, completion, total)
    log.debug("the endpoint reported no usage; using the rough estimate")
    text = reply.get("content")
    return Usage.of(prompt_counted or estimate_messages_tokens_rough(messages),
                    estimate_tokens_rough(text if isinstance(text, str) else ""))
