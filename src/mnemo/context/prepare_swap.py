"""The compressor's side of background preparation (C17): where the middle ends when a
prepared summary is at hand, and the summary that replaces it.

A prepared summary covers the middle from the head's end up to some message; the turns
that arrived after it (often in the compaction's own turn: the newest tool output decides
where the tail starts) are known to no model summary. ``kept_start`` keeps them as they
are — the middle then ends where the prepared summary ends — as long as the context after
the compaction stays under ``limit`` (the compressor passes the threshold less one tail
budget, so the next turns have room before the next compaction). Step 1 has already
cleared their old tool outputs, so they usually cost a few dozen tokens each. While the
first prepared summary is still being made, the same rule keeps every turn and the
compaction is step 1 alone: the summary comes, from the model, at the next one. Only
when they do not fit are the newer turns folded into the prepared summary by the local
summariser (``swap_summary``), in milliseconds: either way nobody waits for a model.
A summary the local summariser completed in the background (``completed_summary.py``)
is completed again then, from the model's own lines, for the whole middle and the room
this compaction has (a small window's is less than the budget it was prepared for).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from mnemo.context.completed_summary import completed, with_rules_kept
from mnemo.context.lcm_nodes import Span, take_apart_span
from mnemo.context.local_summary import summarize_locally
from mnemo.context.metered import MessageCounter
from mnemo.context.prepare import Prepared
from mnemo.messages import Message
from mnemo.tokens import estimate_tokens_rough

__all__ = ["SwapSummary", "kept_start", "swap_summary"]


def kept_start(prepared: Prepared | None, *, head_end: int, tail_start: int,
               measure: Sequence[int], count: MessageCounter, limit: int) -> int | None:
    """Where the turns that stay as they are start: ``prepared.end``, or ``head_end`` when
    no prepared summary is ready yet (then nothing is summarised: step 1 alone), if the
    context after the compaction (head, prepared summary, everything from there on, by
    ``measure``: the list after step 1) stays at or under ``limit``; else ``None`` (the
    middle ends at ``tail_start``, as C8 cuts it)."""
    start = prepared.end if prepared is not None else head_end
    if not head_end <= start < tail_start:
        return None
    total = count({"role": "user", "content": prepared.body}) if prepared is not None else 0
    # From the end: the tail is counted already, and a long list stops early.
    for i in (*range(len(measure) - 1, start - 1, -1), *range(head_end)):
        total += measure[i]
        if total > limit:
            return None
    return start


@dataclass(frozen=True)
class SwapSummary:
    """The summary body made at the swap and how much of the middle the model wrote."""

    body: str
    prepared: int  # middle messages covered by the prepared summary
    local: bool  # the local summariser wrote all of it


def swap_summary(prepared: Prepared | None, span: Span, middle: Sequence[Message],
                 budget: int, extra: str, session_date: date | None = None,
                 head: frozenset[str] = frozenset()) -> SwapSummary:
    """The prepared summary, with the middle messages that joined since (and the memory
    providers' text) folded in by the local summariser: milliseconds, no model call.
    With the first summary still being made (``prepared`` None), the local summariser
    does the whole middle now; the model's work goes to the next compaction. ``head``:
    the stems of the kept head's words (``compressor.head_stems``), which the local summariser's
    notes need not tell again."""
    if prepared is None:
        return SwapSummary(summarize_locally(span.turns, budget_tokens=budget,
                                             previous_summary=span.previous,
                                             extra_context=extra, session_date=session_date,
                                             kept_stems=head), 0, True)
    rest = take_apart_span(list(middle[prepared.covered:]))
    body = prepared.body
    # A body larger than the budget (a window too small for C9's floor) is fitted too.
    if not (rest.turns or extra.strip() or estimate_tokens_rough(body) > budget):
        # Prepared from the summary of its time: a rule the summary in the context now
        # holds is put back if the preparation lost it (``completed_summary``).
        return SwapSummary(with_rules_kept(body, span.previous, budget), prepared.covered,
                           False)
    if prepared.model_body:
        # Completed in the background (``completed_summary.py``): completed again, from
        # the model's own lines, for the whole middle and the room this compaction has.
        body = completed(prepared.model_body, span.turns, budget_tokens=budget,
                         previous_summary=span.previous, extra_context=extra,
                         session_date=session_date)
    if estimate_tokens_rough(body) > budget or not prepared.model_body:
        body = summarize_locally(rest.turns, budget_tokens=budget, previous_summary=body,
                                 extra_context=extra, session_date=session_date,
                                 kept_stems=head)
    return SwapSummary(with_rules_kept(body, span.previous, budget), prepared.covered, False)
