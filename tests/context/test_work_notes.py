"""A work session takes no notes of soft claims (C18: read only what can be kept).

A sentence that uses a rule's words in passing ("it is not always easy") is a soft
claim: between people it is a note, at work it is neither note nor rule (``extract.py``
drops those notes when it finishes a session that used a tool). Tools are never un-used,
so once a call is read the reader stops taking these notes. These tests count the
sentences handed to ``take_notes`` and check the summary is the one it always was.
"""

from __future__ import annotations

import pytest
from convgen import assistant, call, tool, user

from mnemo.context.extract import RESUMES, extract_facts
from mnemo.context.summary import reading
from mnemo.context.summary.reading import CACHE

# A user's remark with a rule's word in it ("always"), not a rule: a soft claim.
_REMARK = "It is not always easy to find a good bakery here."


@pytest.fixture
def noted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every sentence ``take_notes`` is given, from a cold cache."""
    CACHE.clear()
    RESUMES.clear()
    seen: list[str] = []
    take = reading.take_notes

    def counting(sentences: list[str], **kwargs: object) -> object:
        seen.extend(sentences)
        return take(sentences, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reading, "take_notes", counting)
    return seen


def _session(remark_after_tools: bool) -> list[dict[str, object]]:
    remark = [user(_REMARK)]
    work = [user("Look at the reports page."),
            assistant("", [call("c1", "read_file", path="src/reports.py")]),
            tool("c1", "def render(): ...")]
    return (work + remark) if remark_after_tools else (remark + work)  # type: ignore[return-value]


def test_a_soft_claim_after_a_tool_call_is_not_noted(noted: list[str]) -> None:
    facts = extract_facts(_session(remark_after_tools=True))  # type: ignore[arg-type]
    assert _REMARK not in noted
    assert "Look at the reports page." in noted  # plain sentences are still noted
    assert all(_REMARK not in note.text for note in facts.notes)


def test_before_the_first_call_it_is_noted_then_dropped_as_before(noted: list[str]) -> None:
    facts = extract_facts(_session(remark_after_tools=False))  # type: ignore[arg-type]
    assert _REMARK in noted  # no tool seen yet: it may still be a conversation
    assert all(_REMARK not in note.text for note in facts.notes)  # a work session's end


def test_between_people_the_soft_claim_stays_a_note(noted: list[str]) -> None:
    facts = extract_facts([assistant("How was the week?"),  # type: ignore[list-item]
                           user(_REMARK), assistant("I see, thanks."),
                           user("We moved to the old town in May.")])
    assert _REMARK in noted
    assert any(_REMARK.rstrip(".") in note.text for note in facts.notes)
