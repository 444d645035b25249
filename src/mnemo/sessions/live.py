"""Lining up the stored live context with the list a context engine returned.

Compression takes the session's active messages and returns a new list: some messages
kept as they were, some gone (summarised), some changed (a tool output cleared, a note
appended to the system message) and some new (the summary). ``plan_sync`` compares the
two lists in order and says which stored messages to keep, which to archive and where
each new message goes, so ``SessionStore.sync_live`` can make the stored live context
equal the new list without ever deleting a message. A changed message counts as the old
one archived plus a new one in its place.

The plan is shaped like a compaction, which keeps a prefix and a suffix of the old list
and replaces a contiguous middle span:

1. the common prefix and suffix are kept first, so when a run of messages repeats an
   earlier run, the *later* copies (the real tail) are the ones kept;
2. what is left is split at anchors — messages found exactly once on each side, or a
   tool result whose ``tool_call_id`` is found once on each side with a changed content
   (a cleared output, matched by id) — and each piece is planned the same way;
3. a small piece without anchors is aligned exactly: most messages kept first, then the
   fewest runs where messages left with nothing in their place or arrived replacing
   nothing (so every archived message is named by a replacement whenever possible), then
   the most changed tool results paired with their originals; ties keep later copies;
4. a large piece without anchors (only adversarial input gets here) is replaced whole.

Everything is linear in the list lengths except step 3, which is bounded by
``_EXACT_CELLS``.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from mnemo.sessions.records import clean_text

__all__ = ["Gap", "LiveSync", "message_identity", "message_key", "plan_sync"]

# Most (old x new) cells one exact alignment may cost: about 0.15 s in the worst case.
_EXACT_CELLS = 100_000
# Score weights of the exact alignment: a kept message outweighs any number of
# incomplete runs, which outweigh any number of paired tool results.
_KEEP = 1 << 40
_INCOMPLETE = -(1 << 20)
_PAIRED = 1


def message_key(message: Any) -> str:
    """A canonical text of a message, equal for equal dicts whatever the key order.

    Cleaned like the stored text (``clean_text``), so a message holding a lone surrogate
    equals the stored copy of itself.
    """
    return clean_text(json.dumps(message, sort_keys=True, ensure_ascii=False, default=str))


def message_identity(message: Any) -> str | None:
    """What names a tool result across edits: its ``tool_call_id`` (None for others)."""
    if isinstance(message, dict) and message.get("role") == "tool":
        call_id = message.get("tool_call_id")
        if isinstance(call_id, str) and call_id:
            return clean_text(call_id)
    return None


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
    """Old messages archived and new ones that take their place (indexes into the lists).

    The new messages go right after old message ``after`` (None: the start) and before
    old message ``before`` (None: the end); either may be a kept message or one archived
    by this or another gap.
    """

    after: int | None
    before: int | None
    new: list[int]  # indexes into the new list, in order
    archived: list[int]  # indexes into the old list, in order


# An aligned pair: (old index, new index, equal). Not equal: the same tool result with
# changed content, archived and replaced by the new one.
_Pair = tuple[int, int, bool]


def plan_sync(
    old: Sequence[str],
    new: Sequence[str],
    *,
    old_ids: Sequence[str | None] | None = None,
    new_ids: Sequence[str | None] | None = None,
) -> tuple[dict[int, int], list[Gap]]:
    """Match two lists of message keys in order.

    ``old_ids`` / ``new_ids`` (``message_identity`` of each message, optional) let a
    changed tool result be paired with its original. Returns ``kept`` (old index → new
    index of every message kept as it was) and the gaps in list order.
    """
    aligner = _Aligner(old, new, old_ids, new_ids)
    pairs = sorted(aligner.run())
    kept = {i: j for i, j, equal in pairs if equal}
    gaps: list[Gap] = []
    previous: tuple[int, int] = (-1, -1)
    for i, j, equal in [*pairs, (len(old), len(new), True)]:
        archived = list(range(previous[0] + 1, i))
        arrived = list(range(previous[1] + 1, j))
        if archived or arrived:
            gaps.append(Gap(after=previous[0] if previous[0] >= 0 else None,
                            before=i if i < len(old) else None, new=arrived,
                            archived=archived))
        if not equal:  # the changed message goes right after its original
            gaps.append(Gap(after=i, before=i + 1 if i + 1 < len(old) else None, new=[j],
                            archived=[i]))
        previous = (i, j)
    return kept, gaps


class _Aligner:
    """The pairs of one plan (see the module docstring for the steps)."""

    def __init__(
        self,
        old: Sequence[str],
        new: Sequence[str],
        old_ids: Sequence[str | None] | None,
        new_ids: Sequence[str | None] | None,
    ) -> None:
        self.old, self.new = old, new
        self.old_ids = list(old_ids) if old_ids is not None else [None] * len(old)
        self.new_ids = list(new_ids) if new_ids is not None else [None] * len(new)
        if len(self.old_ids) != len(old) or len(self.new_ids) != len(new):
            raise ValueError("plan_sync: one identity per message is needed")

    def run(self) -> list[_Pair]:
        pairs: list[_Pair] = []
        regions = [(0, len(self.old), 0, len(self.new))]
        while regions:
            a_lo, a_hi, b_lo, b_hi = regions.pop()
            old, new = self.old, self.new
            while a_lo < a_hi and b_lo < b_hi and old[a_hi - 1] == new[b_hi - 1]:
                a_hi, b_hi = a_hi - 1, b_hi - 1
                pairs.append((a_hi, b_hi, True))
            while a_lo < a_hi and b_lo < b_hi and old[a_lo] == new[b_lo]:
                pairs.append((a_lo, b_lo, True))
                a_lo, b_lo = a_lo + 1, b_lo + 1
            if a_lo == a_hi or b_lo == b_hi:
                continue
            anchors = self._anchors(a_lo, a_hi, b_lo, b_hi)
            if anchors:
                pairs += anchors
                bounds = [(a_lo - 1, b_lo - 1), *((i, j) for i, j, _ in anchors), (a_hi, b_hi)]
                regions += [(i0 + 1, i1, j0 + 1, j1) for (i0, j0), (i1, j1) in pairwise(bounds)]
            elif (a_hi - a_lo) * (b_hi - b_lo) <= _EXACT_CELLS:
                pairs += self._exact(a_lo, a_hi, b_lo, b_hi)
        return pairs

    def _anchors(self, a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> list[_Pair]:
        """Messages (or tool results, by id) found exactly once on each side, in order."""
        old, new = self.old[a_lo:a_hi], self.new[b_lo:b_hi]
        in_old, in_new = Counter(old), Counter(new)
        where = {key: b_lo + j for j, key in enumerate(new) if in_new[key] == 1}
        same = [(a_lo + i, where[key], True) for i, key in enumerate(old)
                if in_old[key] == 1 and key in where]
        if same:
            return _increasing(same)
        old_ids, new_ids = self.old_ids[a_lo:a_hi], self.new_ids[b_lo:b_hi]
        ids_old = Counter(i for i in old_ids if i is not None)
        ids_new = Counter(i for i in new_ids if i is not None)
        where_id = {ident: b_lo + j for j, ident in enumerate(new_ids)
                    if ident is not None and ids_new[ident] == 1}
        by_id = [(a_lo + i, where_id[ident]) for i, ident in enumerate(old_ids)
                 if ident is not None and ids_old[ident] == 1 and ident in where_id]
        return _increasing([(i, j, self.old[i] == self.new[j]) for i, j in by_id])

    def _exact(self, a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> list[_Pair]:
        """The best alignment of a small region (dynamic programming over its cells).

        ``best[s][i][j]``: the score of aligning ``old[i:]`` with ``new[j:]`` while the
        current run holds archived messages (bit 1 of ``s``) and/or new ones (bit 2).
        A run with only one of the two is incomplete.
        """
        n, m = a_hi - a_lo, b_hi - b_lo
        old, new = self.old[a_lo:a_hi], self.new[b_lo:b_hi]
        old_ids, new_ids = self.old_ids[a_lo:a_hi], self.new_ids[b_lo:b_hi]
        penalty = (0, _INCOMPLETE, _INCOMPLETE, 0)
        best = [[[0] * (m + 1) for _ in range(n + 1)] for _ in range(4)]
        move = [[[0] * (m + 1) for _ in range(n + 1)] for _ in range(4)]  # 1 old, 2 new, 3 pair
        for i in range(n, -1, -1):
            for j in range(m, -1, -1):
                gain = None
                if i < n and j < m:
                    if old[i] == new[j]:
                        gain = _KEEP
                    elif old_ids[i] is not None and old_ids[i] == new_ids[j]:
                        gain = _PAIRED
                for s in range(4):
                    if i == n and j == m:
                        best[s][i][j] = penalty[s]
                        continue
                    # Archiving first: on a tie the later copy of a message is kept.
                    score, choice = None, 0
                    if i < n:
                        score, choice = best[s | 1][i + 1][j], 1
                    if j < m and (score is None or best[s | 2][i][j + 1] > score):
                        score, choice = best[s | 2][i][j + 1], 2
                    if gain is not None:
                        paired = gain + penalty[s] + best[0][i + 1][j + 1]
                        if score is None or paired > score:
                            score, choice = paired, 3
                    best[s][i][j] = score if score is not None else 0
                    move[s][i][j] = choice
        pairs: list[_Pair] = []
        i = j = s = 0
        while i < n or j < m:
            choice = move[s][i][j]
            if choice == 1:
                i, s = i + 1, s | 1
            elif choice == 2:
                j, s = j + 1, s | 2
            else:
                pairs.append((a_lo + i, b_lo + j, old[i] == new[j]))
                i, j, s = i + 1, j + 1, 0
        return pairs


def _increasing(candidates: list[_Pair]) -> list[_Pair]:
    """The longest run of candidates increasing in both indexes (sorted by old index)."""
    tails: list[int] = []  # new index ending the best run of each length
    tail_at: list[int] = []  # candidate index ending it
    back: list[int] = []
    for k, (_, j, _) in enumerate(candidates):
        length = bisect_left(tails, j)
        if length == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[length] = j
            tail_at[length] = k
        back.append(tail_at[length - 1] if length else -1)
    out: list[_Pair] = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        out.append(candidates[k])
        k = back[k]
    return out[::-1]
