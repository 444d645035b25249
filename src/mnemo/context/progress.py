"""The progress guard (C3): compression that cannot shrink the prompt must not loop.

After every compression the guard is told the estimated prompt size. Two compressions
in a row that leave it at or above the threshold pause automatic compression (the
engine's ``should_compress`` says no) and the reason is logged once; a compression that
gets under the threshold, a model call whose real prompt is under it, or a session reset
resumes it. The real prompt counts because the compressor is not the only thing that
shrinks it: after a compression that could not get under the threshold, the agent cuts
oversized messages until it is (C19) — by hand, in a 3,072-token window, a turn of
memory calls paused automatic compression for the rest of the session though every
prompt after it was under the threshold.

A compression that was skipped because the summariser could not be reached (an
authentication or network error) says nothing about whether the conversation *can*
shrink, so it is not counted: the guard's message would blame the conversation for a
configuration problem. The compressor reports those failures itself, with what to check.
"""

from __future__ import annotations

import logging

__all__ = ["PAUSE_AFTER", "ProgressGuard"]

log = logging.getLogger("mnemo.context")

PAUSE_AFTER = 2  # compressions in a row above the threshold before auto-compression pauses


class ProgressGuard:
    """Counts compressions in a row that left the prompt above the threshold."""

    def __init__(self) -> None:
        self.misses_in_a_row = 0
        self.paused_reason: str | None = None

    @property
    def paused(self) -> bool:
        return self.paused_reason is not None

    def reset(self) -> None:
        self.misses_in_a_row = 0
        self.paused_reason = None

    def observe(self, prompt_tokens: int, threshold: int) -> None:
        """A model call was made with ``prompt_tokens``: under ``threshold``, the
        compressions before it made progress (see the module docstring)."""
        if 0 < prompt_tokens < threshold and (self.misses_in_a_row or self.paused):
            if self.paused_reason is not None:
                log.info("compress: the prompt is under the threshold again (%s < %s "
                         "tokens); automatic compression resumes",
                         f"{prompt_tokens:,}", f"{threshold:,}")
            self.reset()

    def track(self, tokens_after: int, threshold: int) -> None:
        """One compression is done and left ``tokens_after`` tokens."""
        if tokens_after < threshold:
            if self.paused_reason is not None:
                log.info("compress: the prompt is under the threshold again; automatic "
                         "compression resumes")
            self.reset()
            return
        self.misses_in_a_row += 1
        if self.misses_in_a_row >= PAUSE_AFTER and self.paused_reason is None:
            self.paused_reason = (
                f"{self.misses_in_a_row} compressions in a row left the prompt above the "
                f"threshold ({tokens_after:,} >= {threshold:,} tokens); automatic "
                "compression is paused until /new, /reset or a /compact that gets under it")
            log.warning("compress paused: %s", self.paused_reason)
