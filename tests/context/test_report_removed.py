"""``CompressionReport.removed`` names the input summaries a compression replaced.

A summary made anew with the very text of an input summary is that summary kept
(``repair.split_merged_summaries`` takes a merged one apart and merges it again), but
only in its own role: the same text made anew as the other role — a head summary folded
into the next one — replaced the input's, and the report says it was removed.
"""

from __future__ import annotations

from mnemo.context.markers import summary_content
from mnemo.context.repair import repair_messages
from mnemo.context.report import Draft
from mnemo.messages import Message


def _report_removed(messages: list[Message], out: list[Message],
                    origins: list[int | None]) -> list[int]:
    repair = repair_messages(messages)
    draft = Draft(messages, repair, 0, [], None, list(repair.messages),
                  [1] * len(repair.messages))
    return draft.report(out, origins, "test").removed


_SUMMARY = summary_content("## Goal\nShip the parser.")
_INPUT: list[Message] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": _SUMMARY},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "Go on."},
]


def test_a_summary_made_again_in_its_own_role_is_kept() -> None:
    out: list[Message] = [_INPUT[0], {"role": "user", "content": _SUMMARY}, *_INPUT[2:]]
    assert _report_removed(list(_INPUT), out, [0, None, 2, 3]) == []


def test_the_same_text_made_as_the_other_role_replaced_the_input_summary() -> None:
    out: list[Message] = [_INPUT[0], {"role": "assistant", "content": _SUMMARY},
                          _INPUT[3]]
    removed = _report_removed(list(_INPUT), out, [0, None, 3])
    assert removed == [1, 2]
