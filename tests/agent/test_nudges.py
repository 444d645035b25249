"""The memory reminders (SPEC M8) and what a reply that restates one keeps.

Pure functions of ``agent/nudges.py``; no model.
"""

from __future__ import annotations

from mnemo.agent.nudges import (
    CORRECTION_CALL_TEXT,
    CORRECTION_TEXT,
    correction_reminder,
    reminder_clause,
    without_restated_reminder,
)
from mnemo.llm.text_tool_calls import DROP, SHOW


def test_the_correction_reminder_quotes_the_entry_and_the_call_when_known() -> None:
    reminder = correction_reminder("We're going to Lisbon in May.")
    assert reminder == CORRECTION_TEXT.format(entry='"We\'re going to Lisbon in May."')
    call = correction_reminder("Ravi lives in Leeds.", "Ravi lives in York.", "memory")
    assert call == CORRECTION_CALL_TEXT.format(
        entry='"Ravi lives in Leeds."',
        call='{"name": "memory", "arguments": {"action": "replace", "target": "memory", '
             '"old_text": "Ravi lives in Leeds.", "content": "Ravi lives in York."}}')
    assert correction_reminder("") == ""


def test_a_reply_restating_the_correction_reminder_keeps_its_answer() -> None:
    reply = ("Porto it is! I will call the memory tool with action replace, old_text set "
             "to that entry and content set to the corrected fact.")
    assert without_restated_reminder(reply) == "Porto it is!"
    assert reminder_clause("old_text set to that entry and content set to the") == DROP
    # The entry the reminder quotes is the user's: saying it again is an answer.
    assert reminder_clause("we're going to Porto in May") == SHOW
