"""``ContextCompressor``: the built-in engine and its five-step compression (C3–C14).

1. prune old tool output (``pruning.py``), 2. protect the head and 3. the tail by tokens
(``boundaries.py``), 4. summarise the middle (``prompt.py`` for a model,
``local_summary.py`` without one), 5. fold the previous summary in and put the list back
together so the API accepts it (``assembly.py``). This module decides, counts and logs;
the steps live in their own modules.

Failure rules (C13): a summariser that raises or answers nothing is replaced by the local
summariser for this compression and is not retried for 600 s; an authentication or
network error leaves the conversation unchanged (``last_report.skipped_reason`` says why).
The progress guard (C3): after two compressions in a row that leave the prompt above the
threshold, ``should_compress`` says no until the session is reset or a compression
succeeds, so a conversation that cannot shrink does not loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from mnemo.context.assembly import assemble, sanitize_tool_pairs
from mnemo.context.boundaries import find_head_end, find_tail_start, system_offset
from mnemo.context.engine import CompressionReport, ContextEngine, Summarizer, usage_tokens
from mnemo.context.extract import one_line
from mnemo.context.failures import call_kinds, failure_lines
from mnemo.context.local_summary import summarize_locally
from mnemo.context.markers import (
    FALLBACK_NOTICE,
    SUMMARY_PREFIX,
    is_summary_message,
    split_summary_message,
    strip_fallback_notice,
)
from mnemo.context.prompt import (
    build_summary_prompt,
    chunk_blocks,
    serialize_turns,
    summary_budget,
    truncate_for_summary,
    turns_token_limit,
)
from mnemo.context.pruning import prune_tool_results
from mnemo.errors import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderTimeoutError,
    UsageError,
)
from mnemo.messages import Message, content_text, with_content
from mnemo.tokens import estimate_message_tokens_rough, estimate_tokens_rough

if TYPE_CHECKING:
    from mnemo.config import MnemoConfig
    from mnemo.home import Home

__all__ = [
    "MAX_SUMMARY_FRACTION",
    "SUMMARY_FAILURE_COOLDOWN_SECONDS",
    "SUMMARY_TOKENS_CEILING",
    "ContextCompressor",
]

log = logging.getLogger("mnemo.context")

SUMMARY_TOKENS_CEILING = 12_000  # fixed (C5)
MAX_SUMMARY_FRACTION = 0.05  # fixed (C5): the summary's share of the window
SUMMARY_FAILURE_COOLDOWN_SECONDS = 600.0  # fixed (C5)
_PAUSE_AFTER = 2  # compressions in a row above the threshold before auto-compression pauses
_MIN_MIDDLE_TOKENS = 100  # a smaller middle costs more as a summary than as itself
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


@dataclass
class _Draft:
    """What ``compress`` has found so far, before it becomes a ``CompressionReport``."""

    messages: Sequence[Message]
    tokens_before: int
    pruned: list[int]
    focus_topic: str | None
    pruned_list: list[Message]
    tokens: list[int]  # of ``pruned_list``
    summary: str | None = None
    fallback: bool = False
    skipped_reason: str | None = None
    calls: int = 0
    stubs: int = 0

    def count(self, out: Sequence[Message], origins: Sequence[int | None]) -> int:
        """Rough tokens of ``out``; messages that kept their content are not counted again."""
        total = 0
        for message, origin in zip(out, origins, strict=True):
            if origin is not None and message.get("content") is self.pruned_list[origin].get(
                    "content") and message.get("tool_calls") is self.pruned_list[origin].get(
                    "tool_calls"):
                total += self.tokens[origin]
            else:
                total += estimate_message_tokens_rough(message)
        return total


@dataclass
class _Summary:
    body: str | None = None  # None: the conversation stays as it is
    fallback: bool = False
    calls: int = 0
    skipped: str | None = None


class ContextCompressor(ContextEngine):
    """The built-in context engine: a five-step compressor with a structured summary."""

    def __init__(
        self,
        *,
        context_length: int,
        threshold_percent: float = 0.50,
        protect_first_n: int = 3,
        protect_last_n: int = 20,
        summary_target_ratio: float = 0.20,
        summarizer: Summarizer | None = None,
        model: str = "",
        summary_context_length: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < threshold_percent <= 1:
            raise UsageError(f"threshold_percent must be in (0, 1], got {threshold_percent}")
        if not 0 < summary_target_ratio <= 1:
            raise UsageError(
                f"summary_target_ratio must be in (0, 1], got {summary_target_ratio}")
        if protect_first_n < 0 or protect_last_n < 1:
            raise UsageError("protect_first_n must be >= 0 and protect_last_n >= 1")
        self.threshold_percent = threshold_percent
        self.protect_first_n = protect_first_n
        # Kept for Hermes configs; the tail is chosen by tokens (C8), not by this count.
        self.protect_last_n = protect_last_n
        self.summary_target_ratio = summary_target_ratio
        self.summarizer = summarizer
        self.summary_context_length = summary_context_length
        self.clock = clock
        self.quiet = False
        self.pre_compress_hook = None
        self.last_report = None
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.compression_count = 0
        self._previous_summary: str | None = None
        self._cooldown_until = 0.0
        self._misses_in_a_row = 0
        self._paused_reason: str | None = None
        self.model = model
        self._set_window(context_length)

    @classmethod
    def from_config(
        cls,
        config: MnemoConfig,
        *,
        home: Home,
        summarizer: Summarizer | None = None,
        context_length: int,
        model: str = "",
    ) -> Self:
        ctx = config.context
        engine = cls(
            context_length=context_length,
            threshold_percent=ctx.threshold_percent,
            protect_first_n=ctx.protect_first_n,
            protect_last_n=ctx.protect_last_n,
            summary_target_ratio=ctx.summary_target_ratio,
            summarizer=summarizer,
            model=model,
            summary_context_length=config.auxiliary.context_length,
        )
        engine.quiet = ctx.quiet_mode
        return engine

    @property
    def name(self) -> str:
        return "compressor"

    # -- the window and the trigger (C3, C5) ---------------------------------------------

    def _set_window(self, context_length: int) -> None:
        if not isinstance(context_length, int) or context_length <= 0:
            raise UsageError(f"context_length must be a positive number of tokens, "
                             f"got {context_length!r}")
        self.context_length = context_length
        self.threshold_tokens = int(context_length * self.threshold_percent)
        self.tail_token_budget = int(self.threshold_tokens * self.summary_target_ratio)
        self.max_summary_tokens = min(int(context_length * MAX_SUMMARY_FRACTION),
                                      SUMMARY_TOKENS_CEILING)

    def update_model(self, model: str, context_length: int) -> None:
        self.model = model
        self._set_window(context_length)

    def update_from_response(self, usage: Any) -> None:
        self.last_prompt_tokens, self.last_completion_tokens = usage_tokens(usage)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return self._paused_reason is None and tokens >= self.threshold_tokens

    def should_compress_preflight(self, messages: Sequence[Message]) -> bool:
        return self._paused_reason is None and super().should_compress_preflight(messages)

    def on_session_reset(self) -> None:
        super().on_session_reset()
        self._previous_summary = None
        self._misses_in_a_row = 0
        self._paused_reason = None

    def get_status(self) -> dict[str, Any]:
        status = super().get_status()
        report = self.last_report
        status.update({
            "model": self.model,
            "threshold_percent": self.threshold_percent,
            "tail_token_budget": self.tail_token_budget,
            "max_summary_tokens": self.max_summary_tokens,
            "summarizer": "model" if self.summarizer else "local",
            "summary_cooldown_seconds": round(self._cooldown_left(), 1),
            "paused": self._paused_reason is not None,
            "paused_reason": self._paused_reason,
            "has_summary": self._previous_summary is not None,
            "last_compression": _report_status(report),
        })
        return status

    def _cooldown_left(self) -> float:
        return max(0.0, self._cooldown_until - self.clock())

    # -- compress ---------------------------------------------------------------------

    def compress(
        self,
        messages: Sequence[Message],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
    ) -> list[Message]:
        _check_messages(messages)
        focus_topic = (focus_topic or "").strip() or None
        n = len(messages)
        original_tokens = [estimate_message_tokens_rough(m) for m in messages]
        tokens_before = sum(original_tokens)
        tokens = list(original_tokens)
        # Step 1: old tool output.
        pruned_list, pruned = prune_tool_results(messages, tokens, self.tail_token_budget)
        for i in pruned:
            tokens[i] = estimate_message_tokens_rough(pruned_list[i])
        # Steps 2 and 3: the boundaries of the middle.
        system_end = system_offset(pruned_list)
        head_end = find_head_end(pruned_list, self.protect_first_n)
        tail_start = find_tail_start(pruned_list, tokens, head_end, self.tail_token_budget)
        self._note_failures(messages, pruned_list, tokens,
                            [i for i in pruned if not head_end <= i < tail_start])
        middle = list(messages[head_end:tail_start])
        previous, turns = _take_apart(middle)
        previous = previous or self._previous_summary
        # The summariser reads the middle as it was, before step 1 cleared anything.
        middle_tokens = sum(original_tokens[head_end:tail_start])
        log.log(self._level, "compress start: %d messages, ~%s tokens (reported: %s, "
                "threshold: %s); middle: %d messages, ~%s tokens; %d old tool outputs cleared",
                n, f"{tokens_before:,}", current_tokens, f"{self.threshold_tokens:,}",
                len(middle), f"{middle_tokens:,}", len(pruned))
        report = _Draft(messages, tokens_before, pruned, focus_topic, pruned_list, tokens)
        if not turns or middle_tokens <= _MIN_MIDDLE_TOKENS:
            report.skipped_reason = (
                "nothing to summarise: the conversation fits in the protected head and tail"
                if not turns else "nothing to summarise: the middle is too small to be worth "
                "a summary")
            return self._finish_pruned_only(report)
        # Steps 4 and 5: the summary, merged with the previous one.
        extra = self._pre_compress_text(middle)
        outcome = self._summarise(turns, previous, focus_topic,
                                  summary_budget(middle_tokens, self.max_summary_tokens),
                                  extra, len(middle))
        report.calls = outcome.calls
        if outcome.body is None:  # auth or network failure: leave everything as it was
            report.skipped_reason = outcome.skipped
            report.pruned = []
            return self._finish(report, [dict(m) for m in messages],  # type: ignore[misc]
                                list(range(n)))
        out, origins = assemble(pruned_list, system_end, head_end, tail_start, outcome.body)
        out, origins, _, report.stubs = sanitize_tool_pairs(out, origins)
        if report.count(out, origins) >= sum(tokens):
            report.skipped_reason = "the summary would not be smaller than the turns it replaces"
            return self._finish_pruned_only(report)
        self._previous_summary = strip_fallback_notice(outcome.body)
        report.summary = outcome.body
        report.fallback = outcome.fallback
        return self._finish(report, out, origins)

    def _finish_pruned_only(self, report: _Draft) -> list[Message]:
        """Step 1 alone (and the pairing repair): no summary this time."""
        copies: list[Message] = [dict(m) for m in report.pruned_list]  # type: ignore[misc]
        out, origins, _, report.stubs = sanitize_tool_pairs(copies, list(range(len(copies))))
        report.summary, report.fallback = None, False
        return self._finish(report, out, origins)

    @staticmethod
    def _note_failures(messages: Sequence[Message], pruned_list: list[Message],
                       tokens: list[int], kept: list[int]) -> None:
        """Under a cleared output that stays in the context, keep the (at most two) lines
        that say what went wrong: they must still reach the summary when these turns are
        compacted later."""
        if not kept:
            return
        kinds = call_kinds(messages, {str(messages[i].get("tool_call_id", "")) for i in kept})
        for i in kept:
            kind = kinds.get(str(messages[i].get("tool_call_id", "")), "other")
            lines = failure_lines(truncate_for_summary(content_text(messages[i])), kind)
            if lines:
                kept_lines = "\n".join(one_line(line, 300) for line in lines)
                cleared = content_text(pruned_list[i])
                pruned_list[i] = with_content(pruned_list[i], f"{cleared}\n{kept_lines}")
                tokens[i] = estimate_message_tokens_rough(pruned_list[i])

    @property
    def _level(self) -> int:
        return logging.DEBUG if self.quiet else logging.INFO

    def _pre_compress_text(self, middle: list[Message]) -> str:
        if self.pre_compress_hook is None:
            return ""
        try:
            return str(self.pre_compress_hook(list(middle)) or "")
        except Exception as exc:  # a provider must never break compression
            log.warning("compress: pre-compress hook failed (%s: %s); summarising without it",
                        type(exc).__name__, exc)
            return ""

    def _summarise(self, turns: list[Message], previous: str | None, focus: str | None,
                   budget: int, extra: str, removed: int) -> _Summary:
        def local(notice: bool) -> str:
            lead = (f"{FALLBACK_NOTICE} {removed} conversation turns were removed to free "
                    "context space; the summary below was built from them without a model."
                    if notice else "")
            room = budget - estimate_tokens_rough(lead) - 2
            body = summarize_locally(turns, budget_tokens=room, previous_summary=previous,
                                     focus_topic=focus, extra_context=extra)
            return f"{lead}\n\n{body}" if lead else body

        if self.summarizer is None:
            return _Summary(local(notice=False))
        left = self._cooldown_left()
        if left > 0:
            log.info("summary model in cooldown (%.0f s left); using the local summary", left)
            return _Summary(local(notice=True), fallback=True)
        calls = 0
        try:
            body, calls = self._summarise_with_model(turns, previous, focus, budget, extra)
        except ProviderTimeoutError as exc:
            # A timeout is a slow summariser, not an unreachable one (C13): fall back.
            body = ""
            log.warning("summary generation timed out (%s)", exc)
        except (ProviderAuthError, ProviderConnectionError) as exc:
            kind = "authentication" if isinstance(exc, ProviderAuthError) else "connection"
            reason = f"summary model {kind} failed ({type(exc).__name__}: {exc})"
            log.warning("compress skipped: %s; the conversation is unchanged", reason)
            return _Summary(None, calls=calls, skipped=reason)
        except Exception as exc:
            body = ""
            log.warning("summary generation failed (%s: %s)", type(exc).__name__, exc)
        if not body:
            self._cooldown_until = self.clock() + SUMMARY_FAILURE_COOLDOWN_SECONDS
            log.warning("%s Using the local summary; summary model cooldown %.0f s",
                        FALLBACK_NOTICE, SUMMARY_FAILURE_COOLDOWN_SECONDS)
            return _Summary(local(notice=True), fallback=True, calls=calls)
        return _Summary(body, calls=calls)

    def _summarise_with_model(self, turns: list[Message], previous: str | None,
                              focus: str | None, budget: int, extra: str) -> tuple[str, int]:
        assert self.summarizer is not None
        window = self.summary_context_length or self.context_length
        limit = turns_token_limit(window, budget=budget, previous_summary=previous,
                                  focus_topic=focus, extra_context=extra)
        chunks = chunk_blocks(serialize_turns(turns), limit)
        running = previous
        for number, chunk in enumerate(chunks, 1):
            prompt = build_summary_prompt(chunk, budget=budget, previous_summary=running,
                                          focus_topic=focus, extra_context=extra)
            answer = _clean_summary(self.summarizer(prompt))
            if not answer:
                log.warning("summary generation returned an empty answer (chunk %d of %d)",
                            number, len(chunks))
                return "", number
            running = answer
        return running or "", len(chunks)

    def _finish(self, draft: _Draft, out: list[Message],
                origins: list[int | None]) -> list[Message]:
        present = {o for o in origins if o is not None}
        report = CompressionReport(
            messages_before=len(draft.messages),
            messages_after=len(out),
            tokens_before=draft.tokens_before,
            tokens_after=draft.count(out, origins),
            removed=[i for i in range(len(draft.messages)) if i not in present],
            pruned=[i for i in draft.pruned if i in present],
            summary=draft.summary,
            fallback=draft.fallback,
            skipped_reason=draft.skipped_reason,
            focus_topic=draft.focus_topic,
            summarizer="model" if self.summarizer and not draft.fallback else "local",
            summary_calls=draft.calls,
            stubs_added=draft.stubs,
        )
        self.last_report = report
        if report.changed:
            self.compression_count += 1
        self._track_progress(report.tokens_after)
        how = report.skipped_reason or (
            f"summary by the model in {draft.calls} call(s)" if report.summarizer == "model"
            else "summary by the local summariser" + (" (fallback)" if draft.fallback else ""))
        log.log(self._level, "compress end: %d -> %d messages, ~%s -> ~%s tokens; %s",
                report.messages_before, report.messages_after,
                f"{report.tokens_before:,}", f"{report.tokens_after:,}", how)
        return out

    def _track_progress(self, tokens_after: int) -> None:
        if tokens_after < self.threshold_tokens:
            if self._paused_reason is not None:
                log.info("compress: the prompt is under the threshold again; automatic "
                         "compression resumes")
            self._misses_in_a_row = 0
            self._paused_reason = None
            return
        self._misses_in_a_row += 1
        if self._misses_in_a_row >= _PAUSE_AFTER and self._paused_reason is None:
            self._paused_reason = (
                f"{self._misses_in_a_row} compressions in a row left the prompt above the "
                f"threshold ({tokens_after:,} >= {self.threshold_tokens:,} tokens); automatic "
                "compression is paused until /new, /reset or a /compact that gets under it")
            log.warning("compress paused: %s", self._paused_reason)


def _report_status(report: CompressionReport | None) -> dict[str, Any] | None:
    if report is None:
        return None
    status = report.as_dict()
    del status["summary"], status["removed"], status["pruned"]
    status["removed_count"] = len(report.removed)
    status["pruned_count"] = len(report.pruned)
    return status


def _check_messages(messages: Sequence[Message]) -> None:
    if not isinstance(messages, list | tuple):
        raise UsageError("compress() takes a list of message dicts")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            raise UsageError(f"message {i} is not a chat message (a dict whose 'role' is one "
                             f"of {', '.join(sorted(_ROLES))})")


def _take_apart(middle: list[Message]) -> tuple[str | None, list[Message]]:
    """Earlier summaries in the middle become the previous summary; the rest are turns."""
    summaries: list[str] = []
    turns: list[Message] = []
    for message in middle:
        if is_summary_message(message):
            body, original = split_summary_message(message)
            summaries.append(strip_fallback_notice(body))
            if original is not None:
                turns.append(original)
        else:
            turns.append(message)
    return ("\n\n".join(s for s in summaries if s) or None), turns


def _clean_summary(answer: Any) -> str:
    text = str(answer or "").strip()
    if text.startswith(SUMMARY_PREFIX):  # a model that echoed the prefix: never nest it
        text = text[len(SUMMARY_PREFIX):].strip()
    return text

