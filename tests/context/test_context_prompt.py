"""Steps 4 and 5 (C9, C10, C14): what the summariser model is sent."""

from __future__ import annotations

import re

from convgen import agent_turns, assistant, call, system, tool, user

from mnemo.context import SUMMARY_PREFIX, TEMPLATE_SECTIONS, ContextCompressor
from mnemo.context.markers import summary_content
from mnemo.context.prompt import (
    TRUNCATION_MARKER,
    build_summary_prompt,
    chunk_blocks,
    serialize_message,
    summary_budget,
    truncate_for_summary,
)
from mnemo.tokens import estimate_tokens_rough


class Recorder:
    """A summariser that records every prompt and answers with a fixed summary."""

    def __init__(self, answer: str = "## Goal\n- the recorded goal") -> None:
        self.prompts: list[str] = []
        self.answer = answer

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return f"{self.answer} #{len(self.prompts)}"


def _long_session() -> list[dict]:
    return [system(), *agent_turns(30)]


def test_serialise_each_role() -> None:
    assert serialize_message(user("hello")) == "[USER]: hello"
    block = serialize_message(assistant("reading", [call("c1", "read_file", path="a.py")]))
    assert block == '[ASSISTANT]: reading\n[Tool calls: read_file({"path": "a.py"})]'
    assert serialize_message(tool("c1", "text")) == "[TOOL RESULT c1]: text"


def test_messages_are_cut_at_6000_chars_keeping_4000_and_1500() -> None:
    text = "".join(f"{i:05d}" for i in range(2000))  # 10,000 chars, every slice unique
    cut = truncate_for_summary(text)
    assert cut == text[:4000] + TRUNCATION_MARKER + text[-1500:]
    assert truncate_for_summary("x" * 6000) == "x" * 6000
    assert "...[truncated]..." in serialize_message(user(text))


def test_first_prompt_frames_a_different_assistant_and_lists_the_template() -> None:
    prompt = build_summary_prompt("[USER]: hi", budget=2345)
    assert "summarization agent creating a context checkpoint" in prompt
    assert "DIFFERENT assistant" in prompt
    assert "Do NOT respond to any questions or requests" in prompt
    assert "[REDACTED]" in prompt and "language the user writes in" in prompt
    assert "2345 tokens" in prompt
    assert "TURNS TO SUMMARIZE:\n[USER]: hi" in prompt
    headings = re.findall(r"^## (.+)$", prompt, flags=re.MULTILINE)
    assert headings == list(TEMPLATE_SECTIONS)
    assert prompt.index("### Done") < prompt.index("### In Progress") < prompt.index(
        "### Blocked")
    assert "PREVIOUS SUMMARY" not in prompt and "FOCUS TOPIC" not in prompt


def test_update_prompt_carries_the_previous_summary() -> None:
    prompt = build_summary_prompt("[USER]: more", budget=2000, previous_summary="## Goal\n- g")
    assert "PREVIOUS SUMMARY:\n## Goal\n- g" in prompt
    assert "NEW TURNS TO INCORPORATE:\n[USER]: more" in prompt
    assert "PRESERVE all existing information" in prompt
    assert '"In Progress" to "Done"' in prompt and '"Pending User Asks" to "Resolved' in prompt


def test_focus_and_extra_context_blocks() -> None:
    prompt = build_summary_prompt("t", budget=2000, focus_topic="database migration",
                                  extra_context="provider says: user is Ana")
    assert 'FOCUS TOPIC: "database migration"' in prompt
    assert "60-70% of the summary token budget" in prompt
    assert "provider says: user is Ana" in prompt


def test_budget_is_a_fifth_of_the_turns_within_bounds() -> None:
    assert summary_budget(5_000, 12_000) == 2_000
    assert summary_budget(50_000, 12_000) == 10_000
    assert summary_budget(500_000, 12_000) == 12_000
    assert summary_budget(500_000, 6_400) == 6_400


def test_compressor_sends_budget_and_turns_to_the_summariser() -> None:
    recorder = Recorder()
    engine = ContextCompressor(context_length=8_000, summarizer=recorder,
                               summary_context_length=100_000)
    out = engine.compress(_long_session())
    assert len(recorder.prompts) == 1
    prompt = recorder.prompts[0]
    assert "[TOOL RESULT call_5]" in prompt and "[USER]: Turn 5:" in prompt
    assert "about 2000 tokens" in prompt
    summary = next(m for m in out if str(m.get("content", "")).startswith(SUMMARY_PREFIX))
    assert summary["content"] == summary_content("## Goal\n- the recorded goal #1")


def test_second_compression_sends_the_previous_summary_not_the_message() -> None:
    recorder = Recorder()
    engine = ContextCompressor(context_length=8_000, summarizer=recorder,
                               summary_context_length=100_000)
    first = engine.compress(_long_session())
    grown = first + agent_turns(30, start=100)
    engine.compress(grown)
    second = recorder.prompts[1]
    assert "PREVIOUS SUMMARY:\n## Goal\n- the recorded goal #1" in second
    assert SUMMARY_PREFIX not in second  # the old summary is not nested as a turn
    assert "[USER]: Turn 100:" in second


def test_resumed_session_recovers_the_summary_from_the_transcript() -> None:
    recorder = Recorder()
    engine = ContextCompressor(context_length=8_000, summarizer=recorder,
                               summary_context_length=100_000)
    resumed = [system(), {"role": "user", "content": summary_content("## Goal\n- resumed goal")},
               *[m for m in agent_turns(30) if True]]
    resumed.insert(2, assistant("picking up"))
    engine.compress(resumed)
    assert "PREVIOUS SUMMARY:\n## Goal\n- resumed goal" in recorder.prompts[0]


def test_focus_topic_and_pre_compress_hook_reach_the_prompt() -> None:
    recorder = Recorder()
    engine = ContextCompressor(context_length=8_000, summarizer=recorder,
                               summary_context_length=100_000)
    seen: list[int] = []

    def hook(middle: list[dict]) -> str:
        seen.append(len(middle))
        return "memory provider: the user's name is Ana"

    engine.pre_compress_hook = hook  # type: ignore[assignment]
    engine.compress(_long_session(), focus_topic="module_7")
    prompt = recorder.prompts[0]
    assert 'FOCUS TOPIC: "module_7"' in prompt
    assert "the user's name is Ana" in prompt
    assert seen and seen[0] > 0
    assert engine.last_report is not None and engine.last_report.focus_topic == "module_7"


def test_long_middle_is_summarised_in_chunks_that_fit_the_window() -> None:
    recorder = Recorder()
    window = 4_000
    engine = ContextCompressor(context_length=20_000, summarizer=recorder,
                               summary_context_length=window)
    messages = [system(), *agent_turns(60, output_chars=3000)]
    engine.compress(messages)
    assert len(recorder.prompts) > 3
    for number, prompt in enumerate(recorder.prompts, 1):
        # The prompt and an answer of the full budget (2,000 tokens) fit the window.
        assert estimate_tokens_rough(prompt) + 2_000 < window
        if number > 1:  # each chunk's summary is the next chunk's previous summary
            assert f"PREVIOUS SUMMARY:\n## Goal\n- the recorded goal #{number - 1}" in prompt
    firsts = [re.search(r"\[USER\]: Turn (\d+):", p) for p in recorder.prompts]
    turns = [int(m.group(1)) for m in firsts if m]
    assert turns == sorted(turns)  # chunks go in conversation order
    assert engine.last_report is not None
    assert engine.last_report.summary_calls == len(recorder.prompts)
    assert engine.last_report.summary == f"## Goal\n- the recorded goal #{len(recorder.prompts)}"


def test_chunk_blocks_never_splits_a_block() -> None:
    blocks = ["a" * 400, "b" * 400, "c" * 4000, "d" * 10]
    chunks = chunk_blocks(blocks, max_tokens=250)
    assert chunks == ["a" * 400 + "\n\n" + "b" * 400, "c" * 4000, "d" * 10]
