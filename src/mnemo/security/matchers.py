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

import importlib
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from mnemo.security.normalise import Form, skeleton

__all__ = ["Matcher", "W", "compile_pattern", "finditer", "regex", "window"]

Matcher = Callable[[Form], Iterator[tuple[int, int]]]

# Python's own regex parser (used to read a pattern's literal prefixes); private but
# stable since 3.11, and only an optimisation: if it ever fails, patterns run unanchored.
_parser: Any = importlib.import_module("re._parser")
_sre: Any = importlib.import_module("re._constants")

# Between two words: whitespace, newlines, punctuation or underscores, bounded.
W = r"[\W_]{1,8}"


def _skeleton_pattern(pattern: str) -> str:
    """Write ``pattern`` in the form the text is in: non-ASCII letters through the
    skeleton, ASCII letters in lower case, escapes (``\\W``, ``\\S``) untouched.

    The text is case-folded already, so patterns compile without ``re.IGNORECASE``,
    which makes Python's engine several times slower on long inputs.
    """
    out: list[str] = []
    escaped = False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\":
            out.append(ch)
            escaped = True
        else:
            out.append(ch.lower() if ch.isascii() else skeleton(ch))
    return "".join(out)


@cache
def compile_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(_skeleton_pattern(pattern))


_MAX_PREFIXES = 400


def _prefixes(items: list[tuple[Any, Any]]) -> tuple[set[str], bool] | None:
    """Literal strings every match of the parsed ``items`` starts with, and whether the
    sequence was read to its end; None when a match can start with anything."""
    found = {""}
    for op, arg in items:
        if op in (_sre.AT, _sre.ASSERT_NOT):
            continue  # zero-width: \b, ^, (?<!…)
        if op is _sre.LITERAL:
            assert isinstance(arg, int)
            found = {p + chr(arg) for p in found}
            continue
        if op is _sre.SUBPATTERN:
            inner = _prefixes(list(arg[-1]))
        elif op is _sre.BRANCH:
            inner = _branch_prefixes(arg[1])
        else:
            inner = None
        if inner is None:
            return (found, False) if "" not in found else None
        heads, complete = inner
        found = {p + h for p in found for h in heads}
        if len(found) > _MAX_PREFIXES:
            return None
        if not complete:
            return (found, False) if "" not in found else None
    return found, True


def _branch_prefixes(branches: list[Any]) -> tuple[set[str], bool] | None:
    heads: set[str] = set()
    complete = True
    for branch in branches:
        inner = _prefixes(list(branch))
        if inner is None:
            return None
        heads |= inner[0]
        complete = complete and inner[1]
    return heads, complete


@cache
def _anchors(pattern: str) -> tuple[str, ...] | None:
    """The literal prefixes of ``pattern`` (at least one per match), or None."""
    try:
        result = _prefixes(list(_parser.parse(_skeleton_pattern(pattern))))
    except (re.error, AttributeError, TypeError, ValueError):
        return None
    if result is None or "" in result[0]:
        return None
    return tuple(sorted(result[0]))


def finditer(pattern: str, text: str) -> Iterator[re.Match[str]]:
    """Non-overlapping matches of ``pattern`` in ``text``, found from literal anchors.

    Python's engine tries every alternative at every position, which costs tens of
    milliseconds per pattern on 64 KiB. When every match must start with one of a few
    literal strings (``ignore``, ``disregard``, ``忽略`` …), those are located with
    ``str.find`` and the pattern is tried only there.
    """
    compiled = compile_pattern(pattern)
    anchors = _anchors(pattern)
    if anchors is None:
        yield from compiled.finditer(text)
        return
    starts: set[int] = set()
    for anchor in anchors:
        pos = text.find(anchor)
        while pos >= 0:
            starts.add(pos)
            pos = text.find(anchor, pos + 1)
    done_to = -1
    for pos in sorted(starts):
        if pos < done_to:
            continue
        found = compiled.match(text, pos)
        if found is not None:
            done_to = found.end()
            yield found


def regex(*patterns: str) -> Matcher:
    """Any of ``patterns`` (alternatives, compiled together)."""
    joined = "|".join(f"(?:{p})" for p in patterns)

    def match(form: Form) -> Iterator[tuple[int, int]]:
        for found in finditer(joined, form.text):
            yield found.start(), found.end()

    return match


def window(first: str, *rest: str, span: int = 250, either_order: bool = False,
           unless_before: str | None = None) -> Matcher:
    """``first``, then each of ``rest`` in order, all within ``span`` characters.

    With ``either_order`` the other pieces may come before or after the first, in any
    order, each within ``span`` of it (languages differ in where verb and object go).
    ``unless_before``: a pattern that, ending right before ``first``, cancels the match
    ("never send …").
    """

    def match(form: Form) -> Iterator[tuple[int, int]]:
        text = form.text
        heads = [(m.start(), m.end()) for m in finditer(first, text)]
        if not heads:
            return
        lists = [[(m.start(), m.end()) for m in finditer(p, text)] for p in rest]
        starts = [[s for s, _ in found] for found in lists]
        negation = compile_pattern(f"(?:{unless_before})$") if unless_before else None
        for head_start, head_end in heads:
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
            if ok and not (negation is not None and negation.search(
                    text, max(0, head_start - 30), head_start)):
                yield head_start, end

    return match
