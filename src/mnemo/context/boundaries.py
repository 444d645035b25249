"""Steps 2 and 3 of compression (C7, C8): where the protected head ends and the tail starts.

Everything between the two boundaries is the *middle* that gets summarised. Both
boundaries respect tool-call groups — an assistant message with ``tool_calls`` and the
``tool`` results that answer it are kept or summarised together, never split — because an
API rejects a result without its call and a call without its result.

The tail is chosen by tokens rather than by a message count: walking back from the end,
messages are kept until the soft ceiling of 1.5 × the tail budget would be passed (always
at least three). The latest user message is pulled into the tail, so the model never
loses the request it is working on.
"""

from __future__ import annotations

from collections.abc import Sequence

from mnemo.context.markers import SYSTEM_ROLES, is_summary_message
from mnemo.messages import Message

__all__ = [
    "MIN_TAIL_MESSAGES",
    "TAIL_SOFT_CEILING",
    "align_boundary_backward",
    "align_boundary_forward",
    "find_head_end",
    "find_tail_start",
    "latest_user_index",
    "system_offset",
]

MIN_TAIL_MESSAGES = 3  # fixed (C8): the hard minimum of the tail
TAIL_SOFT_CEILING = 1.5  # fixed (C8): the tail may exceed its budget by half


def system_offset(messages: Sequence[Message]) -> int:
    """1 when the list starts with a system message (always kept, always first), else 0."""
    return 1 if messages and messages[0].get("role") in SYSTEM_ROLES else 0


def align_boundary_forward(messages: Sequence[Message], index: int) -> int:
    """Slide a boundary that falls on a tool result forward, past the whole result run."""
    while index < len(messages) and messages[index].get("role") == "tool":
        index += 1
    return index


def align_boundary_backward(messages: Sequence[Message], index: int, floor: int) -> int:
    """Move a cut that falls inside an assistant+results group to before the assistant.

    The cut never goes below ``floor`` (the end of the head).
    """
    j = index
    while j > floor and j < len(messages) and messages[j].get("role") == "tool":
        j -= 1
    if j == index:
        return index
    # ``messages[j]`` opens the group (an assistant with tool calls) or, in a malformed
    # list, is whatever precedes the orphan results; either way the tail starts there.
    return j


def find_head_end(messages: Sequence[Message], protect_first_n: int) -> int:
    """Index just past the protected head (C7): the system message + ``protect_first_n``.

    A summary left by an earlier compression is never part of the head: the head stops in
    front of it, so the summary is taken apart and updated (C10) instead of frozen.
    """
    start = system_offset(messages)
    end = align_boundary_forward(messages, min(len(messages), start + protect_first_n))
    for i in range(start, end):
        if is_summary_message(messages[i]):
            return i
    return end


def latest_user_index(messages: Sequence[Message], floor: int = 0) -> int | None:
    """Index of the latest real user message at or after ``floor`` (summaries excluded)."""
    for i in range(len(messages) - 1, floor - 1, -1):
        message = messages[i]
        if message.get("role") == "user" and not is_summary_message(message):
            return i
    return None


def find_tail_start(
    messages: Sequence[Message],
    tokens: Sequence[int],
    head_end: int,
    budget: int,
) -> int:
    """Index of the first protected tail message (C8); ``head_end`` means "no middle"."""
    n = len(messages)
    if n - head_end <= MIN_TAIL_MESSAGES:
        return head_end
    soft_ceiling = int(budget * TAIL_SOFT_CEILING)
    accumulated = 0
    cut = n
    for i in range(n - 1, head_end - 1, -1):
        in_tail = n - 1 - i
        if accumulated + tokens[i] > soft_ceiling and in_tail >= MIN_TAIL_MESSAGES:
            break
        accumulated += tokens[i]
        cut = i
    latest_user = latest_user_index(messages, head_end)
    if latest_user is not None and latest_user < cut:
        cut = latest_user
    return max(align_boundary_backward(messages, cut, head_end), head_end)
