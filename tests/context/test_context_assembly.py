"""C11 and C12: the summary message, its role, the system note, and tool-pair repair."""

from __future__ import annotations

import pytest
from convgen import assistant, c12_violations, call, system, tool, user

from mnemo.context import (
    COMPACTION_NOTE,
    MISSING_RESULT_STUB,
    SUMMARY_END_MARKER,
    SUMMARY_PREFIX,
    ContextCompressor,
)
from mnemo.context.assembly import (
    assemble,
    choose_summary_role,
    merge_summary_into,
    with_compaction_note,
)
from mnemo.context.markers import split_summary_message, summary_content
from mnemo.context.repair import sanitize_tool_pairs


@pytest.mark.parametrize(("prev", "nxt", "expected"), [
    ("assistant", "assistant", "user"),
    ("tool", "assistant", "user"),
    ("user", "user", "assistant"),
    ("assistant", "user", None),  # user collides with the tail: merge
    ("tool", "user", None),
    ("user", "assistant", None),
    ("system", "user", "assistant"),
    ("system", "assistant", "user"),
    (None, "user", "assistant"),
    (None, None, "assistant"),
])
def test_summary_role_avoids_both_neighbours(prev: str | None, nxt: str | None,
                                             expected: str | None) -> None:
    assert choose_summary_role(prev, nxt) == expected


def test_spec_text_of_the_prefix_and_the_note() -> None:
    assert SUMMARY_PREFIX.startswith("[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns")
    assert SUMMARY_PREFIX.endswith("they were already addressed.")
    assert COMPACTION_NOTE.startswith("[Note: Some earlier conversation turns")
    assert SUMMARY_END_MARKER == "\n\n--- END OF CONTEXT SUMMARY ---\n\n"


def test_note_is_appended_to_the_system_message_once() -> None:
    once = with_compaction_note(system("be brief"))
    assert once["content"] == f"be brief\n\n{COMPACTION_NOTE}"
    assert with_compaction_note(once) == once
    parts = with_compaction_note({"role": "system", "content": [{"type": "text", "text": "x"}]})
    assert parts["content"][-1] == {"type": "text", "text": COMPACTION_NOTE}
    assert with_compaction_note(parts) == parts


def test_merge_puts_summary_first_and_can_be_taken_apart_again() -> None:
    merged = merge_summary_into(user("original ask"), "## Goal\n- g")
    assert merged["content"] == summary_content("## Goal\n- g") + SUMMARY_END_MARKER + (
        "original ask")
    body, original = split_summary_message(merged)
    assert body == "## Goal\n- g"
    assert original == user("original ask")


def test_merge_into_multimodal_content_prepends_a_text_part() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:,x"}}
    merged = merge_summary_into({"role": "user", "content": [image]}, "S")
    assert merged["content"][0]["text"].startswith(SUMMARY_PREFIX)
    assert merged["content"][1] == image
    body, original = split_summary_message(merged)
    assert body == "S" and original == {"role": "user", "content": [image]}


def test_assemble_merges_when_both_roles_collide() -> None:
    # Head ends with a tool result, tail starts with a user turn: "user" would collide
    # with the tail and "assistant" is not allowed after a tool result either.
    messages = [system(), user("a"), assistant("", [call("c")]), tool("c", "r"),
                user("middle"), assistant("m"), user("tail ask"), assistant("t")]
    out, origins = assemble(messages, 1, 4, 6, "SUMMARY")
    assert origins == [0, 1, 2, 3, 6, 7]
    assert out[4]["content"].endswith(SUMMARY_END_MARKER + "tail ask")
    assert not c12_violations(out, messages)


def test_sanitize_drops_orphan_results_and_stubs_missing_ones() -> None:
    messages = [user("q"), tool("ghost", "orphan"), assistant("", [call("a"), call("b")]),
                tool("b", "rb"), tool("b", "duplicate"), user("next")]
    out, origins, dropped, stubs = sanitize_tool_pairs(messages, list(range(len(messages))))
    assert dropped == [1, 4]
    assert stubs == 1
    assert out[3] == {"role": "tool", "tool_call_id": "a", "content": MISSING_RESULT_STUB}
    assert origins == [0, 2, 3, None, 5]
    assert not c12_violations(out, messages)


def test_compress_repairs_pairs_broken_in_the_input() -> None:
    # An agent that crashed left a call without a result and a result without a call.
    broken = [system(), user("start"), assistant("a"), user("x" * 3000), assistant("y" * 3000),
              user("z" * 3000), assistant("", [call("lost")]), user("ask"),
              tool("nobody", "stray"), assistant("end")]
    engine = ContextCompressor(context_length=2_000)
    out = engine.compress(broken)
    assert not c12_violations(out, broken)
    assert engine.last_report is not None
    assert 8 in engine.last_report.removed  # the stray result is reported as gone
