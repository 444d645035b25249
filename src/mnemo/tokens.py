"""Counting tokens: the spec's rough estimate and a protocol for real tokenizers.

The rough estimate (C4) is ``len(text) // 4`` plus a fixed overhead of 10 tokens per
message for the role and framing. It is deliberately model-independent and cheap: the
compressor calls it for every message of long transcripts, and real usage numbers from
the API correct it after every call. A real tokenizer can be plugged in through
``TokenCounter``; ``BpeTokenCounter`` uses the offline ``bpe-openai`` package
(``pip install "mnemo[tokenizer]"``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from mnemo.messages import Message, content_text, tool_call_text, tool_calls_of

__all__ = [
    "CHARS_PER_TOKEN",
    "MESSAGE_OVERHEAD_TOKENS",
    "BpeTokenCounter",
    "RoughTokenCounter",
    "TokenCounter",
    "estimate_message_tokens_rough",
    "estimate_messages_tokens_rough",
    "estimate_tokens_rough",
    "message_token_text",
]

CHARS_PER_TOKEN = 4  # fixed (C4)
MESSAGE_OVERHEAD_TOKENS = 10  # fixed (C4)


def estimate_tokens_rough(text: str) -> int:
    """Rough tokens of a text: ``len(text) // 4``."""
    return len(text) // CHARS_PER_TOKEN


def message_token_text(message: Message | dict[str, Any]) -> str:
    """The text of a message that costs tokens: content plus tool-call names and arguments."""
    text = content_text(message)
    calls = tool_calls_of(message)
    if calls:
        text += "".join(tool_call_text(c) for c in calls)
    return text


def estimate_message_tokens_rough(message: Message | dict[str, Any]) -> int:
    """Rough tokens of one message: its text // 4 + 10."""
    return len(message_token_text(message)) // CHARS_PER_TOKEN + MESSAGE_OVERHEAD_TOKENS


def estimate_messages_tokens_rough(messages: Iterable[Message | dict[str, Any]]) -> int:
    """Rough tokens of a message list (the sum of ``estimate_message_tokens_rough``)."""
    return sum(estimate_message_tokens_rough(m) for m in messages)


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that counts the tokens of a text."""

    def count(self, text: str) -> int: ...


class RoughTokenCounter:
    """The 4-characters-per-token estimate as a ``TokenCounter``."""

    def count(self, text: str) -> int:
        return estimate_tokens_rough(text)


class BpeTokenCounter:
    """Exact counts with OpenAI's BPE encodings, offline (``mnemo[tokenizer]``)."""

    def __init__(self, encoding: str = "o200k_base") -> None:
        try:
            import bpe_openai
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise ImportError(
                'BpeTokenCounter needs the tokenizer extra: pip install "mnemo[tokenizer]"'
            ) from exc
        self._encoding = bpe_openai.get_encoding(encoding)

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text))
