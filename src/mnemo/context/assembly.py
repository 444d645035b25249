"""Putting a compressed conversation together so that an API accepts it (C11, C12).

The output is: the system message (with the compaction note appended once), the head,
the summary message, the tail. The summary's role is chosen so no two neighbours share a
role; when both roles would collide it is merged into the first tail message. The
compressor then runs the repairs of ``repair.py`` over the whole list (tool-call pairing,
same-role neighbours), so what an API rejects never leaves it.

Every output message carries its *origin*, the index of the input message it came from
(``None`` for messages made here), so the compressor can report exactly which input
messages left the live context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mnemo.context.markers import (
    COMPACTION_NOTE,
    SUMMARY_END_MARKER,
    summary_content,
)
from mnemo.messages import ContentPart, Message, Role

__all__ = [
    "Origins",
    "assemble",
    "choose_summary_role",
    "merge_summary_into",
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


def _copy(message: Message) -> Message:
    return dict(message)  # type: ignore[return-value]
