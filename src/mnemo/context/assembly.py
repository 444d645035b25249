"""Putting a compressed conversation together so that an API accepts it (C11, C12).

The output is: the system message (with the compaction note appended once), the head,
the summary message, the tail. The summary's role is chosen so no two neighbours share a
role; when both roles would collide it is merged into the first tail message. A final
pass over the whole list repairs tool-call pairing: a result whose call is not in the
assistant message right before its run of results is dropped, and a call left without a
result gets a stub — an API rejects either.

Every output message carries its *origin*, the index of the input message it came from
(``None`` for messages made here), so the compressor can report exactly which input
messages left the live context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mnemo.context.markers import (
    COMPACTION_NOTE,
    MISSING_RESULT_STUB,
    SUMMARY_END_MARKER,
    summary_content,
)
from mnemo.messages import ContentPart, Message, Role, tool_call_ids

__all__ = [
    "Origins",
    "assemble",
    "choose_summary_role",
    "merge_summary_into",
    "sanitize_tool_pairs",
    "with_compaction_note",
]

Origins = list[int | None]


def choose_summary_role(prev_role: str | None, next_role: str | None) -> Role | None:
    """The summary's role between its neighbours (C12 c); ``None`` means "merge it".

    After an assistant or tool message the summary speaks as the user, after a user as the
    assistant; right after the system message (or at the very start) either role works.
    """
    if prev_role in ("assistant", "tool"):
        options: tuple[Role, ...] = ("user",)
    elif prev_role == "user":
        options = ("assistant",)
    else:
        options = ("assistant", "user")
    for role in options:
        if role != next_role:
            return role
    return None


def merge_summary_into(message: Message, body: str) -> Message:
    """A copy of ``message`` that starts with the summary and the END marker."""
    lead = summary_content(body) + SUMMARY_END_MARKER
    copy: dict[str, Any] = dict(message)
    content = message.get("content")
    if isinstance(content, list):
        part: ContentPart = {"type": "text", "text": lead}
        copy["content"] = [part, *content]
    else:
        copy["content"] = lead + (content or "")
    return copy  # type: ignore[return-value]


def with_compaction_note(system: Message) -> Message:
    """A copy of the system message with the compaction note appended (once)."""
    copy: dict[str, Any] = dict(system)
    content = system.get("content")
    if isinstance(content, list):
        if not any(isinstance(p, dict) and p.get("text") == COMPACTION_NOTE for p in content):
            copy["content"] = [*content, {"type": "text", "text": COMPACTION_NOTE}]
    elif not content:
        copy["content"] = COMPACTION_NOTE
    elif COMPACTION_NOTE not in content:
        copy["content"] = f"{content}\n\n{COMPACTION_NOTE}"
    return copy  # type: ignore[return-value]


def assemble(
    messages: Sequence[Message],
    system_end: int,
    head_end: int,
    tail_start: int,
    summary_body: str,
) -> tuple[list[Message], Origins]:
    """``system + head + summary + tail`` as new dicts, with the origin of each."""
    out: list[Message] = []
    origins: Origins = []
    if system_end:
        out.append(with_compaction_note(messages[0]))
        origins.append(0)
    for i in range(system_end, head_end):
        out.append(_copy(messages[i]))
        origins.append(i)
    prev_role = out[-1].get("role") if out else None
    next_role = messages[tail_start].get("role") if tail_start < len(messages) else None
    role = choose_summary_role(prev_role, next_role)
    first_tail = tail_start
    if role is None:
        out.append(merge_summary_into(messages[tail_start], summary_body))
        origins.append(tail_start)
        first_tail += 1
    else:
        out.append({"role": role, "content": summary_content(summary_body)})
        origins.append(None)
    for i in range(first_tail, len(messages)):
        out.append(_copy(messages[i]))
        origins.append(i)
    return out, origins


def sanitize_tool_pairs(
    messages: Sequence[Message], origins: Origins
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
            if call_id not in answered:
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


def _copy(message: Message) -> Message:
    return dict(message)  # type: ignore[return-value]
