"""Converting between OpenAI-format messages and Anthropic's Messages API, both ways.

mnemo speaks OpenAI's shape everywhere; Anthropic's differs in four ways handled here:

* the system prompt is a separate ``system`` parameter — it gets a ``cache_control``
  breakpoint, because mnemo freezes it for the whole session (B-section), so every turn
  after the first reads it from the cache;
* an assistant's ``tool_calls`` become ``tool_use`` blocks (arguments as an object);
* ``role: tool`` results become ``tool_result`` blocks inside a *user* message, and all
  results answering one assistant turn must travel in that one user message;
* roles must alternate, so consecutive messages of one role are merged.

Pure functions on plain dicts: no SDK import, so they are tested without the extra.
Responses are read through ``_field`` so SDK objects and dicts both work.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mnemo.llm.types import ChatResponse, Usage
from mnemo.messages import Message, ToolCall, content_text, tool_calls_of

__all__ = [
    "CACHE_BREAKPOINT",
    "STOP_REASONS",
    "from_anthropic_response",
    "to_anthropic_messages",
    "to_anthropic_tools",
]

CACHE_BREAKPOINT = {"type": "ephemeral"}

# Anthropic stop_reason → the OpenAI finish_reason callers understand.
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}

# Anthropic requires the conversation to open with a user turn.
_OPENING_USER_TURN = "(The conversation continues from earlier turns.)"


def _text_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The content of an OpenAI message as Anthropic content blocks (empty text dropped)."""
    content = message.get("content")
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "image_url":
            blocks.append(_image_block(str(part.get("image_url", {}).get("url", ""))))
        elif isinstance(part, Mapping) and part.get("text"):
            blocks.append({"type": "text", "text": str(part["text"])})
        elif not isinstance(part, Mapping) and str(part):
            blocks.append({"type": "text", "text": str(part)})
    return blocks


def _image_block(url: str) -> dict[str, Any]:
    if url.startswith("data:") and ";base64," in url:
        header, data = url.split(";base64,", 1)
        media_type = header[len("data:"):] or "image/png"
        return {"type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _tool_use_block(call: ToolCall | Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    raw = function.get("arguments") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except json.JSONDecodeError:
        arguments = {"_raw_arguments": raw}  # keep what the model wrote rather than fail
    if not isinstance(arguments, dict):
        arguments = {"value": arguments}
    return {"type": "tool_use", "id": str(call.get("id", "")),
            "name": str(function.get("name", "")), "input": arguments}


def _append(turns: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    """Add blocks as a turn of ``role``, merging into the previous turn of the same role."""
    if not blocks:
        return
    if turns and turns[-1]["role"] == role:
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role, "content": list(blocks)})


def to_anthropic_messages(
    messages: Sequence[Message | dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """OpenAI messages → ``(system_blocks, anthropic_messages)``, both new lists.

    The leading system (or developer) messages become the ``system`` blocks, the last of
    them carrying the cache breakpoint. A system message later in the conversation has no
    place in Anthropic's format and travels as a user note instead.
    """
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    leading = True
    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            if leading:
                system.extend(_text_blocks(message))
            else:
                note = content_text(message)
                if note:
                    _append(turns, "user", [{"type": "text", "text": f"[System note] {note}"}])
            continue
        leading = False
        if role == "tool":
            result = content_text(message)
            block = {"type": "tool_result", "tool_use_id": str(message.get("tool_call_id", "")),
                     "content": result or "(no output)"}
            _append(turns, "user", [block])
        elif role == "assistant":
            blocks = _text_blocks(message)
            blocks.extend(_tool_use_block(call) for call in tool_calls_of(message))
            _append(turns, "assistant", blocks)
        else:
            _append(turns, "user", _text_blocks(message))
    if system:
        system[-1] = {**system[-1], "cache_control": dict(CACHE_BREAKPOINT)}
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": _OPENING_USER_TURN}]})
    return system, turns


def to_anthropic_tools(tools: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """Inner (or wrapped) OpenAI function schemas → Anthropic tool definitions."""
    converted: list[dict[str, Any]] = []
    for tool in tools or ():
        function = tool.get("function", tool) if tool.get("type") == "function" else tool
        converted.append({
            "name": str(function["name"]),
            "description": str(function.get("description", "")),
            "input_schema": dict(function.get("parameters") or {"type": "object",
                                                               "properties": {}}),
        })
    return converted


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def from_anthropic_response(response: Any, *, model: str = "") -> ChatResponse:
    """An Anthropic ``Message`` (SDK object or dict) → a ``ChatResponse``.

    Text blocks are joined into ``content``; ``tool_use`` blocks become ``tool_calls``
    with JSON arguments. ``prompt_tokens`` counts cached input too (what fills the window).
    """
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in _field(response, "content", None) or []:
        kind = _field(block, "type")
        if kind == "text":
            texts.append(str(_field(block, "text", "")))
        elif kind == "tool_use":
            calls.append({
                "id": str(_field(block, "id", "")),
                "type": "function",
                "function": {"name": str(_field(block, "name", "")),
                             "arguments": json.dumps(_field(block, "input", {}) or {},
                                                     ensure_ascii=False)},
            })
    message: Message = {"role": "assistant", "content": "".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    usage = _field(response, "usage", None)
    prompt = sum(int(_field(usage, key, 0) or 0) for key in (
        "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    completion = int(_field(usage, "output_tokens", 0) or 0)
    stop = str(_field(response, "stop_reason", "") or "")
    finish = STOP_REASONS.get(stop, "tool_calls" if calls else "stop")
    return ChatResponse(
        message=message,
        usage=Usage.of(prompt, completion),
        finish_reason=finish,
        model=str(_field(response, "model", "") or model),
    )
