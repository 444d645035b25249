"""The window a request must fit in (C19), and a meter that counts requests against it.

``request_budget(window, reserve)`` is what a request may hold: the model's window minus
the tokens kept for the reply (``reply_reserve``) and a small safety margin for what no
counter sees exactly (the chat template's own tokens).

``RequestMeter`` counts a request — messages and tool schemas — with the best counter at
hand: the model's own tokenizer when there is one (the embedded llama.cpp server, or
OpenAI's BPE with the ``tokenizer`` extra), else the shape-aware estimate of
``mnemo.tokens``. Either way, every model response corrects it: the ratio of the prompt
tokens the API reported to the tokens the meter counted for that request is remembered,
and the largest of the last few ratios, if above 1, scales every later count. Erring high
is the safe side: a count that is too high compacts a little early; one that is too low
overflows.

Counts are cached per text (``CachedTokenCounter``), so a long conversation is not
re-tokenized on every call; only new or changed messages are counted.
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from mnemo.messages import Message
from mnemo.tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    CachedTokenCounter,
    ShapedTokenCounter,
    TokenCounter,
    message_token_text,
)

__all__ = [
    "TOOLS_OVERHEAD_TOKENS",
    "RequestMeter",
    "reply_reserve",
    "request_budget",
    "safety_margin",
]

log = logging.getLogger("mnemo.context")

# What a chat template adds around the tool schemas (Qwen's: about 90 tokens of
# instructions on how to call them).
TOOLS_OVERHEAD_TOKENS = 128
_RATIO_MEMORY = 3  # the last observations kept; the largest one is used
_RATIO_BOUNDS = (0.5, 4.0)  # a report outside these is a mistake, not a tokenizer


def reply_reserve(window: int, max_tokens: int | None = None,
                  configured: int | None = None) -> int:
    """Tokens kept free for the reply: ``configured`` (``context.reply_reserve_tokens``),
    else the reply limit the model is called with (``model.max_tokens``), else an eighth of
    the window between 256 and 4,096; never more than half the window."""
    reserve = configured or max_tokens or min(4096, max(256, window // 8))
    return max(1, min(reserve, window // 2))


def safety_margin(window: int) -> int:
    """Tokens left unused for the chat template's framing: 1% of the window, at least 16."""
    return max(16, window // 100)


def request_budget(window: int, reserve: int) -> int:
    """The most tokens a request may hold in ``window`` with ``reserve`` kept for the
    reply (C19)."""
    return max(1, window - reserve - safety_margin(window))


class RequestMeter:
    """Counts requests (messages and tools) and learns from the counts an API reports.

    ``counter`` is the model's tokenizer when known (``exact=True``); ``None`` uses the
    shape-aware estimate. Counts are ``raw`` (what the counter says) or corrected
    (``count``: raw times the learnt ratio, rounded up).
    """

    def __init__(self, counter: TokenCounter | None = None, *, exact: bool = False) -> None:
        self.exact = exact and counter is not None
        base: TokenCounter = counter if counter is not None else ShapedTokenCounter()
        self.counter = base if isinstance(base, CachedTokenCounter) else CachedTokenCounter(base)
        self._ratios: deque[float] = deque(maxlen=_RATIO_MEMORY)

    @property
    def ratio(self) -> float:
        """The correction applied to raw counts (1.0 until a response was seen). It only
        ever raises them: a ratio below 1 learnt on one kind of text (logs counted high)
        would undercount the next kind (prose), and a count too low is an overflow."""
        return max([1.0, *self._ratios])

    def message_tokens(self, message: Message | Mapping[str, Any]) -> int:
        """Raw tokens of one message: its text plus the per-message framing."""
        return self.counter.count(message_token_text(dict(message))) + MESSAGE_OVERHEAD_TOKENS

    def tools_tokens(self, tools: Sequence[Mapping[str, Any]] | None) -> int:
        """Raw tokens of the tool schemas a request offers (none: 0)."""
        if not tools:
            return 0
        text = json.dumps(list(tools), ensure_ascii=False, sort_keys=True)
        return self.counter.count(text) + TOOLS_OVERHEAD_TOKENS

    def raw(self, messages: Sequence[Message | Mapping[str, Any]],
            tools: Sequence[Mapping[str, Any]] | None = None) -> int:
        return sum(self.message_tokens(m) for m in messages) + self.tools_tokens(tools)

    def count(self, messages: Sequence[Message | Mapping[str, Any]],
              tools: Sequence[Mapping[str, Any]] | None = None) -> int:
        """Corrected tokens of a request."""
        return self.corrected(self.raw(messages, tools))

    def corrected(self, raw: int) -> int:
        ratio = self.ratio
        return raw if ratio == 1.0 else -int(-raw * ratio // 1)

    def observe(self, raw: int, reported: int) -> None:
        """An API said the request the meter counted as ``raw`` had ``reported`` prompt
        tokens: remember the ratio (a report of 0, or a wild one, is ignored)."""
        if raw <= 0 or reported <= 0:
            return
        ratio = reported / raw
        low, high = _RATIO_BOUNDS
        if not low <= ratio <= high:
            log.debug("token report ignored: %d reported for %d counted", reported, raw)
            return
        self._ratios.append(ratio)

    def reset(self) -> None:
        """A new conversation: forget the ratios (the cache stays; texts are texts)."""
        self._ratios.clear()
