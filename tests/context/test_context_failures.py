"""C13: a failing summariser never loses the middle; auth and network errors change nothing.

The clock is injected, so the 600-second cooldown is tested without waiting.
"""

from __future__ import annotations

import copy

import pytest
from convgen import agent_turns, c12_violations, system

from mnemo.context import FALLBACK_NOTICE, SUMMARY_FAILURE_COOLDOWN_SECONDS, ContextCompressor
from mnemo.errors import ProviderAuthError, ProviderConnectionError, ProviderTimeoutError


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


class Flaky:
    """A summariser that fails with ``error`` (or answers ``answer``) and counts calls."""

    def __init__(self, error: Exception | None = None, answer: str = "## Goal\n- model") -> None:
        self.error = error
        self.answer = answer
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return self.answer


def _session() -> list[dict]:
    return [system(), *agent_turns(30)]


def _engine(summarizer: Flaky, clock: Clock | None = None) -> ContextCompressor:
    return ContextCompressor(context_length=8_000, summarizer=summarizer,
                             summary_context_length=100_000, clock=clock or Clock())


@pytest.mark.parametrize("summarizer", [Flaky(RuntimeError("model exploded")),
                                        Flaky(ProviderTimeoutError("timed out after 120 s")),
                                        Flaky(answer=""), Flaky(answer="   \n")])
def test_failure_or_empty_answer_falls_back_to_the_local_summary(
        summarizer: Flaky, caplog: pytest.LogCaptureFixture) -> None:
    engine = _engine(summarizer)
    messages = _session()
    out = engine.compress(messages)
    report = engine.last_report
    assert report is not None and report.fallback and report.summarizer == "local"
    assert report.summary is not None
    first_line = report.summary.split("\n\n", 1)[0]
    assert first_line.startswith(FALLBACK_NOTICE)
    assert f"{len(report.removed)} conversation turns were removed" in first_line
    assert "## Goal" in report.summary and "Turn 1:" in report.summary
    assert not c12_violations(out, messages)
    assert "summary generation" in caplog.text and "cooldown" in caplog.text


def test_cooldown_skips_the_model_for_600_seconds() -> None:
    clock = Clock()
    summarizer = Flaky(RuntimeError("boom"))
    engine = _engine(summarizer, clock)
    engine.compress(_session())
    assert summarizer.calls == 1
    assert engine.get_status()["summary_cooldown_seconds"] == SUMMARY_FAILURE_COOLDOWN_SECONDS
    clock.now += SUMMARY_FAILURE_COOLDOWN_SECONDS - 1
    engine.compress(_session())
    assert summarizer.calls == 1  # not retried inside the cooldown
    assert engine.last_report is not None and engine.last_report.fallback
    clock.now += 2
    summarizer.error = None
    engine.compress(_session())
    assert summarizer.calls == 2
    assert engine.last_report is not None and not engine.last_report.fallback
    assert engine.last_report.summary == "## Goal\n- model"
    assert engine.last_report.summarizer == "model"


def test_fallback_notice_is_not_carried_into_the_next_summary() -> None:
    clock = Clock()
    engine = _engine(Flaky(RuntimeError("boom")), clock)
    first = engine.compress(_session())
    engine.compress(first + agent_turns(30, start=100))
    summary = engine.last_report.summary if engine.last_report else None
    assert summary is not None and summary.count(FALLBACK_NOTICE) == 1


@pytest.mark.parametrize("error", [ProviderAuthError("401 invalid key"),
                                   ProviderConnectionError("connection refused")])
def test_auth_and_network_errors_leave_the_conversation_unchanged(
        error: Exception, caplog: pytest.LogCaptureFixture) -> None:
    summarizer = Flaky(error)
    engine = _engine(summarizer)
    messages = _session()
    before = copy.deepcopy(messages)
    out = engine.compress(messages)
    assert out == before and messages == before
    report = engine.last_report
    assert report is not None
    assert report.summary is None and report.removed == [] and report.pruned == []
    assert report.skipped_reason is not None and str(error) in report.skipped_reason
    kind = "authentication" if isinstance(error, ProviderAuthError) else "connection"
    assert kind in report.skipped_reason
    assert engine.compression_count == 0
    assert "compress skipped" in caplog.text
    # No cooldown: the next compression asks the model again.
    engine.compress(messages)
    assert summarizer.calls == 2


def test_failure_in_a_later_chunk_falls_back_for_the_whole_middle() -> None:
    calls: list[str] = []

    def second_chunk_fails(prompt: str) -> str:
        calls.append(prompt)
        if len(calls) == 2:
            raise RuntimeError("rate limited mid-way")
        return "## Goal\n- partial"

    engine = ContextCompressor(context_length=20_000, summarizer=second_chunk_fails,
                               summary_context_length=4_000, clock=Clock())
    engine.compress([system(), *agent_turns(60, output_chars=3000)])
    report = engine.last_report
    assert report is not None and report.fallback and len(calls) == 2
    assert report.summary is not None and "Turn 1:" in report.summary


@pytest.mark.parametrize("error", [ProviderAuthError("401 invalid key"),
                                   ProviderConnectionError("connection refused")])
def test_an_unreachable_summariser_does_not_trip_the_progress_guard(
        error: Exception, caplog: pytest.LogCaptureFixture) -> None:
    engine = _engine(Flaky(error))
    for _ in range(3):
        engine.compress(_session())
    assert engine.get_status()["paused"] is False
    assert "compress paused" not in caplog.text
    reason = engine.last_report.skipped_reason if engine.last_report else ""
    assert reason and "`auxiliary`" in reason and "`model`" in reason and "base_url" in reason
    engine.update_from_response({"prompt_tokens": 9_000})
    assert engine.should_compress()
