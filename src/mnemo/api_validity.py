"""Whether a message list is one a chat API accepts (SPEC C12), at any layer.

``validate_c12(messages, source=None)`` lists every way ``messages`` breaks C12: a
malformed message (``mnemo.transcripts.validate_message``), (a) a tool result that does
not answer a call of the assistant message right before its run of results, (b) a call
left without a result, (c) two user messages in a row, or two assistant messages in a
row. Given the ``source`` list it was made from, it also checks (d) a user message
survived if there was one, and (e) a leading system message is still first and no
system message was added. An empty list means valid.

It lives here, among the leaves, because both sides of the model boundary use it: the
compressor's property tests and benches (``mnemo.context`` re-exports it), the agent's
``agent.validate_requests`` check, and ``ScriptedChatClient`` (``mnemo.llm.testing``),
which checks every request a test makes. "Valid" means one thing everywhere.

``request_shape(messages)`` describes a list by roles and tool-call ids only, never
content, for a log line about an invalid request.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mnemo.messages import SYSTEM_ROLES, Message, tool_call_ids
from mnemo.transcripts import validate_message

__all__ = ["request_shape", "validate_c12"]

_MAX_SHAPE_PROBLEMS = 5  # a list of junk says so a few times, not ten thousand


def validate_c12(messages: Sequence[Message | dict[str, Any]],
                 source: Sequence[Message | dict[str, Any]] | None = None) -> list[str]:
    """Every way ``messages`` breaks C12 (a)–(c), and (d)–(e) against ``source``."""
    problems: list[str] = []
    shape = 0
    for i, message in enumerate(messages):
        problem = validate_message(message)
        if problem:
            shape += 1
            if shape <= _MAX_SHAPE_PROBLEMS:
                problems.append(f"message {i}: {problem}")
    if shape:
        return problems  # the order checks below would only repeat the same trouble
    open_ids: list[str] = []
    answered: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            if call_id not in open_ids or call_id in answered:
                problems.append(f"(a) tool result {call_id!r} at {i} does not answer a call "
                                "of the assistant message right before it")
            answered.add(call_id)
            continue
        missing = [c for c in open_ids if c not in answered]
        if missing:
            problems.append(f"(b) tool calls {missing} before message {i} have no result")
        open_ids, answered = (tool_call_ids(message) if role == "assistant" else []), set()
        if i and role in ("user", "assistant") and messages[i - 1].get("role") == role:
            problems.append(f"(c) messages {i - 1} and {i} are both {role}")
    missing = [c for c in open_ids if c not in answered]
    if missing:
        problems.append(f"(b) tool calls {missing} at the end have no result")
    if source is not None:
        problems += _against_source(messages, source)
    return problems


def _against_source(messages: Sequence[Message | dict[str, Any]],
                    source: Sequence[Message | dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    if any(m.get("role") == "user" for m in source) and not any(
            m.get("role") == "user" for m in messages):
        problems.append("(d) no user message survived")
    first = source[0].get("role") if source else None
    if first in SYSTEM_ROLES and (not messages or messages[0].get("role") != first):
        problems.append(f"(e) the {first} message is not first any more")
    if _systems(messages) > _systems(source):
        problems.append("(e) a system message was added")
    return problems


def _systems(messages: Sequence[Message | dict[str, Any]]) -> int:
    return sum(1 for m in messages if m.get("role") in SYSTEM_ROLES)


def request_shape(messages: Sequence[Message | dict[str, Any]]) -> str:
    """Roles and tool-call ids of ``messages``, e.g. ``system user assistant[c1] tool(c1)``."""
    parts: list[str] = []
    for message in messages:
        role = str(message.get("role"))
        if role == "assistant" and tool_call_ids(message):
            parts.append(f"assistant[{','.join(tool_call_ids(message))}]")
        elif role == "tool":
            parts.append(f"tool({message.get('tool_call_id')})")
        else:
            parts.append(role)
    return " ".join(parts)
