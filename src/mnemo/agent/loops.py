"""A reply that loops: it says again, word for word, what it already said.

A small model can fall into a loop and write the same paragraphs over and over until its
token limit: by hand the embedded model answered "What's my daughter's name and how old
is she turning?" with three paragraphs, then the same three twice more, about three
thousand characters, a minute of CPU, every copy shown. ``LoopWatch`` reads a reply as
it streams in and finds where it starts repeating itself (``loop_start``): from there
on nothing more is shown, the stream is stopped (``stopped``: the client closes the
connection, and llama.cpp stops generating), and the agent keeps the reply up to that
point. A repeat is only a loop from ``LOOP_CHARS`` characters on, so that a reply may
quote a sentence of its own again. Past its first ``LOOP_CHARS`` characters (which
stream as they come), a reply is shown ``LOOP_CHARS`` characters behind: the last ones
wait until the next tell whether they begin a repeat, so none of it reaches the screen.

Code repeats itself on purpose (two functions with the same body): text inside a code
fence is never taken for a loop. Nor is a reply to a message that asks for repetition
("write it ten times", "repeat after me").
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["LOOP_CHARS", "LoopWatch", "loop_start"]

# The shortest stretch said twice that makes a loop: longer than a sentence quoted again
# ("As I said, …"), shorter than the paragraphs the embedded model repeated.
LOOP_CHARS = 160
_FENCE = "```"
_ASKS_FOR_REPEATS = re.compile(r"\b(?:repeat\w*|times|over and over)\b", re.IGNORECASE)
_STEP = 32  # how far apart ``loop_start`` looks at a whole text


def loop_start(text: str, asked: str = "") -> int | None:
    """Where the reply ``text`` to the message ``asked`` starts repeating itself (see
    the module docstring), or None."""
    watch = LoopWatch(lambda _: None, asked)
    for start in range(0, len(text), _STEP):
        watch.feed(text[start:start + _STEP])
        if watch.cut is not None:
            break
    return watch.cut


class LoopWatch:
    """Streamed text on to ``sink``, ``LOOP_CHARS`` behind, until the reply loops.

    ``feed`` each delta, then ``finish``; ``cut`` is where the loop began (None: no
    loop), and ``stopped`` says whether the stream can stop."""

    def __init__(self, sink: Callable[[str], None], asked: str = "") -> None:
        self._sink = sink
        self._watching = not _ASKS_FOR_REPEATS.search(asked)
        self._text = ""
        self._released = 0
        self.cut: int | None = None

    def stopped(self) -> bool:
        return self.cut is not None

    def feed(self, delta: str) -> None:
        if self.cut is not None or not delta:
            return
        self._text += delta
        if self._watching:
            self.cut = _repeat_from(self._text)
        # A short reply streams as it comes. (A loop that begins within the first
        # ``LOOP_CHARS`` characters repeats a few words; a little of it is shown.)
        size = len(self._text)
        end = max(size - LOOP_CHARS, min(size, LOOP_CHARS)) if self._watching else size
        self._release(end if self.cut is None else max(self._released, self.cut))

    def finish(self) -> None:
        if self.cut is None:
            self._release(len(self._text))

    def _release(self, end: int) -> None:
        if end > self._released:
            self._sink(self._text[self._released:end])
            self._released = end


def _repeat_from(text: str) -> int | None:
    """Where ``text`` began saying again the ``LOOP_CHARS`` characters it ends with,
    when it said them before; never inside a code fence."""
    if len(text) < 2 * LOOP_CHARS:
        return None
    end = text[-LOOP_CHARS:]
    if _FENCE in end or text.count(_FENCE) % 2:
        return None
    at = len(text) - LOOP_CHARS
    before = text.find(end, 0, at + LOOP_CHARS - 1)  # a copy that starts before ``at``
    if before == -1:
        return None
    # The repeat began where the two copies stop agreeing, going back — at a word's
    # start: "party.", then "class." before the repeated paragraph agree in their ".".
    while before > 0 and text[at - 1] == text[before - 1]:
        at, before = at - 1, before - 1
    while 0 < at < len(text) and not text[at - 1].isspace() and not text[at].isspace():
        at += 1
    return at
