"""``ScriptedChatClient``: a ``ChatClient`` test double that ships with the library.

Tests of code that calls a model (the agent loop, the compressor with an LLM summariser,
a user's own integration) script the replies instead of starting a server::

    client = ScriptedChatClient([
        assistant_tool_call("memory", {"action": "read", "target": "user"}),
        "Done.",                                  # plain text
        ProviderTimeoutError("too slow"),         # raised on the third call
        lambda request: f"you said {request.last_text}",   # computed from the request
    ])

Every call is recorded in ``requests`` (deep copies, so later changes by the caller do
not rewrite history). Every request is also checked with ``validate_c12`` (SPEC C12) —
strict by default: an invalid request raises ``InvalidRequestError`` and is recorded in
``violations``, and ``take_violations()`` hands the recorded ones to a test runner (our
``tests/conftest.py`` fails any test that made one, even where the code under test
swallowed the exception). A test that means to send an invalid request passes
``strict=False``. Usage is the rough estimate of C4 unless a reply is a full
``ChatResponse``. Running out of replies is a bug in the test and raises ``RuntimeError``
(unless a ``default`` is given), never a provider error the code under test might swallow.
"""

from __future__ import annotations

import copy
import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

from mnemo.api_validity import request_shape, validate_c12
from mnemo.llm.types import ChatResponse, Usage, wrap_tools
from mnemo.messages import Message, content_text
from mnemo.tokens import estimate_messages_tokens_rough, estimate_tokens_rough, message_token_text

__all__ = [
    "ChatRequest",
    "InvalidRequestError",
    "Script",
    "ScriptedChatClient",
    "assistant_tool_call",
    "take_violations",
]

# Violations seen by strict clients and not yet taken by a test runner.
_unclaimed_violations: list[str] = []


class InvalidRequestError(AssertionError):
    """A strict ``ScriptedChatClient`` was sent a request a chat API would reject (C12)."""


def take_violations() -> list[str]:
    """The C12 violations strict clients saw since the last call, and forget them."""
    taken = list(_unclaimed_violations)
    _unclaimed_violations.clear()
    return taken


@dataclass(frozen=True)
class ChatRequest:
    """One call made to a ``ScriptedChatClient``, as the code under test made it."""

    messages: list[Message]
    tools: list[dict[str, Any]] | None
    max_tokens: int | None
    temperature: float | None

    @property
    def last_text(self) -> str:
        """The text of the last message (usually the user's request)."""
        return content_text(self.messages[-1]) if self.messages else ""

    @property
    def tool_names(self) -> list[str]:
        return [str(t["function"]["name"]) for t in self.tools or []]


Reply: TypeAlias = "str | Mapping[str, Any] | ChatResponse | BaseException"
Script: TypeAlias = "Reply | Callable[[ChatRequest], Reply]"


def assistant_tool_call(
    name: str,
    arguments: Mapping[str, Any] | str,
    *,
    call_id: str = "call_1",
    content: str | None = None,
) -> Message:
    """An assistant message calling one tool (arguments as a dict or JSON text)."""
    args = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": call_id, "type": "function",
                        "function": {"name": name, "arguments": args}}],
    }


class ScriptedChatClient:
    """Answers each ``complete`` call with the next scripted reply.

    A reply is a text, an assistant message dict, a ``ChatResponse`` (used as it is), an
    exception (raised), or a callable of the ``ChatRequest`` returning one of those.
    """

    def __init__(
        self,
        replies: Iterable[Script] = (),
        *,
        model: str = "scripted-model",
        context_length: int | None = None,
        default: Script | None = None,
        strict: bool = True,
    ) -> None:
        self._model = model
        self.strict = strict
        self.violations: list[str] = []
        self._context_length = context_length
        self._replies: deque[Script] = deque(replies)
        self.default = default
        self.requests: list[ChatRequest] = []

    @property
    def model(self) -> str:
        return self._model

    @property
    def context_length(self) -> int | None:
        return self._context_length

    @property
    def remaining(self) -> int:
        """Scripted replies not used yet."""
        return len(self._replies)

    def add(self, *replies: Script) -> ScriptedChatClient:
        self._replies.extend(replies)
        return self

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatResponse:
        request = ChatRequest(
            messages=copy.deepcopy(list(messages)),
            tools=wrap_tools(tools) if tools else None,
            max_tokens=max_tokens,
            temperature=temperature,
        )
        self.requests.append(request)
        self._check(request)
        if self._replies:
            script = self._replies.popleft()
        elif self.default is not None:
            script = self.default
        else:
            raise RuntimeError(
                f"ScriptedChatClient has no reply left for call #{len(self.requests)}; "
                "script more replies or give a default"
            )
        reply: Reply = script(request) if callable(script) else script
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, ChatResponse):
            return reply
        return self._respond(request, reply)

    def _check(self, request: ChatRequest) -> None:
        if not self.strict:
            return
        problems = validate_c12(request.messages)
        if not problems:
            return
        violation = (f"request #{len(self.requests)} breaks C12: {'; '.join(problems)} "
                     f"[{request_shape(request.messages)}]")
        self.violations.append(violation)
        _unclaimed_violations.append(violation)
        raise InvalidRequestError(violation)

    def _respond(self, request: ChatRequest, reply: str | Mapping[str, Any]) -> ChatResponse:
        if isinstance(reply, str):
            message: Message = {"role": "assistant", "content": reply}
        else:
            message = cast(Message, copy.deepcopy(dict(reply)))
            message.setdefault("role", "assistant")
            message.setdefault("content", None)
        prompt = estimate_messages_tokens_rough(request.messages)
        if request.tools:
            prompt += estimate_tokens_rough(json.dumps(request.tools))
        completion = estimate_tokens_rough(message_token_text(message))
        return ChatResponse(
            message=message,
            usage=Usage.of(prompt, completion),
            finish_reason="tool_calls" if message.get("tool_calls") else "stop",
            model=self._model,
        )
