"""Repairing a message list so that a chat API accepts it (C12 a–c).

Three shapes are rejected by the APIs, whoever produced them — an agent that crashed
between a call and its result, a transcript edited by hand, an earlier repair:

* a ``tool`` result whose call is not in the assistant message right before its run of
  results (or that answers a call a second time): it is dropped (C12 a);
* a tool call left without a result: it gets the stub result (C12 b);
* two neighbours with the same role where the API forbids it (C12 c): two user messages,
  or two assistant messages of which the first makes no tool call (after an assistant
  message with calls come its results, so its neighbour is never an assistant). They
  become one message: string contents joined by a blank line, list contents
  concatenated. A summary message stays recognisable when it takes part in a merge: the
  merged message is the summary, the END marker, then the turns (the C12 c form), so
  the next compression takes it apart instead of nesting it (C10).

Dropping a result is what most often creates same-role neighbours
(``[user, tool(ghost), user]``), so the two repairs run in that order.

Every output message carries its *origin*: the index of the input message it is (a
copy of), or ``None`` for a message made here — a stub, or a merge, which stands for its
originals the way a summary does, so they count as removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mnemo.context.assembly import merge_summary_into
from mnemo.context.markers import (
    MISSING_RESULT_STUB,
    is_summary_message,
    split_summary_message,
    summary_content,
)
from mnemo.messages import ContentPart, Message, tool_call_ids, tool_calls_of

__all__ = [
    "Origins",
    "Repair",
    "can_merge",
    "merge_messages",
    "repair_messages",
    "restore_alternation",
    "sanitize_tool_pairs",
    "split_merged_summaries",
]

Origins = list[int | None]


@dataclass
class Repair:
    """A repaired list, the origin of each of its messages, and what was done."""

    messages: list[Message]
    origins: Origins
    dropped: list[int] = field(default_factory=list)  # input indices of stray results
    merged: list[int] = field(default_factory=list)  # input indices folded into a merge
    stubs: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.dropped or self.merged or self.stubs)

    def describe(self) -> str:
        """What the repair did, for a report (empty when it did nothing)."""
        parts: list[str] = []
        if self.dropped:
            n = len(self.dropped)
            parts.append(f"{n} tool result{'s' if n > 1 else ''} without "
                         f"{'their' if n > 1 else 'its'} call dropped")
        if self.merged:
            parts.append(f"{len(self.merged)} messages merged so no two neighbours share a role")
        if self.stubs:
            parts.append(f"{self.stubs} missing tool result{'s' if self.stubs > 1 else ''} "
                         "stubbed")
        return "; ".join(parts)


def repair_messages(messages: Sequence[Message], origins: Origins | None = None, *,
                    stubs: bool = True) -> Repair:
    """All three repairs: stray results dropped, missing ones stubbed (unless ``stubs`` is
    false), same-role neighbours merged. The messages are the caller's own objects
    where nothing changed; merges and stubs are new dicts."""
    start: Origins = list(range(len(messages))) if origins is None else list(origins)
    paired, paired_origins, dropped, added = sanitize_tool_pairs(messages, start,
                                                                 add_stubs=stubs)
    out, out_origins, merged = restore_alternation(paired, paired_origins)
    return Repair(out, out_origins, dropped, merged, added)


def split_merged_summaries(repair: Repair) -> Repair:
    """``repair`` with the latest user message taken apart from the summary merged into
    it (C12 c), when it is one: the summary alone (a message made here), then the
    message as itself, with the origin of the merged one. The steps then see the user's
    request for what it is and keep it in the tail (C8) — by hand (3,072 tokens) it was
    summarised away in the middle of its turn, under "Pending User Asks", and the model
    answered the first message instead. The two are merged again when the list is
    assembled. Older merged turns stay as they are: summarising them is right, and the
    summary prepared in the background (C17) was read from the list as it is."""
    messages = repair.messages
    for at in range(len(messages) - 1, -1, -1):
        if messages[at].get("role") == "user":
            break
    else:
        return repair
    if not is_summary_message(messages[at]):
        return repair
    body, original = split_summary_message(messages[at])
    if original is None:
        return repair
    summary: dict[str, Any] = {"role": "user", "content": summary_content(body)}
    return Repair([*messages[:at], summary, original, *messages[at + 1:]],  # type: ignore[list-item]
                  [*repair.origins[:at], None, *repair.origins[at:]],
                  repair.dropped, repair.merged, repair.stubs)


def sanitize_tool_pairs(
    messages: Sequence[Message], origins: Origins, *, add_stubs: bool = True
) -> tuple[list[Message], Origins, list[int], int]:
    """Repair call/result pairing (C12 a, b) in one pass.

    Returns the messages, their origins, the origins of the results that were dropped and
    the number of stubs added.
    """
    out: list[Message] = []
    out_origins: Origins = []
    dropped: list[int] = []
    stubs = 0
    pending: list[str] = []  # calls of the open group, in order, not yet answered
    answered: set[str] = set()

    def close_group() -> None:
        nonlocal stubs
        for call_id in pending:
            if call_id not in answered and add_stubs:
                out.append({"role": "tool", "tool_call_id": call_id,
                            "content": MISSING_RESULT_STUB})
                out_origins.append(None)
                stubs += 1
        pending.clear()
        answered.clear()

    for message, origin in zip(messages, origins, strict=True):
        if message.get("role") == "tool":
            call_id = str(message.get("tool_call_id", ""))
            if call_id in pending and call_id not in answered:
                answered.add(call_id)
                out.append(message)
                out_origins.append(origin)
            elif origin is not None:
                dropped.append(origin)
            continue
        close_group()
        out.append(message)
        out_origins.append(origin)
        if message.get("role") == "assistant":
            pending.extend(dict.fromkeys(tool_call_ids(message)))
    close_group()
    return out, out_origins, dropped, stubs


def can_merge(first: Message, second: Message) -> bool:
    """True when the two neighbours share a role an API does not allow twice in a row."""
    role = first.get("role")
    if role != second.get("role") or role not in ("user", "assistant"):
        return False
    return role == "user" or not tool_calls_of(first)


def restore_alternation(messages: Sequence[Message], origins: Origins
                        ) -> tuple[list[Message], Origins, list[int]]:
    """Merge every run of same-role neighbours (``can_merge``) into one message.

    Returns the messages, their origins (``None`` for a merged one) and the origins of
    the messages that were folded into a merge.
    """
    out: list[Message] = []
    out_origins: Origins = []
    merged: list[int] = []
    for message, origin in zip(messages, origins, strict=True):
        if out and can_merge(out[-1], message):
            previous = out_origins[-1]
            merged += [o for o in (previous, origin) if o is not None]
            out[-1] = merge_messages(out[-1], message)
            out_origins[-1] = None
            continue
        out.append(message)
        out_origins.append(origin)
    return out, out_origins, merged


def merge_messages(first: Message, second: Message) -> Message:
    """One message saying what ``first`` then ``second`` said (same role; the second's
    tool calls, if any, are kept)."""
    if is_summary_message(first) or is_summary_message(second):
        return _merge_with_summary(first, second)
    merged: dict[str, Any] = dict(first)
    merged["content"] = _join_contents(first.get("content"), second.get("content"))
    calls = second.get("tool_calls")
    if calls:
        merged["tool_calls"] = list(calls)
    return merged  # type: ignore[return-value]


def _merge_with_summary(first: Message, second: Message) -> Message:
    """The summaries' bodies as one summary, merged (C12 c form) into the turns, if any."""
    bodies: list[str] = []
    turns: list[Message] = []
    for message in (first, second):
        if is_summary_message(message):
            body, original = split_summary_message(message)
            bodies.append(body)
            if original is not None:
                turns.append(original)
        else:
            turns.append(message)
    body = "\n\n".join(b for b in bodies if b)
    if not turns:
        only: dict[str, Any] = dict(first)
        only["content"] = summary_content(body)
        return only  # type: ignore[return-value]
    turn = turns[0]
    for other in turns[1:]:
        turn = merge_messages(turn, other)
    return merge_summary_into(turn, body)


def _join_contents(first: Any, second: Any) -> Any:
    if _empty(first):
        return list(second) if isinstance(second, list) else second
    if _empty(second):
        return list(first) if isinstance(first, list) else first
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    return _parts(first) + _parts(second)


def _empty(content: Any) -> bool:
    return content is None or content == "" or content == []


def _parts(content: Any) -> list[ContentPart]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": str(content)}]
