"""``ContextCompressor``: the built-in engine and its five-step compression (C3–C14).

0. the input is checked (``report.py``) and repaired so an API accepts it (``repair.py``),
1. prune old tool output (``pruning.py``), 2. protect the head and 3. the tail by tokens
(``boundaries.py``), 4. summarise the middle (``model_summary.py`` for a model,
``local_summary.py`` without one), 5. fold the previous summary in and put the list back
together (``assembly.py``, then ``repair.py`` once more). This module decides, counts and
logs; the steps live in their own modules.

``compress`` is a template: the ``lcm`` engine (``lcm.py``) runs the same steps and
overrides two hooks — ``_keep_cleared`` (what a cleared tool output that stays in the
context looks like) and ``_summary_header`` (text above the summary) — plus ``_finish``.

The previous summary (C10) is read from the conversation handed in — a summary message
in the middle is taken apart — and never from an earlier call, which may have been about
another conversation. ``_previous_summary`` is only remembered for ``get_status``.

Failure rules (C13): a summariser that raises or answers nothing is replaced by the local
summariser for this compression and is not retried for 600 s; an authentication or
network error leaves the conversation unchanged (``last_report.skipped_reason`` says why
and what to check). The progress guard (C3, ``progress.py``) pauses automatic compression
after two compressions in a row that leave the prompt above the threshold.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, Self

from mnemo.context.assembly import assemble
from mnemo.context.boundaries import (
    TAIL_SOFT_CEILING,
    find_head_end,
    find_tail_start,
    system_offset,
)
from mnemo.context.engine import ContextEngine, Summarizer, usage_tokens
from mnemo.context.failures import keep_failure_lines
from mnemo.context.lcm_nodes import Span, take_apart_span
from mnemo.context.local_summary import revised_by_later, summarize_locally
from mnemo.context.markers import (
    COMPACTION_NOTE,
    FALLBACK_NOTICE,
    SUMMARY_PREFIX,
    SYSTEM_ROLES,
    strip_fallback_notice,
)
from mnemo.context.metered import MessageCounter, Metered
from mnemo.context.model_summary import summarise_with_model
from mnemo.context.prepare import Preparer, Runner
from mnemo.context.prepare_swap import kept_start, swap_summary
from mnemo.context.prepare_worker import ThreadRunner, TurnGate, gated
from mnemo.context.progress import ProgressGuard
from mnemo.context.prompt import summary_budget
from mnemo.context.pruning import prune_tool_results
from mnemo.context.repair import Origins, Repair, repair_messages, split_merged_summaries
from mnemo.context.report import MIN_MIDDLE_TOKENS, Draft, check_messages, report_status
from mnemo.context.revision import revised_summary
from mnemo.context.summary.cache import collector_paused
from mnemo.context.summary.dates import middle_date
from mnemo.context.summary.notes import text_stems
from mnemo.errors import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderTimeoutError,
    UsageError,
)
from mnemo.messages import Message, content_text
from mnemo.tokens import estimate_message_tokens_rough, estimate_tokens_rough

if TYPE_CHECKING:
    from mnemo.config import MnemoConfig
    from mnemo.home import Home

__all__ = [
    "MAX_SUMMARY_FRACTION",
    "SUMMARY_FAILURE_COOLDOWN_SECONDS",
    "SUMMARY_TOKENS_CEILING",
    "ContextCompressor",
    "SummaryOutcome",
]

log = logging.getLogger("mnemo.context")

SUMMARY_TOKENS_CEILING = 12_000  # fixed (C5)
MAX_SUMMARY_FRACTION = 0.05  # fixed (C5): the summary's share of the window
MIN_FITTED_SUMMARY_TOKENS = 300  # a window too small for C9's floor still gets this much
# … unless even a tail of three messages leaves less: then what fits, down to this (a
# larger summary would only be cut by the window guard, in its middle).
_LEAST_SUMMARY_TOKENS = 120
# What a summary brings besides its body: the C11 prefix, the note on the system message,
# the message around it.
_SUMMARY_FRAME_TOKENS = (estimate_tokens_rough(SUMMARY_PREFIX)
                         + estimate_tokens_rough(COMPACTION_NOTE) + 16)
SUMMARY_FAILURE_COOLDOWN_SECONDS = 600.0  # fixed (C5)
_UNREACHABLE_HINT = {
    "authentication": "check the api key of the `auxiliary` model in config.yaml (or of "
                      "`model` when no auxiliary model is set) and its base_url",
    "connection": "check the base_url of the `auxiliary` model in config.yaml (or of "
                  "`model` when no auxiliary model is set) and that the server is reachable",
}


@dataclass
class SummaryOutcome:
    """What the summariser produced for one compression."""

    body: str | None = None  # None: the conversation stays as it is
    fallback: bool = False
    calls: int = 0
    skipped: str | None = None  # why ``body`` is None
    prepared: int = 0  # middle messages whose summary was prepared in the background
    local: bool = False  # written by the local summariser although a model is configured


class ContextCompressor(ContextEngine):
    """The built-in context engine: a five-step compressor with a structured summary.

    ``protect_last_n`` is accepted (and validated) for compatibility with configs written
    for the seed design, but unused: the tail is chosen by tokens (C8), not by a count.
    """

    background_capable = True  # C17: the summary can be prepared before the threshold

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
        self.protect_last_n = protect_last_n  # unused: see the class docstring
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
        self._previous_summary: str | None = None  # the last summary made, for status only
        self._cooldown_until = 0.0
        self._guard = ProgressGuard()
        self.preparer: Preparer | None = None  # C17, see ``enable_background``
        self._gate: TurnGate | None = None
        self.message_counter: MessageCounter | None = None  # see ``count_with``
        self.reserved_tokens = 0  # see ``reserve``
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

    # -- the window, the trigger and the session (C3, C5) --------------------------------

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
        self._guard.observe(self.last_prompt_tokens, self.threshold_tokens)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return not self._guard.paused and tokens >= self.threshold_tokens

    def should_compress_preflight(self, messages: Sequence[Message]) -> bool:
        return not self._guard.paused and super().should_compress_preflight(messages)

    def on_session_start(self, session_id: str) -> None:
        self._previous_summary = None
        self._forget_prepared("a session started")

    def on_session_end(self, session_id: str, messages: Sequence[Message]) -> None:
        self._previous_summary = None
        self._forget_prepared("the session ended")

    def on_session_reset(self) -> None:
        super().on_session_reset()
        self._previous_summary = None
        self._guard.reset()
        self._forget_prepared("the session was reset")

    def revise(self, messages: Sequence[Message]) -> list[Message] | None:
        """``messages`` with the summary revised by a correction made after it
        (``revision.revised_summary``), or None."""
        found = revised_summary(messages)
        if found is None:
            return None
        revised, body = found
        if self._previous_summary is not None:
            self._previous_summary = strip_fallback_notice(body)
        return revised

    def count_with(self, counter: MessageCounter | None) -> None:
        """Size the tail (C8) and the tool outputs step 1 keeps with ``counter`` — the
        agent's window guard's count (C19) — instead of the rough estimate, so what a
        compaction keeps is what the guard will count. ``None``: the rough estimate."""
        self.message_counter = counter

    def reserve(self, tokens: int) -> None:
        """Every request also carries ``tokens`` the messages do not (the tool schemas):
        a compaction leaves room for them under the threshold."""
        if not isinstance(tokens, int) or tokens < 0:
            raise UsageError(f"reserved tokens must be a number of tokens (0 or more), "
                             f"got {tokens!r}")
        self.reserved_tokens = tokens

    def _kept_start(self, work: Sequence[Message], head_end: int, tail_start: int,
                    measure: Sequence[int], focus_topic: str | None, clears: bool
                    ) -> int | None:
        """C17: where the turns that stay as they are start, when background preparation
        is on and the context still fits with them (``prepare_swap.kept_start``); ``None``:
        the middle is cut as C8 says. Without a ready summary this needs step 1 to clear
        something in the middle, or the compaction would change nothing."""
        if self.preparer is None or focus_topic:
            return None
        prepared = self.preparer.peek(work, head_end, tail_start)
        if prepared is None and not clears:
            return None
        return kept_start(prepared, head_end=head_end, tail_start=tail_start,
                          measure=measure, count=self._count,
                          limit=self._target_tokens - self.tail_token_budget)

    def _adopt(self, work: Sequence[Message], out: Sequence[Message] | None,
               origins: Sequence[int | None], tail_start: int) -> None:
        """C17: the job extending the swapped-in summary goes on, bound to ``out``."""
        if self.preparer is not None:
            self.preparer.adopt(work, out, origins, tail_start)

    def _count(self, message: Message) -> int:
        counter = self.message_counter
        return counter(message) if counter is not None else estimate_message_tokens_rough(message)

    def _measure(self, messages: Sequence[Message], rough: list[int]) -> Sequence[int]:
        """Token counts of ``messages`` for the walks from the end (steps 1 and 3): the
        counter's, made only for the messages a walk reaches, or ``rough`` itself."""
        if self.message_counter is None:
            return rough
        return Metered(messages, self.message_counter)

    # -- background preparation (C17, ``prepare.py``) ------------------------------------

    def enable_background(self, summarizer: Summarizer, *, prepare_at: float = 0.5,
                          max_wait_s: float = 0.0, gate: TurnGate | None = None,
                          runner: Callable[[Preparer], Runner] | None = None,
                          complete: bool = False) -> bool:
        """Prepare the next summary in the background with ``summarizer``; ``gate`` holds
        it back while a turn's model call runs; ``runner`` (default: a thread) runs it;
        ``complete``: the room its summaries leave in the budget is filled by the local
        summariser (``completed_summary.py``: a summariser whose answers are capped)."""
        if not self.background_capable:
            return False
        if gate is not None:
            summarizer = gated(summarizer, gate)
        self._gate = gate
        preparer = Preparer(summarizer, protect_first_n=self.protect_first_n,
                            window=self.summary_context_length or self.context_length,
                            prepare_at=prepare_at, max_wait_s=max_wait_s, count=self._count,
                            complete=complete)
        preparer.runner = runner(preparer) if runner else ThreadRunner(preparer, gate)
        self.preparer = preparer
        return True

    def prepare(self, messages: Sequence[Message]) -> None:
        """The conversation grew (a turn or a tool round ended): prepare what is certain.
        Never raises: preparation is an optimisation, the swap works without it."""
        if self.preparer is None or self._guard.paused:
            return
        try:
            self.preparer.observe(
                messages, prompt_tokens=self.last_prompt_tokens,
                threshold=self.threshold_tokens, tail_budget=self.tail_token_budget,
                max_summary_tokens=self.max_summary_tokens)
        except Exception as exc:
            log.warning("background preparation skipped (%s: %s)", type(exc).__name__, exc)

    def _forget_prepared(self, why: str) -> None:
        if self.preparer is not None:
            self.preparer.invalidate(why)

    def get_status(self) -> dict[str, Any]:
        status = super().get_status()
        status.update({
            "model": self.model,
            "threshold_percent": self.threshold_percent,
            "tail_token_budget": self.tail_token_budget,
            "reserved_tokens": self.reserved_tokens,
            "max_summary_tokens": self.max_summary_tokens,
            "summarizer": "model" if self.summarizer else "local",
            "summary_cooldown_seconds": round(self._cooldown_left(), 1),
            "paused": self._guard.paused,
            "paused_reason": self._guard.paused_reason,
            "has_summary": self._previous_summary is not None,
            "preparation": self.preparer.status() if self.preparer else None,
            "last_compression": report_status(self.last_report),
        })
        return status

    def _tail_budget(self, measure: Sequence[int], head_end: int) -> int:
        """C8's tail budget — or less, in a window whose threshold cannot hold the head,
        a tail of that budget and the smallest summary beside what every request
        carries (``reserve``): the tail gives way first, down to C8's three messages.
        Seen in a scripted chat with the agent's own prompt in a 3,072-token window, where
        the system prompt and the tool schemas fill half the threshold: the summary was
        written to its floor, then cut by the window guard down to its first words."""
        head = sum(measure[i] for i in range(head_end))
        room = (self._target_tokens - head - MIN_FITTED_SUMMARY_TOKENS
                - _SUMMARY_FRAME_TOKENS)
        return max(0, min(self.tail_token_budget, int(room / TAIL_SOFT_CEILING)))

    @property
    def _target_tokens(self) -> int:
        """What the messages may hold at the threshold: the rest is the reserve's."""
        return self.threshold_tokens - self.reserved_tokens

    def _cooldown_left(self) -> float:
        return max(0.0, self._cooldown_until - self.clock())

    # -- compress ---------------------------------------------------------------------

    def compress(
        self,
        messages: Sequence[Message],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
    ) -> list[Message]:
        # The steps build an object or more per message, and the caches of the local
        # summariser keep many: the cycle collector's full walks would cost more than
        # the steps (``summary/cache.py``). Not around a model's call, which may take
        # minutes (the local summariser holds it off for its own part then).
        if self.summarizer is not None:
            return self._compress(messages, current_tokens, focus_topic)
        with collector_paused():
            return self._compress(messages, current_tokens, focus_topic)

    def _compress(self, messages: Sequence[Message], current_tokens: int | None,
                  focus_topic: str | None) -> list[Message]:
        check_messages(messages)
        focus_topic = (focus_topic or "").strip() or None
        # Step 0: what an API rejects never reaches the steps (C12 a, c).
        repair = repair_messages(messages, stubs=False)
        _refuse_nothing_left(messages, repair)
        repair = split_merged_summaries(repair)
        work = repair.messages
        input_tokens = [estimate_message_tokens_rough(m) for m in messages]
        # (A message the repairs made or took apart is counted as it is now.)
        original_tokens = [input_tokens[o] if o is not None and m is messages[o]
                           else estimate_message_tokens_rough(m)
                           for m, o in zip(work, repair.origins, strict=True)]
        tokens = list(original_tokens)
        # Step 1: old tool output. The newest outputs it keeps, and the tail (step 3), are
        # measured as the window guard counts (``count_with``), everything else roughly.
        pruned_list, pruned = prune_tool_results(work, self._measure(work, tokens),
                                                 self.tail_token_budget)
        for i in pruned:
            tokens[i] = estimate_message_tokens_rough(pruned_list[i])
        draft = Draft(messages, repair, sum(input_tokens), pruned, focus_topic, pruned_list,
                      tokens)
        # Steps 2 and 3: the boundaries of the middle.
        system_end = system_offset(pruned_list)
        head_end = find_head_end(pruned_list, self.protect_first_n)
        session_date = middle_date(pruned_list, system_end, head_end)
        measure = self._measure(pruned_list, tokens)
        tail_budget = self._tail_budget(measure, head_end)
        tail_start = find_tail_start(pruned_list, measure, head_end, tail_budget)
        middle = list(work[head_end:tail_start])
        span = take_apart_span(middle)
        # The summariser reads the middle as it was, before step 1 cleared anything.
        middle_tokens = sum(original_tokens[head_end:tail_start])
        log.log(self._level, "%scompress start: %d messages, ~%s tokens (reported: %s, "
                "threshold: %s); middle: %d messages, ~%s tokens; %d old tool outputs cleared",
                "" if self.name == "compressor" else f"{self.name} ", len(messages),
                f"{draft.tokens_before:,}", current_tokens, f"{self.threshold_tokens:,}",
                len(middle), f"{middle_tokens:,}", len(pruned))
        keep_from = self._kept_start(work, head_end, tail_start, measure, focus_topic,
                                     any(head_end <= i < tail_start for i in pruned))
        if keep_from is not None and keep_from < tail_start:
            # C17: the turns no prepared summary covers yet stay as they are.
            log.log(self._level, "compress: %d newer messages stay, not summarised yet",
                    tail_start - keep_from)
            tail_start = keep_from
            middle = list(work[head_end:tail_start])
            span = take_apart_span(middle)
            middle_tokens = sum(original_tokens[head_end:tail_start])
        if not span.turns or (middle_tokens <= MIN_MIDDLE_TOKENS and keep_from is None):
            self._keep_cleared(draft, [i for i in pruned if not head_end <= i < tail_start])
            inside = [i for i in pruned if head_end <= i < tail_start]
            out = self._finish_pruned_only(draft, inside, (
                "the background summary is not ready yet: old tool outputs cleared, "
                "the turns kept" if keep_from is not None else
                "nothing to summarise: the conversation fits in the protected head and tail"
                if not span.turns else "nothing to summarise: the middle is too small to be "
                "worth a summary"))
            if self.preparer is not None:
                self.preparer.carry_over(work, out)
            return out
        swap = None
        if self.preparer is not None:
            # A wait for a finishing update (``max_wait_s``) happens inside a turn, which
            # holds the gate shut: the update may go on meanwhile.
            with self._gate.let_through() if self._gate else nullcontext():
                swap = self.preparer.take(work, head_end, tail_start, focus_topic)
        self._keep_cleared(draft, [i for i in pruned if not head_end <= i < tail_start])
        # Steps 4 and 5: the summary, merged with the previous one.
        header = self._summary_header(len(middle), span)
        budget = summary_budget(middle_tokens, self.max_summary_tokens)
        # C9's floor (2,000 tokens) is more than a small window holds beside its head and
        # tail: a summary written to that floor would only be cut blindly by the window
        # guard (C19). It is written to what fits instead: what the threshold leaves beside
        # the kept turns and what every request carries (``reserve``: the tool schemas).
        # The room is what the guard's tokenizer leaves; the summary is written to the
        # rough estimate, so the room is scaled by how the two counted the kept turns
        # (dates and names cost more).
        kept = [*range(head_end), *range(tail_start, len(pruned_list))]
        counted = max(1, sum(measure[i] for i in kept))
        # (A tenth is kept in hand: a summary's own text counts differently from the
        # turns, by up to 8% in a by-hand `mnemo chat` on the embedded model.)
        fits = ((self._target_tokens - counted) * sum(tokens[i] for i in kept) * 9
                // (10 * counted) - _SUMMARY_FRAME_TOKENS)
        floor = (MIN_FITTED_SUMMARY_TOKENS if tail_budget >= self.tail_token_budget
                 else _LEAST_SUMMARY_TOKENS)
        budget = max(floor, min(budget, fits))
        room = budget - (estimate_tokens_rough(header) if header else 0)
        # The head stays in the context: a note that only tells what it tells again is
        # room lost (by hand, the embedded model's retelling of the user's first message
        # took the place of "Sophie will host it at her place on Biltstraat 45").
        head = head_stems(pruned_list[system_end:head_end])
        if swap is not None:  # C17: swap in what was prepared, fold in the rest
            made = swap_summary(swap.prepared, span, work[head_end:tail_start], room,
                                self._pre_compress_text(middle), session_date, head)
            outcome = SummaryOutcome(made.body, prepared=made.prepared, local=made.local)
        else:
            outcome = self._summarise(span.turns, span.previous, focus_topic, room,
                                      self._pre_compress_text(middle), len(middle),
                                      session_date, head)
        draft.calls = outcome.calls
        draft.prepared, draft.local = outcome.prepared, outcome.local
        if outcome.body is None:  # auth or network failure: leave everything as it was
            draft.skipped_reason, draft.unreachable = outcome.skipped, True
            return self._finish(draft, [dict(m) for m in messages],  # type: ignore[misc]
                                None)
        # What the user corrected in the turns kept whole no longer holds in the summary.
        revised = revised_by_later(outcome.body, work[tail_start:])
        body = f"{header}\n\n{revised}" if header else revised
        out, origins = assemble(pruned_list, system_end, head_end, tail_start, body)
        final = repair_messages(out, origins)
        draft.stubs = final.stubs
        if draft.count(final.messages, final.origins) >= sum(tokens):
            self._adopt(work, None, [], tail_start)
            return self._finish_pruned_only(
                draft, [i for i in pruned if head_end <= i < tail_start],
                "the summary would not be smaller than the turns it replaces")
        self._adopt(work, final.messages if swap is not None and swap.prepared is not None
                    and not header and revised == swap.prepared.body else None,
                    final.origins, tail_start)
        self._previous_summary = strip_fallback_notice(revised)
        draft.summary = revised
        draft.fallback = outcome.fallback
        return self._finish(draft, final.messages, final.origins)

    # -- hooks the lcm engine overrides -------------------------------------------------

    def _keep_cleared(self, draft: Draft, indices: list[int]) -> None:
        """Tool outputs cleared by step 1 that stay in the context: under each, keep the
        (at most two) lines that say what went wrong, so they still reach the summary
        when these turns are compacted later."""
        keep_failure_lines(draft.repair.messages, draft.pruned_list, draft.tokens, indices)

    def _summary_header(self, covered: int, span: Span) -> str:
        """Text above the summary body; none here (the lcm engine names its node)."""
        return ""

    def _finish(self, draft: Draft, out: list[Message],
                origins: Origins | None) -> list[Message]:
        """Report, count and log; ``origins is None`` means ``out`` is the input unchanged."""
        summarizer = ("model" if draft.prepared or (
            self.summarizer and not draft.fallback and not draft.local) else "local")
        report = draft.report(out, origins, summarizer)
        self.last_report = report
        if report.changed:
            self.compression_count += 1
        if not draft.unreachable:  # an unreachable summariser says nothing about progress
            self._guard.track(report.tokens_after + self.reserved_tokens,
                              self.threshold_tokens)
        how = report.skipped_reason or (
            f"summary prepared by the model in the background for {draft.prepared} of the "
            "summarised messages" if draft.prepared else
            f"summary by the model in {draft.calls} call(s)" if report.summarizer == "model"
            else "summary by the local summariser" + (" (fallback)" if draft.fallback else ""))
        log.log(self._level, "compress end: %d -> %d messages, ~%s -> ~%s tokens; %s",
                report.messages_before, report.messages_after,
                f"{report.tokens_before:,}", f"{report.tokens_after:,}", how)
        return out

    # -- the pieces -----------------------------------------------------------------------

    def _finish_pruned_only(self, draft: Draft, inside: list[int], reason: str
                            ) -> list[Message]:
        """Step 1 alone (and the repairs): no summary this time, for ``reason``."""
        self._keep_cleared(draft, inside)
        copies: list[Message] = [dict(m) for m in draft.pruned_list]  # type: ignore[misc]
        final = repair_messages(copies, list(range(len(copies))))
        draft.stubs = final.stubs
        draft.summary, draft.fallback = None, False
        draft.skip(reason)
        return self._finish(draft, final.messages, final.origins)

    @property
    def _level(self) -> int:
        return logging.DEBUG if self.quiet else logging.INFO

    def _pre_compress_text(self, middle: list[Message]) -> str:
        if self.pre_compress_hook is None:
            return ""
        try:  # copies: a provider that edits what it is shown cannot touch the caller's list
            return str(self.pre_compress_hook(copy.deepcopy(middle)) or "")
        except Exception as exc:  # a provider must never break compression
            log.warning("compress: pre-compress hook failed (%s: %s); summarising without it",
                        type(exc).__name__, exc)
            return ""

    def _summarise(self, turns: list[Message], previous: str | None, focus: str | None,
                   budget: int, extra: str, removed: int,
                   session_date: date | None = None,
                   head: frozenset[str] = frozenset()) -> SummaryOutcome:
        def local(notice: bool) -> str:
            lead = (f"{FALLBACK_NOTICE} {removed} conversation turns were removed to free "
                    "context space; the summary below was built from them without a model."
                    if notice else "")
            room = budget - estimate_tokens_rough(lead) - 2
            body = summarize_locally(turns, budget_tokens=room, previous_summary=previous,
                                     focus_topic=focus, extra_context=extra,
                                     session_date=session_date, kept_stems=head)
            return f"{lead}\n\n{body}" if lead else body

        if self.summarizer is None:
            return SummaryOutcome(local(notice=False))
        left = self._cooldown_left()
        if left > 0:
            log.info("summary model in cooldown (%.0f s left); using the local summary", left)
            return SummaryOutcome(local(notice=True), fallback=True)
        calls = 0
        try:
            body, calls = summarise_with_model(
                self.summarizer, turns, window=self.summary_context_length or self.context_length,
                budget=budget, previous_summary=previous, focus_topic=focus,
                extra_context=extra, on_empty=_log_empty)
        except ProviderTimeoutError as exc:
            # A timeout is a slow summariser, not an unreachable one (C13): fall back.
            body = ""
            log.warning("summary generation timed out (%s)", exc)
        except (ProviderAuthError, ProviderConnectionError) as exc:
            kind = "authentication" if isinstance(exc, ProviderAuthError) else "connection"
            reason = (f"summary model {kind} failed ({type(exc).__name__}: {exc}); "
                      f"{_UNREACHABLE_HINT[kind]}")
            log.warning("compress skipped: %s; the conversation is unchanged", reason)
            return SummaryOutcome(None, calls=calls, skipped=reason)
        except Exception as exc:
            body = ""
            log.warning("summary generation failed (%s: %s)", type(exc).__name__, exc)
        if not body:
            self._cooldown_until = self.clock() + SUMMARY_FAILURE_COOLDOWN_SECONDS
            log.warning("%s Using the local summary; summary model cooldown %.0f s",
                        FALLBACK_NOTICE, SUMMARY_FAILURE_COOLDOWN_SECONDS)
            return SummaryOutcome(local(notice=True), fallback=True, calls=calls)
        return SummaryOutcome(body, calls=calls)


def _log_empty(number: int, chunks: int) -> None:
    log.warning("summary generation returned an empty answer (chunk %d of %d)", number, chunks)


def _refuse_nothing_left(messages: Sequence[Message], repair: Repair) -> None:
    """A list that is nothing but tool results without their calls (and a system message)
    would come back empty: no API accepts that, and C12 d wants a user message."""
    if any(m.get("role") not in SYSTEM_ROLES for m in repair.messages):
        return
    if not any(m.get("role") not in SYSTEM_ROLES for m in messages):
        return  # nothing but a system message came in: nothing to repair either
    shown = ", ".join(str(i) for i in repair.dropped[:5]) + (
        ", …" if len(repair.dropped) > 5 else "")
    raise UsageError(f"every message to compress is a tool result without its call "
                     f"(messages {shown}); pass the assistant messages that made the calls, "
                     "and the user messages, too")


def head_stems(head: Sequence[Message]) -> frozenset[str]:
    """The stems of the content words (``notes.text_stems``) of what the user and the
    assistant say in the protected head (C7), which no compaction takes out of the
    context."""
    return text_stems(" ".join(content_text(m) for m in head
                               if m.get("role") in ("user", "assistant")))
