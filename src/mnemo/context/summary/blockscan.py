"""Error lines of long tool output, read a block of lines at a time, each block once.

An agent's tool output repeats itself: the same file read again, the same test run
again with a different first line (a command echo, a call id, a timestamp), the same
log tail. The cache of whole messages (``reading.py``) sees none of that — one
character differs — so before this module every near-copy was scanned for error lines
from scratch: 84 MB of lowering and ten substring scans on the 34,000-message bench
transcript, most of it text already scanned.

``error_lines_by_block`` cuts a text into blocks of whole lines and keeps what
``failures.error_line_candidates`` finds in each block in ``BLOCKS``, by the block's
hash and length; the candidates of the whole text are those of its blocks, moved by
their offsets (nothing in a candidate looks past its line's end), and
``failures.collect_error_lines`` finishes them on the whole text (a traceback's
exception line, the repeats) — the same lines as ``failures.error_lines``, always.

Where the blocks are cut decides what two near-copies share. The first line is a block
of its own; after it, a block ends at the first line break ``BLOCK`` characters on, and
a window that ``prompt.truncate_for_summary`` cut starts a new block at its marker, so
the tail's blocks line up with the tail. Cuts follow the content, not the offset: a
first line of another length (``# call_7``, ``# call_1234``) moves the text but not
where its later blocks end.
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

__all__ = ["BLOCK", "BLOCKS", "error_lines_by_block"]

BLOCK = 2048  # characters a block holds at least (then up to its last line's end)
BLOCKS = MessageCache(limit=100_000)  # block key -> its error line candidates
_SMALL = 128  # a block shorter than this (a first line, most often) is read, not kept
_MARKED = CONTENT_HEAD + len(TRUNCATION_MARKER) + CONTENT_TAIL


def error_lines_by_block(text: str, *, logged_only: bool = False) -> list[str]:
    """``failures.error_lines(text)``, with every block of it read once (see above);
    ``logged_only``: only the lines ``failures.is_logged_error`` accepts (what a read's
    output keeps), found without collecting the others."""
    if len(text) <= BLOCK:
        found = error_lines(text)
        return [ln for ln in found if is_logged_error(ln)] if logged_only else found
    candidates: list[tuple[int, str | None]] = []
    which = 1 if logged_only else 0
    lookup, put, find = BLOCKS.find, BLOCKS.put, text.find
    # The head of a cut window ends just before the marker's line break: the rest
    # (marker and tail) is a segment of its own, of whole lines too, whose first block
    # starts at the marker.
    size = len(text)
    cut = (CONTENT_HEAD if size == _MARKED
           and text.startswith(TRUNCATION_MARKER, CONTENT_HEAD) else size)
    start, end = 0, find("\n", 0, cut) + 1 or cut  # the first line: a block of its own
    while start < size:
        block = text[start:end]
        if end - start < _SMALL:  # a first line: cheaper to read than to keep
            read = _read(block)
        else:
            key = (hash(block), end - start)
            kept: _Read | None = lookup(key)  # type: ignore[assignment]
            if kept is None:
                kept = _read(block)
                put(key, kept, end - start)
            read = kept
        if read[which]:
            candidates += [(start + offset, line) for offset, line in read[which]]
        start = end
        stop = cut if start < cut else size
        end = find("\n", start + BLOCK, stop) + 1 or stop
    found = collect_error_lines(text, candidates)
    return [ln for ln in found if is_logged_error(ln)] if logged_only else found


# A block's candidates, all and those that may be logged errors (or traceback headers,
# whose exception line is only known in the whole text).
_Read = tuple[tuple[tuple[int, str | None], ...], tuple[tuple[int, str | None], ...]]
_NOTHING: _Read = ((), ())


def _read(block: str) -> _Read:
    found = tuple(error_line_candidates(block))
    if not found:
        return _NOTHING
    return found, tuple(c for c in found if c[1] is None or is_logged_error(c[1]))
