"""pydantic-ai ``ModelMessage`` lists to mnemo messages and back, losslessly (SPEC I4).

A ``ModelRequest`` becomes one mnemo message per part: a system prompt → ``system``, a
user prompt → ``user``, a tool return (``outcome="retried"`` included: pydantic-ai 2's
retry of a tool call) → ``tool``, retry feedback (a retry answering no call) → ``user``;
the deprecated ``RetryPromptPart`` maps the same way. A ``ModelResponse`` becomes one
``assistant`` message: its text parts joined, its tool calls as ``tool_calls``. Parts
with no chat form of their own (thinking, instruction deltas, files …) ride along with a
neighbour of the same message, and the request-level fields (``instructions``,
timestamps, usage …) ride on the first message of each ``ModelMessage`` — all serialised
under the ``"pydantic_ai"`` key with pydantic-ai's own ``TypeAdapter`` (see ``_carry``).

Back, consecutive mnemo messages of one original ``ModelMessage`` are regrouped; those the
engine did not change are restored exactly, the others are rebuilt from their fields. A
message the engine made (a summary, a stub result for a compacted tool call) becomes a
new request or response part.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from typing import Any, cast

from mnemo.integrations._carry import (
    call_names,
    carried,
    runs,
    semantic,
    tool_call,
    with_carried,
)
from mnemo.messages import ContentPart, Message, content_text

try:
    import pydantic
    from pydantic_ai.messages import (
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelRequestPart,
        ModelResponse,
        ModelResponsePart,
        RetryFeedbackPart,
        RetryPromptPart,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError('mnemo.integrations.pydantic_ai needs pydantic-ai: '
                      'pip install "mnemo[pydantic-ai]"') from exc

__all__ = ["KEY", "from_mnemo", "message_to_mnemo", "to_mnemo"]

KEY = "pydantic_ai"
_REQUEST_PARTS: pydantic.TypeAdapter[list[Any]] = pydantic.TypeAdapter(list[ModelRequestPart])
_RESPONSE_PARTS: pydantic.TypeAdapter[list[Any]] = pydantic.TypeAdapter(list[ModelResponsePart])


def to_mnemo(messages: Sequence[ModelMessage]) -> list[Message]:
    """mnemo messages for a pydantic-ai history (new dicts; the input is not changed)."""
    out: list[Message] = []
    for message in messages:
        out += message_to_mnemo(message)
    return out


def message_to_mnemo(message: ModelMessage) -> list[Message]:
    """The mnemo messages of one ``ModelMessage`` (``[]`` for a request with no chat part).

    They share a group id derived from the message's content (timestamps included), so
    converting the same message again — after a restart, say — gives equal dicts.
    """
    bare = dataclasses.replace(cast(Any, message), parts=[])  # the message-level fields
    head = ModelMessagesTypeAdapter.dump_python([bare], mode="json")[0]
    adapter = _RESPONSE_PARTS if isinstance(message, ModelResponse) else _REQUEST_PARTS
    parts = list(message.parts)
    dumped = adapter.dump_python(parts, mode="json")
    gid = hashlib.sha1(json.dumps([head, dumped], sort_keys=True, default=str).encode(),
                       usedforsecurity=False).hexdigest()[:16]
    if isinstance(message, ModelResponse):
        return [with_carried(_response_view(message.parts), KEY,
                             {"g": gid, "message": head, "parts": dumped})]
    out: list[Message] = []
    riders: list[Any] = []  # parts without a chat form, waiting for a message to ride on
    for part, data in zip(parts, dumped, strict=True):
        view = _request_view(part)
        if view is None:
            if out:
                carried(out[-1], KEY)["parts"].append(data)  # our own new dict
            else:
                riders.append(data)
            continue
        out.append(with_carried(view, KEY, {"g": gid, "parts": [*riders, data]}))
        riders = []
    if out:
        carried(out[0], KEY)["message"] = head
    return out


def _request_view(part: Any) -> Message | None:
    if isinstance(part, SystemPromptPart):
        return {"role": "system", "content": part.content}
    if isinstance(part, UserPromptPart):
        return {"role": "user", "content": _user_content(part.content)}
    if isinstance(part, ToolReturnPart):
        return {"role": "tool", "tool_call_id": part.tool_call_id,
                "content": part.model_response_str()}
    if isinstance(part, RetryPromptPart):
        if part.tool_name is not None:
            return {"role": "tool", "tool_call_id": part.tool_call_id,
                    "content": part.model_response()}
        return {"role": "user", "content": part.model_response()}
    if isinstance(part, RetryFeedbackPart):
        return {"role": "user", "content": part.model_response()}
    return None


def _user_content(content: Any) -> str | list[ContentPart]:
    if isinstance(content, str):
        return content
    parts: list[ContentPart] = []
    for item in content:
        if isinstance(item, str):
            parts.append({"type": "text", "text": item})
        else:  # media and files: named for the engine, carried in full under KEY
            parts.append({"type": str(getattr(item, "kind", type(item).__name__))})
    return parts


def _response_view(parts: Sequence[Any]) -> Message:
    texts = [p.content for p in parts if isinstance(p, TextPart)]
    calls = [tool_call(p.tool_call_id, p.tool_name, p.args_as_json_str())
             for p in parts if isinstance(p, ToolCallPart)]
    view: Message = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
    if calls:
        view["tool_calls"] = calls
    elif not texts:
        view["content"] = ""  # a response of thinking only still needs content
    return view


# -- back ---------------------------------------------------------------------------------


def from_mnemo(messages: Sequence[Message]) -> list[ModelMessage]:
    """A pydantic-ai history for mnemo messages (new objects; the input is not changed)."""
    names = call_names(messages)
    out: list[ModelMessage] = []
    for gid, group in runs(messages, KEY):
        head = (carried(group[0], KEY) or {}).get("message") if gid is not None else None
        template: ModelMessage | None = None
        if head is not None:
            template = ModelMessagesTypeAdapter.validate_python([head])[0]
        if group[0]["role"] == "assistant":
            out.append(_response(group[0], template))
            continue
        parts: list[Any] = []
        for message in group:
            parts += _request_parts(message, names)
        if isinstance(template, ModelRequest):
            out.append(dataclasses.replace(template, parts=parts))
        else:
            out.append(ModelRequest(parts=parts))
    return out


def _carried_parts(message: Message, adapter: pydantic.TypeAdapter[list[Any]]) -> list[Any]:
    value = carried(message, KEY)
    if not isinstance(value, dict):
        return []
    return adapter.validate_python(value.get("parts") or [])


def _request_parts(message: Message, names: dict[str, str]) -> list[Any]:
    original = _carried_parts(message, _REQUEST_PARTS)
    views = [v for v in (_request_view(p) for p in original) if v is not None]
    if len(views) == 1 and views[0] == semantic(message):
        return original  # unchanged by the engine: exactly as it was
    riders = [p for p in original if _request_view(p) is None]
    main = next((p for p in original if _request_view(p) is not None), None)
    return [*riders, _rebuilt_request_part(message, main, names)]


def _rebuilt_request_part(message: Message, main: Any, names: dict[str, str]) -> Any:
    role, text = message["role"], content_text(message)
    if role == "system":
        if isinstance(main, SystemPromptPart):
            return dataclasses.replace(main, content=text)
        return SystemPromptPart(content=text)
    if role == "tool":
        call_id = str(message.get("tool_call_id", ""))
        if isinstance(main, ToolReturnPart | RetryPromptPart) and main.tool_name:
            return ToolReturnPart(tool_name=main.tool_name, content=text, tool_call_id=call_id,
                                  timestamp=main.timestamp)
        return ToolReturnPart(tool_name=names.get(call_id, ""), content=text,
                              tool_call_id=call_id)
    if isinstance(main, UserPromptPart | RetryPromptPart | RetryFeedbackPart):
        return UserPromptPart(content=text, timestamp=main.timestamp)
    return UserPromptPart(content=text)


def _response(message: Message, template: ModelMessage | None) -> ModelResponse:
    original = _carried_parts(message, _RESPONSE_PARTS)
    if original and _response_view(original) == semantic(message):
        parts = original
    else:
        riders = [p for p in original if not isinstance(p, TextPart | ToolCallPart)]
        text = content_text(message)
        parts = [*riders, *([TextPart(content=text)] if text else [])]
        for call in message.get("tool_calls") or []:
            function: dict[str, Any] = cast(dict[str, Any], call).get("function") or {}
            parts.append(ToolCallPart(tool_name=str(function.get("name", "")),
                                      args=function.get("arguments") or "{}",
                                      tool_call_id=str(call.get("id", ""))))
    if isinstance(template, ModelResponse):
        return dataclasses.replace(template, parts=parts)
    return ModelResponse(parts=parts)
