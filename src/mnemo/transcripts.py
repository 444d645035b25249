"""Reading a transcript a person hands in: a JSON list of messages, or JSONL.

``mnemo compress FILE``, ``mnemo sessions import FILE`` and anything else that takes a
conversation from outside go through ``parse_transcript``, which accepts a JSON array of
chat messages, an object with a ``"messages"`` array (an API request body), or one
message per line (JSONL, blank lines ignored). Anything malformed is a ``UsageError``
whose one line names the line or index and what is wrong, so the file can be fixed
without guessing.
"""

from __future__ import annotations

import json
from typing import Any

from mnemo.errors import UsageError
from mnemo.messages import ROLES, Message

__all__ = ["parse_transcript", "validate_message"]


def parse_transcript(text: str, *, source: str = "transcript") -> list[Message]:
    """The messages of a JSON or JSONL transcript, checked one by one."""
    body = text.lstrip("\ufeff \t\r\n")
    if not body:
        raise UsageError(f"{source}: the file is empty; give a JSON list of messages or JSONL")
    if body.startswith("["):
        return _parse_json(body, source)
    if body.startswith("{"):
        try:
            whole = json.loads(body)
        except ValueError:
            whole = None  # not one object: read it as JSONL below
        except RecursionError:
            raise UsageError(_too_deep(source)) from None
        if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
            return _checked(whole["messages"], source, by_line=False)
        if isinstance(whole, dict):
            return _checked([whole], source, by_line=True)
    messages: list[Any] = []
    lines: list[int] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            messages.append(_load(line, f"{source} line {number}", one_line=True))
            lines.append(number)
    return _checked(messages, source, by_line=True, line_numbers=lines)


def validate_message(message: Any) -> str | None:
    """What is wrong with one message, or ``None`` when it is a valid chat message."""
    if not isinstance(message, dict):
        return f"a message must be a JSON object, got {_kind(message)}"
    role = message.get("role")
    if role not in ROLES:
        shown = "no 'role'" if role is None else f"role {role!r}"
        return f"{shown}; the role must be one of {', '.join(ROLES)}"
    content = message.get("content")
    if content is None:
        if role != "assistant":
            return f"a {role} message needs 'content' (a string or a list of parts)"
        if not message.get("tool_calls"):
            return "an assistant message needs 'content' or 'tool_calls'"
    elif isinstance(content, list):
        for i, part in enumerate(content):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                return f"content part {i} must be an object with a 'type'"
    elif not isinstance(content, str):
        return f"'content' must be a string, a list of parts or null, got {_kind(content)}"
    if "tool_calls" in message and message["tool_calls"] is not None:
        problem = _check_tool_calls(role, message["tool_calls"])
        if problem:
            return problem
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        return "a tool message needs a 'tool_call_id' string"
    return None


def _check_tool_calls(role: str, calls: Any) -> str | None:
    if role != "assistant":
        return f"only assistant messages may have 'tool_calls' (this one is {role})"
    if not isinstance(calls, list):
        return f"'tool_calls' must be a list, got {_kind(calls)}"
    for i, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("id"), str):
            return f"tool call {i} needs an 'id' string"
        function = call.get("function")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return f"tool call {i} needs a 'function' object with a 'name'"
        if not isinstance(function.get("arguments", ""), str | dict):
            return f"tool call {i}: 'arguments' must be a JSON string"
    return None


def _parse_json(body: str, source: str) -> list[Message]:
    data = _load(body, source)
    if not isinstance(data, list):
        raise UsageError(f"{source}: expected a JSON list of messages, got {_kind(data)}")
    return _checked(data, source, by_line=False)


def _load(text: str, where: str, *, one_line: bool = False) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = f"column {exc.colno}" if one_line else f"line {exc.lineno}, column {exc.colno}"
        raise UsageError(f"{where}: not valid JSON ({exc.msg} at {at})") from None
    except RecursionError:
        raise UsageError(_too_deep(where)) from None


def _too_deep(where: str) -> str:
    # json's parser recurses once per nested list or object; a chat message is shallow.
    return (f"{where}: the JSON is nested too deeply to be a list of chat messages; give a "
            "JSON list of messages or JSONL")


def _checked(messages: list[Any], source: str, *, by_line: bool,
             line_numbers: list[int] | None = None) -> list[Message]:
    if not messages:
        raise UsageError(f"{source}: no messages found")
    for i, message in enumerate(messages):
        problem = validate_message(message)
        if problem:
            where = (f"line {line_numbers[i]}" if by_line and line_numbers
                     else f"line {i + 1}" if by_line else f"message at index {i}")
            raise UsageError(f"{source} {where}: {problem}")
    return messages


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(value),
                                                                       type(value).__name__)
