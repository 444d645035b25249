"""Reading tool output for what went wrong, and tool calls for what they do.

Agent transcripts are mostly tool output: megabytes of file listings, logs and test runs
in which a few lines say what failed. ``error_lines`` finds those lines (every branch of
its pattern contains one of a few cheap substrings, so clean output is skipped by
``str.find`` at memory speed; ``may_hold_error`` tells from those substrings alone that a
short text holds none), ``best_error_lines`` ranks them — the line an error is
raised with beats a "FAILED" summary that only points at it, a pass/fail tally tells
least — and ``failure_lines`` applies the rule for reads: a file's text is content, so
``raise ValueError`` in a listing is not a failure, while a log file's
``KeyError: 'x'`` is worth keeping.

Used by the fact extraction of the local summariser and by the compressor, which keeps
the failure lines under a tool output it clears.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from mnemo.context.prompt import truncate_for_summary
from mnemo.context.pruning import calls_by_id
from mnemo.context.textscan import one_line
from mnemo.messages import Message, content_text, with_content
from mnemo.tokens import estimate_message_tokens_rough

__all__ = [
    "COMMAND_KEYS",
    "best_error_lines",
    "call_kinds",
    "collect_error_lines",
    "error_line_candidates",
    "error_lines",
    "error_shape",
    "failure_lines",
    "is_logged_error",
    "keep_failure_lines",
    "may_hold_error",
    "tool_kind",
]

# What an error line looks like. Every branch contains one of ``_ERROR_HINTS``.
_ERROR = re.compile(
    r"Traceback \(most recent call last\)|(?:Error|Exception)\b(?=[:(\s]|$)"
    r"|error(?:\[\w+\])?:|ERROR\b|fatal:|FATAL\b|FAILED\b|panic:|[Pp]ermission denied"
    r"|[Nn]o such file or directory|command not found|[1-9]\d* (?:failed|errors?)\b"
    r"|exit (?:code|status) [1-9]",
)
_EXCEPTION_NAME = re.compile(r"\w(?:Error|Exception)\b")
_ERROR_VERDICT = re.compile(r"FAILED|[Ee]rror(?:\[\w+\])?:|fatal:|FATAL:|panic:")
# The line an error is raised with — "pkg.KeyError: 'x'", "app.QuotaExceeded: …",
# "error[E0382]: …" — holds the details a "FAILED test_x" summary line only points at.
# (Only lines already found to report an error are scored, so "Note: …" is no risk.)
_RAISED = re.compile(r"(?:E\s+)?(?:[\w.]*[A-Z][a-z]\w*(?:\[\w+\])?: \S"
                     r"|(?:error|fatal|panic)(?:\[\w+\])?: \S)")
# An error as a log or a runner prints it: "KeyError: 'x'", "E   AssertionError: …",
# "FAILED tests/…", "error[E0382]: …", "fatal: …" — not "raise ValueError(…)" in code.
_LOGGED_ERROR = re.compile(
    r"(?:E\s+|\[?\w*\]?\s*)?(?:[\w.]{0,80}(?:Error|Exception|Warning)(?:\[\w+\])?: \S"
    r"|FAILED |ERROR\b|FATAL\b|error(?:\[\w+\])?: |fatal: |panic: )")
_TALLY = re.compile(r"\b\d+ (?:passed|failed)\b")
_DIGITS = re.compile(r"\d+")
# Cheap substring checks that every match of ``_ERROR`` contains one of.
_ERROR_HINTS = ("rror", "RROR", "xception", "Traceback", "fatal", "FATAL", "FAILED", "failed",
                "panic", "denied", "such file", "not found", "exit code", "exit status")
# The same hints in lower case, for the lowered text: 10 scans instead of 14 (one
# ``lower()`` pass costs about one scan). Every match of ``_ERROR`` contains one. Each
# is as long as ``_ERROR`` allows: ``str.find`` skips up to a needle's length at a time,
# so "command not found" is scanned in about half the time of "not found".
_LOWER_HINTS = ("error", "exception", "traceback (most recent call last)", "fatal", "failed",
                "panic:", "permission denied", "no such file or directory",
                "command not found", "exit ")
# The same, as one pattern: ``may_hold_error`` runs on every tool output's first line.
_LOWER_HINT = re.compile("|".join(re.escape(hint) for hint in _LOWER_HINTS))
_SHORT = 512
COMMAND_KEYS = ("command", "cmd", "script")
_WRITE_TOOL = re.compile(r"write|edit|patch|create|replace|apply|save|append|insert|delete"
                         r"|remove|rename|move|mkdir", re.IGNORECASE)
_READ_TOOL = re.compile(r"read|view|cat|open|grep|search|find|list|glob|fetch|browse|get",
                        re.IGNORECASE)


def error_lines(text: str) -> list[str]:
    """The lines of ``text`` that report an error, in order (a traceback's exception line
    included even when its type is not a known error word).

    Only lines holding one of the cheap ``_ERROR_HINTS`` substrings are tested with the
    full pattern: ``str.find`` skips through megabytes of clean output far faster than
    any regex can.
    """
    return collect_error_lines(text, error_line_candidates(text))


def may_hold_error(text: str) -> bool:
    """False when ``text`` holds no error line for sure (``error_lines`` finds none):
    none of the hints is in it. Cheaper than the full pattern on a short text.

    Lowering works a character at a time, so the lowered form of a match is in the
    lowered text even where lowering changes lengths.
    """
    return _LOWER_HINT.search(text.lower()) is not None


def error_line_candidates(text: str) -> list[tuple[int, str | None]]:
    """The error lines of ``text`` one line at a time, before ``collect_error_lines``:
    ``(start, stripped line)``, and ``(start, None)`` for a traceback header, whose
    exception line is found later in the text that follows it.

    Nothing here looks past a line's end, so a text cut into whole lines gives, piece
    by piece, the candidates of the whole (``summary/blockscan.py`` relies on it).
    """
    # A short text (a user's message, a tool's first line) is cheaper to test whole
    # with the pattern than hint by hint: no match in it, no error line.
    if len(text) < _SHORT and not _ERROR.search(text):
        return []
    # Hints are found in the lowered text; its positions are the text's unless lowering
    # changed a character's length (rare letters such as "İ"), then the text is scanned.
    haystack = text.lower()
    if len(haystack) != len(text):
        starts = _hinted_lines(text, _ERROR_HINTS)
    else:
        starts = _hinted_lines(haystack, _LOWER_HINTS)
    found: list[tuple[int, str | None]] = []
    for start in starts:
        end = text.find("\n", start)
        line = text[start:end if end >= 0 else len(text)]
        if _ERROR.search(line):
            if line.startswith("Traceback (most recent"):
                found.append((start, None))
                continue
            line = line.strip(" \t=-*#")
            if line:
                found.append((start, line))
    return found


def collect_error_lines(text: str, candidates: Sequence[tuple[int, str | None]]
                        ) -> list[str]:
    """The error lines of ``text`` from its ``error_line_candidates`` (see there)."""
    if not candidates:
        return []
    found: dict[int, str] = {}
    for start, line in candidates:
        if line is None:
            end = text.find("\n", start)
            start, line = _exception_line(text, end if end >= 0 else len(text))
            line = line.strip(" \t=-*#")
            if start < 0 or not line:
                continue
        found[start] = line
    # The same line repeated (a loop that failed twenty times) counts once, where it
    # last appeared.
    last = {line: start for start, line in sorted(found.items())}
    return sorted(last, key=last.__getitem__)


def _hinted_lines(haystack: str, hints: Sequence[str]) -> list[int]:
    """The start of every line of ``haystack`` that holds one of ``hints``, in order."""
    starts: set[int] = set()
    find, rfind = haystack.find, haystack.rfind
    for hint in hints:
        position = find(hint)
        while position >= 0:
            starts.add(rfind("\n", 0, position) + 1)
            end = find("\n", position)
            if end < 0:
                break
            position = find(hint, end)
    return sorted(starts)


def best_error_lines(lines: Sequence[str], limit: int) -> list[str]:
    """The ``limit`` most telling of ``lines``, kept in their order."""
    if len(lines) <= limit:
        return list(lines)
    ranked = sorted(range(len(lines)), key=lambda i: (_error_score(lines[i]), i))
    return [lines[i] for i in sorted(ranked[-limit:])]


def tool_kind(name: str, args: Any) -> str:
    """``write``, ``read``, ``run`` or ``other``: what a tool call does, by its name."""
    if _WRITE_TOOL.search(name):
        return "write"
    if _READ_TOOL.search(name):
        return "read"
    if isinstance(args, dict) and any(k in args for k in COMMAND_KEYS):
        return "run"
    return "other"


def failure_lines(text: str, kind: str, limit: int = 2) -> list[str]:
    """The lines that best say what went wrong in a tool's output (none if nothing did).

    For a read, that is its first line when the tool reports a failure there, else the
    errors the file itself logs ("KeyError: 'x'" in a log file, not ``raise`` in code).
    """
    if kind == "read":
        head = error_lines(text.lstrip()[:300].split("\n", 1)[0])
        lines = head or [ln for ln in error_lines(text) if _LOGGED_ERROR.match(ln)]
    else:
        lines = error_lines(text)
    return best_error_lines(lines, limit)


def call_kinds(messages: Sequence[Message], wanted: set[str]) -> dict[str, str]:
    """``tool_kind`` of the calls whose ids are in ``wanted``."""
    return {call_id: tool_kind(call.name, call.arguments)
            for call_id, call in calls_by_id(messages, wanted).items()}


def keep_failure_lines(originals: Sequence[Message], cleared: list[Message],
                       tokens: list[int], indices: Sequence[int]) -> None:
    """Under each cleared tool output ``cleared[i]`` (``i`` in ``indices``), add the (at
    most two) lines of ``originals[i]`` that say what went wrong, and recount its tokens.

    The compressor clears old output to save space, but a failure must still reach the
    summary when those turns are compacted later.
    """
    if not indices:
        return
    kinds = call_kinds(originals, {str(originals[i].get("tool_call_id", "")) for i in indices})
    for i in indices:
        kind = kinds.get(str(originals[i].get("tool_call_id", "")), "other")
        lines = failure_lines(truncate_for_summary(content_text(originals[i])), kind)
        if lines:
            kept = "\n".join(one_line(line, 300) for line in lines)
            text = f"{content_text(cleared[i])}\n{kept}"
            # A short output that is mostly its error line is kept whole: the cleared
            # form with the line under it would be longer than the output itself.
            if len(text) >= len(content_text(originals[i])):
                cleared[i] = with_content(originals[i], content_text(originals[i]))
            else:
                cleared[i] = with_content(cleared[i], text)
            tokens[i] = estimate_message_tokens_rough(cleared[i])


def _exception_line(text: str, after: int) -> tuple[int, str]:
    """The first unindented line after a traceback header (Python puts the error there)."""
    position = after
    for _ in range(200):  # tracebacks longer than this are not worth following
        if position < 0 or position >= len(text):
            return -1, ""
        start = position + 1
        end = text.find("\n", start)
        line = text[start:end if end >= 0 else len(text)]
        if line.strip() and not line[0].isspace():
            return start, line
        position = end
    return -1, ""


def _error_score(line: str) -> int:
    """How much an error line tells: an exception name, a verdict, a location; a bare
    pass/fail tally tells little."""
    score = 3 if _RAISED.match(line) else 0
    score += 1 if _EXCEPTION_NAME.search(line) else 0
    score += 1 if _ERROR_VERDICT.search(line) else 0
    score += 1 if "/" in line or ".py" in line else 0
    return score - (2 if _TALLY.search(line) else 0)


def error_shape(line: str) -> str:
    """An error line with its numbers blanked: repeats of one failure share a shape."""
    return _DIGITS.sub("N", line.lower())


def is_logged_error(line: str) -> bool:
    """True for an error line as a log or a runner prints it (not code that raises)."""
    return bool(_LOGGED_ERROR.match(line))
