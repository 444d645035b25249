"""The agent's window guard (C19): no request it sends is longer than the window allows.

``WindowGuard`` is the last step before every model call the agent makes — a turn, a
tool-loop follow-up, the retry after an overflow, the memory flush turn — independent of
how (or whether) the conversation was compacted before. It counts the request with the
best counter for the model (``counter_for``), fits it to the budget with
``mnemo.context.fit.fit_request`` and learns from the prompt tokens each response
reports. A request that cannot be made to fit (the system prompt and the tool schemas
alone are too big) is refused with an error naming the setting to change; it is never
sent.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mnemo.context.fit import Fit, fit_request
from mnemo.context.window import RequestMeter, reply_reserve, request_budget
from mnemo.errors import ContextLengthExceededError
from mnemo.messages import Message
from mnemo.tokens import BpeTokenCounter, TokenCounter, estimate_tokens_shaped

__all__ = ["WindowGuard", "counter_for", "reported_tokens"]

log = logging.getLogger("mnemo.agent")

# Model names whose tokenizer is OpenAI's o200k (bpe-openai, the ``tokenizer`` extra).
_OPENAI_MODEL = re.compile(r"^(?:openai/)?(?:gpt-4o|gpt-4\.1|gpt-5|o1|o3|o4|chatgpt)",
                           re.IGNORECASE)
_TOKENS_IN_ERROR = re.compile(r"(\d[\d,]*)\s+tokens")


class _FallbackCounter:
    """The model's tokenizer, or — once it fails (a server gone) — the shaped estimate."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter: TokenCounter | None = counter

    def count(self, text: str) -> int:
        if self.counter is not None:
            try:
                return self.counter.count(text)
            except Exception as exc:  # a tokenizer failure must not fail the turn
                log.warning("the model's tokenizer failed (%s: %s); estimating token counts "
                            "from now on", type(exc).__name__, exc)
                self.counter = None
        return estimate_tokens_shaped(text)


def counter_for(client: Any) -> tuple[TokenCounter | None, bool]:
    """The best token counter for ``client``'s model and whether it is exact: the client's
    own (``token_counter()``, the embedded model), OpenAI's BPE for OpenAI models when the
    ``tokenizer`` extra is installed, else ``None`` (the shaped estimate)."""
    make = getattr(client, "token_counter", None)
    if callable(make):
        counter = make()
        if counter is not None:
            return _FallbackCounter(counter), True
    if _OPENAI_MODEL.match(str(getattr(client, "model", ""))):
        try:
            return _FallbackCounter(BpeTokenCounter()), True
        except ImportError:
            log.debug("OpenAI model without the tokenizer extra; estimating token counts")
    return None, False


def reported_tokens(error: BaseException) -> int | None:
    """The request size an API's context-length error states, if it states one (the
    largest "N tokens" in the message: llama.cpp and OpenAI both name the request's)."""
    numbers = [int(m.group(1).replace(",", "")) for m in _TOKENS_IN_ERROR.finditer(str(error))]
    return max(numbers) if numbers else None


class WindowGuard:
    """Counts and fits the agent's requests; ``window`` is read on every call (the model
    can change), the reply reserve from config (``context.reply_reserve_tokens``, else
    ``model.max_tokens``, else an eighth of the window)."""

    def __init__(self, meter: RequestMeter, window: Callable[[], int], *,
                 max_tokens: int | None = None, reserve: int | None = None) -> None:
        self.meter = meter
        self._window = window
        self._max_tokens = max_tokens
        self._reserve = reserve
        self.fits_made = 0  # requests that had to be cut or shortened to fit

    @property
    def window(self) -> int:
        return self._window()

    @property
    def reserve(self) -> int:
        return reply_reserve(self.window, self._max_tokens, self._reserve)

    @property
    def budget(self) -> int:
        """The most tokens a request may hold (window − reserve − margin)."""
        return request_budget(self.window, self.reserve)

    def count(self, messages: Sequence[Message],
              tools: Sequence[Mapping[str, Any]] | None = None) -> int:
        return self.meter.count(messages, tools)

    def fit(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None,
            *, budget: int | None = None, allow_drop: bool = True,
            allow_newest: bool = True, keep_summary: bool = False) -> Fit:
        """``messages`` fitted to ``budget`` (default: the request budget)."""
        return fit_request(messages, budget=self.budget if budget is None else budget,
                           meter=self.meter, tools=tools, allow_drop=allow_drop,
                           allow_newest=allow_newest, keep_summary=keep_summary)

    def checked(self, fit: Fit) -> Fit:
        """``fit`` if it fits; else the refusal (nothing is sent)."""
        if fit.fits:
            if fit.changed:
                self.fits_made += 1
            return fit
        raise ContextLengthExceededError(
            f"the request cannot be made to fit the model's window: the system prompt and "
            f"tool schemas alone need ~{fit.tokens:,} of the {fit.budget:,} tokens a request "
            f"may use (window {self.window:,}, {self.reserve:,} kept for the reply); give "
            "the model a bigger window (model.context_length or local.context_length) or "
            "lower context.reply_reserve_tokens")

    def observe(self, messages: Sequence[Message],
                tools: Sequence[Mapping[str, Any]] | None, reported: int) -> None:
        """A response said the request had ``reported`` prompt tokens."""
        self.meter.observe(self.meter.raw(messages, tools), reported)

    def observe_overflow(self, messages: Sequence[Message],
                         tools: Sequence[Mapping[str, Any]] | None,
                         error: BaseException) -> bool:
        """Learn from an API's overflow error; True when it stated a size to learn from."""
        reported = reported_tokens(error)
        if reported is None or reported <= self.meter.count(messages, tools):
            return False
        self.observe(messages, tools, reported)
        return True
