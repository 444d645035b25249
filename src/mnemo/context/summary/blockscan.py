"""Error lines of long tool output, read a block of lines at a time, each block once.

An agent's tool output repeats itself: the same file read again, the same test run
again with a different first line (a command echo, a call id, a timestamp), the same
log tail. The cache of whole messages (``reading.py``) sees none of that — one
character differs — so before this module every near-copy was scanned for error lines
from scratch: 84 MB of lowering and ten substring scans on the 34,000-message bench
transcript, most of it text already scanned.

``scan`` cuts a stretch of a text (in place: only the blocks are sliced) into blocks of
whole lines and keeps what ``failures.error_line_candidates`` finds in each block in
``BLOCKS``, by the block's hash and length; the candidates of the whole are those of
its blocks, moved by their offsets (nothing in a candidate looks past its line's end),
and ``failures.collect_error_lines`` finishes them on the whole text (a traceback's
exception line, the repeats) — the same lines as ``failures.error_lines``, always.
``error_lines_by_block`` does it for a whole text; ``results.py`` for the summariser's
view of a tool output, read in its original text.

Where the blocks are cut decides what two near-copies share. After a stretch's start,
a block ends at the first line break ``BLOCK`` characters on. The first line of a text
is a block of its own, and a window that ``prompt.truncate_for_summary`` cut starts a
new block at its marker, so the tail's blocks line up with the tail. Cuts follow the
content, not the offset: a first line of another length (``# call_7``, ``# call_1234``)
moves the text but not where its later blocks end.
"""

from __future__ import annotations

from mnemo.context.failures import (
    collect_error_lines,
    error_line_candidates,
    error_lines,
    is_logged_error,
)
from mnemo.context.prompt import CONTENT_HEAD, CONTENT_TAIL, TRUNCATION_MARKER
from mnemo.context.summary.cache import MessageCache

__all__ = ["BLOCK", "BLOCKS", "Candidates", "error_lines_by_block", "scan"]

BLOCK = 2048  # characters a block holds at least (then up to its last line's end)
BLOCKS = MessageCache(limit=100_000)  # block key -> its error line candidates
_SMALL = 128  # a block shorter than this (a first line, most often) is read, not kept
_MARKED = CONTENT_HEAD + len(TRUNCATION_MARKER) + CONTENT_TAIL

Candidates = list[tuple[int, str | None]]  # see ``failures.error_line_candidates``


def error_lines_by_block(text: str, *, logged_only: bool = False) -> list[str]:
    """``failures.error_lines(text)``, with every block of it read once (see above);
    ``logged_only``: only the lines ``failures.is_logged_error`` accepts (what a read's
    output keeps), found without collecting the others."""
    if len(text) <= BLOCK:
        found = error_lines(text)
        return [ln for ln in found if is_logged_error(ln)] if logged_only else found
    candidates: Candidates = []
    # The head of a cut window ends just before the marker's line break: the rest
    # (marker and tail) is a stretch of its own, of whole lines too, whose first block
    # starts at the marker.
    size = len(text)
    cut = (CONTENT_HEAD if size == _MARKED
           and text.startswith(TRUNCATION_MARKER, CONTENT_HEAD) else size)
    first = text.find("\n", 0, cut) + 1 or cut  # the first line: a block of its own
    scan(text, 0, first, 0, candidates, logged_only=logged_only, first_line=True)
    scan(text, first, cut, 0, candidates, logged_only=logged_only)
    scan(text, cut, size, 0, candidates, logged_only=logged_only)
    found = collect_error_lines(text, candidates)
    return [ln for ln in found if is_logged_error(ln)] if logged_only else found


def scan(text: str, start: int, stop: int, shift: int, into: Candidates, *,
         logged_only: bool = False, first_line: bool = False) -> None:
    """Add to ``into`` the candidates of ``text[start:stop]`` (whole lines: ``start`` is
    a line's start, ``stop`` a line's end as the reader sees it), at their offset in
    the text plus ``shift``, reading each block once (see the module docstring).

    ``first_line``: the stretch is one block however long. ``logged_only``: only the
    candidates that may be logged errors (and traceback headers).
    """
    which = 1 if logged_only else 0
    lookup, put, find = BLOCKS.find, BLOCKS.put, text.find
    end = stop if first_line else (find("\n", start + BLOCK, stop) + 1 or stop)
    while start < stop:
        size = end - start
        if size < _SMALL:  # a first line or a window's last line: cheaper to read
            read = _read(text[start:end])
        else:
            block = text[start:end]
            key = (hash(block), size)
            kept: _Read | None = lookup(key)  # type: ignore[assignment]
            if kept is None:
                kept = _read(block)
                put(key, kept, size)
            read = kept
        if read[which]:
            moved = start + shift
            into += [(moved + offset, line) for offset, line in read[which]]
        start = end
        end = find("\n", start + BLOCK, stop) + 1 or stop


# A block's candidates, all and those that may be logged errors (or traceback headers,
# whose exception line is only known in the whole text).
_Read = tuple[tuple[tuple[int, str | None], ...], tuple[tuple[int, str | None], ...]]
_NOTHING: _Read = ((), ())


def _read(block: str) -> _Read:
    found = tuple(error_line_candidates(block))
    if not found:
        return _NOTHING
    return found, tuple(c for c in found if c[1] is None or is_logged_error(c[1]))
