"""Per-message token counts made on demand with the caller's counter (C8, C19).

The compressor sizes its tail (step 3) and the tool outputs step 1 keeps with the same
count the agent's window guard uses — the model's tokenizer or the shape-aware estimate,
corrected by what the API reported — so a compaction's output is not cut again by the
guard right after (digit-heavy logs are two to three times the rough estimate of C4).
Both walks start at the end and stop after a tail's worth of tokens, so ``Metered``
counts a message only when a walk reaches it: a 30,000-message transcript costs a few
dozen counts, not 30,000. Everything else (the report, the summary budget) keeps the
rough estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import overload

from mnemo.messages import Message

__all__ = ["MessageCounter", "Metered"]

MessageCounter = Callable[[Message], int]
"""Tokens of one message (text and framing), as the caller's window guard counts them."""


class Metered(Sequence[int]):
    """``[count(m) for m in messages]``, each entry computed the first time it is read."""

    def __init__(self, messages: Sequence[Message], count: MessageCounter) -> None:
        self._messages = messages
        self._count = count
        self._known: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._messages)

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        known = self._known.get(index)
        if known is None:
            known = self._known[index] = self._count(self._messages[index])
        return known

    @property
    def counted(self) -> int:
        """How many messages were actually counted (tests check the walk stays short)."""
        return len(self._known)
