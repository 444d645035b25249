"""What the lossless engine's two tools share: their limits and their argument handling.

``context_grep`` (``lcm_grep.py``) searches the messages compacted out of the session;
``context_expand`` (``lcm_expand.py``) returns the originals behind a node. Both take the
model's arguments as they come — numbers sent as text, ids with quotes around them — and
both answer ``{"success": false, "error": ...}`` saying what to do instead of raising.
The arguments are model input: every integer is bounded before it is used anywhere.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DEFAULT_EXPAND_TOKENS",
    "DEFAULT_GREP_LIMIT",
    "MAX_EXPAND_TOKENS",
    "MAX_GREP_LIMIT",
    "MAX_INTEGER_ARGUMENT",
    "MIN_EXPAND_TOKENS",
    "failure",
    "integer_argument",
]

DEFAULT_GREP_LIMIT = 10
MAX_GREP_LIMIT = 50
DEFAULT_EXPAND_TOKENS = 4_000
MIN_EXPAND_TOKENS = 200
MAX_EXPAND_TOKENS = 32_000
# Larger numbers are never meaningful (no session holds a billion messages), and a model
# that sends 2**70 must get an answer, not an overflow deep in SQLite.
MAX_INTEGER_ARGUMENT = 1_000_000_000


def failure(error: str) -> dict[str, Any]:
    """The answer of a tool call that could not be done, saying what to do instead."""
    return {"success": False, "error": error}


def integer_argument(args: dict[str, Any], key: str, default: int | None) -> int | None:
    """An integer argument (models send "5" as often as 5); ``ValueError`` names the key.

    Values beyond ±``MAX_INTEGER_ARGUMENT`` are refused.
    """
    value = args.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        raise ValueError(f"{key} must be a whole number, not {value!r}")
    if isinstance(value, float) and value.is_integer():
        number = int(value)
    else:
        try:
            number = int(str(value).strip())
        except ValueError:
            raise ValueError(f"{key} must be a whole number, not {value!r}") from None
    if abs(number) > MAX_INTEGER_ARGUMENT:
        raise ValueError(f"{key}={number} is out of range; use a whole number of at most "
                         f"{MAX_INTEGER_ARGUMENT:,}")
    return number
