"""Cutting one oversized message down to size: head and tail kept, a marker between (C19).

When removing the middle of a conversation is not enough — one paste or tool output is
bigger than the room left — the message itself is shortened. Its beginning and its end
stay (a log's first lines say what ran, its last lines how it ended) and a marker in
between says how much was cut and where the whole text is: the session archive, where
``session_search`` finds it and the agent can read it back. The cut never splits a line
when a line break is near, and never touches the message's role, ids or tool calls'
structure, so a list that was valid for an API (C12) stays valid.

Tool-call arguments are JSON; when they are what is too big, an object's string values
are cut (its keys stay, so the call still reads as the call it was), and anything else
becomes a small JSON object holding the cut text, so they still parse.
"""

from __future__ import annotations

import json
from typing import Any

from mnemo.context.markers import SUMMARY_PREFIX
from mnemo.messages import Message

__all__ = ["ARCHIVE", "CUT_MARKER_START", "arguments_chars", "cut_marker", "cut_message",
           "cut_text", "message_kind"]

CUT_MARKER_START = "[… "
ARCHIVE = "the session archive (session_search finds it)"
_NEAR_LINE_BREAK = 200  # characters a cut may move to land on a line break


def cut_marker(removed_chars: int, kept_in: str = ARCHIVE) -> str:
    """The marker put where ``removed_chars`` characters were cut out; ``kept_in`` says
    where the whole text is."""
    return (f"{CUT_MARKER_START}{removed_chars:,} characters cut here to fit the model's "
            f"context window; the whole text is kept in {kept_in} …]")


def cut_text(text: str, keep_chars: int, kept_in: str = ARCHIVE) -> str:
    """``text`` with its middle replaced by a marker so about ``keep_chars`` characters of
    it remain (half from the start, half from the end); unchanged if it is short enough."""
    keep_chars = max(0, keep_chars)
    if len(text) <= keep_chars + len(cut_marker(len(text))):
        return text
    near = min(_NEAR_LINE_BREAK, keep_chars // 4)  # a short cut must not lose half itself
    head_end = _near_break(text, keep_chars // 2, near, backwards=True)
    tail_start = _near_break(text, len(text) - (keep_chars - keep_chars // 2), near,
                             backwards=False)
    if tail_start < head_end:  # the two searches crossed on a text with few line breaks
        head_end = tail_start = keep_chars // 2
    removed = tail_start - head_end
    head, tail = text[:head_end].rstrip(), text[tail_start:].lstrip("\n")
    return "\n".join(part for part in (head, cut_marker(removed, kept_in), tail) if part)


def _near_break(text: str, at: int, near: int, *, backwards: bool) -> int:
    """``at``, moved to just after (backwards: before) a line break at most ``near``
    characters away, if there is one."""
    if backwards:
        found = text.rfind("\n", max(0, at - near), at)
        return found if found > 0 else at
    found = text.find("\n", at, at + near)
    return found + 1 if found >= 0 else at


def cut_message(message: Message, keep_chars: int, kept_in: str = ARCHIVE) -> Message:
    """A copy of ``message`` whose text (content, text parts, tool-call arguments) is cut
    to about ``keep_chars`` characters in all, each part in proportion to its length."""
    copy: dict[str, Any] = dict(message)
    content = message.get("content")
    calls = list(message.get("tool_calls") or [])
    sizes = [len(content) if isinstance(content, str) else 0]
    if isinstance(content, list):
        sizes = [len(str(p.get("text", ""))) if isinstance(p, dict) else 0 for p in content]
    arg_sizes = [len(_arguments(c)) for c in calls]
    total = sum(sizes) + sum(arg_sizes)
    if total == 0:
        return copy  # type: ignore[return-value]

    def share(size: int) -> int:
        return keep_chars * size // total

    if isinstance(content, str):
        copy["content"] = _cut_content(content, share(len(content)), kept_in)
    elif isinstance(content, list):
        copy["content"] = [
            {**p, "text": _cut_content(str(p.get("text", "")), share(size), kept_in)}
            if isinstance(p, dict) and p.get("type") == "text" else p
            for p, size in zip(content, sizes, strict=True)]
    if calls:
        copy["tool_calls"] = [_cut_call(c, share(size), kept_in) for c, size in
                              zip(calls, arg_sizes, strict=True)]
    return copy  # type: ignore[return-value]


def _cut_content(text: str, keep_chars: int, kept_in: str) -> str:
    """``cut_text``, except that a summary keeps its prefix whole: the prefix is how the
    next compaction (C10) and memory's grounding know the message for a summary — cut
    into, the summary's lines passed for what the user said."""
    if not text.startswith(SUMMARY_PREFIX):
        return cut_text(text, keep_chars, kept_in)
    head = len(SUMMARY_PREFIX)
    return text[:head] + cut_text(text[head:], keep_chars - head, kept_in)


def arguments_chars(message: Message) -> int:
    """Characters of a message's tool-call arguments."""
    return sum(len(_arguments(c)) for c in message.get("tool_calls") or [])


def _arguments(call: Any) -> str:
    function = call.get("function") if isinstance(call, dict) else None
    args = function.get("arguments") if isinstance(function, dict) else None
    return args if isinstance(args, str) else ""


def _cut_call(call: Any, keep_chars: int, kept_in: str) -> Any:
    args = _arguments(call)
    if cut_text(args, keep_chars, kept_in) == args:
        return call
    return {**call, "function": {**call["function"],
                                 "arguments": _cut_arguments(args, keep_chars, kept_in)}}


def _cut_arguments(args: str, keep_chars: int, kept_in: str) -> str:
    """``args`` cut to about ``keep_chars``: a JSON object keeps its keys and its other
    values, its strings cut each in proportion to its length — a model that reads its
    own call back sees the call it made (a 0.5B model shown ``{"cut_arguments": …}``
    answered every later turn with such a call, as text); anything else is held, cut,
    in ``{"cut_arguments": …}``."""
    try:
        parsed = json.loads(args)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        strings = sum(len(v) for v in parsed.values() if isinstance(v, str))
        room = keep_chars - (len(args) - strings)  # what keys and other values leave
        if strings and room > 0:
            return json.dumps({key: cut_text(value, room * len(value) // strings, kept_in)
                               if isinstance(value, str) else value
                               for key, value in parsed.items()}, ensure_ascii=False)
    return json.dumps({"cut_arguments": cut_text(args, keep_chars, kept_in)})


def message_kind(message: Message, *, newest: bool = False) -> str:
    """What a message is, for a notice: "tool output", "paste", "reply" …"""
    role = message.get("role")
    if newest:
        return "your newest message"
    if role == "tool":
        return "tool output"
    if role == "user":
        return "paste"
    if role == "assistant":
        return "tool call" if message.get("tool_calls") else "reply"
    return str(role)
