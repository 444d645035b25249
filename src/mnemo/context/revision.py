"""A summary revised at once by a correction the user makes after it.

A compaction revises its new summary by the corrections in the turns it keeps whole
(``local_summary.revised_by_later``). A correction made later, before the next
compaction, stood beside the summary's old line until then: by hand (3,072 tokens)
"Actually the interview moved to Wednesday at 14:00, not Tuesday." came two turns after
a compaction whose summary said "The interview is on Tuesday [8 Dec 2026] at 10:30.",
and the embedded model answered "When is my interview?" with "Tuesday [8 Dec 2026]".
Here the summary message is revised as soon as the user's message is in. The price is
the prompt's cached prefix from the summary on, read again once per correction; a turn
without one costs a scan of the user's words.
"""

from __future__ import annotations

from collections.abc import Sequence

from mnemo.context.local_summary import revised_by_later
from mnemo.context.markers import SUMMARY_END_MARKER, SUMMARY_PREFIX, is_summary_message
from mnemo.messages import Message

__all__ = ["revised_summary"]


def revised_summary(messages: Sequence[Message]) -> tuple[list[Message], str] | None:
    """``messages`` with the newest summary in them revised by what the user said after
    it, and the revised summary's body; None when that changes nothing. The turn a
    summary was merged into (C12 c) stays as it was, and so does a summary in content
    parts (a merged turn with images), which the next compaction revises instead."""
    at = next((i for i in range(len(messages) - 1, -1, -1)
               if is_summary_message(messages[i])), None)
    if at is None:
        return None
    content = messages[at].get("content")
    if not isinstance(content, str) or not content.startswith(SUMMARY_PREFIX):
        return None
    body, marker, merged = content[len(SUMMARY_PREFIX):].partition(SUMMARY_END_MARKER)
    revised = revised_by_later(body, messages[at + 1:])
    if revised == body:
        return None
    out = list(messages)
    out[at] = {**messages[at], "content": f"{SUMMARY_PREFIX}{revised}{marker}{merged}"}
    return out, revised.strip()
