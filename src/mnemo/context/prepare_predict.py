"""Predicting the next compaction's middle, and the fingerprints that bind a prepared
summary to its messages (C17; used by ``prepare.py``).

``certain_end`` runs steps 1 and 3 of the compressor ahead, on the conversation as it will
be at the threshold, to find where the messages that will be summarised stop.
``fingerprints`` identifies messages by position and content hash; ``rekey`` moves a
binding onto the same messages after step 1 cleared some of their tool outputs, and
``rebind`` onto where they went when a compaction put a summary in front of them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from mnemo.context.boundaries import (
    MIN_TAIL_MESSAGES,
    TAIL_SOFT_CEILING,
    align_boundary_backward,
    latest_user_index,
    system_offset,
)
from mnemo.context.markers import is_summary_message
from mnemo.context.metered import MessageCounter
from mnemo.context.pruning import protected_start, prune_tool_results
from mnemo.messages import Message
from mnemo.tokens import estimate_message_tokens_rough

__all__ = ["certain_end", "fingerprints", "rebind", "rekey"]


def fingerprints(messages: Sequence[Message]) -> list[str]:
    """One short content hash per message; with its position it identifies the message."""
    return [hashlib.sha256(json.dumps(m, sort_keys=True, default=str).encode()).hexdigest()[:20]
            for m in messages]


def certain_end(messages: Sequence[Message], tokens: Sequence[int], head_end: int, *,
                growth: int, tail_budget: int, likely: bool = False,
                count: MessageCounter = estimate_message_tokens_rough) -> int:
    """Index just past the messages that will be in the next compaction's middle.

    Steps 1 and 3 are run ahead on the list as it will be at the threshold: ``growth``
    more (rough) tokens at the end, as one block. Step 1 will clear every large tool
    output older than the newest ``tail_budget`` tokens; of the growth, that newest part
    counts in full and the rest at the rate the conversation so far is measured after
    step 1 (a session of large tool outputs grows its tail by little). ``likely``
    counts the newest ``tail_budget`` tokens of the growth in full, as step 1 keeps
    them when they come as one large output; that reaches further (the middle grows
    with the newest output), and overshoots when the next output is small. Both are
    predictions: when one reaches too far, the swap uses an earlier checkpoint, so it
    costs a model call, never a wrong summary. ``head_end`` means "none yet". ``tokens``
    and ``count`` measure as the compressor's tail cut does.
    """
    n = len(messages)
    # Every large tool output as step 1 leaves it once it is old enough (placeholder and
    # call description), measured the way the tail is measured.
    # (Three empty messages after the list: step 1 never clears its newest three.)
    pad: list[Message] = [{"role": "user", "content": ""}] * MIN_TAIL_MESSAGES
    cleared, indices = prune_tool_results([*messages, *pad], [*tokens, 0, 0, 0], 0)
    least = list(tokens)
    for i in (i for i in indices if i < n):
        least[i] = min(tokens[i], count(cleared[i]))
    full = sum(tokens[head_end:])
    rate = sum(least[head_end:]) / full if full else 1.0
    grown = [*tokens, growth] if growth > 0 else list(tokens)
    protected = protected_start(grown, tail_budget)
    measured = [least[i] if i < protected else tokens[i] for i in range(n)]
    soft_ceiling = int(tail_budget * TAIL_SOFT_CEILING)
    # What the tail holds after message i, when measured.
    after = int(growth * rate)
    if likely:
        after = min(growth, tail_budget) + int(max(0, growth - tail_budget) * rate)
    newer = 1 if growth > 0 else 0  # messages in the tail after message i
    end = head_end
    for i in range(n - 1, head_end - 1, -1):
        if after + measured[i] > soft_ceiling and newer >= MIN_TAIL_MESSAGES:
            end = i + 1
            break
        after += measured[i]
        newer += 1
    latest_user = latest_user_index(messages, head_end)
    if latest_user is not None and latest_user < end:
        end = latest_user  # the latest user message is always kept in the tail (C8)
    if end < n:
        end = align_boundary_backward(messages, end, head_end)
    return max(end, head_end)


def rekey(before: Sequence[Message], after: Sequence[Message], first: int, end: int,
           keys: Sequence[str]) -> tuple[str, ...] | None:
    """The keys of ``after[first:end]`` if it differs from ``before[first:end]`` (which
    ``keys`` must fingerprint) only by cleared tool outputs; else ``None``."""
    if len(after) < end or len(before) < end or system_offset(after) != first:
        return None
    if tuple(fingerprints(before[first:end])) != tuple(keys):
        return None
    for old, new in zip(before[first:end], after[first:end], strict=True):
        if old != new and not (old.get("role") == new.get("role") == "tool"
                               and old.get("tool_call_id") == new.get("tool_call_id")):
            return None
    return tuple(fingerprints(after[first:end]))


def rebind(before: Sequence[Message], after: Sequence[Message],
           origins: Sequence[int | None], tail_start: int, end: int, keys: Sequence[str]
           ) -> tuple[int, int, int, tuple[str, ...]] | None:
    """Where ``before[tail_start:end]`` (which ``keys[tail_start:end]`` must fingerprint)
    went in ``after``: right behind the summary message the compaction made, or with the
    summary merged into the first of them; otherwise unchanged but for cleared tool
    outputs. Returns ``(first, start, end, keys)``: just past the system prompt, where
    the summary is, the new end, and the keys of ``after[first:end]``; ``None`` if
    anything differs."""
    if not tail_start < end <= len(before) or len(keys) < end:
        return None
    if tuple(fingerprints(before[tail_start:end])) != tuple(keys[tail_start:end]):
        return None
    at = next((i for i, o in enumerate(origins) if o == tail_start), None)
    if at is None or at < 1:
        return None
    new_end = at + end - tail_start
    if len(after) < new_end or list(origins[at:new_end]) != list(range(tail_start, end)):
        return None
    merged = is_summary_message(after[at]) and not is_summary_message(before[tail_start])
    start = at if merged else at - 1
    if not merged and (origins[start] is not None or not is_summary_message(after[start])):
        return None
    for old, new in zip(before[tail_start + merged:end], after[at + merged:new_end],
                        strict=True):
        if old != new and not (old.get("role") == new.get("role") == "tool"
                               and old.get("tool_call_id") == new.get("tool_call_id")):
            return None
    first = system_offset(after)
    return first, start, new_end, tuple(fingerprints(after[first:new_end]))
