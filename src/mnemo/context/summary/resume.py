"""Resuming a pass over the turns where an earlier pass over the same turns stopped.

The cache of readings (``reading.py``) makes a message already read cost a lookup, but
the pass that keeps the state — open questions, file notes, counts — still walks every
turn again. When the turns handed in begin with exactly the turns of an earlier pass
(the same list compacted again, or the same list grown by new turns), that walk is
the same walk: ``extract.py`` keeps the state it had at the end of each pass here, and
the next pass starts from a copy of it and reads only the turns after.

"The same turns" is decided by ``turn_chain``: a running hash over what the pass reads
of each message — its role, name, tool call id, the hash and length of its text, and
its calls (id, name, arguments as sent). A message the chain cannot stand for (content
in parts, tool call arguments that are not text) ends the chain there: nothing after it resumes.
The store keeps the last few states (``limit``), each bound to its chain value, its
length and the earlier summary's open asks the pass started with.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence
from threading import Lock
from typing import Any, Generic, TypeVar

from mnemo.messages import Message

__all__ = ["Resumes", "turn_chain"]

S = TypeVar("S")


def turn_chain(turns: Sequence[Message]) -> list[int]:
    """``chain[k]`` stands for ``turns[:k]`` (``chain[0]`` for no turns); shorter than
    ``len(turns) + 1`` when a message cannot be stood for (see the module docstring)."""
    chain = [0]
    value = 0
    for message in turns:
        key = _message_key(message)
        if key is None:
            break
        value = hash((value, key))
        chain.append(value)
    return chain


def _message_key(message: Message) -> Hashable | None:
    content = message.get("content")
    if content is None:
        text = ""
    elif isinstance(content, str):
        text = content
    else:
        return None  # parts: what the pass reads of them is not just their joined text
    calls: Any = message.get("tool_calls")
    called: tuple[Hashable, ...] = ()
    if calls:
        if not isinstance(calls, list):
            return None
        parts: list[Hashable] = []
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                return None
            name, raw = function.get("name"), function.get("arguments")
            if not isinstance(raw, str) or not isinstance(name, str | None):
                return None
            parts.append((str(call.get("id", "")), name, raw))
        called = tuple(parts)
    name = message.get("name")
    call_id = message.get("tool_call_id")
    return (message.get("role"), name if isinstance(name, str) else None,
            call_id if isinstance(call_id, str) else str(call_id), hash(text), len(text),
            called)


class Resumes(Generic[S]):
    """The states of the last ``limit`` passes, by the turns they read (see above)."""

    def __init__(self, limit: int = 4) -> None:
        self.limit = limit
        self._states: OrderedDict[tuple[int, int, Hashable], S] = OrderedDict()
        self._lock = Lock()  # a background summariser (C17) may pass at the same time
        self.resumed = 0  # turns not walked again, over all passes (for tests)

    def latest(self, chain: Sequence[int], start: Hashable) -> tuple[int, S] | None:
        """The longest prefix of the turns behind ``chain`` that a kept state covers,
        for a pass that started from ``start``: ``(its length, the state)``."""
        with self._lock:
            if not self._states:
                return None
            lengths = sorted({n for n, _, s in self._states if s == start}, reverse=True)
            for n in lengths:
                if n < len(chain):
                    state = self._states.get((n, chain[n], start))
                    if state is not None:
                        self._states.move_to_end((n, chain[n], start))
                        self.resumed += n
                        return n, state
        return None

    def keep(self, chain: Sequence[int], start: Hashable, state: S) -> None:
        """Keep ``state``, reached after all the turns behind ``chain``. The caller
        hands in a state it will not change any more."""
        with self._lock:
            key = (len(chain) - 1, chain[-1], start)
            self._states[key] = state
            self._states.move_to_end(key)
            while len(self._states) > self.limit:
                self._states.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._states.clear()
            self.resumed = 0
