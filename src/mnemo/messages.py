"""The message shape every part of mnemo speaks: OpenAI Chat Completions dicts.

``Message`` is a ``TypedDict`` so a caller's plain dicts type-check as they are. The
helpers here read messages; none of them modifies one. Functions elsewhere that change a
conversation build new dicts (``with_content``) and new lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "ROLES",
    "SYSTEM_ROLES",
    "ContentPart",
    "FunctionCall",
    "Message",
    "Role",
    "ToolCall",
    "content_text",
    "joined_text",
    "tool_call_ids",
    "tool_call_text",
    "tool_calls_of",
    "with_content",
]

Role = Literal["system", "user", "assistant", "tool", "developer"]
# The roles of a chat message, in the order error messages list them. A leading
# "developer" message is what newer OpenAI models call the system message.
ROLES: tuple[Role, ...] = ("system", "developer", "user", "assistant", "tool")
# The roles a leading "system message" may have.
SYSTEM_ROLES = frozenset({"system", "developer"})


class FunctionCall(TypedDict):
    name: str
    arguments: str  # JSON text, as the API sends it


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class ContentPart(TypedDict, total=False):
    type: str  # "text", "image_url", "input_audio", ...
    text: str
    image_url: dict[str, Any]


class Message(TypedDict):
    role: Role
    content: NotRequired[str | list[ContentPart] | None]
    name: NotRequired[str]
    tool_calls: NotRequired[list[ToolCall]]
    tool_call_id: NotRequired[str]


def content_text(message: Message | dict[str, Any]) -> str:
    """The text of a message's content; list parts are joined, non-text parts named."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            pieces.append(str(part))
        elif part.get("type") == "text" or "text" in part:
            pieces.append(str(part.get("text", "")))
        else:
            pieces.append(f"[{part.get('type', 'attachment')}]")
    return "\n".join(pieces)


def tool_calls_of(message: Message | dict[str, Any]) -> list[ToolCall]:
    """The tool calls of an assistant message (an empty list for any other message)."""
    calls: list[Any] = message.get("tool_calls") or []
    if not calls:
        return []
    # No ``cast`` per call: it is a function call at run time, and this runs for every
    # message of every compaction.
    found: list[Any] = [c for c in calls if isinstance(c, dict)]
    return found


def tool_call_ids(message: Message | dict[str, Any]) -> list[str]:
    return [str(c.get("id", "")) for c in tool_calls_of(message)]


def tool_call_text(call: ToolCall | dict[str, Any]) -> str:
    """``name(arguments)`` of one tool call, for token counts and summaries."""
    function = call.get("function") or {}
    args = function.get("arguments", "")
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False)
    return f"{function.get('name', '')}({args})"


def with_content(message: Message | dict[str, Any], content: str) -> Message:
    """A copy of ``message`` with new text content (the original is left alone)."""
    copy: dict[str, Any] = dict(message)
    copy["content"] = content
    return copy  # type: ignore[return-value]


def joined_text(messages: Iterable[Message | dict[str, Any]]) -> str:
    return "\n".join(content_text(m) for m in messages)
