"""Retrying a model call: bounded exponential backoff with jitter.

The SDKs can retry on their own, but their loops are hidden from tests and would double
up with ours, so clients build the SDK with ``max_retries=0`` and wrap each call in
``RetryPolicy.run``. The clock and the random source are injectable: tests pass a
``sleep`` that records delays instead of waiting, and a seeded ``random``.

Only transient faults are retried (429, 408/409, 5xx, a connection reset mid-request);
a refused connection, a timeout, a refused key or a context-length error fail at once —
retrying them only makes the user wait longer for the same answer.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

__all__ = ["RetryPolicy", "RetryableFailure"]

log = logging.getLogger("mnemo.llm")

T = TypeVar("T")


class RetryableFailure(Exception):
    """Raised inside a retried call to ask for another attempt.

    ``final`` is the exception to raise if no attempt is left; ``retry_after`` is the
    server's ``Retry-After`` hint in seconds, if it gave one.
    """

    def __init__(self, final: BaseException, retry_after: float | None = None) -> None:
        super().__init__(str(final))
        self.final = final
        self.retry_after = retry_after


@dataclass
class RetryPolicy:
    """``max_retries`` extra attempts, waiting ``base_delay * 2**n`` (≤ ``max_delay``).

    Each wait is scaled by a random factor in ``[1 - jitter, 1]`` so many clients hitting
    a rate limit together do not retry in lockstep. A ``Retry-After`` hint from the server
    replaces the computed wait, still capped at ``max_delay``.
    """

    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 20.0
    jitter: float = 0.5
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def delay(self, retry_number: int, retry_after: float | None = None) -> float:
        """The wait before retry ``retry_number`` (0-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_delay)
        raw = min(self.base_delay * 2.0**retry_number, self.max_delay)
        return raw * (1.0 - self.jitter * self.rng.random())

    def run(self, attempt: Callable[[int], T]) -> T:
        """Call ``attempt(n)`` (n = 1, 2, …) until it returns or raises a final error.

        ``attempt`` raises ``RetryableFailure`` for a transient fault; when the retries are
        spent, that failure's ``final`` exception is raised.
        """
        number = 1
        while True:
            try:
                return attempt(number)
            except RetryableFailure as failure:
                if number > self.max_retries:
                    raise failure.final from failure.final.__cause__
                wait = self.delay(number - 1, failure.retry_after)
                log.warning("model call failed (%s); retry %d/%d in %.1f s",
                            failure, number, self.max_retries, wait)
                self.sleep(wait)
                number += 1
