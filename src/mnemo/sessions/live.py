"""Lining up the stored live context with the list a context engine returned.

Compression takes the session's active messages and returns a new list: some messages
kept as they were, some gone (summarised), some changed (a tool output cleared, a note
appended to the system message) and some new (the summary). ``plan_sync`` compares the
two lists in order and says which stored messages to keep, which to archive and where
each new message goes, so ``SessionStore.sync_live`` can make the stored live context
equal the new list without ever deleting a message. A changed message counts as the old
one archived plus a new one in its place.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from itertools import pairwise
from typing import Any

__all__ = ["Gap", "LiveSync", "message_key", "plan_sync"]


def message_key(message: Any) -> str:
    """A canonical text of a message, equal for equal dicts whatever the key order."""
    return json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class LiveSync:
    """What ``SessionStore.sync_live`` did."""

    kept: int
    archived_ids: list[int] = field(default_factory=list)
    inserted_ids: list[int] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.archived_ids or self.inserted_ids)


@dataclass(frozen=True)
class Gap:
    """New messages that go between two kept stored messages (indexes into the old list)."""

    after: int | None  # the kept old message before the gap (None: the start)
    before: int | None  # the kept old message after the gap (None: the end)
    new: list[int]  # indexes into the new list, in order
    archived: list[int]  # indexes into the old list of the messages archived in this gap


def plan_sync(old: Sequence[str], new: Sequence[str]) -> tuple[dict[int, int], list[Gap]]:
    """Match two lists of message keys in order.

    Returns ``kept`` (old index → new index of every message kept as it was) and the
    gaps: each run of old messages that left and new messages that arrived between
    two kept ones.
    """
    matcher = SequenceMatcher(a=list(old), b=list(new), autojunk=False)
    kept: dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            kept[block.a + offset] = block.b + offset
    gaps: list[Gap] = []
    anchors = sorted(kept.items())  # (old, new) pairs, increasing in both
    bounds = [(None, -1, -1), *((o, o, n) for o, n in anchors), (None, len(old), len(new))]
    for (left, old_lo, new_lo), (right, old_hi, new_hi) in pairwise(bounds):
        archived = list(range(old_lo + 1, old_hi))
        arrived = list(range(new_lo + 1, new_hi))
        if archived or arrived:
            gaps.append(Gap(after=left, before=right, new=arrived, archived=archived))
    return kept, gaps
