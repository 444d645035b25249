"""Each message is read once (C18): what a message says, kept by content hash.

The local summariser runs at every compaction of a live session, over a middle that is
mostly the same messages as last time. ``MessageCache`` keeps the result of reading a
message — its sentences sorted into kinds, its values, its error lines — under a key
made of the message's role, the hash and length of its text and whatever else the
reading depends on (the kind of the call a tool result answers, the session date), so
a message already read costs a dictionary lookup.

The key holds Python's own string hash, which a ``str`` computes once and keeps: the
text of a message that is still in the caller's list is never hashed again. The hash
and the length (and the first characters) together stand for the text, so the cache
holds no message text alive. It is bounded: past ``limit`` entries, the oldest half is
dropped (a session's older messages are the ones compacted away for good).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["MessageCache", "collector_paused", "text_key"]

T = TypeVar("T")


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector held off for the ``with`` block, then let be as it was.

    A pass of the reader builds tens of thousands of objects that stay (the readings
    kept here, the notes, the facts), and every few thousand of them the collector
    walks all the objects of the process — with a transcript of 34,000 messages in
    memory, its full walks took more CPU than the reading itself (about 1 s of a 2.7 s
    first compaction on the speed bench). Nothing the reader builds holds a reference
    cycle, so reference counting frees it all the same; anything cyclic made meanwhile
    waits for the next collection.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def text_key(text: str) -> tuple[int, int, str]:
    """What stands for ``text`` in a cache key (see the module docstring)."""
    return hash(text), len(text), text[:32]


class MessageCache:
    """A bounded map from a message's key to what reading it gave."""

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = limit
        self._entries: dict[Hashable, object] = {}
        self.hits = 0
        self.misses = 0  # readings made (``get`` found nothing, or ``put``)
        self.chars = 0  # characters those readings read, as their callers say

    def get(self, key: Hashable, read: Callable[[], T], size: int = 0) -> T:
        """The cached result for ``key``, or ``read()`` (then cached); ``size``: the
        characters ``read`` reads, counted in ``chars`` when it runs."""
        try:
            found = self._entries[key]
        except KeyError:
            value = read()
            self.put(key, value, size)
            return value
        self.hits += 1
        return found  # type: ignore[return-value]

    def find(self, key: Hashable) -> object | None:
        """The cached result for ``key`` (a hit), or None: ``get`` without a reader,
        for loops too hot for a closure per call (``blockscan.py``)."""
        found = self._entries.get(key)
        if found is not None:
            self.hits += 1
        return found

    def put(self, key: Hashable, value: object, size: int = 0) -> None:
        """Cache ``value``, read from ``size`` characters, under ``key``."""
        self.misses += 1
        self.chars += size
        if len(self._entries) >= self.limit:
            # pop, not del: a background summariser (C17) may be evicting too.
            for old in list(self._entries)[: self.limit // 2]:
                self._entries.pop(old, None)
        self._entries[key] = value

    def clear(self) -> None:
        self._entries.clear()
        self.hits = self.misses = self.chars = 0

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)
