"""C9: every prompt to the summariser model fits its window, by construction."""

from __future__ import annotations

import re

import pytest
from convgen import assistant, system, user

from mnemo.context import FALLBACK_NOTICE, ContextCompressor
from mnemo.context.markers import summary_content
from mnemo.context.model_summary import (
    MAX_CHUNKS,
    SummaryWindowError,
    fit_summary,
    plan_prompts,
)
from mnemo.context.prompt import TEMPLATE_SECTIONS
from mnemo.tokens import estimate_tokens_rough


class Sized:
    """A summariser that records its prompts and answers with ``answer_tokens`` tokens of
    template-shaped text, like a model that uses its whole budget (or more)."""

    def __init__(self, answer_tokens: int) -> None:
        self.answer_tokens = answer_tokens
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        lines = "\n".join(f"- fact {k}: " + "detail " * 8 for k in range(self.answer_tokens // 20))
        return f"## Goal\n- the goal #{len(self.prompts)}\n\n## Critical Context\n{lines}"


def _big_previous(tokens: int) -> dict:
    items = "\n".join(f"- earlier fact {k}: " + "w" * 60 for k in range(tokens * 4 // 80))
    return user(summary_content(f"## Goal\n- an old goal\n\n## Critical Context\n{items}"))


def _huge_middle(turns: int = 80, chars: int = 9_000) -> list[dict]:
    messages = [system(), user("start"), assistant("ok"), _big_previous(12_000),
                assistant("resuming")]
    for k in range(turns):
        messages += [user(f"ask {k} " + "u" * chars), assistant(f"answer {k} " + "a" * chars)]
    return messages


@pytest.mark.parametrize("window", [3_000, 4_000, 8_000, 32_000])
@pytest.mark.parametrize("answer_tokens", [500, 3_000, 12_000])
def test_every_prompt_fits_the_window(window: int, answer_tokens: int) -> None:
    summarizer = Sized(answer_tokens)
    engine = ContextCompressor(context_length=64_000, summarizer=summarizer,
                               summary_context_length=window)
    engine.compress(_huge_middle())
    report = engine.last_report
    assert report is not None and not report.fallback, report.skipped_reason
    assert 1 <= len(summarizer.prompts) <= MAX_CHUNKS
    for prompt in summarizer.prompts:
        assert estimate_tokens_rough(prompt) <= window
        assert estimate_tokens_rough(prompt) <= int(window * 0.6)
    assert report.summary_calls == len(summarizer.prompts)


def test_the_earliest_turns_go_to_the_local_summary_beyond_the_chunk_cap() -> None:
    summarizer = Sized(500)
    engine = ContextCompressor(context_length=64_000, summarizer=summarizer,
                               summary_context_length=4_000)
    engine.compress(_huge_middle(turns=150, chars=3_000))
    assert len(summarizer.prompts) == MAX_CHUNKS
    first = summarizer.prompts[0]
    # The first call's previous summary is the local summary of what the model never saw.
    assert "PREVIOUS SUMMARY:\n## Goal" in first and "[USER]: ask 0 " not in first
    last = [int(n) for n in re.findall(r"\]: (?:ask|answer) (\d+) ", summarizer.prompts[-1])]
    assert last and max(last) >= 140  # the model reads the newest turns of the middle


def test_a_window_too_small_for_the_instructions_falls_back_to_the_local_summary() -> None:
    with pytest.raises(SummaryWindowError, match=r"auxiliary\.context_length"):
        plan_prompts(600, budget=2_000, previous_summary=None, focus_topic=None,
                     extra_context="")
    summarizer = Sized(100)
    engine = ContextCompressor(context_length=64_000, summarizer=summarizer,
                               summary_context_length=600)
    engine.compress(_huge_middle(turns=10))
    report = engine.last_report
    assert report is not None and report.fallback and summarizer.prompts == []
    assert report.summary is not None and report.summary.startswith(FALLBACK_NOTICE)


def test_the_plan_shrinks_the_budget_and_the_extra_context() -> None:
    plan = plan_prompts(4_000, budget=12_000, previous_summary="x" * 80_000,
                        focus_topic="billing", extra_context="provider note " * 2_000)
    assert plan.budget == 2_000 and plan.prompt_max == 2_000
    assert estimate_tokens_rough(plan.extra) <= plan.prompt_max // 8
    assert plan.previous_room + plan.turns_room < plan.prompt_max
    assert plan.turns_room >= 128


def test_fit_summary_keeps_the_template_when_it_cuts() -> None:
    long = "## Goal\n- keep me\n\n## Critical Context\n" + "\n".join(
        f"- value {k} = " + "v" * 50 for k in range(400))
    short = fit_summary(long, 500)
    assert estimate_tokens_rough(short) <= 500
    assert "- keep me" in short and all(f"## {s}" in short for s in TEMPLATE_SECTIONS)
    # One line too long to keep whole: the re-ranking would drop it, so it is cut instead.
    one = fit_summary("## Goal\n- x " + "y" * 12_800, 500)
    assert estimate_tokens_rough(one) <= 500 and one.startswith("## Goal\n- x yyy")
    flat = fit_summary("z" * 40_000, 300)
    assert estimate_tokens_rough(flat) <= 300 and "...[truncated]..." in flat
    assert fit_summary("small", 300) == "small"
