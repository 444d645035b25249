"""Background preparation (C17): what is predicted, what is prepared, when it is used.

The summariser here writes down every message token (``tok0012``) it read, in the
previous summary or the turns; so a summary is about exactly the messages whose tokens it
lists, and "never used for other messages" is checked by comparing token sets.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mnemo.context import TEMPLATE_SECTIONS, ContextCompressor, validate_c12
from mnemo.context.prepare import Preparer, certain_end
from mnemo.context.prepare_worker import (
    ThreadRunner,
    TurnGate,
    VirtualClock,
    VirtualRunner,
    gated,
)
from mnemo.errors import CallStoppedError
from mnemo.messages import Message, content_text
from mnemo.tokens import estimate_message_tokens_rough

_TOKEN = re.compile(r"tok\d{4}[a-z]*")


def _summarizer(calls: list[str]) -> Any:
    def summarize(prompt: str) -> str:
        calls.append(prompt)
        seen = sorted(set(_TOKEN.findall(prompt)))
        return "\n\n".join(f"## {name}\n- read {' '.join(seen) if i == 0 else 'n/a'}"
                           for i, name in enumerate(TEMPLATE_SECTIONS))
    return summarize


def _turn(n: int, size: int = 400) -> list[Message]:
    return [
        {"role": "user", "content": f"tok{n:04d} question {n}: " + "words " * size},
        {"role": "assistant", "content": f"tok{n:04d}a answer {n}: " + "more " * size},
    ]


def _conversation(turns: int, size: int = 400) -> list[Message]:
    out: list[Message] = [{"role": "system", "content": "You help."}]
    for n in range(turns):
        out += _turn(n, size)
    return out


def _tokens_of(messages: list[Message]) -> set[str]:
    return {t for m in messages for t in _TOKEN.findall(content_text(m))}


def _observe(preparer: Preparer, messages: list[Message], engine: ContextCompressor) -> None:
    preparer.observe(messages, prompt_tokens=sum(
        estimate_message_tokens_rough(m) for m in messages), threshold=engine.threshold_tokens,
        tail_budget=engine.tail_token_budget, max_summary_tokens=engine.max_summary_tokens)


class _Manual:
    """A runner that runs nothing: the test calls ``_run_worker`` when it wants work."""

    def notify(self) -> None:
        pass


def _engine(calls: list[str]) -> ContextCompressor:
    engine = ContextCompressor(context_length=16_000, summarizer=_summarizer(calls))
    engine.enable_background(_summarizer(calls), runner=lambda p: _Manual())
    return engine


def _run_worker(preparer: Preparer) -> int:
    jobs = 0
    while (job := preparer.begin()) is not None:
        job.run()
        preparer.commit(job)
        jobs += 1
    return jobs


# -- the prediction -----------------------------------------------------------------------

def test_nothing_is_predicted_while_everything_fits_the_tail() -> None:
    messages = _conversation(3, size=20)
    tokens = [estimate_message_tokens_rough(m) for m in messages]
    assert certain_end(messages, tokens, 4, growth=0, tail_budget=4_000) == 4


def test_growth_makes_older_messages_certain_but_never_the_latest_user_message() -> None:
    messages = _conversation(10, size=100)
    tokens = [estimate_message_tokens_rough(m) for m in messages]
    small = certain_end(messages, tokens, 4, growth=0, tail_budget=300)
    large = certain_end(messages, tokens, 4, growth=2_000, tail_budget=300)
    assert 4 < small <= large <= len(messages) - 2  # the last user message stays out
    assert messages[large]["role"] == "user" or large == len(messages) - 2


def test_a_tool_group_is_never_cut() -> None:
    messages: list[Message] = [{"role": "system", "content": "s"}]
    for n in range(8):
        messages += [
            {"role": "user", "content": f"tok{n:04d} read it"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{n}", "type": "function",
                 "function": {"name": "read", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": "x" * 150},
            {"role": "assistant", "content": "done " * 50},
        ]
    tokens = [estimate_message_tokens_rough(m) for m in messages]
    for growth in (0, 100, 300, 1_000):
        end = certain_end(messages, tokens, 4, growth=growth, tail_budget=150)
        assert end == len(messages) or messages[end]["role"] != "tool"


# -- preparing and swapping ---------------------------------------------------------------

def test_prepared_summary_is_swapped_in_without_a_model_call() -> None:
    calls: list[str] = []
    engine = _engine(calls)
    preparer = engine.preparer
    assert preparer is not None
    messages = _conversation(12)
    _observe(preparer, messages, engine)
    assert _run_worker(preparer) == 1
    assert preparer.status()["state"] == "ready"
    made = len(calls)
    out = engine.compress(messages)
    report = engine.last_report
    assert report is not None and report.prepared_messages > 0
    assert report.summary_calls == 0 and len(calls) == made  # nothing waited for a model
    assert report.summarizer == "model" and not report.fallback
    assert validate_c12(out, messages) == []
    assert any("read tok0001a" in content_text(m) for m in out)  # the model's, swapped in


def test_incremental_update_sends_only_the_new_turns() -> None:
    calls: list[str] = []
    engine = _engine(calls)
    preparer = engine.preparer
    assert preparer is not None
    messages = _conversation(10, size=150)
    _observe(preparer, messages, engine)
    _run_worker(preparer)
    covered = preparer.status()["covered"]
    messages = messages + _turn(10, 150) + _turn(11, 150)
    _observe(preparer, messages, engine)
    assert _run_worker(preparer) == 1
    assert preparer.status()["covered"] > covered
    first, second = calls
    assert "[ASSISTANT]: tok0001a" in first
    # The second call gets the first summary and the new turns only (C10).
    assert "[ASSISTANT]: tok0001a" not in second and "read tok0001a" in second


def test_an_edited_message_discards_the_prepared_summary() -> None:
    calls: list[str] = []
    engine = _engine(calls)
    preparer = engine.preparer
    assert preparer is not None
    messages = _conversation(12)
    _observe(preparer, messages, engine)
    _run_worker(preparer)
    edited = [dict(m) for m in messages]
    edited[5] = {"role": "assistant", "content": "tok0001b a different answer " + "x " * 400}
    made = len(calls)
    engine.compress(edited)  # type: ignore[arg-type]
    report = engine.last_report
    assert report is not None and report.prepared_messages == 0
    # Preparation was under way, so nothing waits: the local summariser writes it all,
    # and not one line of the stale model summary is in it.
    assert len(calls) == made and report.summary is not None
    assert "read tok" not in report.summary


def test_a_focus_topic_is_never_given_an_unfocused_summary() -> None:
    calls: list[str] = []
    engine = _engine(calls)
    assert engine.preparer is not None
    messages = _conversation(12)
    _observe(engine.preparer, messages, engine)
    _run_worker(engine.preparer)
    engine.compress(messages, focus_topic="questions")
    report = engine.last_report
    assert report is not None and report.prepared_messages == 0 and report.summary_calls >= 1


def test_a_failed_background_call_is_retried_on_the_next_turn_only() -> None:
    calls: list[str] = []
    engine = ContextCompressor(context_length=16_000)
    failing = [True]

    def summarize(prompt: str) -> str:
        calls.append(prompt)
        if failing[0]:
            raise RuntimeError("model down")
        return _summarizer([])(prompt)

    engine.enable_background(summarize, runner=lambda p: _Manual())
    preparer = engine.preparer
    assert preparer is not None
    messages = _conversation(12)
    _observe(preparer, messages, engine)
    assert _run_worker(preparer) == 1  # one attempt, then nothing until the next turn
    assert preparer.status()["failures"] == 1 and preparer.status()["state"] == "idle"
    failing[0] = False
    _observe(preparer, messages, engine)
    assert _run_worker(preparer) == 1 and preparer.status()["state"] == "ready"


def test_a_job_stopped_for_a_turn_is_no_failure_and_begins_again_at_once() -> None:
    # The embedded model's summary call is stopped when a turn begins (the server has
    # one slot); the worker starts the job again once the turn has answered.
    engine = ContextCompressor(context_length=16_000)
    stopping = [True]

    def summarize(prompt: str) -> str:
        if stopping[0]:
            raise CallStoppedError("the summary was stopped: a turn began")
        return str(_summarizer([])(prompt))

    engine.enable_background(summarize, runner=lambda p: _Manual())
    preparer = engine.preparer
    assert preparer is not None
    _observe(preparer, _conversation(12), engine)
    job = preparer.begin()
    assert job is not None
    job.run()
    preparer.commit(job)
    assert preparer.status()["failures"] == 0 and preparer.status()["state"] == "idle"
    stopping[0] = False
    assert _run_worker(preparer) == 1  # no new turn needed, unlike a failure
    assert preparer.status()["state"] == "ready"


def test_virtual_runner_lands_a_job_only_when_its_time_has_come() -> None:
    calls: list[str] = []
    clock = VirtualClock()
    engine = ContextCompressor(context_length=16_000)
    engine.enable_background(_summarizer(calls),
                             runner=lambda p: VirtualRunner(p, clock, 10.0))
    preparer = engine.preparer
    assert preparer is not None
    runner = preparer.runner
    assert isinstance(runner, VirtualRunner)
    _observe(preparer, _conversation(10, size=150), engine)
    assert preparer.status()["state"] == "preparing" and len(calls) == 1
    runner.advance(9.0)
    assert preparer.status()["state"] == "preparing"
    runner.advance(10.0)
    assert preparer.status()["state"] == "ready"


# -- invalidation, over random event orders -------------------------------------------------

_EVENTS = st.lists(st.sampled_from(
    ["turn", "turn", "turn", "work", "work", "edit", "edit", "new", "resume", "focus",
     "compact", "paused", "paused", "late_edit"]), min_size=1, max_size=40)


@settings(max_examples=80, deadline=None)
@given(events=_EVENTS, seed=st.integers(0, 1_000))
def test_a_prepared_summary_is_never_used_for_other_messages(events: list[str],
                                                             seed: int) -> None:
    """Whatever happens between preparing and swapping, the model summary in a
    compaction's output names only tokens of the messages that compaction was given."""
    calls: list[str] = []
    engine = _engine(calls)
    preparer = engine.preparer
    assert preparer is not None
    counter = [seed * 100]

    def next_token() -> int:
        counter[0] += 1
        return counter[0] % 10_000

    def fresh(turns: int) -> list[Message]:
        out: list[Message] = [{"role": "system", "content": "You help."}]
        for _ in range(turns):
            out += _turn(next_token())
        return out

    def edit(messages: list[Message]) -> list[Message]:
        i = 4 + next_token() % (len(messages) - 6)  # mostly in the middle
        copy = [dict(m) for m in messages]
        copy[i]["content"] = f"tok{next_token():04d}e an edited message " + "x " * 300
        return copy  # type: ignore[return-value]

    messages = fresh(5)
    for event in events:
        if event == "turn":
            messages = messages + _turn(next_token())
            _observe(preparer, messages, engine)
        elif event == "work":
            _run_worker(preparer)
        elif event == "edit" and len(messages) > 8:
            messages = edit(messages)
        elif event == "new":
            engine.on_session_reset()
            messages = fresh(2)
        elif event == "resume":
            engine.on_session_start("another")
            messages = fresh(6)
        elif event in ("focus", "compact", "paused", "late_edit"):
            while not engine.should_compress_preflight(messages):  # grow to the threshold
                messages = messages + _turn(next_token())
                _observe(preparer, messages, engine)
                if event != "compact":  # the user pauses: the worker catches up
                    _run_worker(preparer)
            if event == "late_edit":  # changed after the last look, right before the swap
                messages = edit(messages)
            before = [dict(m) for m in messages]
            out = engine.compress(messages, focus_topic="questions" if event == "focus"
                                  else None)
            report = engine.last_report
            assert report is not None and messages == before
            assert validate_c12(out, messages) == []
            if report.prepared_messages:
                assert event != "focus"
                named = set(_TOKEN.findall(" ".join(
                    line for line in (report.summary or "").splitlines()
                    if line.startswith("- read "))))
                assert named and named <= _tokens_of(messages)
            messages = [m for m in out if m.get("role") != "system"]
            messages = [out[0], *messages] if out[0].get("role") == "system" else messages


# -- the turn gate --------------------------------------------------------------------------

class _WatchedGate(TurnGate):
    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()

    def wait_open(self, timeout: float | None = None) -> bool:
        self.waiting.set()
        return super().wait_open(timeout)


def test_a_summary_call_waits_while_a_turn_calls_the_model() -> None:
    gate = _WatchedGate()
    calls: list[str] = []
    summarize = gated(lambda prompt: calls.append(prompt) or "summary", gate)
    with gate.turn_call():
        assert gate.busy
        worker = threading.Thread(target=summarize, args=("prompt",))
        worker.start()
        gate.waiting.wait()
        assert calls == []  # held back: the turn's call goes first
    worker.join()
    assert calls == ["prompt"] and not gate.busy


def test_the_gate_stays_shut_through_nested_calls_and_opens_only_while_lent() -> None:
    gate = TurnGate()
    with gate.turn_call():  # the turn
        with gate.turn_call():  # one of its model calls
            assert gate.busy
        assert gate.busy  # between its calls (a tool round)
        with gate.let_through():
            assert not gate.busy
            # The calls of a job under way go on; no new job begins: one begun here
            # (before the waiting compaction takes what is ready) raced it.
            assert gate.wait_open(timeout=0) and not gate.wait_idle(timeout=0)
        assert gate.busy
    assert not gate.busy and gate.wait_idle(timeout=0)


def test_an_ended_gate_is_busy_for_good_and_lets_its_waiters_go_to_stop() -> None:
    gate = TurnGate()
    calls: list[str] = []
    summarize = gated(lambda prompt: calls.append(prompt) or "summary", gate)
    stopped: list[BaseException] = []

    def background() -> None:
        try:
            summarize("prompt")
        except CallStoppedError as exc:
            stopped.append(exc)

    with gate.turn_call():
        worker = threading.Thread(target=background)
        worker.start()
        gate.end()  # the session ends while the worker waits at the gate
        worker.join(timeout=30)
    assert not worker.is_alive() and stopped and calls == []
    assert gate.busy and gate.wait_open(timeout=0)  # no one waits any more
    with gate.let_through():
        assert gate.busy


def test_once_the_gate_has_ended_the_worker_begins_nothing_and_ends() -> None:
    # The agent ends the gate before the session's end forgets what was prepared: a
    # worker let go then must not begin (and stop, and begin again) the job meanwhile.
    calls: list[str] = []
    gate = TurnGate()
    engine = ContextCompressor(context_length=16_000)
    engine.enable_background(_summarizer(calls), gate=gate)
    preparer = engine.preparer
    assert preparer is not None and isinstance(preparer.runner, ThreadRunner)
    begun: list[object] = []
    begin = preparer.begin
    preparer.begin = lambda: begun.append(1) or begin()  # type: ignore[method-assign]
    gate.end()
    _observe(preparer, _conversation(12), engine)  # notifies the worker
    preparer.runner.join(timeout=30)
    assert preparer.runner._thread is None  # ended, not spinning
    assert begun == [] and calls == []


def test_a_compaction_waiting_for_an_update_lets_its_next_chunk_through_the_turn() -> None:
    # ``compression.max_wait_s``: the turn holds the gate shut, and a background job's
    # next chunk waits on it; the compaction's wait must let that chunk go, or it would
    # wait out max_wait_s for a job that cannot move.
    entered, release = threading.Event(), threading.Event()
    calls: list[str] = []
    plain = _summarizer(calls)

    def first_blocks(prompt: str) -> str:
        if not calls:
            entered.set()
            release.wait(timeout=30)
        return str(plain(prompt))

    gate = TurnGate()
    engine = ContextCompressor(context_length=16_000, summarizer=_summarizer([]),
                               summary_context_length=3_000)
    engine.enable_background(first_blocks, gate=gate, max_wait_s=20,
                             runner=lambda p: _Manual())
    preparer = engine.preparer
    assert preparer is not None
    messages = _conversation(12)
    _observe(preparer, messages, engine)
    job = preparer.begin()
    assert job is not None

    def work() -> None:
        try:
            job.run()
        finally:
            preparer.commit(job)

    worker = threading.Thread(target=work)
    worker.start()
    assert entered.wait(timeout=30)  # the first chunk is with the model, between turns
    with gate.turn_call():  # then the user's next turn starts
        release.set()
        engine.compress(messages)
    worker.join(timeout=30)
    report = engine.last_report
    assert len(calls) >= 2  # a second chunk went through while the compaction waited
    assert report is not None and report.prepared_messages > 0 and report.summary_calls == 0
