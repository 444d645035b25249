"""``context_expand``: the original messages behind a node of the lossless engine (C16).

The originals come back in order, within a token budget. When they do not fit, the
page holds as many messages as fit with each at least a few hundred characters; the
longest contents are then cut to one common length (short messages stay whole), and each
cut says how many characters went and which call returns the message whole.
``next_offset`` continues the page. An older summary node among the originals is shown
as its header only: its summary is already folded into the node being expanded.
"""

from __future__ import annotations

import json
from typing import Any

from mnemo.context.lcm_index import SessionIndex
from mnemo.context.lcm_nodes import NODE_ID_RE
from mnemo.context.lcm_tools import (
    DEFAULT_EXPAND_TOKENS,
    MAX_EXPAND_TOKENS,
    MIN_EXPAND_TOKENS,
    failure,
    integer_argument,
)
from mnemo.context.markers import SUMMARY_END_MARKER, split_summary_message
from mnemo.messages import content_text
from mnemo.sessions import SessionStore, StoredMessage

__all__ = ["CONTEXT_EXPAND_SCHEMA", "context_expand"]

_MIN_KEPT_CHARS = 400  # a message in a page keeps at least this much of its content
_FLOOR_CHARS = 120  # never cut a content below this, even when the page overflows
_ARGUMENT_CHARS = 2_000  # tool-call arguments longer than this are clipped

CONTEXT_EXPAND_SCHEMA: dict[str, Any] = {
    "name": "context_expand",
    "description": (
        "Return the original messages behind a summary node or a cleared tool output, in "
        "order, e.g. context_expand(node_id=\"n1a2b3c4d\"). Node ids appear in the [LCM "
        "SUMMARY NODE …] / [LCM TOOL OUTPUT NODE …] lines and in context_grep results. A "
        "returned message that has its own node_id is an older node: expand it the same "
        "way. Long results are paged (offset, next_offset) and very long messages are cut "
        "to fit max_tokens; each cut says how to read the message whole."),
    "parameters": {
        "type": "object",
        "properties": {
            "node_id": {"type": "string", "description": "The node, e.g. n1a2b3c4d."},
            "max_tokens": {"type": "integer",
                           "description": f"Size budget of the answer; default "
                                          f"{DEFAULT_EXPAND_TOKENS}, {MIN_EXPAND_TOKENS}–"
                                          f"{MAX_EXPAND_TOKENS}."},
            "offset": {"type": "integer",
                       "description": "Start at this message of the node (0 = the first)."},
            "limit": {"type": "integer", "description": "Return at most this many messages."},
        },
        "required": ["node_id"],
    },
}


def context_expand(args: dict[str, Any], *, store: SessionStore,
                   index: SessionIndex) -> dict[str, Any]:
    """The originals behind one node, in order, within the token budget."""
    raw = args.get("node_id")
    node_id = raw.strip().strip("\"'").lower() if isinstance(raw, str) else ""
    if not NODE_ID_RE.fullmatch(node_id):
        return failure(f"node_id {raw!r} is not a node id; use one like n1a2b3c4d from an "
                        "[LCM … NODE …] line of the conversation or a context_grep result")
    try:
        asked = integer_argument(args, "max_tokens", DEFAULT_EXPAND_TOKENS)
        offset = integer_argument(args, "offset", 0) or 0
        limit = integer_argument(args, "limit", None)
    except ValueError as exc:
        return failure(str(exc))
    if offset < 0 or (limit is not None and limit < 1):
        return failure("offset must be 0 or more and limit 1 or more")
    record = index.nodes.get(node_id)
    if record is None:
        return failure(f"no node {node_id} in this session; node ids appear in the [LCM "
                        "SUMMARY NODE …] and [LCM TOOL OUTPUT NODE …] lines of the "
                        "conversation and as node_id in context_grep results")
    asked = DEFAULT_EXPAND_TOKENS if asked is None else asked
    max_tokens = min(max(asked, MIN_EXPAND_TOKENS), MAX_EXPAND_TOKENS)
    child_ids = index.children.get(record.message_id, [])
    result: dict[str, Any] = {"success": True, "node_id": node_id, "kind": record.kind,
                              "messages_total": len(child_ids), "offset": offset}
    if not child_ids:
        result.update(returned=0, messages=[], note="this node stands for no stored "
                      "messages (they were never saved to the session archive)")
        return result
    if offset >= len(child_ids):
        return failure(f"offset {offset} is past the end: node {node_id} holds "
                        f"{len(child_ids)} messages (offsets 0–{len(child_ids) - 1})")
    wanted = child_ids[offset:offset + limit if limit else None]
    originals = {m.id: m for m in store.originals_of(record.message_id)}
    for mid in wanted:  # adopted by the index, not in the node's own list (lcm_index.py)
        if mid not in originals and (extra := store.get_message(mid)) is not None:
            originals[mid] = extra
    entries = [_entry(offset + k, originals[i], index)
               for k, i in enumerate(wanted) if i in originals]
    envelope = len(json.dumps(result, ensure_ascii=False)) + 400  # + the fields set below
    page, cut = _fit(entries, max_tokens * 4 - envelope, node_id)
    end = offset + len(page)
    next_offset = end if page and end < len(child_ids) else None
    result.update(returned=len(page), next_offset=next_offset, messages=page)
    notes: list[str] = []
    if next_offset is not None:
        notes.append(f"messages {offset}–{offset + len(page) - 1} of {len(child_ids)}; "
                     f'context_expand(node_id="{node_id}", offset={next_offset}) returns '
                     "the next ones")
    if cut:
        notes.append(f"{cut} long message(s) were cut to fit max_tokens={max_tokens}; each "
                     "cut says how to read the message whole")
    if any("node_id" in e for e in page):
        notes.append("messages with a node_id are older nodes: expand them the same way")
    if asked != max_tokens:
        notes.append(f"max_tokens was clamped to {max_tokens}")
    if notes:
        result["note"] = "; ".join(notes)
    return result


def _entry(position: int, message: StoredMessage, index: SessionIndex) -> dict[str, Any]:
    own = index.node_at.get(message.id)
    text = message.text
    if own is not None and index.nodes[own].kind == "summary":
        # An older node's summary is already folded into this node's summary; its
        # header (and the turn it was merged into, if any) is what the model needs.
        text = _node_outline(message)
    entry: dict[str, Any] = {"index": position, "message_id": message.id,
                             "role": message.role, "content": text}
    if message.name:
        entry["name"] = message.name
    if message.tool_calls:
        entry["tool_calls"] = [_call(c) for c in message.tool_calls]
    if message.tool_call_id:
        entry["tool_call_id"] = message.tool_call_id
    if own is not None:
        entry["node_id"] = own
        entry["node_kind"] = index.nodes[own].kind
    return entry


def _node_outline(message: StoredMessage) -> str:
    """A summary node as a child: its header, and the turn it was merged into (C12 c)."""
    body, original = split_summary_message(message.to_message())
    header = body.split("\n", 1)[0]
    folded = f"{header}\n(its summary is folded into the summary of the node expanded now)"
    if original is None:
        return folded
    return f"{folded}{SUMMARY_END_MARKER}{content_text(original)}"


def _call(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    text = arguments if isinstance(arguments, str) else json.dumps(arguments,
                                                                   ensure_ascii=False)
    if len(text) > _ARGUMENT_CHARS:
        text = text[:_ARGUMENT_CHARS] + f"…[{len(text) - _ARGUMENT_CHARS:,} chars cut]"
    return {"id": call.get("id"), "name": function.get("name"), "arguments": text}


def _json_len(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _fit(entries: list[dict[str, Any]], budget: int,
         node_id: str) -> tuple[list[dict[str, Any]], int]:
    """The page of ``entries`` that fits ``budget`` characters of JSON, long contents cut
    to one common length; returns the page and how many contents were cut."""
    sizes = [_json_len(e) + 2 for e in entries]
    contents = [_json_len(e["content"]) for e in entries]
    fixed = [s - c for s, c in zip(sizes, contents, strict=True)]
    count, used = 0, 0
    for size_fixed, size_content in zip(fixed, contents, strict=True):
        cost = size_fixed + min(size_content, _MIN_KEPT_CHARS)
        if count and used + cost > budget:
            break
        used += cost
        count += 1
    page = entries[:count]
    if sum(sizes[:count]) <= budget:
        return page, 0
    cap = max(_water_level(contents[:count], budget - sum(fixed[:count])), _FLOOR_CHARS)
    out: list[dict[str, Any]] = []
    cut = 0
    for entry, size in zip(page, contents[:count], strict=True):
        if size > cap:
            entry = _cut(entry, size, cap, node_id)
            cut += 1
        out.append(entry)
    return out, cut


def _water_level(lengths: list[int], room: int) -> int:
    """The largest cap C with ``sum(min(length, C)) <= room``."""
    remaining = room
    ordered = sorted(lengths)
    for k, length in enumerate(ordered):
        left = len(ordered) - k
        if length * left > remaining:
            return max(remaining // left, 0)
        remaining -= length
    return ordered[-1] if ordered else 0


def _cut(entry: dict[str, Any], json_size: int, cap: int, node_id: str) -> dict[str, Any]:
    """``entry`` with its content cut to about ``cap`` JSON characters, head and tail kept."""
    text: str = entry["content"]
    ratio = json_size / max(len(text), 1)  # escaping makes the JSON longer than the text
    marker_room = 220
    keep = max(int((cap - marker_room) / ratio), 0)
    removed = len(text) - keep
    whole = (_json_len(entry) + 600) // 4 + 1
    if whole <= MAX_EXPAND_TOKENS:
        how = (f'context_expand(node_id="{node_id}", offset={entry["index"]}, limit=1, '
               f"max_tokens={whole}) returns this message whole")
    else:
        how = "too long to return whole: context_grep finds the lines you need"
    marker = f"\n…[{removed:,} of {len(text):,} chars cut; {how}]…\n"
    head = keep * 2 // 3
    tail = keep - head
    cut_entry = dict(entry)
    cut_entry["content"] = text[:head] + marker + (text[len(text) - tail:] if tail else "")
    cut_entry["truncated_chars"] = removed
    return cut_entry
