"""Memory nudges and the flush turn (SPEC M8): reminding the model to save what lasts.

Models forget to use their memory. Every ``nudge_interval`` user turns without a memory
write, the request carries a short reminder; and before a session ends or is compacted,
if ``flush_min_turns`` turns passed since the last write, the model gets one extra turn
with only the memory tool, to save durable facts before the turns they came from leave
its context.

A small model (the embedded 0.5B one) tends to restate the reminder in its answer —
"…was bought in 2019, and since this conversation revealed a user preference, save it
with the memory tool." — and, once that is in the conversation, to end every later answer
the same way. ``without_restated_reminder`` cuts the restatement from what is stored,
and ``reminder_clause`` judges each clause of a streamed answer so the user does not see
it either (``llm/text_tool_calls.ClauseFilter``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from mnemo.llm.text_tool_calls import DROP, HOLD, SHOW

__all__ = ["CORRECTION_CALL_TEXT", "CORRECTION_TEXT", "FLUSH_PROMPT", "NUDGE_TEXT", "MemoryNudger",
           "correction_reminder", "reminder_clause", "without_restated_reminder"]

NUDGE_TEXT = (
    "[Reminder: if this conversation revealed a durable fact — a user preference, a "
    "correction, an environment detail, a convention — save it with the memory tool. "
    "Skip task progress and temporary state.]"
)

# When the user takes back what a saved entry says ("…, not Manchester"), a model that
# answers the correction in words and saves nothing leaves the entry as it was, and every
# later session reads it (by hand: "…going to Lisbon in May." stayed after "it's Porto
# now, not Lisbon"). The reminder quotes the entry; the model writes the new one.
CORRECTION_TEXT = (
    "[Reminder: the user just corrected a saved memory entry: {entry}. Call the memory "
    "tool with action \"replace\", old_text set to that entry and content set to the "
    "corrected fact in the user's words.]"
)
# … and when the correction names what takes the old name's place, the call itself, in
# the JSON a model writes calls in: a small model copies a call better than it composes
# one (by hand, given the call in words, the embedded model copied the words into its
# answer; given the JSON, it made the replace).
CORRECTION_CALL_TEXT = (
    "[Reminder: the user just corrected a saved memory entry: {entry}. Replace it with "
    "this call: {call}]"
)

FLUSH_PROMPT = (
    "[System: the earlier part of this conversation is about to leave your context "
    "({reason}). Before it does, save anything worth keeping across sessions with the "
    "memory tool: the user's preferences and corrections, environment facts, conventions, "
    "lessons learned. Do not save task progress. If nothing is worth saving, reply with "
    "just: nothing to save.]"
)


def correction_reminder(stale: str, suggested: str | None = None,
                        target: str = "user") -> str:
    """The reminder to replace the ``stale`` entry (of ``target``) with ``suggested``
    or, without one, the corrected fact (see ``CORRECTION_TEXT``); "" for no entry."""
    if not stale:
        return ""
    entry = json.dumps(stale, ensure_ascii=False)
    if suggested:
        call = {"name": "memory", "arguments": {
            "action": "replace", "target": target, "old_text": stale, "content": suggested}}
        return CORRECTION_CALL_TEXT.format(entry=entry,
                                           call=json.dumps(call, ensure_ascii=False))
    return CORRECTION_TEXT.format(entry=entry)


@dataclass
class MemoryNudger:
    """Counts user turns since the last memory write and says when to nudge or flush."""

    nudge_interval: int = 10
    flush_min_turns: int = 6
    turns_since_write: int = 0

    def start_turn(self) -> bool:
        """Count a new user turn; True when this turn's request should carry the nudge."""
        self.turns_since_write += 1
        return (self.nudge_interval > 0
                and self.turns_since_write % self.nudge_interval == 0)

    def wrote(self) -> None:
        """A memory write happened: the count starts again."""
        self.turns_since_write = 0

    def flush_due(self) -> bool:
        return 0 < self.flush_min_turns <= self.turns_since_write


_WORD = re.compile(r"[a-z]+")
_ANCHOR_WORDS = 6  # this many words in a row as in the reminder: it is being restated
_REMINDER_SHARE = 0.6  # a clause with this share of the reminder's words belongs to it
_SENTENCE = re.compile(r"(?<=[.!?])(\s+)")
_CLAUSE = re.compile(r"([,;:()]|\s[-–—]\s)")


def _runs(text: str, size: int) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i:i + size]) for i in range(len(words) - size + 1)}


# The reminders' own words, without the entries they quote (the user's).
_REMINDERS = (NUDGE_TEXT, CORRECTION_TEXT.replace("{entry}", ""),
              CORRECTION_CALL_TEXT.replace("{entry}", "").replace("{call}", ""))
_REMINDER_RUNS = set().union(*(_runs(text, _ANCHOR_WORDS) for text in _REMINDERS))
_REMINDER_WORDS = frozenset(word for text in _REMINDERS for word in _WORD.findall(text.lower()))


def without_restated_reminder(text: str) -> str:
    """``text`` (a reply) without the sentences or trailing clauses that restate the
    memory reminder (see the module docstring); ``text`` itself when nothing would be
    left of it."""
    if not _runs(text, _ANCHOR_WORDS) & _REMINDER_RUNS:
        return text
    lines = []
    for line in text.split("\n"):
        parts = _SENTENCE.split(line)  # sentences, with the spaces between them
        for i in range(0, len(parts), 2):
            if _runs(parts[i], _ANCHOR_WORDS) & _REMINDER_RUNS:
                parts[i] = _cut(parts[i])
        cut = re.sub(r"  +", " ", "".join(parts)).rstrip()
        if cut.strip(" -*•") or not line.strip(" -*•"):  # a line cut to nothing goes
            lines.append(cut)
    kept = "\n".join(lines).strip()
    return kept or text


# A clause this share of whose words are the reminder's waits (it may go on to restate
# it): lower than ``_REMINDER_SHARE``, so it waits before its opening words ("and since
# this conversation") tell; a wait only delays what is shown.
_HOLD_SHARE = 0.4


# Words that join a clause to what came before ("…, and since this conversation
# revealed…"): they tell nothing of what the clause is.
_JOINING = frozenset(("and", "since", "so", "but", "because", "as", "also", "then", "now",
                      "please"))


def reminder_clause(clause: str) -> str:
    """``DROP`` for a clause of an answer that restates the reminder (a run of its words),
    ``HOLD`` for one that may be starting to (or has only joining words so far),
    ``SHOW`` for the rest."""
    words = _WORD.findall(clause.lower())
    if not words:
        return SHOW
    if _runs(clause, _ANCHOR_WORDS) & _REMINDER_RUNS:
        return DROP
    telling = [w for w in words if w not in _JOINING]
    if sum(w in _REMINDER_WORDS for w in telling) >= _HOLD_SHARE * len(telling):
        return HOLD
    return SHOW


def _cut(sentence: str) -> str:
    """``sentence`` up to the clauses that restate the reminder: from the clause where a
    run of its words starts, back over the clauses made mostly of its words."""
    pieces = _CLAUSE.split(sentence)  # clauses, with the separators between them
    starts = [0]
    for piece in pieces:
        starts.append(starts[-1] + len(piece))
    anchor = next(i for i in range(0, len(pieces), 2)
                  if _runs(" ".join(pieces[i:]), _ANCHOR_WORDS) & _REMINDER_RUNS
                  and not _runs(" ".join(pieces[i + 2:]), _ANCHOR_WORDS) & _REMINDER_RUNS)
    first = anchor
    for i in range(anchor - 2, -1, -2):
        words = _WORD.findall(pieces[i].lower())
        if not words:
            continue
        if sum(w in _REMINDER_WORDS for w in words) < _REMINDER_SHARE * len(words):
            break
        first = i
    kept = sentence[:starts[first]].rstrip(" ,;:(-–—")
    if not _WORD.search(kept.lower()):
        return ""
    end = sentence.rstrip()[-1:]
    return kept + (end if end in ".!?" else ".")
