"""Step 1 of compression (C6): clear old tool output, no model needed.

Tool results are usually the largest and the most perishable part of an agent's context:
a file read twenty turns ago has been acted on since. Walking back from the end, the
newest results that fit in the tail budget are kept; every older ``tool`` message longer
than 200 characters becomes a placeholder plus one line that says which call produced it,
so the model still knows what it did. Of identical large outputs (the same file read three
times) only the newest copy is kept, wherever the older ones are.

The walk is one pass backwards for the tail plus one forwards over the messages: linear
in the number of messages, and outputs are compared whole only when their lengths and
ends agree (the same file read twice), so the text of the others is not even hashed.
``parse_call`` reads a tool call (its arguments are JSON text, a dict, or whatever a
client sent) for everything in this package that needs to say what a call did.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Any

from mnemo.context.markers import PRUNED_TOOL_PLACEHOLDER
from mnemo.messages import Message, content_text, tool_calls_of, with_content

__all__ = [
    "PRUNE_MIN_CHARS",
    "ParsedCall",
    "calls_by_id",
    "describe_call",
    "json_or_raw",
    "key_arguments",
    "parse_call",
    "protected_start",
    "prune_tool_results",
]

PRUNE_MIN_CHARS = 200  # tool output at most this long is cheaper to keep than to describe

# Arguments that best say what a call did, in the order they are shown.
_KEY_ARGS = ("path", "file_path", "filepath", "file", "filename", "command", "cmd", "url",
             "query", "pattern", "name", "target", "id")
_MAX_ARGS_SHOWN = 3
_MAX_ARG_CHARS = 60


def protected_start(tokens: Sequence[int], budget: int, *, min_messages: int = 3) -> int:
    """Index of the first message inside the newest ``budget`` tokens.

    At least ``min_messages`` messages are protected even when they alone exceed the
    budget, so the output the model is acting on right now is never cleared.
    """
    accumulated = 0
    start = len(tokens)
    for i in range(len(tokens) - 1, -1, -1):
        kept = len(tokens) - start
        if accumulated + tokens[i] > budget and kept >= min_messages:
            break
        accumulated += tokens[i]
        start = i
    return start


def describe_call(name: str, arguments: Any, size: int, *, duplicate: bool = False) -> str:
    """One line naming a call by its key arguments, e.g. ``read_file path=a.py (1,204 chars)``."""
    shown = key_arguments(arguments)
    label = " ".join(part for part in (name or "tool", shown) if part)
    note = f"{size:,} chars; identical to a later result" if duplicate else f"{size:,} chars"
    return f"{label} ({note})"


def prune_tool_results(
    messages: Sequence[Message],
    tokens: Sequence[int],
    budget: int,
) -> tuple[list[Message], list[int]]:
    """Clear old and duplicate tool output; return the new list and the indices cleared.

    ``tokens`` holds the rough token count of each message (the caller has it already).
    Messages that are not cleared are the caller's own objects; cleared ones are copies.
    """
    start = protected_start(tokens, budget)
    # Outputs are told apart by a cheap key first — length, first and last characters —
    # and only those that share one are compared whole: most outputs are unique, and
    # hashing every one (186 MB on the bench transcript) cost more than the rest of
    # this step. The calls are gathered in the same pass.
    outputs: list[tuple[int, str, _Key]] = []
    seen: set[_Key] = set()
    shared: set[_Key] = set()
    calls: dict[str, tuple[str, Any]] = {}
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            text = message.get("content")
            if not isinstance(text, str):
                text = content_text(message)
            if len(text) > PRUNE_MIN_CHARS and not text.startswith(PRUNED_TOOL_PLACEHOLDER):
                key = (len(text), text[:_PEEK], text[-_PEEK:])
                outputs.append((i, text, key))
                if key in seen:
                    shared.add(key)
                else:
                    seen.add(key)
        elif role == "assistant" and (listed := message.get("tool_calls")):
            _add_calls(listed, calls)
    if not outputs:
        return list(messages), []
    newest: dict[str, int] = {}  # the texts that share a key: the last index of each
    if shared:
        for i, text, key in outputs:
            if key in shared:
                newest[text] = i
    result = list(messages)
    pruned: list[int] = []
    for i, text, key in outputs:
        duplicate = bool(shared) and key in shared and newest[text] != i
        if i >= start and not duplicate:
            continue  # in the tail and the newest of its text: kept as it is
        message = messages[i]
        call_id = message.get("tool_call_id", "")
        found = calls.get(call_id if isinstance(call_id, str) else str(call_id))
        label = _label(*found) if found else "tool"
        note = (f"{len(text):,} chars; identical to a later result" if duplicate
                else f"{len(text):,} chars")
        result[i] = with_content(message, f"{PRUNED_TOOL_PLACEHOLDER}\n{label} ({note})")
        pruned.append(i)
    return result, pruned


_PEEK = 32  # characters at each end of an output in its cheap key
_Key = tuple[int, str, str]


# ``describe_call``'s label by (name, arguments as sent): a session clears the same calls
# at every compaction, so their arguments are parsed once, not each time. Bounded.
_LABELS: dict[tuple[str, str], str] = {}
_LABELS_LIMIT = 50_000


def _label(name: str, raw: Any) -> str:
    """``name`` and its key arguments, as ``describe_call`` shows them."""
    if not isinstance(raw, str):
        return " ".join(part for part in (name or "tool", key_arguments(raw)) if part)
    key = (name, raw)
    found = _LABELS.get(key)
    if found is None:
        # Parsed here, then again inside, as ``describe_call`` of a parsed call does.
        shown = key_arguments(json_or_raw(raw))
        found = " ".join(part for part in (name or "tool", shown) if part)
        if len(_LABELS) >= _LABELS_LIMIT:
            _LABELS.clear()
        _LABELS[key] = found
    return found


def _add_calls(listed: Any, calls: dict[str, tuple[str, Any]]) -> None:
    """Add the name and unparsed arguments of the tool calls ``listed``, by id."""
    for call in listed:
        if not isinstance(call, dict):
            continue  # as ``tool_calls_of`` skips it
        function: Any = call.get("function")
        if not isinstance(function, dict):
            function = {}
        call_id = call.get("id", "")
        calls[call_id if isinstance(call_id, str) else str(call_id)] = (
            str(function.get("name", "") or ""), function.get("arguments"))


@dataclass(frozen=True)
class ParsedCall:
    """One tool call: ``arguments`` is the parsed JSON when the text was JSON, else the
    value as sent (a dict, or text that is not JSON)."""

    id: str
    name: str
    arguments: Any


def parse_call(call: Any) -> ParsedCall:
    """The id, name and arguments of one tool call (missing parts are empty)."""
    raw: dict[str, Any] = call if isinstance(call, dict) else {}
    function = raw.get("function")
    if not isinstance(function, dict):
        function = {}
    return ParsedCall(str(raw.get("id", "")), str(function.get("name", "") or ""),
                      json_or_raw(function.get("arguments")))


def json_or_raw(arguments: Any) -> Any:
    """Tool-call arguments parsed when they are JSON text; anything else as it is."""
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError, RecursionError):  # not JSON: kept as written
            return json.loads(arguments)
    return arguments


def calls_by_id(messages: Sequence[Message],
                wanted: Container[str] | None = None) -> dict[str, ParsedCall]:
    """The tool calls of the assistant messages, by id: all of them, or those in
    ``wanted`` (only those are parsed: arguments can be large)."""
    calls: dict[str, ParsedCall] = {}
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for call in tool_calls_of(message):
            if wanted is None or str(call.get("id", "")) in wanted:
                parsed = parse_call(call)
                calls[parsed.id] = parsed
    return calls


def key_arguments(arguments: Any) -> str:
    """The few arguments that say what a call did, as ``k=v`` pairs (JSON text or a dict)."""
    arguments = json_or_raw(arguments)
    if isinstance(arguments, str):
        return _clip(arguments)
    if not isinstance(arguments, dict):
        return _clip(json.dumps(arguments, ensure_ascii=False, default=str)) if arguments else ""
    scalars = {k: v for k, v in arguments.items()
               if isinstance(v, str | int | float | bool) and v != ""}
    ordered = [k for k in _KEY_ARGS if k in scalars]
    ordered += [k for k in scalars if k not in ordered]
    return " ".join(f"{k}={_clip(str(scalars[k]))}" for k in ordered[:_MAX_ARGS_SHOWN])


def _clip(text: str) -> str:
    flat = " ".join(text[: _MAX_ARG_CHARS * 4].split())
    return flat if len(flat) <= _MAX_ARG_CHARS else flat[: _MAX_ARG_CHARS - 1] + "…"
