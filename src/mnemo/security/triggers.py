"""Where a per-command analysis is worth running: the lines around cheap literal triggers.

``exfil.exfil_command`` analyses each command (a logical line: continued lines joined)
with a dozen regexes. Run on every ``curl`` of a 64 KiB file of ``curl\\n`` lines, that
fixed cost per command is what broke S1's 50 ms per pattern. A command can only be
exfiltration when it holds one of a few things (a credentials path, an environment dump,
a command substitution, an upload of a home file, a collection service or an IP, a
secret-named variable next to a host), and each of those is found with one pass of a
regex over the whole text. This module turns such trigger offsets into the ranges of
lines whose senders must be analysed; senders elsewhere are skipped unread.

The ranges are a superset of what can matter: a command starts on its sender's line and
runs through continued lines (at most ``max_continued``), and a code call (``requests.post(``)
reads up to ``code_lines`` lines after its own, so a trigger on line *k* concerns the
senders of the lines before it in that reach, and of line *k* itself.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable

from mnemo.security.normalise import Form

__all__ = ["candidate_ranges", "near"]


def _line_end(form: Form, line: int) -> int:
    starts = form.line_starts
    return starts[line] - 1 if line < len(starts) else len(form.text)


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):  # a long continued group can reach further back
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def candidate_ranges(form: Form, triggers: list[int], senders: Callable[[], list[int]],
                     senders_at_most: int, *, max_continued: int, code_lines: int,
                     reach: int) -> list[tuple[int, int]]:
    """Merged, sorted ``(start, end)`` text ranges holding every sender whose command may
    contain one of the ``triggers`` (sorted offsets into ``form.text``).

    The triggers drive while the lines they fall on are fewer than ``senders_at_most``
    (a cheap upper bound on the senders); past it, the ``senders`` (computed only then)
    drive, each looking for a trigger in its reach. So dense triggers with a few senders,
    and dense senders with a few triggers, both cost little. ``reach``: how far past its
    line's start a sender's command may read.
    """
    starts, continued = form.line_starts, form.continued
    ranges: list[tuple[int, int]] = []
    line_end = -1
    for offset in triggers:
        if offset <= line_end:
            continue  # this line's range is already taken
        if len(ranges) > senders_at_most:
            return _sender_driven(form, triggers, senders(), max_continued=max_continued,
                                  code_lines=code_lines, reach=reach)
        line = bisect_right(starts, offset)
        line_end = _line_end(form, line)
        first = line
        while first > 1 and line - first < max_continued and continued[first - 2]:
            first -= 1
        first = max(1, min(first, line - code_lines))
        ranges.append((starts[first - 1], line_end))
    return _merged(ranges)


def _sender_driven(form: Form, triggers: list[int], senders: list[int], *,
                   max_continued: int, code_lines: int, reach: int) -> list[tuple[int, int]]:
    starts, continued = form.line_starts, form.continued
    ranges: list[tuple[int, int]] = []
    line_end = -1
    for offset in senders:
        if offset <= line_end:
            continue
        line = bisect_right(starts, offset)
        line_end = _line_end(form, line)
        last = line
        while last - line < max_continued and last - 1 < len(continued) and continued[last - 1]:
            last += 1
        last = min(len(starts), last + code_lines)
        low = starts[line - 1]
        if near(triggers, low, 0, min(_line_end(form, last), low + reach)):
            ranges.append((low, line_end))
    return _merged(ranges)


def near(sorted_offsets: list[int], offset: int, before: int, after: int) -> bool:
    """True when one of ``sorted_offsets`` lies in ``[offset - before, offset + after]``."""
    i = bisect_left(sorted_offsets, offset - before)
    return i < len(sorted_offsets) and sorted_offsets[i] <= offset + after
