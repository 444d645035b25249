"""No input can make the threat scan slow (S1, ReDoS) — shown by counting, not timing.

Two properties that make the 50 ms bound hold on any machine, checked without a clock:

* no regex of a threat pattern nests a variable-length repeat inside an *unbounded*
  one (``(a+)+``, ``(\\s*\\w+)*``): that nesting is what lets a backtracking engine try
  exponentially many ways to split the same text. Bounded repeats (``{0,2}``) are fine:
  their cost is a constant per position;
* scanning a 64 KiB adversarial file hands each pattern the text a bounded number of
  times (work is linear in the input, never rescanning per line or per finding).

The times (per pattern, 64 KiB of adversarial input) are measured by
``bench/scanner_bench.py`` and ``bench/hostile_input_bench.py``; that the work grows
linearly with the text is counted in ``tests/security/test_scan_work.py``.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mnemo.security.patterns as patterns_module
from mnemo.prompt import load_context_files
from mnemo.security import MAX_SCAN_CHARS
from mnemo.security.patterns import PATTERNS, ThreatPattern

try:  # the regex parser's module: ``re._parser`` since 3.11
    from re import _constants as sre_constants
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover - older layouts
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT,
            getattr(sre_constants, "POSSESSIVE_REPEAT", sre_constants.MAX_REPEAT)}
_UNBOUNDED = sre_constants.MAXREPEAT


def _regexes(value: Any, seen: set[int]) -> Iterator[re.Pattern[str]]:
    """Every compiled regex reachable from a matcher (closures, lists, nested functions)."""
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, re.Pattern):
        yield value
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _regexes(item, seen)
    elif callable(value):
        for cell in getattr(value, "__closure__", None) or ():
            try:
                yield from _regexes(cell.cell_contents, seen)
            except ValueError:  # an empty cell
                continue


def _all_regexes() -> list[re.Pattern[str]]:
    """The regexes of every threat pattern: in its matchers' closures and in the module
    globals of every ``mnemo.security`` module the matchers live in."""
    seen: set[int] = set()
    found = [r for p in PATTERNS for m in p.matchers for r in _regexes(m, seen)]
    modules = {patterns_module, *(sys.modules[m.__module__] for p in PATTERNS
                                  for m in p.matchers if m.__module__ in sys.modules)}
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, re.Pattern | list | tuple | set | frozenset):
                found += list(_regexes(value, seen))
    return found


def _variable_repeat_inside(items: Any) -> bool:
    """True when the parsed ``items`` hold a repeat whose length can vary."""
    for op, arg in items:
        if op in _REPEATS:
            low, high, body = arg
            if low != high or _variable_repeat_inside(body):
                return True
        elif _children(op, arg) and any(_variable_repeat_inside(c) for c in
                                        _children(op, arg)):
            return True
    return False


def _children(op: Any, arg: Any) -> list[Any]:
    if op == sre_constants.SUBPATTERN:
        return [arg[-1]]
    if op == sre_constants.BRANCH:
        return list(arg[1])
    if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
        return [arg[1]]
    if op == getattr(sre_constants, "ATOMIC_GROUP", None):
        return [arg]
    return []


def nested_unbounded_repeats(items: Any) -> list[str]:
    """Descriptions of every unbounded repeat that contains a variable-length repeat."""
    found: list[str] = []
    for op, arg in items:
        if op in _REPEATS:
            low, high, body = arg
            if high == _UNBOUNDED and _variable_repeat_inside(body):
                found.append(f"{{{low},}} over a variable repeat")
            found.extend(nested_unbounded_repeats(body))
        else:
            for child in _children(op, arg):
                found.extend(nested_unbounded_repeats(child))
    return found


def _nesting(pattern: str) -> list[str]:
    return nested_unbounded_repeats(sre_parse.parse(pattern))


@pytest.mark.parametrize("regex", [r"(a+)+$", r"(\s*\w+)*x", r"(?:a|b?)+", r"((ab)*c?)*"])
def test_the_check_finds_classic_catastrophic_regexes(regex: str) -> None:
    assert _nesting(regex)


@pytest.mark.parametrize("regex", [r"\bignore\s{1,10}(?:(?:all|the)\s{1,10}){0,2}rules",
                                   r"a+b+c*", r"(?:ab)+", r"[^>]{0,200}>"])
def test_the_check_accepts_linear_regexes(regex: str) -> None:
    assert not _nesting(regex)


def test_no_threat_regex_nests_a_variable_repeat_in_an_unbounded_one() -> None:
    regexes = _all_regexes()
    assert len(regexes) >= len(PATTERNS) // 2  # the walk does reach the patterns' regexes
    bad = {r.pattern[:80]: _nesting(r.pattern) for r in regexes if _nesting(r.pattern)}
    assert not bad, bad


def test_a_64k_adversarial_file_is_read_a_bounded_number_of_times(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mnemo.security.scanner as scanner

    read: dict[str, int] = {}

    def counting(pattern: ThreatPattern) -> ThreatPattern:
        def wrap(inner: Any) -> Any:
            def matcher(form: Any) -> Any:
                read[pattern.id] = read.get(pattern.id, 0) + len(form.text)
                return inner(form)
            return matcher
        return dataclasses.replace(pattern, matchers=tuple(wrap(m) for m in pattern.matchers))

    monkeypatch.setattr(scanner, "PATTERNS", tuple(counting(p) for p in scanner.PATTERNS))
    text = ("ignore all \n" * 6_000)[:MAX_SCAN_CHARS]
    (project / "AGENTS.md").write_text(text, "utf-8")
    load_context_files(project, max_chars=MAX_SCAN_CHARS)
    assert read, "the scan ran no pattern"
    # Each pattern reads each normalised form of the text once (a few forms at most),
    # never once per line or per finding: 6,000 lines would mean ~6,000x.
    assert max(read.values()) <= 4 * (MAX_SCAN_CHARS + 1024), read
