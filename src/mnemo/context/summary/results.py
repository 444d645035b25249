"""A tool output's error lines as the summariser sees it, read in place; near-copies once.

The summariser reads a tool output through ``prompt.truncate_for_summary``: its first
4,000 characters, a marker and its last 1,500. ``view_error_lines`` finds the error
lines of that view without making it: the blocks of the head and of the tail window are
read in the output's own text (``blockscan.scan``, each block once), at the offsets they
have in the view. Only a traceback to follow makes the view (its exception line may be
past the marker). On the bench transcript that spares copying 84 MB of windows only so
they could be scanned.

An agent's outputs are near-copies of each other: the same file read again or the same
test run again, behind another first line (``# call_123``, a command echo, a
timestamp). ``RESTS`` keeps the error lines of the *rest* of a view, after its first
line, found by a cheap key (the lengths of the windows and two samples of them) and
checked in place, character for character (``str.startswith`` and ``str.endswith``
at an offset copy nothing): a near-copy costs one lookup instead of slicing and hashing
its blocks. That holds only where the first line can add nothing: it holds no error
hint (``failures.may_hold_error``), so the view's error lines are the rest's — nothing
in an error line looks back — and it is short and starts the text, so a read's own
first-line check (``reading.py``) finds nothing either. Anything else is read whole
(``view_error_lines``).

``RESTS`` keeps the windows it checks against, so it is bounded in characters, not
entries. A result whose rest it has dropped is still in ``reading.CACHE`` by content
hash; a new text with that rest is read again, its blocks from ``blockscan.BLOCKS``.
``first_line`` and ``kept_lines`` turn error lines into what a result keeps, the same
for a rest found here and for a view read whole.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from mnemo.context.failures import (
    best_error_lines,
    collect_error_lines,
    error_lines,
    is_logged_error,
    may_hold_error,
)
from mnemo.context.prompt import (
    CONTENT_HEAD,
    CONTENT_MAX,
    CONTENT_TAIL,
    TRUNCATION_MARKER,
    truncate_for_summary,
)
from mnemo.context.summary.blockscan import BLOCK, Candidates, scan
from mnemo.context.textscan import one_line

__all__ = ["FIRST_LINE_MAX", "RESTS", "Rest", "RestCache", "first_line", "kept_lines",
           "view_error_lines"]

FIRST_LINE_MAX = 300  # a longer first line is not a near-copy's (a read checks 300 chars)
_MARK = len(TRUNCATION_MARKER)
_SAMPLE = 32  # characters of each window in the cheap key


def _windows(size: int) -> tuple[int, int]:
    """Where the view of a text of ``size`` characters has its head end and its tail
    start, in the text (both ``size`` when the text is not cut)."""
    if size <= CONTENT_MAX:
        return size, size
    return CONTENT_HEAD, size - CONTENT_TAIL


def view_error_lines(text: str) -> list[str]:
    """``failures.error_lines(prompt.truncate_for_summary(text))``, read in ``text``."""
    size = len(text)
    if size <= BLOCK:
        return error_lines(text)
    head_end, tail_start = _windows(size)
    first = text.find("\n", 0, head_end) + 1 or head_end  # a block of its own
    candidates: Candidates = []
    scan(text, 0, first, 0, candidates, first_line=True)
    _scan_rest(text, first, head_end, tail_start, candidates, 0)
    return _collect(text, 0, head_end, tail_start, candidates)


def _scan_rest(text: str, begin: int, head_end: int, tail_start: int,
               into: Candidates, base: int) -> None:
    """The candidates of the view from ``begin`` (a line's start in the head) on, at
    their offsets in the view from ``base``."""
    scan(text, begin, head_end, -base, into)
    if tail_start < len(text):  # the tail follows the marker in the view
        scan(text, tail_start, len(text), head_end + _MARK - tail_start - base, into)


def _collect(text: str, begin: int, head_end: int, tail_start: int,
             candidates: Candidates) -> list[str]:
    """``failures.collect_error_lines`` on the view from ``begin`` on. It reads the text
    only to follow a traceback (a ``None`` candidate): only then is the view made."""
    view = ""
    if any(line is None for _, line in candidates):
        view = text[begin:head_end]
        if tail_start < len(text):
            view += TRUNCATION_MARKER + text[tail_start:]
    return collect_error_lines(view, candidates)


def first_line(text: str) -> str:
    """The first line of the summariser's view of ``text`` after leading whitespace (at
    most ``FIRST_LINE_MAX`` characters; the view's first 4,000 are the text's), where a
    read's tool says that it failed."""
    if text and not text[0].isspace():
        return text[:FIRST_LINE_MAX].partition("\n")[0]
    return truncate_for_summary(text).lstrip()[:FIRST_LINE_MAX].partition("\n")[0]


def kept_lines(lines: Sequence[str], head: list[str], *, read: bool
               ) -> tuple[tuple[str, ...], str]:
    """What a tool result keeps of the error lines of its view (and, for a ``read``,
    those of its ``first_line``): the (at most three) most telling, and the line that
    says the call failed, or ""."""
    if read:
        # A file's text: an error in it is content, so only log-shaped lines are kept
        # (a listing's ``raise`` is not one), and only the first line says it failed.
        logged = [ln for ln in lines if is_logged_error(ln)]
        return (tuple(best_error_lines(head + logged, 3)),
                one_line(head[0], 200) if head else "")
    return (tuple(best_error_lines(lines, 3)),
            one_line(best_error_lines(lines, 1)[0], 200) if lines else "")


@dataclass(eq=False)
class Rest:
    """The rest of one view after its first line: its windows (to check a near-copy
    against), its error lines, and what callers made of them (``readings``, by their
    own key: ``reading.py`` keeps a ``Result`` per kind of call)."""

    head: str
    tail: str
    lines: tuple[str, ...]
    readings: dict[Hashable, object] = field(default_factory=dict)


# Where a text's rest lies: (its cheap key, the rest's start, head end, tail start).
_Where = tuple[tuple[int, int, str, str], int, int, int]


class RestCache:
    """Rests of views by a cheap key, checked in place (see the module docstring)."""

    def __init__(self, limit_chars: int = 4_000_000) -> None:
        self.limit_chars = limit_chars
        self._entries: dict[tuple[int, int, str, str], list[Rest]] = {}
        self.kept_chars = 0  # characters of the windows held
        self.hits = 0
        self.misses = 0  # rests read
        self.chars = 0  # characters those readings read

    def find(self, text: str) -> tuple[Rest | None, _Where | None]:
        """The rest kept for ``text`` (read before behind any first line) and where it
        lies in ``text``; ``(None, where)`` when it is not kept yet, ``(None, None)``
        when its first line could add an error line or is not one worth splitting off
        (see the module docstring)."""
        size = len(text)
        if size <= BLOCK or text[0].isspace():
            return None, None
        begin = text.find("\n", 0, FIRST_LINE_MAX + 1) + 1
        if not begin or may_hold_error(text[:begin - 1]):
            return None, None
        head_end, tail_start = _windows(size)
        middle = (begin + head_end) // 2
        key = (head_end - begin, size - tail_start, text[middle:middle + _SAMPLE],
               text[size - _SAMPLE:])
        for rest in self._entries.get(key, ()):
            if text.startswith(rest.head, begin) and text.endswith(rest.tail):
                self.hits += 1
                return rest, None
        return None, (key, begin, head_end, tail_start)

    def read(self, text: str, where: _Where) -> Rest:
        """Read the rest of ``text``'s view (its blocks once) and keep it."""
        key, begin, head_end, tail_start = where
        candidates: Candidates = []
        _scan_rest(text, begin, head_end, tail_start, candidates, begin)
        lines = tuple(_collect(text, begin, head_end, tail_start, candidates))
        rest = Rest(text[begin:head_end], text[tail_start:] if tail_start < len(text) else "",
                    lines)
        held = len(rest.head) + len(rest.tail)
        self.misses += 1
        self.chars += held
        if held > self.limit_chars:
            return rest  # read, not kept: it alone would fill the cache
        while self._entries and self.kept_chars + held > self.limit_chars:
            # The oldest half goes (a session's oldest outputs are compacted away
            # first); pop, not del: a background summariser (C17) may be evicting too.
            for old in list(self._entries)[: len(self._entries) // 2 + 1]:
                for dropped in self._entries.pop(old, ()):
                    self.kept_chars -= len(dropped.head) + len(dropped.tail)
        self._entries.setdefault(key, []).append(rest)
        self.kept_chars += held
        return rest

    def clear(self) -> None:
        self._entries.clear()
        self.kept_chars = self.hits = self.misses = self.chars = 0

    def __len__(self) -> int:
        return sum(len(rests) for rests in self._entries.values())


RESTS = RestCache()
