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
from dataclasses import dataclass
from functools import cache
from typing import Any

from mnemo.security.normalise import Form, skeleton

__all__ = ["Matcher", "W", "compile_pattern", "count_anchors", "finditer", "may_match", "regex",
           "sources", "window"]

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


def _split(pattern: str) -> tuple[list[str], bool]:
    """``pattern`` split at its top-level ``|`` (outside groups, classes and escapes),
    and whether it is one non-capturing group from end to end."""
    parts: list[str] = []
    depth, start, i, in_class, wrapped = 0, 0, 0, False, pattern.startswith("(?:")
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]":
                i += 1  # a "]" first in a class is a literal
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and i < len(pattern) - 1:
                wrapped = False  # the first group closes before the end
        elif ch == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts, wrapped and len(parts) == 1


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of ``pattern``, in order, with groups that wrap a
    whole alternative opened: ``(?:a|b)|c`` gives ``a``, ``b``, ``c``."""
    parts, wrapped = _split(pattern)
    if wrapped:
        return _alternatives(pattern[3:-1])
    if len(parts) == 1:
        return parts
    return [inner for part in parts for inner in _alternatives(part)]


def _selectivity(found: set[str]) -> tuple[int, int]:
    return min(map(len, found)), -len(found)


def _musts(items: list[tuple[Any, Any]]) -> list[set[str]]:
    """Sets of literal strings such that every match of the parsed ``items`` contains
    one string of each set, most selective (longest, fewest) first."""
    candidates: list[set[str]] = []
    run = ""
    for op, arg in items:
        if op is _sre.LITERAL:
            assert isinstance(arg, int)
            run += chr(arg)
            continue
        if run:
            candidates.append({run})
            run = ""
        inner: set[str] | None = None
        if op is _sre.SUBPATTERN:
            inner = _required(list(arg[-1]))
        elif op is _sre.BRANCH:
            sets = [_required(list(branch)) for branch in arg[1]]
            if all(found is not None for found in sets):
                inner = set().union(*(found for found in sets if found is not None))
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and arg[0] >= 1:
            inner = _required(list(arg[2]))
        if inner:
            candidates.append(inner)
    if run:
        candidates.append({run})
    return sorted(candidates, key=_selectivity, reverse=True)


def _required(items: list[tuple[Any, Any]]) -> set[str] | None:
    musts = _musts(items)
    return musts[0] if musts else None


@dataclass(frozen=True)
class _Alternative:
    """One top-level alternative of a pattern and what locates it cheaply in a text."""

    regex: re.Pattern[str]
    prefixes: tuple[str, ...] | None  # every match starts with one of these
    musts: tuple[tuple[str, ...], ...]  # every match contains one string of each
    width: int | None  # the longest match; None when unbounded


_MAX_WIDTH = 5000
_LOOKAROUND = 64  # characters a lookahead may read past a match's end
_DENSE = 4000  # occurrences past which a literal no longer narrows the search
_SHORT = 400  # texts this short are scanned whole
_MERGE = 1024  # windows closer than this are scanned as one (C scans beat Python loops)
_MUSTS = 3  # literal sets checked for absence per alternative (each costs a pass)


@cache
def _plan(pattern: str) -> tuple[_Alternative, ...]:
    plan = []
    for alternative in _alternatives(pattern):
        skeleton_form = _skeleton_pattern(alternative)
        try:
            parsed = _parser.parse(skeleton_form)
            musts = _musts(list(parsed))[:_MUSTS]
            width = int(parsed.getwidth()[1])
        except (re.error, AttributeError, TypeError, ValueError):
            musts, width = [], _MAX_WIDTH + 1
        plan.append(_Alternative(
            compile_pattern(alternative), _anchors(alternative),
            tuple(tuple(sorted(must)) for must in musts),
            width if width <= _MAX_WIDTH else None))
    return tuple(plan)


def _occurrences(literals: tuple[str, ...], text: str) -> list[int] | None:
    """Sorted offsets of ``literals`` in ``text``; None past ``_DENSE`` of them."""
    found: list[int] = []
    for literal in literals:
        pos = text.find(literal)
        while pos >= 0:
            found.append(pos)
            if len(found) > _DENSE:
                return None
            pos = text.find(literal, pos + 1)
    return sorted(found)


def _windows(alt: _Alternative, text: str) -> tuple[list[tuple[int, int]], bool]:
    """``(first, last)`` ranges of the offsets where a match of ``alt`` may start, and
    whether they are exact: each a single offset where one of its prefixes stands."""
    for must in alt.musts:
        if not any(literal in text for literal in must):
            return [], False
    if alt.prefixes is not None:
        found = _occurrences(alt.prefixes, text)
        if found is not None:
            return [(pos, pos) for pos in found], True
    if alt.width is None:
        return [(0, len(text))], False
    for literals in alt.musts:
        found = _occurrences(literals, text)
        if found is None:
            continue
        before = alt.width
        windows: list[tuple[int, int]] = []
        for pos in found:
            first = max(0, pos - before)
            if windows and first <= windows[-1][1] + max(alt.width, _MERGE):
                windows[-1] = (windows[-1][0], max(windows[-1][1], pos))
            else:
                windows.append((first, pos))
        return windows, False
    return [(0, len(text))], False


def count_anchors(pattern: str, text: str) -> int:
    """At least the number of matches of ``pattern`` in ``text``, from ``str.count`` of
    its literal prefixes (C speed); ``len(text) + 1`` when it has none."""
    anchors = [anchor for alt in _plan(pattern) for anchor in alt.prefixes or ("",)]
    if "" in anchors:
        return len(text) + 1
    return sum(text.count(anchor) for anchor in set(anchors))


def may_match(pattern: str, text: str) -> bool:
    """False when no alternative of ``pattern`` can match ``text``: one of the literals
    each of its matches needs is absent (``str`` searches only, no regex run)."""
    for alt in _plan(pattern):
        if alt.prefixes is not None and not any(p in text for p in alt.prefixes):
            continue
        if all(any(literal in text for literal in must) for must in alt.musts):
            return True
    return False


def finditer(pattern: str, text: str) -> Iterator[re.Match[str]]:
    """Non-overlapping matches of ``pattern`` in ``text``, leftmost first (earlier
    alternatives first at the same offset), found from literals.

    Python's engine tries every alternative at every position, which costs tens of
    milliseconds per pattern on 64 KiB. Each top-level alternative is located instead
    by the literals its matches must start with (``ignore``, ``忽略``) or contain
    (``instructions``): an alternative whose literal is absent is never run, and one
    whose literal is present is run only in the windows around it, each a C-level scan
    no longer than the alternative's longest match. When both kinds of literal are
    dense (thousands), the alternative is scanned whole, still one C pass.
    """
    if len(text) <= _SHORT:  # one C pass costs less than locating the alternatives
        yield from compile_pattern(pattern).finditer(text)
        return
    global _last
    last_text, known = _last
    if last_text is not text:
        known = {}
        _last = (text, known)  # one tuple: readers never see a mixed pair
    if pattern not in known:
        known[pattern] = list(_find(pattern, text))
    yield from known[pattern]


# The matches of each pattern in the last long text scanned: several patterns share a
# piece (``SENSITIVE`` is read by three), and a scan reads one text many times. Holding
# the text keeps its identity from being reused by another string.
_last: tuple[str, dict[str, list[re.Match[str]]]] = ("", {})


def _find(pattern: str, text: str) -> Iterator[re.Match[str]]:
    per_alternative: list[list[tuple[int, int, re.Match[str]]]] = []
    for number, alt in enumerate(_plan(pattern)):
        width = alt.width or 0
        found: list[tuple[int, int, re.Match[str]]] = []
        windows, exact = _windows(alt, text)
        if exact:  # tried where a prefix stands, as a scan would, without the scan
            done_to = -1
            for pos, _ in windows:
                if pos < done_to:
                    continue
                hit = alt.regex.match(text, pos)
                if hit is not None:
                    found.append((pos, number, hit))
                    done_to = max(hit.end(), pos + 1)
            windows = []
        for first, last in windows:
            end = min(len(text), last + width + _LOOKAROUND) if alt.width else len(text)
            for match in alt.regex.finditer(text, first, end):
                if match.start() > last:
                    break
                found.append((match.start(), number, match))
        if found:
            per_alternative.append(found)
    if not per_alternative:
        return
    # (start, alternative) never ties, so the matches themselves are never compared.
    merged = per_alternative[0] if len(per_alternative) == 1 else sorted(
        item for found in per_alternative for item in found)
    done_to = -1
    for start, _number, match in merged:
        if start < done_to:
            continue
        done_to = max(match.end(), start + 1)
        yield match


# The source of every pattern built by ``regex`` and ``window``, in the order built
# (import time only): ``leet.py`` reads the words the patterns use from it.
_SOURCES: list[str] = []


def sources() -> tuple[str, ...]:
    """The source text of every pattern built so far by ``regex`` and ``window``."""
    return tuple(_SOURCES)


def regex(*patterns: str) -> Matcher:
    """Any of ``patterns`` (alternatives, compiled together)."""
    joined = "|".join(f"(?:{p})" for p in patterns)
    _SOURCES.append(joined)

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
    _SOURCES.extend((first, *rest))

    def match(form: Form) -> Iterator[tuple[int, int]]:
        text = form.text
        if not all(may_match(piece, text) for piece in (first, *rest)):
            return
        lists: list[list[tuple[int, int]]] = []
        # The last pieces first (a destination, a file path: usually the rarest), and the
        # heads last (often common words): one absent piece ends the search unread.
        for piece in reversed(rest):
            lists.insert(0, [(m.start(), m.end()) for m in finditer(piece, text)])
            if not lists[0]:
                return
        heads = [(m.start(), m.end()) for m in finditer(first, text)]
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
