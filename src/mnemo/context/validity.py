"""Checking that a message list is one a chat API accepts (C12), and that a message survived.

``validate_c12`` (re-exported from the leaf module ``mnemo.api_validity``, where the
model-client test double can reach it too) lists every way a list breaks C12.

The property-based tests, ``bench/validity_bench.py`` and anyone who builds message lists
by hand use the same function, so "valid" means one thing everywhere.

``still_present(message, output)`` tells whether a message still reaches the model after
a compression: as it was, with a summary merged in front of it (C12 c), or merged with a
same-role neighbour (``repair.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mnemo.api_validity import validate_c12
from mnemo.messages import Message

__all__ = ["still_present", "validate_c12"]


def still_present(message: Message | dict[str, Any],
                  output: Sequence[Message | dict[str, Any]]) -> bool:
    """True when ``message`` reaches the model in ``output``: as it was, after a summary
    merged in front of it (C12 c), or merged with a same-role neighbour."""
    return any(_carries(produced, message) for produced in output)


def _carries(produced: Message | dict[str, Any], original: Message | dict[str, Any]) -> bool:
    if produced == original:
        return True
    if produced.get("role") != original.get("role"):
        return False
    before, after = original.get("content"), produced.get("content")
    if isinstance(before, list):
        return isinstance(after, list) and _holds_run(after, before)
    if not isinstance(before, str) or not before:
        return False
    if isinstance(after, list):
        return any(isinstance(p, dict) and _joined_in(str(p.get("text", "")), before)
                   for p in after)
    return isinstance(after, str) and _joined_in(after, before)


def _joined_in(text: str, piece: str) -> bool:
    """``piece`` is ``text``, or one of its blank-line separated blocks at a seam."""
    return (text == piece or text.startswith(piece + "\n\n") or text.endswith("\n\n" + piece)
            or f"\n\n{piece}\n\n" in text)


def _holds_run(parts: list[Any], run: list[Any]) -> bool:
    if not run:
        return not parts
    width = len(run)
    return any(parts[k:k + width] == run for k in range(len(parts) - width + 1))
