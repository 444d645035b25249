"""OpenAI Agents SDK input items to mnemo messages and back, losslessly (SPEC I4).

The Agents SDK keeps a conversation as Responses API input items (plain dicts). They map
to chat messages like this:

* a message item with role ``user``, ``system`` or ``developer`` → that role, its text
  (``input_text`` parts become text parts, images and files are named by type);
* the assistant side of one model response — its output messages, ``function_call``
  items and reasoning items, consecutive in the list — → one ``assistant`` message with
  the text joined and the calls as ``tool_calls``;
* ``function_call_output`` → ``tool``;
* any other item (hosted tool calls, compaction items …) rides with its neighbour.

Every mnemo message carries its original items under ``"openai_agents"`` (JSON as they
are), so ``from_mnemo`` gives back exactly what ``to_mnemo`` was given for every message
the engine did not change, and rebuilds the others (a pruned tool output, a summary) as
plain items of the same kind.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from mnemo.integrations._carry import carried, semantic, tool_call, with_carried
from mnemo.messages import ContentPart, Message, content_text

__all__ = ["KEY", "from_mnemo", "to_mnemo"]

KEY = "openai_agents"
Item = dict[str, Any]
_INPUT_ROLES = ("user", "system", "developer")
_ASSISTANT_TYPES = ("function_call", "reasoning")


def _kind(item: Item) -> str:
    """"input", "assistant", "output" (a tool result) or "other"."""
    kind = item.get("type")
    if kind in (None, "message"):
        return "assistant" if item.get("role") == "assistant" else "input"
    if kind in _ASSISTANT_TYPES:
        return "assistant"
    if kind == "function_call_output":
        return "output"
    return "other"


def to_mnemo(items: Sequence[Item]) -> list[Message]:
    """mnemo messages for the SDK's items (new dicts; the items are not changed)."""
    out: list[Message] = []
    riders: list[Item] = []
    assistant: list[Item] = []

    def flush() -> None:
        nonlocal riders
        if assistant:
            out.append(with_carried(_assistant_view(assistant), KEY,
                                    {"items": [*riders, *assistant]}))
            assistant.clear()
            riders = []

    for item in items:
        kind = _kind(item)
        if kind == "assistant":
            assistant.append(item)
            continue
        if kind == "other":
            if assistant:
                assistant.append(item)
            elif out:
                carried(out[-1], KEY)["items"].append(item)  # our own new dict
            else:
                riders.append(item)
            continue
        flush()
        view = _input_view(item) if kind == "input" else _output_view(item)
        out.append(with_carried(view, KEY, {"items": [*riders, item]}))
        riders = []
    flush()
    return out


def _text_of(content: Any) -> str | list[ContentPart]:
    if isinstance(content, str):
        return content
    parts: list[ContentPart] = []
    for part in content or []:
        kind = str(part.get("type", "")) if isinstance(part, dict) else ""
        if kind in ("input_text", "output_text", "text"):
            parts.append({"type": "text", "text": str(part.get("text", ""))})
        elif kind == "refusal":
            parts.append({"type": "text", "text": str(part.get("refusal", ""))})
        else:
            parts.append({"type": kind or "attachment"})
    return parts


def _input_view(item: Item) -> Message:
    role = item.get("role") if item.get("role") in _INPUT_ROLES else "user"
    return {"role": role, "content": _text_of(item.get("content"))}  # type: ignore[typeddict-item]


def _output_view(item: Item) -> Message:
    output = item.get("output")
    text = output if isinstance(output, str) else content_text({"content": _text_of(output)})
    return {"role": "tool", "tool_call_id": str(item.get("call_id", "")), "content": text}


def _assistant_view(items: Sequence[Item]) -> Message:
    texts: list[str] = []
    calls = []
    for item in items:
        if item.get("type") == "function_call":
            calls.append(tool_call(str(item.get("call_id", "")), str(item.get("name", "")),
                                   str(item.get("arguments") or "{}")))
        elif _kind(item) == "assistant" and item.get("type") in (None, "message"):
            texts.append(content_text({"content": _text_of(item.get("content"))}))
    view: Message = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
    if calls:
        view["tool_calls"] = calls
    elif not texts:
        view["content"] = ""
    return view


def _view(items: Sequence[Item]) -> Message | None:
    """The semantic view the carried ``items`` had when converted (None: not carried)."""
    main = [i for i in items if _kind(i) != "other"]
    if not main:
        return None
    kind = _kind(main[0])
    if kind == "assistant":
        return _assistant_view(items)
    return _input_view(main[0]) if kind == "input" else _output_view(main[0])


def from_mnemo(messages: Sequence[Message]) -> list[Item]:
    """The SDK's items for mnemo messages (new lists; carried items are reused as they are)."""
    out: list[Item] = []
    for message in messages:
        value = carried(message, KEY)
        items: list[Item] = list(value.get("items") or []) if isinstance(value, dict) else []
        view = _view(items)
        if view is not None and semantic(view) == semantic(message):
            out += items
            continue
        out += [i for i in items if _kind(i) in ("other", "assistant")
                and i.get("type") not in (None, "message", "function_call")]
        out += _rebuilt(message, items)
    return out


def _rebuilt(message: Message, originals: Sequence[Item]) -> list[Item]:
    role, text = message["role"], content_text(message)
    if role == "tool":
        return [{"type": "function_call_output", "call_id": str(message.get("tool_call_id", "")),
                 "output": text}]
    if role != "assistant":
        return [{"role": role, "content": text}]
    calls_by_id = {str(i.get("call_id")): i for i in originals if i.get("type") == "function_call"}
    out: list[Item] = [{"role": "assistant", "content": text}] if text else []
    for call in message.get("tool_calls") or []:
        function: dict[str, Any] = cast(dict[str, Any], call).get("function") or {}
        original = calls_by_id.get(str(call.get("id")))
        if original is not None and original.get("name") == function.get("name") and \
                original.get("arguments") == function.get("arguments"):
            out.append(original)
            continue
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        out.append({"type": "function_call", "call_id": str(call.get("id", "")),
                    "name": str(function.get("name", "")), "arguments": arguments})
    return out
