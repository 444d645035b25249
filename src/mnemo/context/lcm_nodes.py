"""The nodes of the lossless context engine: their ids, their marks, taking them apart.

An ``lcm`` compaction leaves two kinds of *node* in the conversation. Each is one message
that stands for originals kept in the session archive, and says how to get them back:

* a **summary node** replaces the summarised span. Its content is ``SUMMARY_PREFIX`` (so
  every part of mnemo that recognises a compaction summary — head boundary, resumed
  sessions, the compressor — recognises a node too), a blank line, the node header
  ``[LCM SUMMARY NODE n1a2b3c4d — 57 earlier messages compacted; context_expand(…) …]``,
  a blank line and the summary;
* a **tool-output node** is an old tool result cleared by step 1 (C6): the usual
  placeholder and call description, then ``[LCM TOOL OUTPUT NODE n… — context_expand(…)
  returns the full output]``.

The node id (``n`` + 8 hex digits) is made here, because the database id of the message
is not known until the agent stores the engine's output. A message is a node only when
the mark is where the engine puts it (at the start of a summary, on the line after a
placeholder), so a tool result or a summary that merely *quotes* a node is never taken
for one.

``take_apart_span`` is how *every* engine reads earlier summaries in the middle it is
about to summarise (C10): plain summaries and summary nodes alike become the previous
summary (node headers removed, never nested text), the rest are the turns. The
compressor uses it too, so a conversation compacted by ``lcm`` and then by the
compressor (the engine was switched) is taken apart the same way.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mnemo.context.markers import (
    PRUNED_TOOL_PLACEHOLDER,
    SUMMARY_PREFIX,
    is_summary_message,
    split_summary_message,
    strip_fallback_notice,
)
from mnemo.messages import Message, content_text, with_content

__all__ = [
    "NODE_ID_RE",
    "SUMMARY_NODE_TAG",
    "TOOL_NODE_TAG",
    "NodeKind",
    "Span",
    "new_node_id",
    "node_of",
    "split_node_body",
    "summary_node_header",
    "take_apart_span",
    "tool_node_line",
    "with_tool_node",
]

NodeKind = Literal["summary", "tool_output"]

SUMMARY_NODE_TAG = "[LCM SUMMARY NODE"
TOOL_NODE_TAG = "[LCM TOOL OUTPUT NODE"
NODE_ID_RE = re.compile(r"n[0-9a-f]{8}")
_SUMMARY_HEADER = re.compile(r"\[LCM SUMMARY NODE (n[0-9a-f]{8}) [^\n]*\]")
_TOOL_LINE = re.compile(r"\[LCM TOOL OUTPUT NODE (n[0-9a-f]{8}) [^\n]*\]")
_CHILDREN_SHOWN = 5  # child node ids named in a header; more are counted


def new_node_id(taken: Container[str] = ()) -> str:
    """A fresh node id, ``n`` + 8 hex digits, not in ``taken``."""
    while True:
        node_id = f"n{secrets.token_hex(4)}"
        if node_id not in taken:
            return node_id


def summary_node_header(node_id: str, covered: int, child_nodes: Sequence[str] = ()) -> str:
    """The first line of a summary node: what it stands for and how to get it back."""
    inner = ""
    if child_nodes:
        shown = ", ".join(child_nodes[:_CHILDREN_SHOWN])
        more = len(child_nodes) - _CHILDREN_SHOWN
        label = "node" if len(child_nodes) == 1 else "nodes"
        inner = f", including earlier {label} {shown}" + (f" and {more} more" if more > 0 else "")
    noun = "message" if covered == 1 else "messages"
    return (f"{SUMMARY_NODE_TAG} {node_id} — {covered} earlier {noun} compacted{inner}; "
            f'context_expand(node_id="{node_id}") returns them, context_grep(pattern) '
            "searches everything archived in this session]")


def split_node_body(body: str) -> tuple[str | None, str]:
    """``(node id, summary)`` of a summary body; ``(None, body)`` when it has no header."""
    match = _SUMMARY_HEADER.match(body)
    if match is None:
        return None, body
    return match.group(1), body[match.end():].strip()


def tool_node_line(node_id: str) -> str:
    return (f'{TOOL_NODE_TAG} {node_id} — context_expand(node_id="{node_id}") returns the '
            "full output]")


def with_tool_node(message: Message, node_id: str) -> Message:
    """A cleared tool result (placeholder + call line) with the node line after them."""
    placeholder, _, rest = content_text(message).partition("\n")
    description, _, more = rest.partition("\n")
    lines = [placeholder, description, tool_node_line(node_id)] + ([more] if more else [])
    return with_content(message, "\n".join(lines))


def node_of(message: Message | dict[str, Any]) -> tuple[str, NodeKind] | None:
    """``(node id, kind)`` when ``message`` is a node this engine made, else ``None``."""
    role = message.get("role")
    if role == "tool":
        text = content_text(message)
        if not text.startswith(PRUNED_TOOL_PLACEHOLDER):
            return None
        for line in text.split("\n", 3)[1:3]:
            match = _TOOL_LINE.match(line)
            if match:
                return match.group(1), "tool_output"
        return None
    if role not in ("user", "assistant") or not is_summary_message(message):
        return None
    content = message.get("content")
    head = (str(content[0].get("text", "")) if isinstance(content, list)
            else content if isinstance(content, str) else "")
    match = _SUMMARY_HEADER.match(head[len(SUMMARY_PREFIX):].lstrip("\n"))
    return (match.group(1), "summary") if match else None


@dataclass
class Span:
    """The middle about to be compacted, taken apart like C10 asks."""

    previous: str | None  # the summaries of earlier nodes in it, headers removed
    turns: list[Message] = field(default_factory=list)  # everything else, to summarise
    child_nodes: list[str] = field(default_factory=list)  # ids of the summary nodes in it


def take_apart_span(middle: Sequence[Message]) -> Span:
    """Earlier summaries (nodes or not) become the previous summary, never nested text;
    a turn a summary was merged into (C12 c) is summarised as itself."""
    summaries: list[str] = []
    span = Span(previous=None)
    for message in middle:
        if not is_summary_message(message):
            span.turns.append(message)
            continue
        body, original = split_summary_message(message)
        node_id, summary = split_node_body(body)
        if node_id is not None:
            span.child_nodes.append(node_id)
        summary = strip_fallback_notice(summary)
        if summary:
            summaries.append(summary)
        if original is not None:
            span.turns.append(original)
    span.previous = "\n\n".join(summaries) or None
    return span
