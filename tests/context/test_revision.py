"""A summary revised at once by a correction made after it (``context/revision.py``)."""

from __future__ import annotations

from mnemo.context.markers import SUMMARY_END_MARKER, summary_content
from mnemo.context.revision import revised_summary
from mnemo.messages import Message

_BODY = ("## Critical Context\n- User: The interview is on Tuesday [8 Dec 2026] at 10:30.\n"
         "- User: My sister Anna lives in Delft.\n")


def _chat(*later: str, merged: str = "") -> list[Message]:
    content = summary_content(_BODY) + (f"{SUMMARY_END_MARKER}{merged}" if merged else "")
    out: list[Message] = [{"role": "system", "content": "You are helpful."},
                          {"role": "user", "content": "Hi!"},
                          {"role": "assistant", "content": content}]
    for number, text in enumerate(later):
        out.append({"role": "user" if number % 2 == 0 else "assistant", "content": text})
    return out


def test_a_correction_revises_the_summary_and_nothing_else() -> None:
    messages = _chat("Actually the interview moved to Wednesday at 14:00, not Tuesday.")
    found = revised_summary(messages)
    assert found is not None
    revised, body = found
    assert "10:30" not in str(revised[2]["content"]) and "Anna lives in Delft" in body
    assert revised[:2] == messages[:2] and revised[3:] == messages[3:]
    assert messages[2]["content"] == summary_content(_BODY)  # the input is not changed
    # Once revised, nothing is left to revise.
    assert revised_summary(revised) is None


def test_the_turn_a_summary_was_merged_into_stays_as_it_was() -> None:
    merged = "- The interview is on Tuesday at 10:30, I said."
    messages = _chat("Actually the interview moved to Wednesday at 14:00, not Tuesday.",
                     merged=merged)
    found = revised_summary(messages)
    assert found is not None
    content = str(found[0][2]["content"])
    assert content.endswith(SUMMARY_END_MARKER + merged)
    assert "Tuesday [8 Dec 2026] at 10:30" not in content


def test_without_a_correction_or_a_summary_nothing_changes() -> None:
    assert revised_summary(_chat("When is my interview?", "On Tuesday at 10:30.")) is None
    # The assistant corrects nothing.
    assert revised_summary(_chat("OK.", "It moved to Wednesday at 14:00, not Tuesday.")) is None
    assert revised_summary([{"role": "user", "content": "It's Wednesday now, not Tuesday."}]) \
        is None
    # A summary in content parts is left to the next compaction.
    parts = _chat("Actually the interview moved to Wednesday at 14:00, not Tuesday.")
    parts[2] = {**parts[2], "content": [{"type": "text", "text": summary_content(_BODY)}]}
    assert revised_summary(parts) is None
