"""LangChain messages to mnemo messages and back, losslessly (SPEC I4).

One LangChain message is one mnemo message: ``SystemMessage`` → ``system``,
``HumanMessage`` → ``user``, ``AIMessage`` → ``assistant`` (text content, ``tool_calls``
with JSON arguments; invalid tool calls ride along), ``ToolMessage`` → ``tool`` (a failed
call, ``status="error"``, is LangChain's retry prompt: the model reads the error and
tries again), ``ChatMessage`` → its role when it is a chat role. Each carries the
original as ``message_to_dict`` gives it (ids, metadata, usage, artifacts) under
``"langchain"``; messages the engine did not change come back exactly, changed ones are
rebuilt on their original (same id, so LangGraph's reducer replaces, never duplicates).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from mnemo.integrations._carry import call_names, carried, semantic, tool_call, with_carried
from mnemo.messages import ROLES, ContentPart, Message, content_text

try:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        ChatMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
        message_to_dict,
        messages_from_dict,
    )
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError('mnemo.integrations.langgraph needs LangChain: '
                      'pip install "mnemo[langgraph]"') from exc

__all__ = ["KEY", "from_mnemo", "message_to_mnemo", "to_mnemo"]

KEY = "langchain"


def to_mnemo(messages: Sequence[BaseMessage]) -> list[Message]:
    """mnemo messages for LangChain messages (new dicts; the input is not changed)."""
    return [message_to_mnemo(m) for m in messages]


def message_to_mnemo(message: BaseMessage) -> Message:
    return with_carried(_view(message), KEY, message_to_dict(message))


def _content(content: Any) -> str | list[ContentPart]:
    if isinstance(content, str):
        return content
    parts: list[ContentPart] = []
    for block in content:
        if isinstance(block, str):
            parts.append({"type": "text", "text": block})
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        else:
            kind = block.get("type") if isinstance(block, dict) else None
            parts.append({"type": str(kind or "attachment")})
    return parts


def _view(message: BaseMessage) -> Message:
    content = _content(message.content)
    if isinstance(message, AIMessage):
        view: Message = {"role": "assistant", "content": content}
        if message.tool_calls:
            view["tool_calls"] = [
                tool_call(str(c.get("id") or ""), c["name"],
                          json.dumps(c.get("args", {}), ensure_ascii=False))
                for c in message.tool_calls]
            if not content_text(view):
                view["content"] = None
        return view
    if isinstance(message, ToolMessage):
        return {"role": "tool", "tool_call_id": message.tool_call_id,
                "content": content_text({"content": content})}
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": content}
    if isinstance(message, ChatMessage) and message.role in ROLES and message.role != "tool":
        return cast(Message, {"role": message.role, "content": content})
    return {"role": "user", "content": content}


def from_mnemo(messages: Sequence[Message]) -> list[BaseMessage]:
    """LangChain messages for mnemo messages (the carried originals where unchanged)."""
    names = call_names(messages)
    out: list[BaseMessage] = []
    for message in messages:
        value = carried(message, KEY)
        original = messages_from_dict([value])[0] if isinstance(value, dict) else None
        if original is not None and semantic(_view(original)) == semantic(message):
            out.append(original)
        else:
            out.append(_rebuilt(message, original, names))
    return out


def _rebuilt(message: Message, original: BaseMessage | None, names: dict[str, str]) -> BaseMessage:
    role, text = message["role"], content_text(message)
    keep: dict[str, Any] = {}
    if original is not None:  # same id and metadata: the state reducer replaces in place
        keep = {"id": original.id, "additional_kwargs": original.additional_kwargs,
                "response_metadata": original.response_metadata}
    if role == "assistant":
        calls = []
        for call in message.get("tool_calls") or []:
            function: dict[str, Any] = cast(dict[str, Any], call).get("function") or {}
            raw = function.get("arguments") or "{}"
            try:
                args = json.loads(raw) if isinstance(raw, str) else dict(raw)
            except ValueError:
                args = {"arguments": raw}
            calls.append({"name": str(function.get("name", "")), "args": args,
                          "id": str(call.get("id", "")), "type": "tool_call"})
        return AIMessage(content=text, tool_calls=calls, **keep)
    if role == "tool":
        call_id = str(message.get("tool_call_id", ""))
        status = original.status if isinstance(original, ToolMessage) else "success"
        name = original.name if isinstance(original, ToolMessage) else names.get(call_id)
        return ToolMessage(content=text, tool_call_id=call_id, status=status, name=name, **keep)
    if role in ("system", "developer"):
        return SystemMessage(content=text, **keep)
    return HumanMessage(content=text, **keep)
