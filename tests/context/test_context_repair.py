"""C12 repairs: stray results, same-role neighbours, and the validity check everyone uses."""

from __future__ import annotations

import copy

import pytest
from convgen import assistant, call, system, tool, user

from mnemo.context import (
    SUMMARY_END_MARKER,
    ContextCompressor,
    is_summary_message,
    still_present,
    validate_c12,
)
from mnemo.context.markers import split_summary_message, summary_content
from mnemo.context.repair import merge_messages, repair_messages, restore_alternation
from mnemo.errors import UsageError
from mnemo.messages import content_text


def test_a_dropped_stray_result_does_not_leave_two_user_messages() -> None:
    messages = [system("s"), user("first"), tool("ghost", "stray"), user("second"),
                assistant("ok")]
    before = copy.deepcopy(messages)
    engine = ContextCompressor(context_length=8_000)
    out = engine.compress(messages)
    assert messages == before
    assert [m["role"] for m in out] == ["system", "user", "assistant"]
    assert out[1]["content"] == "first\n\nsecond"
    assert validate_c12(out, messages) == []
    report = engine.last_report
    assert report is not None and report.changed
    # The merged message stands for both originals, like a summary does.
    assert report.removed == [1, 2, 3] and report.pruned == []
    assert report.skipped_reason is not None
    assert "nothing to summarise" in report.skipped_reason
    assert ("repaired for the API: 1 tool result without its call dropped; 2 messages "
            "merged" in report.skipped_reason)
    assert still_present(messages[3], out) and still_present(messages[1], out)


def test_same_role_neighbours_in_the_input_are_merged_exactly() -> None:
    messages = [user("a"), user("b"), assistant("c"), assistant("d", [call("k")]),
                tool("k", "r"), assistant("e")]
    out = ContextCompressor(context_length=8_000).compress(messages)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "assistant"]
    assert out[1]["content"] == "c\n\nd" and out[1]["tool_calls"] == messages[3]["tool_calls"]
    assert validate_c12(out, messages) == []


def test_restore_alternation_reports_what_it_merged() -> None:
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "x"}}]
    messages = [user("q"), {"role": "user", "content": parts}, user("r"),
                assistant("", [call("c")]), assistant("after a call stays apart")]
    out, origins, merged = restore_alternation(messages, [0, 1, 2, 3, 4])
    assert origins == [None, 3, 4] and merged == [0, 1, 2]
    assert out[0]["content"] == [{"type": "text", "text": "q"}, *parts,
                                 {"type": "text", "text": "r"}]
    assert out[1:] == messages[3:]


def test_a_summary_stays_recognisable_through_a_merge() -> None:
    summary = user(summary_content("## Goal\n- earlier"))
    for pair in ([summary, user("question")], [user("question"), summary]):
        merged = merge_messages(*pair)
        assert is_summary_message(merged)
        body, original = split_summary_message(merged)
        assert body == "## Goal\n- earlier"
        assert original is not None and content_text(original) == "question"
        assert SUMMARY_END_MARKER in content_text(merged)
    both = merge_messages(summary, user(summary_content("## Goal\n- later")))
    assert content_text(both).count("[CONTEXT COMPACTION") == 1
    assert split_summary_message(both)[0] == "## Goal\n- earlier\n\n## Goal\n- later"


def test_repair_messages_counts_every_kind_of_repair() -> None:
    messages = [user("q"), tool("ghost", "x"), assistant("", [call("a"), call("b")]),
                tool("b", "rb"), tool("b", "again"), user("r"), user("s")]
    repair = repair_messages(messages)
    assert repair.dropped == [1, 4] and repair.stubs == 1 and repair.merged == [5, 6]
    assert repair.changed and validate_c12(repair.messages) == []
    assert "2 tool results without their call dropped" in repair.describe()
    assert not repair_messages([user("q"), assistant("a")]).changed


@pytest.mark.parametrize("messages", [
    [tool("x", "y")],
    [system("s"), tool("x", "y"), tool("z", "w")],
])
def test_nothing_but_stray_results_is_a_usage_error(messages: list[dict]) -> None:
    with pytest.raises(UsageError, match="every message to compress is a tool result "
                                         "without its call") as info:
        ContextCompressor(context_length=8_000).compress(messages)
    assert "\n" not in str(info.value)


def test_a_lone_system_message_is_left_alone() -> None:
    engine = ContextCompressor(context_length=8_000)
    assert engine.compress([system("s")]) == [system("s")]
    assert engine.last_report is not None and not engine.last_report.changed


def test_validate_c12_names_each_problem() -> None:
    source = [system("s"), user("q"), assistant("a")]
    assert validate_c12(source, source) == []
    problems = validate_c12([user("q"), tool("x", "r"), assistant("", [call("c")]),
                             user("u"), user("v")], source)
    assert [p[:3] for p in problems] == ["(a)", "(b)", "(c)", "(e)"]
    assert validate_c12([assistant("a")], source) == ["(d) no user message survived",
                                                      "(e) the system message is not "
                                                      "first any more"]
    assert validate_c12([system("s"), system("t"), user("q")], source) == [
        "(e) a system message was added"]
    shape = validate_c12([{"role": "user", "content": 5}])
    assert shape and shape[0].startswith("message 0: 'content' must be")


def test_still_present_sees_merges_and_summaries() -> None:
    original = user("the ask")
    assert still_present(original, [original])
    assert still_present(original, [user("before\n\nthe ask")])
    assert still_present(original, [user(summary_content("s") + SUMMARY_END_MARKER + "the ask")])
    assert not still_present(original, [user("not the ask at all")])
    assert not still_present(original, [assistant("the ask")])
