"""The swap side of background preparation (C17) and the tail measured with the caller's
count: turns no prepared summary covers stay as they are, the update under way at a
compaction is kept for the next one, and the tail walk counts only what it reaches."""

from __future__ import annotations

from test_prepare import _conversation, _engine, _observe, _run_worker, _tokens_of, _turn

from mnemo.context import ContextCompressor, validate_c12
from mnemo.context.compressor import head_stems
from mnemo.context.lcm_nodes import Span
from mnemo.context.prepare import Prepared
from mnemo.context.prepare_swap import swap_summary
from mnemo.messages import Message, content_text
from mnemo.tokens import estimate_message_tokens_rough


def test_turns_after_the_prepared_summary_stay_as_they_are() -> None:
    calls: list[str] = []
    engine = _engine(calls)
    preparer = engine.preparer
    assert preparer is not None
    messages = _conversation(12, size=300)
    _observe(preparer, messages, engine)
    _run_worker(preparer)
    end = preparer.status()["covered"] + 4  # 4: the system prompt and the head
    messages = messages + _turn(12, 300)
    made = len(calls)
    out = engine.compress(messages)
    report = engine.last_report
    assert report is not None and report.summary is not None and len(calls) == made
    # Everything summarised was summarised by the model; nothing by the local summariser.
    assert report.prepared_messages == len(report.removed) > 0
    assert sorted(report.removed) == list(range(4, end))
    # The newer turns, as they were (the first may carry the summary in front of it).
    assert all(m in out for m in messages[end + 1:])
    assert content_text(messages[end]) in content_text(out[4])
    assert validate_c12(out, messages) == []


def test_the_update_under_way_at_a_compaction_serves_the_next_one() -> None:
    calls: list[str] = []
    engine = _engine(calls)
    preparer = engine.preparer
    assert preparer is not None
    messages = _conversation(12, size=300)
    _observe(preparer, messages, engine)
    _run_worker(preparer)
    messages = messages + _turn(12, 300)
    _observe(preparer, messages, engine)
    job = preparer.begin()  # the update over the newer turns, still running
    assert job is not None and job.base is not None
    out = engine.compress(messages)
    first = engine.last_report
    assert first is not None and first.prepared_messages == len(first.removed)
    job.run()
    preparer.commit(job)  # it lands after the compaction: bound to the compacted list
    assert preparer.status()["state"] == "ready"
    grown = out + _turn(13, 300) + _turn(14, 300)
    _observe(preparer, grown, engine)
    made = len(calls)
    again = engine.compress(grown)
    second = engine.last_report
    assert second is not None and second.summary is not None and len(calls) == made
    assert second.prepared_messages == len(second.removed) > 0
    # The swapped-in summary read exactly the turns it replaced, the old summary's too.
    gone = [grown[i] for i in second.removed]
    assert _tokens_of(gone) <= _tokens_of([{"role": "user", "content": second.summary}])
    assert validate_c12(again, grown) == []


def test_an_update_is_not_kept_for_turns_a_compaction_changed() -> None:
    calls: list[str] = []
    engine = _engine(calls)
    preparer = engine.preparer
    assert preparer is not None
    messages = _conversation(12, size=300)
    _observe(preparer, messages, engine)
    _run_worker(preparer)
    messages = messages + _turn(12, 300)
    _observe(preparer, messages, engine)
    job = preparer.begin()
    assert job is not None
    out = engine.compress(messages)
    job.run()
    preparer.commit(job)
    assert preparer.status()["covered"] >= 2  # the summary and a turn kept after it
    edited = [dict(m) for m in out]
    edited[5]["content"] = "tok0099 edited " + "x " * 300  # that turn
    _observe(preparer, edited, engine)  # type: ignore[arg-type]
    assert preparer.status()["state"] == "idle"


def test_the_tail_is_measured_with_the_callers_count_reaching_only_the_end() -> None:
    counted: list[Message] = []

    def double(message: Message) -> int:  # a meter that counts twice the rough estimate
        counted.append(message)
        return 2 * estimate_message_tokens_rough(message)

    messages = _conversation(80, size=60)
    rough = ContextCompressor(context_length=16_000)
    rough.compress(messages)
    metered = ContextCompressor(context_length=16_000)
    metered.count_with(double)
    metered.compress(messages)
    assert rough.last_report is not None and metered.last_report is not None
    kept_rough = len(messages) - len(rough.last_report.removed)
    kept_metered = len(messages) - len(metered.last_report.removed)
    assert kept_metered < kept_rough  # the same budget holds half as much
    assert 0 < len(counted) < len(messages) // 4  # a walk from the end, not every message


def test_a_rule_the_summary_in_the_context_holds_outlives_a_prepared_summary() -> None:
    # By hand (3,072 tokens): the model's summary, prepared in the background, was
    # swapped in without the user's rule that the summary it replaced held.
    rule = "User: Please remember: I'm allergic to peanuts, never suggest recipes with peanuts."
    previous = (f"## Constraints & Preferences\n- {rule}\n## Critical Context\n- User: We "
                "have a dog called Biscuit.\n")
    turns: list[Message] = [{"role": "user", "content": "We changed the trip: it's Porto now."},
                            {"role": "assistant", "content": "Porto it is."}]
    prepared = Prepared(first=1, start=1, end=3, keys=(), body=(
        "## Progress\n### Done\n- User: We changed the trip: it's Porto now.\n"), middle_tokens=40,
        calls=1)
    for middle in (turns, [*turns, {"role": "user", "content": "My shifts are on Tuesdays."}]):
        made = swap_summary(prepared, Span(previous=previous, turns=list(middle)), middle,
                            budget=2_000, extra="")
        assert rule in made.body and "Porto now" in made.body


def test_a_swap_leaves_out_the_notes_that_retell_the_kept_head() -> None:
    # The head stays in the context (``compressor.head_stems``): what only retells it is
    # left out whether the local summariser does the whole middle or folds in the rest.
    head = head_stems([{"role": "user", "content": "Hi! I'm Priya. I run a small book club "
                        "in Utrecht with six members."}])
    retold = "I'm running a small book club in Utrecht with six members."
    middle: list[Message] = [
        {"role": "user", "content": "My friend Daan is allergic to nuts."},
        {"role": "assistant", "content": retold},
        {"role": "user", "content": "We're reading Stoner by John Williams this month."},
        {"role": "assistant", "content": "Stoner is a quiet novel about a teacher."}]
    prepared = Prepared(first=1, start=1, end=2, keys=(), body=(
        "## Critical Context\n- User: My friend Daan is allergic to nuts.\n"),
        middle_tokens=20, calls=1)
    for ready in (None, prepared):
        made = swap_summary(ready, Span(previous=None, turns=list(middle)), middle,
                            budget=2_000, extra="", head=head)
        assert "Daan is allergic to nuts" in made.body and "book club" not in made.body
        without = swap_summary(ready, Span(previous=None, turns=list(middle)), middle,
                               budget=2_000, extra="")
        assert "book club" in without.body
