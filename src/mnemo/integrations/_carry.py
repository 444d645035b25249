"""What the three conversion layers share: the semantic view of a message, and the carrier.

Each framework's message becomes one mnemo message (an OpenAI Chat Completions dict) that
the context engine reads, and carries its original, serialised, under one extra key
(``"pydantic_ai"``, ``"openai_agents"``, ``"langchain"``). The engine ignores extra keys and
the session store keeps them, so converting back is exact: a message the engine left as
it was comes back as the original; one it changed (a pruned tool output, a summary merged
in front of a user message) is rebuilt from its new fields, on top of the original where
one exists, so the framework's own details (ids, timestamps) survive too.

``semantic(message)`` is the part of a mnemo message that the engine reads and may
change; comparing it with the semantic view of the carried original tells whether the
engine changed the message.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

from mnemo.messages import Message, ToolCall

__all__ = ["CARRIER_KEYS", "call_names", "carried", "runs", "semantic", "tool_call",
           "with_carried"]

CARRIER_KEYS = ("pydantic_ai", "openai_agents", "langchain")
_SEMANTIC_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


def semantic(message: Message | dict[str, Any]) -> dict[str, Any]:
    """The fields of ``message`` the engine reads (and may change)."""
    fields = cast(dict[str, Any], message)
    return {k: fields[k] for k in _SEMANTIC_KEYS if k in fields}


def with_carried(message: Message, key: str, value: Any) -> Message:
    """``message`` with the framework's original under ``key`` (a new dict)."""
    out: dict[str, Any] = dict(message)
    out[key] = value
    return cast(Message, out)


def carried(message: Message | dict[str, Any], key: str) -> Any:
    """What ``message`` carries under ``key`` (None when nothing)."""
    return cast(dict[str, Any], message).get(key)


def tool_call(call_id: str, name: str, arguments: str) -> ToolCall:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def call_names(messages: Sequence[Message | dict[str, Any]]) -> dict[str, str]:
    """Tool name by call id, over every assistant message (to name a stub's tool)."""
    names: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            names[str(call.get("id"))] = str((call.get("function") or {}).get("name", ""))
    return names


def runs(messages: Sequence[Message], key: str) -> Iterator[tuple[Any, list[Message]]]:
    """Consecutive messages with the same carried group id (``None`` = not carried)."""
    group: list[Message] = []
    current: Any = object()
    for message in messages:
        value = carried(message, key)
        gid = value.get("g") if isinstance(value, dict) else None
        if group and (gid is None or gid != current):
            yield current, group
            group = []
        group.append(message)
        current = gid
    if group:
        yield current, group
