"""Secrets kept out of a local summary: what looks like a key, a token or a password.

``redact_secrets`` replaces them with ``[REDACTED]`` in one line. A summary is ranked
from thousands of candidate lines, and a search per line costs more than the lines
hold: ``may_hold_secrets`` tells, in a few substring scans over all of them at once,
which lines can hold one (every secret pattern contains one of ``_HINTS``); only those
are searched with the patterns.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

__all__ = ["may_hold_secrets", "redact_secrets"]

_SECRET = re.compile(
    r"-----BEGIN[A-Z ]{0,30}PRIVATE KEY-----[\s\S]{0,5000}?"
    r"(?:-----END[A-Z ]{0,30}PRIVATE KEY-----|$)"
    r"|\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,200}|\bAKIA[0-9A-Z]{16}\b"
    r"|\bgh[pousr]_[A-Za-z0-9]{36,100}|\bxox[baprs]-[A-Za-z0-9-]{10,100}"
    r"|\bAIza[0-9A-Za-z_\-]{35}\b|\beyJ[A-Za-z0-9_-]{10,500}\.[A-Za-z0-9_-]{10,1000}\.[\w-]{5,500}"
)
_SECRET_ASSIGNMENT = re.compile(
    r"\b((?:api[_-]?key|secret(?:[_-]key)?|password|passwd|pwd|token|access[_-]token"
    r"|auth[_-]token|client[_-]secret)\b[\"']?\s?[=:]\s?[\"']?)[^\s\"',;]{4,300}",
    re.IGNORECASE,
)
# Every secret pattern above contains one of these; most lines contain none.
_SECRET_HINT = re.compile(r"sk-|AKIA|gh[pousr]_|xox|AIza|eyJ|BEGIN|Bearer|key|secret|passw"
                          r"|pwd|token", re.IGNORECASE)
_BEARER = re.compile(r"\b(Bearer\s+)[A-Za-z0-9._~+/=-]{12,500}")
# ``_SECRET_HINT`` as lower-case literals, for ASCII text lowered once (``re.IGNORECASE``
# also folds a few non-ASCII letters — "ſ", "K" — so other text is searched line by line).
_HINTS = ("sk-", "akia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "xox", "aiza", "eyj",
          "begin", "bearer", "key", "secret", "passw", "pwd", "token")


def redact_secrets(text: str) -> str:
    """Replace what looks like a key, token or password with ``[REDACTED]``."""
    if not _SECRET_HINT.search(text):
        return text
    text = _SECRET.sub("[REDACTED]", text)
    text = _SECRET_ASSIGNMENT.sub(lambda m: m.group(1) + "[REDACTED]", text)
    return _BEARER.sub(lambda m: m.group(1) + "[REDACTED]", text)


def may_hold_secrets(texts: Sequence[str]) -> list[bool]:
    """For each of ``texts``, False when it cannot hold a secret (``redact_secrets``
    would return it as it is); True when it may."""
    flags = [False] * len(texts)
    ascii_texts: list[str] = []
    where: list[int] = []  # the index in ``texts`` of each of ``ascii_texts``
    for i, text in enumerate(texts):
        if text.isascii():
            ascii_texts.append(text)
            where.append(i)
        else:  # "×", "→", "…" are common in summary lines: these few are searched alone
            flags[i] = _SECRET_HINT.search(text) is not None
    haystack = "\n".join(ascii_texts).lower()
    starts: list[int] = []
    position = 0
    for text in ascii_texts:
        starts.append(position)
        position += len(text) + 1
    find = haystack.find
    for hint in _HINTS:
        at = find(hint)
        while at >= 0:
            line = bisect_right(starts, at) - 1
            flags[where[line]] = True
            at = find(hint, starts[line + 1] if line + 1 < len(starts) else len(haystack))
    return flags
