"""Checking that a message list is one a chat API accepts (C12), and that a message survived.

``validate_c12(messages, source=None)`` lists every way ``messages`` breaks C12: a
malformed message (``mnemo.transcripts.validate_message``), (a) a tool result that does
not answer a call of the assistant message right before its run of results, (b) a call
left without a result, (c) two user messages in a row, or two assistant messages in a
row. Given the ``source`` list it was made from, it also checks (d) a user message
survived if there was one, and (e) a leading system message is still first and no
system message was added. An empty list means valid.

The property-based tests, ``bench/validity_bench.py`` and anyone who builds message lists
by hand use the same function, so "valid" means one thing everywhere.

``still_present(message, output)`` tells whether a message still reaches the model after
a compression: as it was, with a summary merged in front of it (C12 c), or merged with a
same-role neighbour (``repair.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mnemo.context.markers import SYSTEM_ROLES
from mnemo.messages import Message, tool_call_ids
from mnemo.transcripts import validate_message

__all__ = ["still_present", "validate_c12"]

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


def still_present(message: Message | dict[str, Any],
                  output: Sequence[Message | dict[str, Any]]) -> bool:
    """True when ``message`` reaches the model in ``output``: as it was, after a summary
    merged in front of it (C12 c), or merged with a same-role neighbour."""
    return any(_carries(produced, message) for produced in output)


def _carries(produced: Message | dict[str, Any], original: Message | dict[str, Any]) -> bool:
    if produced == original:
        return True
    if produced.get("role") != original.get("role"):
        return False
    before, after = original.get("content"), produced.get("content")
    if isinstance(before, list):
        return isinstance(after, list) and _holds_run(after, before)
    if not isinstance(before, str) or not before:
        return False
    if isinstance(after, list):
        return any(isinstance(p, dict) and _joined_in(str(p.get("text", "")), before)
                   for p in after)
    return isinstance(after, str) and _joined_in(after, before)


def _joined_in(text: str, piece: str) -> bool:
    """``piece`` is ``text``, or one of its blank-line separated blocks at a seam."""
    return (text == piece or text.startswith(piece + "\n\n") or text.endswith("\n\n" + piece)
            or f"\n\n{piece}\n\n" in text)


def _holds_run(parts: list[Any], run: list[Any]) -> bool:
    if not run:
        return not parts
    width = len(run)
    return any(parts[k:k + width] == run for k in range(len(parts) - width + 1))
