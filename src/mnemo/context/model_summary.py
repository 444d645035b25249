"""Asking the summariser model for a summary, every prompt within its window (C9, C10).

The window ``W`` of the summariser model bounds every prompt by construction:

* a prompt is at most ``min(60% of W, W - answer budget)`` tokens, so the answer fits
  after it; the answer budget stated in the prompt is at most half the window (a
  summariser with a small window writes a shorter summary rather than none);
* the fixed text (instructions, template, focus topic) is measured; the memory
  providers' extra context is cut to an eighth of the prompt;
* what is left is shared between the running summary (the previous summary, then each
  chunk's answer — cut down with the local summariser when it grew too long; it keeps
  the template and drops the least important lines) and the turns;
* a message whose block is longer than the room for turns is cut (the head and the
  tail kept, as C9 does at 6,000 characters);
* the turns are sent in at most ``MAX_CHUNKS`` calls. When they need more, the earliest
  turns are summarised by the local summariser first and that summary is the previous
  summary of the first call: a huge middle costs eight calls, not hundreds.

A window too small for even the instructions raises ``SummaryWindowError``; the
compressor then falls back to the local summariser (C13).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mnemo.context.local_summary import parse_summary_sections, summarize_locally
from mnemo.context.markers import SUMMARY_PREFIX
from mnemo.context.prompt import (
    CHUNK_WINDOW_SHARE,
    block_cost,
    build_summary_prompt,
    chunk_ranges,
    serialize_turns,
    truncate_for_summary,
)
from mnemo.messages import Message
from mnemo.tokens import estimate_tokens_rough

__all__ = [
    "MAX_CHUNKS",
    "PromptPlan",
    "SummaryWindowError",
    "clean_summary",
    "fit_summary",
    "plan_prompts",
    "summarise_with_model",
]

MAX_CHUNKS = 8  # calls per compression at most; earlier turns go to the local summariser
_EXTRA_SHARE = 8  # the providers' extra context gets at most 1/8 of a prompt
_MIN_PART_TOKENS = 128  # the least room for turns (and for the running summary) per prompt
_SLACK = 8  # tokens kept free for the blank lines that join the parts of a prompt


class SummaryWindowError(ValueError):
    """The summariser's window cannot hold a summary prompt (the compressor falls back)."""


@dataclass(frozen=True)
class PromptPlan:
    """How the prompts of one summary fit the window (all sizes in rough tokens)."""

    window: int
    prompt_max: int  # the largest prompt
    budget: int  # the answer budget stated in the prompt
    extra: str  # the providers' extra context, cut to fit
    previous_room: int  # the running summary carried by a prompt
    turns_room: int  # the serialised turns carried by a prompt


def plan_prompts(window: int, *, budget: int, previous_summary: str | None,
                 focus_topic: str | None, extra_context: str) -> PromptPlan:
    """The sizes that keep every prompt of a summary within ``window`` tokens."""
    budget = max(min(budget, window // 2), 1)
    prompt_max = min(int(window * CHUNK_WINDOW_SHARE), window - budget)
    extra = extra_context.strip()
    if extra:
        extra = truncate_for_summary(extra, max(prompt_max * 4 // _EXTRA_SHARE, 0))
    skeleton = build_summary_prompt("", budget=budget, previous_summary="x",
                                    focus_topic=focus_topic, extra_context=extra)
    free = prompt_max - estimate_tokens_rough(skeleton) - _SLACK
    if free < 2 * _MIN_PART_TOKENS:
        raise SummaryWindowError(
            f"the summariser's window of {window:,} tokens cannot hold a summary prompt "
            f"(its instructions{' and focus topic' if focus_topic else ''} alone take "
            f"~{estimate_tokens_rough(skeleton):,} tokens); set auxiliary.context_length "
            "to the real window of the summary model, or use a model with a larger one")
    wanted = max(budget, estimate_tokens_rough(previous_summary or ""))
    previous_room = max(min(wanted, free // 2), _MIN_PART_TOKENS)
    return PromptPlan(window, prompt_max, budget, extra, previous_room, free - previous_room)


def fit_summary(text: str, max_tokens: int) -> str:
    """``text`` cut to ``max_tokens``: re-ranked by the local summariser when it has the
    template's sections (the least important lines go), else — or when that would keep
    less than half the room, because the lines are too long to keep whole — its head and
    tail."""
    if estimate_tokens_rough(text) <= max_tokens:
        return text
    if set(parse_summary_sections(text)) - {"Other"}:
        shorter = summarize_locally([], budget_tokens=max_tokens, previous_summary=text)
        if max_tokens // 2 <= estimate_tokens_rough(shorter) <= max_tokens:
            return shorter
    return truncate_for_summary(text, max_tokens * 4)


def clean_summary(answer: Any) -> str:
    """The model's answer as summary text (an echoed compaction prefix removed, so a
    summary is never nested)."""
    text = str(answer or "").strip()
    if text.startswith(SUMMARY_PREFIX):
        text = text[len(SUMMARY_PREFIX):].strip()
    return text


def summarise_with_model(
    summarizer: Callable[[str], Any],
    turns: Sequence[Message],
    *,
    window: int,
    budget: int,
    previous_summary: str | None,
    focus_topic: str | None,
    extra_context: str,
    on_empty: Callable[[int, int], None] | None = None,
) -> tuple[str, int]:
    """``(summary, calls made)``; an empty summary means the model answered nothing.

    ``on_empty(chunk number, chunks)`` is told which call came back empty.
    """
    plan = plan_prompts(window, budget=budget, previous_summary=previous_summary,
                        focus_topic=focus_topic, extra_context=extra_context)
    blocks = [truncate_for_summary(b, max(plan.turns_room * 4 - 8, 0))
              for b in serialize_turns(turns)]
    costs = [block_cost(b) for b in blocks]
    early, runs = _last_chunks(costs, plan.turns_room)
    running = previous_summary
    if early:
        running = summarize_locally(turns[:early], budget_tokens=plan.previous_room,
                                    previous_summary=previous_summary,
                                    focus_topic=focus_topic)
    for number, run in enumerate(runs, 1):
        carried = fit_summary(running, plan.previous_room) if running else None
        prompt = build_summary_prompt("\n\n".join(blocks[i] for i in run), budget=plan.budget,
                                      previous_summary=carried, focus_topic=focus_topic,
                                      extra_context=plan.extra)
        if estimate_tokens_rough(prompt) > plan.prompt_max:  # cannot happen by the plan
            raise SummaryWindowError(f"a summary prompt of ~{estimate_tokens_rough(prompt):,} "
                                     f"tokens would not fit the window of {window:,}")
        answer = clean_summary(summarizer(prompt))
        if not answer:
            if on_empty is not None:
                on_empty(number, len(runs))
            return "", number
        running = answer
    return running or "", len(runs)


def _last_chunks(costs: Sequence[int], room: int) -> tuple[int, list[range]]:
    """``(early, runs)``: the blocks before ``early`` are left to the local summariser,
    the rest are ``runs`` of at most ``room`` tokens, at most ``MAX_CHUNKS`` of them."""
    runs = chunk_ranges(costs, room)
    if len(runs) <= MAX_CHUNKS:
        return 0, runs
    # Packed from the end, so the chunks the model reads are full ones.
    ends: list[range] = []
    end = len(costs)
    while len(ends) < MAX_CHUNKS and end > 0:
        start, size = end - 1, costs[end - 1]
        while start > 0 and size + costs[start - 1] <= room:
            start -= 1
            size += costs[start]
        ends.append(range(start, end))
        end = start
    return end, ends[::-1]
