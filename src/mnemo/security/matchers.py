"""Building blocks for threat patterns: bounded regexes and keyword windows over a ``Form``.

A matcher takes the skeleton form of a text (see ``normalise.py``) and yields the
``(start, end)`` offsets of what it found; the scanner turns offsets into line ranges.
Nothing here can be made slow by its input: regexes use bounded repeats only, and
"A, then B within N characters" is answered from sorted match lists with a binary
search instead of a backtracking ``A.*B``.

Patterns are written in their natural script (``игнорируй``, ``無視``) and compiled
through the same skeleton as the text, so a pattern and the text it must match always
agree on accents, confusables and width. Compilation happens on first use, never at
import.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from functools import cache

from mnemo.security.normalise import Form, skeleton

__all__ = ["Matcher", "W", "compile_pattern", "regex", "window"]

Matcher = Callable[[Form], Iterator[tuple[int, int]]]

# Between two words: whitespace, newlines, punctuation or underscores, bounded.
W = r"[\W_]{1,8}"


def _skeleton_pattern(pattern: str) -> str:
    """Map the non-ASCII letters of a pattern like the text (ASCII is left alone, so
    escapes such as ``\\W`` keep their case)."""
    if pattern.isascii():
        return pattern
    return "".join(ch if ch.isascii() else skeleton(ch) for ch in pattern)


@cache
def compile_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(_skeleton_pattern(pattern), re.IGNORECASE)


def regex(*patterns: str) -> Matcher:
    """Any of ``patterns`` (alternatives, compiled together)."""
    joined = "|".join(f"(?:{p})" for p in patterns)

    def match(form: Form) -> Iterator[tuple[int, int]]:
        for found in compile_pattern(joined).finditer(form.text):
            yield found.start(), found.end()

    return match


def window(first: str, *rest: str, span: int = 250, either_order: bool = False,
           unless_before: str | None = None) -> Matcher:
    """``first``, then each of ``rest`` in order, all within ``span`` characters.

    With ``either_order`` the other pieces may come before or after the first, in any
    order, each within ``span`` of it (languages differ in where verb and object go). ``unless_before``: a pattern that, ending
    right before ``first``, cancels the match ("never send …").
    """

    def match(form: Form) -> Iterator[tuple[int, int]]:
        text = form.text
        heads = [(m.start(), m.end()) for m in compile_pattern(first).finditer(text)]
        if not heads:
            return
        lists = [[(m.start(), m.end()) for m in compile_pattern(p).finditer(text)]
                 for p in rest]
        starts = [[s for s, _ in found] for found in lists]
        negation = compile_pattern(f"(?:{unless_before})$") if unless_before else None
        for head_start, head_end in heads:
            if negation is not None and negation.search(
                    text, max(0, head_start - 30), head_start):
                continue
            limit = head_start + span
            pos = head_end
            end = head_end
            ok = True
            for number, found in enumerate(lists):
                if either_order:
                    i = bisect_left(starts[number], head_start - span)
                    if i < len(found) and found[i][0] <= limit:
                        end = max(end, found[i][1])
                        continue
                    ok = False
                    break
                i = bisect_left(starts[number], pos)
                if i == len(found) or found[i][1] > limit:
                    ok = False
                    break
                pos = end = max(end, found[i][1])
            if ok:
                yield head_start, end

    return match
