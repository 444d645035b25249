"""The local summariser (C15): the C9 template filled without a model, deterministically.

It is the default summariser when no model is configured and the fallback when the model
fails (C13). ``extract.py`` reads the facts out of the turns; this module merges them with
the previous summary (C10: earlier items are kept, open asks that a new reply answered
move to "Resolved Questions", tool counts add up), ranks every candidate line, and keeps
the best ones within the summary budget.

Ranking: each kind of fact has a base weight (the user's goal and preferences first, then
open asks, decisions, errors and config values, files that were changed, …); within one
kind, newer lines rank higher with a logarithmic decay, so a session with five hundred
errors still leaves room for its file list. Whatever else the user said (sentences no
pattern recognised) goes under Critical Context as "User said: …", weighted below every
recognised kind but above files that were only read: nothing the user said is dropped
while the budget has room, and a statement made once is not outranked by the twentieth
look-alike request ("step 12: refactor …" — lines of one shape decay together, and every
line but a chat's notes with its look-alikes of any kind: ``_lookalike``). Those
lines take at most a quarter of the characters of what the summary replaces, so a
summary of small turns never grows past them. What the assistant stated in plain prose
("the worker retries three times") becomes "Assistant noted: …", just below the user's
lines, within a quarter of what the assistant wrote. Lines carried over from the previous
summary keep the weight of their kind but count as older than every new line (between
people, one no speaker's label marks — a model wrote it — weighs as a note). Lines
about the focus topic (C14: they contain it, share a word with it, or — for CJK — most
of its character bigrams) get a large boost. The two best lines of every section are
kept first, then the rest by weight until the budget is spent; the kept lines are
printed in conversation order under their headings. Obvious secrets are replaced by
``[REDACTED]``.
"""

from __future__ import annotations

import bisect
import heapq
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache, partial

from mnemo.context.extract import (
    TALK_TOOLS,
    Facts,
    FileNote,
    Item,
    extract_facts,
    is_ai_assistant,
    is_conversation,
)
from mnemo.context.failures import error_lines, error_shape
from mnemo.context.prompt import PROGRESS_SUBSECTIONS, TEMPLATE_SECTIONS
from mnemo.context.shrink import CUT_MARKER_START
from mnemo.context.summary.cache import collector_paused
from mnemo.context.summary.dates import (
    RESOLVED_DATE,
    day_ahead,
    find_date,
    format_date,
    resolve_relative,
)
from mnemo.context.summary.notes import (
    TIMELINE_DAY,
    Change,
    Note,
    carried_notes,
    change_of,
    content_words,
    latest_notes,
    marked_sentences,
    note_stems,
    plain_values,
    rare_words,
    restated,
    retold_change,
    stems_of,
    text_stems,
    told_in,
    updates_in,
    value_change,
    value_changes,
)
from mnemo.context.summary.salience import (
    condensed,
    is_limitation,
    is_standing_rule,
    knows_nothing,
    salience,
    slot_keys,
    undone_in,
    undone_names,
    undone_values,
)
from mnemo.context.summary.secrets import may_hold_secrets, redact_secrets
from mnemo.context.summary.wrapped import unwrapped
from mnemo.context.textscan import CJK_CLASS, one_line, topic_matcher
from mnemo.messages import Message, content_text

__all__ = ["TOOL_COUNT", "marks_empty", "parse_summary_sections", "redact_secrets",
           "render_sections", "revised_by_later", "summarize_locally"]

_NONE = "(none)"
# The most of a summary's room the empty template may take with its "(none)" lines.
_MARKED_SHARE = 0.1
# Lines that describe one compaction only: the next summary writes its own.
_LATEST = "Latest request in these turns: "
_FOCUS = "Focus of this compaction: "
_LAST_STEP = "Last step in these turns: "
_PARTICIPANTS = "Participants: "
# The date of the latest session a header line named ("[Session 3, 2 May 2024]"): once
# that line is summarised away, the next compaction's "yesterday" is still dated by it
# (in a live chat of LoCoMo, each later summary had lost every date of its sessions).
_SESSION_DATE = "Latest session date: "
_SAID = "User said: "
_NOTED = "Assistant noted: "
# "User said" lines restate the turns: they take at most this share of the characters
# they replace; "Assistant noted" lines at most this share of what the assistant wrote.
_SAID_SHARE = 0.25
_NOTED_SHARE = 0.25
_TALK_SHARE = 0.5  # … and between people (``is_conversation``) half of everything
_FOCUS_BOOST = 30.0
_DECAY = 4.0  # weight lost each time the number of newer lines of the same kind doubles
_RESERVED_PER_SECTION = 2
# … but a note that tells little (its weight below this) gets no reserved place: a
# section of filler ("interest in its popularity.") would keep it over any fact.
_RESERVED_NOTE = 42.0
# A note loses this share of what its salience earned for each share of its content
# words that the kept lines already hold (see _fit).
_REPEAT_SHARE = 1.0

# A Tools & Patterns line: a tool's name and how often it was called ("memory ×4").
TOOL_COUNT = re.compile(r"^(\S+) ×(\d+)(?: \((\d+) failed\))?$")
_READ_COUNT = re.compile(r"^(\S+): (\d+) calls?(?: \(see Relevant Files\))?$")
_STRAY_HEADING = re.compile(r"^#{1,6}\s+")
_HEADING_NAMES = frozenset(n.lower() for n in (*TEMPLATE_SECTIONS, *PROGRESS_SUBSECTIONS))
_PLACEHOLDER = re.compile(r"^[(\[]?(?:none|n/?a|nothing(?: yet)?|-+)[)\]]?\.?$", re.IGNORECASE)
_GUARD_CUT = re.compile(re.escape(CUT_MARKER_START) + r"[\d,]+ characters cut here[^\]]*\]")
_EARLIER = -1_000_000  # the order of lines carried over: before every new turn


@dataclass
class _Line:
    section: str  # "Goal", …, or "Progress/Done"
    text: str
    order: int
    weight: float
    room: str = ""  # "said" / "noted": restates the turns, within its share (see _fit)
    merge: str = ""  # neighbours with the same key are printed as one line (_grouped)
    seq: int = 0  # the place of a note among the notes (its sentence order)
    head: int = 0  # characters of the shared label a merged line drops
    who: str = ""  # the speaker's label, dropped too when the same speaker goes on
    words: frozenset[str] = frozenset()  # a note's content words (see _fit)
    gain: float = 0.0  # the part of ``weight`` that its salience earned (see _fit)
    group: int = 0  # printed in order of (group, order, seq): a participant's facts together
    note: bool = False  # weighs by what it tells (a note between people): see _fit

    @property
    def place(self) -> tuple[int, int, int]:
        return self.group, self.order, self.seq


def parse_summary_sections(text: str) -> dict[str, list[str]]:
    """The items of a template-shaped summary, by section (``Progress/Done`` …).

    Lines outside any known heading land under ``"Other"``; ``(none)`` lines are dropped;
    an item a model wrapped over lines is one item (``summary/wrapped.py``).
    """
    sections: dict[str, list[str]] = {}
    current = "Other"
    for raw in unwrapped(text).splitlines():
        line = raw.strip()
        if line.startswith("## "):
            current = _canonical(line[3:], TEMPLATE_SECTIONS) or "Other"
            continue
        if line.startswith("### ") and current.startswith("Progress"):
            sub = _canonical(line[4:], PROGRESS_SUBSECTIONS)
            current = f"Progress/{sub}" if sub else "Progress"
            continue
        if line.startswith(("- ", "* ")):
            line = line[2:].strip()
        if line.startswith(("[ ] ", "[x] ")):
            line = line[4:]
        # A heading a model put inside a section ("- ### (none)", "### The user asked
        # …", seen by hand from the 0.5B model) is an item, its marks dropped; one that
        # only names a heading of the template is no item at all.
        heading = _STRAY_HEADING.match(line)
        if heading:
            line = line[heading.end():]
            if line.rstrip(":").strip().lower() in _HEADING_NAMES:
                continue
        # A cut the window guard made in an earlier summary (C19) is no item to carry,
        # nor a model's way of saying a section is empty ("None", "N/A"); one inside an
        # item leaves "…" (else it came back, whole, in every later summary).
        if _GUARD_CUT.search(line):
            line = _GUARD_CUT.sub("…", line).strip()
        if line and line != "…" and not _PLACEHOLDER.match(line):
            sections.setdefault(current, []).append(line)
    return sections


def render_sections(lines: dict[str, list[str]], *, marked: bool = True) -> str:
    """The ten-section template with ``lines`` under their headings, in template order;
    ``marked``: an empty section says "(none)" (else its heading stands alone)."""
    out: list[str] = []
    for section in TEMPLATE_SECTIONS:
        out.append(f"## {section}")
        if section == "Progress":
            for sub in PROGRESS_SUBSECTIONS:
                out.append(f"### {sub}")
                out += _bullets(lines.get(f"Progress/{sub}", []), section, marked)
        else:
            out += _bullets(lines.get(section, []), section, marked)
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def marks_empty(budget_tokens: int) -> bool:
    """Whether a summary within ``budget_tokens`` says "(none)" under an empty section.
    In a small window the twelve "(none)" lines would take a third of the summary's room
    (by hand, at 3,072 tokens, a chat's job and dog fell off for them): there an empty
    section is its heading alone, which still keeps the layout."""
    return len(render_sections({})) <= _MARKED_SHARE * budget_tokens * 4


def summarize_locally(
    turns: Sequence[Message],
    *,
    budget_tokens: int,
    previous_summary: str | None = None,
    focus_topic: str | None = None,
    extra_context: str = "",
    session_date: date | None = None,
    known_words: frozenset[str] = frozenset(),
    marked: bool | None = None,
    kept_stems: frozenset[str] = frozenset(),
) -> str:
    """The summary of ``turns`` (merged into ``previous_summary``) within ``budget_tokens``;
    ``session_date``: what relative dates ("yesterday") are resolved against where no
    header line in the turns names a date; ``known_words``: the content words of a
    summary printed beside this one (``notes.content_words``) — a note it already tells
    is left out, one it partly tells ranks lower (see ``_fit``); ``marked``: whether an
    empty section says "(none)" — by default unless the budget is small (``marks_empty``);
    ``kept_stems``: the stems of the content words (``notes.text_stems``) of turns the
    context keeps beside the summary (its head) — a note they tell already is left out,
    and only that: a note on the same topic tells what they do not."""
    with collector_paused():  # see there: the collector cost more than the reading
        return _summary(turns, budget_tokens, previous_summary, focus_topic, extra_context,
                        session_date, known_words, marked, kept_stems)


def _summary(turns: Sequence[Message], budget_tokens: int, previous_summary: str | None,
             focus_topic: str | None, extra_context: str, session_date: date | None,
             known_words: frozenset[str] = frozenset(), marked: bool | None = None,
             kept_stems: frozenset[str] = frozenset()) -> str:
    previous = parse_summary_sections(previous_summary or "")
    carried_date = _carried_date(previous)
    session_date = carried_date or session_date
    facts = extract_facts(turns, prior_pending=previous.get("Pending User Asks", []),
                          continued=_of_conversation(previous), session_date=session_date,
                          focus=_day_to_come(previous_summary or "", previous, session_date))
    previous = _latest_request_said(facts, previous)
    if is_conversation(facts):
        previous = _notes_carried(facts, previous, session_date)
    previous = _without_taken_back(facts, previous)
    previous = _without_changed_values(facts, previous)
    candidates = _candidates(facts, previous, focus_topic, extra_context, carried_date)
    about = topic_matcher(focus_topic) if focus_topic else None
    for line, secret in zip(candidates, may_hold_secrets([c.text for c in candidates]),
                            strict=True):
        if secret:
            line.text = redact_secrets(line.text)
        if about is not None and about(line.text):
            line.weight += _FOCUS_BOOST
    replaced = sum(len(content_text(t)) for t in turns)
    # Assistant prose is restated against what the assistant wrote, not the tool output
    # around it (often cleared already), so a tool-heavy middle still shrinks.
    written = sum(len(content_text(t)) for t in turns if t.get("role") == "assistant")
    # Between people the notes are the content, not a restatement beside the work: each
    # speaker's notes may take half of what the summary replaces.
    talk = is_conversation(facts)
    # The previous summary is a summary already: what it said may be said again whole.
    # (Counted as turns, its notes lost half their room at every compaction: a live
    # chat's summary halved in a few, keeping about half the answers a single
    # compaction keeps.)
    carried = len(previous_summary or "")
    limit = budget_tokens * 4
    if marked is None:
        marked = marks_empty(budget_tokens)
    kept = _fit(candidates, limit - len(render_sections({}, marked=marked)) - 8,
                said_room=int(replaced * (_TALK_SHARE if talk else _SAID_SHARE)) + carried,
                noted_room=int((replaced if talk else written)
                               * (_TALK_SHARE if talk else _NOTED_SHARE)) + carried,
                known=known_words, kept_stems=kept_stems)
    kept.sort(key=lambda c: c.place)
    text = render_sections(_grouped(kept), marked=marked)
    # _fit counts each line as it will be printed; should the rendering still come out
    # longer (a budget smaller than the empty template), the least important lines go.
    while len(text) > limit and kept:
        over = len(text) - limit
        for line in sorted(kept, key=lambda c: (c.weight, -c.order)):
            kept.remove(line)
            over -= len(line.text)
            if over <= 0:
                break
        text = render_sections(_grouped(kept), marked=marked)
    return text


def _grouped(kept: list[_Line]) -> dict[str, list[str]]:
    """The kept lines by section. Neighbours that share a label become one line, so the
    label is paid once: the notes of one message ("Caroline: a. b."), and the events of
    one day in the timeline ("8 May 2023 · Caroline: a. Melanie: b.")."""
    by_section: dict[str, list[str]] = {}
    last: dict[str, tuple[str, str]] = {}
    for line in kept:
        items = by_section.setdefault(line.section, [])
        merge, who = last.get(line.section, ("", ""))
        if line.merge and merge == line.merge:
            body = line.text[line.head:]
            if line.who and who == line.who:
                body = body[len(line.who):]
            items[-1] += " " + body
        else:
            items.append(line.text)
        last[line.section] = (line.merge, line.who)
    return by_section


def _bullets(items: list[str], section: str, marked: bool = True) -> list[str]:
    if not items:
        return [f"- {_NONE}"] if marked else []
    mark = "- [ ] " if section == "Remaining Work" else "- "
    return [mark + item for item in items]


def _day_to_come(text: str, sections: dict[str, list[str]],
                 session_date: date | None) -> date | None:
    """The day to come the previous summary ``text`` (its ``sections``) names last
    (``dates.day_ahead``), what the new turns' weekdays are read beside; else one its
    Goal names as the user said it. A first summary laid out for work quotes the user's
    message with its dates unresolved (they are resolved once it is carried as their
    note): by hand "We fly from Amsterdam on Thursday the 17th …" stood there, and the
    model's "on Thursday at 7:15" in the next turns was dated the coming Thursday."""
    return day_ahead(text, session_date) or day_ahead(
        resolve_relative(" ".join(sections.get("Goal", [])), session_date), session_date)


def _canonical(heading: str, names: Sequence[str]) -> str | None:
    lowered = heading.strip().lower()
    for name in names:
        if lowered.startswith(name.lower()):
            return name
    return None


def _fit(candidates: list[_Line], max_chars: int, *, said_room: int,
         noted_room: int, known: frozenset[str] = frozenset(),
         kept_stems: frozenset[str] = frozenset()) -> list[_Line]:
    """The best lines whose rendering fits in ``max_chars``.

    The two best lines of every section go first, so a crowded kind of fact cannot push a
    whole section out; then the rest by weight, a note weighing less the more of its
    content words the kept lines — and ``known``, the words of a summary printed beside
    this one — already hold (``_REPEAT_SHARE``: a summary that says a thing twice has
    less room for the next); a note ``known`` already tells (``notes.told_in``) is left
    out, and so is one whose stems ``kept_stems`` tells (the turns kept beside the
    summary: a retelling in other forms of the words shares their stems). "User said"
    lines together take at most ``said_room`` characters: a summary that restated the
    turns would not be smaller.
    """
    layout = _Layout()
    used = 0
    restated = {"said": 0, "noted": 0}
    rooms = {"said": said_room, "noted": noted_room}
    covered: set[str] = set(known)
    if known:
        candidates = [line for line in candidates if not told_in(line.words, known)]
    if kept_stems:
        candidates = [line for line in candidates
                      if not told_in(stems_of(_undated(line)), kept_stems)]

    def by_weight(lines: list[_Line]) -> Iterator[_Line]:
        """``lines`` best first, a note re-weighed as ``covered`` grows (lazy greedy: a
        note's weight only falls, so one taken out is put back when another now weighs
        more)."""
        if not any(line.words for line in lines):  # nothing to re-weigh (a work session)
            yield from sorted(lines, key=lambda line: (-line.weight, line.order))
            return
        queue = [(-line.weight, line.order, i, line) for i, line in enumerate(lines)]
        heapq.heapify(queue)
        while queue:
            weight, order, i, line = heapq.heappop(queue)
            if line.words:
                now = line.weight - _REPEAT_SHARE * line.gain * len(
                    line.words & covered) / len(line.words)
                if now < -weight and queue and -queue[0][0] > now:
                    heapq.heappush(queue, (-now, order, i, line))
                    continue
            yield line

    printed: set[str] = set()

    def take(line: _Line) -> None:
        nonlocal used
        # An error the Goal quotes already (the user's message: by hand, a 160-token
        # summary printed it twice). A request that is the Goal and still open is both.
        if line.section == "Critical Context" and line.text in printed:
            return
        cost = layout.cost(line)
        kind = line.room
        # The date a relative one stands for is no restatement: it is what the summary
        # adds to the turns (in a chat in Chinese, dense in characters, the brackets had
        # taken the room of a plan).
        said = cost - _resolved_chars(line.text) if kind and "[" in line.text else cost
        if used + cost > max_chars or (kind and restated[kind] + said > rooms[kind]):
            return
        layout.place(line)
        printed.add(line.text)
        covered.update(line.words)
        used += cost
        if kind:
            restated[kind] += said

    per_section: Counter[str] = Counter()
    rest: list[_Line] = []
    for line in by_weight(candidates):
        per_section[line.section] += 1
        if per_section[line.section] <= _RESERVED_PER_SECTION and (
                not line.note or line.weight >= _RESERVED_NOTE):
            take(line)
        else:
            rest.append(line)
    for line in by_weight(rest):
        take(line)
    return layout.kept


def _undated(line: _Line) -> frozenset[str]:
    """``line``'s content words but those of the dates it resolved ("[Jan 2027]"): the
    turns say "next month", and a retelling of them that the summary dated tells nothing
    new (by hand, "We're moving from Leiden to Rotterdam next month [Jan 2027]." the
    model's copy of the kept first message, took a third of a 100-token summary)."""
    if "[" not in line.text:
        return line.words
    return line.words - content_words(" ".join(RESOLVED_DATE.findall(line.text)))


def _resolved_chars(text: str) -> int:
    return sum(len(m) for m in RESOLVED_DATE.findall(text))


class _Layout:
    """The kept lines of each section in printed order, and what one more costs there:
    a line printed after a neighbour with the same merge key pays no label (``_grouped``),
    and one put between two merged lines makes the second pay its label again."""

    def __init__(self) -> None:
        self._rows: dict[str, list[_Line]] = {}

    @property
    def kept(self) -> list[_Line]:
        return [line for rows in self._rows.values() for line in rows]

    def _neighbours(self, line: _Line) -> tuple[int, _Line | None, _Line | None]:
        rows = self._rows.get(line.section, [])
        at = bisect.bisect(rows, line.place, key=lambda row: row.place)
        return at, rows[at - 1] if at else None, rows[at] if at < len(rows) else None

    def cost(self, line: _Line) -> int:
        _, before, after = self._neighbours(line)
        added = _printed(line, before)
        if after is not None:
            added += _printed(after, line) - _printed(after, before)
        return added

    def place(self, line: _Line) -> None:
        at, _, _ = self._neighbours(line)
        self._rows.setdefault(line.section, []).insert(at, line)


def _printed(line: _Line, before: _Line | None) -> int:
    """Characters ``line`` adds to the summary when printed after ``before``."""
    if before is not None and line.merge and line.merge == before.merge:
        shared = line.head + (len(line.who) if line.who and line.who == before.who else 0)
        return len(line.text) - shared + 1  # joined with a space
    return len(line.text) + (len("- [ ] \n") if line.section == "Remaining Work"
                             else len("- \n"))


@dataclass
class _Candidate:
    """A line before ranking: ``kind`` groups the lines that compete by recency."""

    kind: str
    text: str
    order: int
    base: float
    room: str = ""
    merge: str = ""
    seq: int = 0
    head: int = 0
    who: str = ""
    words: frozenset[str] = frozenset()
    gain: float = 0.0
    group: int = 0
    note: bool = False


def _ranked(section: str, candidates: Sequence[_Candidate]) -> list[_Line]:
    """Lines of one section: within each kind, newer lines weigh more (logarithmic decay
    with the number of newer lines of that kind); a repeated text counts once. Lines
    that are not notes of conversation also decay with the number of newer look-alikes
    (``_lookalike``) of any kind: the thirtieth "Step 30: refactor src/…" or
    "E AssertionError: assert 4 == 40" tells little the newest one does not."""
    seen: set[str] = set()
    ranks: Counter[str] = Counter()
    looks: Counter[str] = Counter()
    lines: list[_Line] = []
    for c in sorted(candidates, key=lambda c: -c.order):
        if c.text in seen:
            continue
        seen.add(c.text)
        weight = c.base - _DECAY * math.log2(1 + ranks[c.kind])
        if not c.note:
            look = _lookalike(c.text)
            weight -= _DECAY * math.log2(1 + looks[look])
            looks[look] += 1
        lines.append(_Line(section, c.text, c.order, weight, c.room, c.merge,
                           c.seq, c.head, c.who, c.words, c.gain, c.group, c.note))
        ranks[c.kind] += 1
    return lines


# What a look-alike keeps of a line: its first words (or, written without spaces, its
# first characters), numbers and names of files or code blanked, after its label.
_LOOK_BLANKS = re.compile(r"\S*[/_.:]\S*\w|\d+")
_LOOK_WORDS = 4
_LOOK_CJK = re.compile(f"[{CJK_CLASS}]")
_LOOK_CJK_CHARS = 6


@lru_cache(maxsize=65_536)
def _lookalike(text: str) -> str:
    """The part of ``text`` that look-alike lines share ("step #: refactor #")."""
    for prefix, _ in _CRITICAL.values():
        if prefix and text.startswith(prefix):
            text = text[len(prefix):]
            break
    words = _LOOK_BLANKS.sub("#", text.lower()).split()[:_LOOK_WORDS]
    for i, word in enumerate(words):
        if _LOOK_CJK.search(word):
            return " ".join([*words[:i], word[:_LOOK_CJK_CHARS]])
    return " ".join(words)


def _new(kind: str, items: Sequence[Item], base: float, fmt: str = "{}") -> list[_Candidate]:
    return [_Candidate(kind, fmt.format(it.text), it.order, base) for it in items]


def _earlier(items: Sequence[str], classify: Callable[[str], tuple[str, float]]
             ) -> list[_Candidate]:
    """Lines of the previous summary: older than every new line, and weighted as the new
    line of their kind would be, so what mattered then still competes fairly."""
    out: list[_Candidate] = []
    for i, text in enumerate(items):
        kind, base = classify(text)
        named = _NAMED.match(text)
        if (not kind.startswith(("said", "noted")) and named and not error_lines(text)
                and not _binding(text[named.end():])):  # a note of conversation
            # (What the user told an AI weighs as what they say in a work session: by
            # hand "User: The app runs on Python 3.9 …" gave way to the model's
            # "Assistant noted: Ines is working on a Flask app".)
            kind, base = _said_kind(text), (_CRITICAL["said"][1] if text.startswith("User: ")
                                            else _NOTE_BASE + _NOTE_SPAN / 2)
        room = next((r for r in ("said", "noted") if kind.startswith(r)), "")
        out.append(_Candidate(kind, text, _EARLIER + i, base, room,
                              note=kind.startswith(_AS_NOTE)))
    return out


def _binding(note: str) -> bool:
    """Whether a note binds every answer to come: a rule for them, or what someone
    cannot eat or do (see ``_note_lines``). Carried into a summary of work, it keeps the
    weight of its section: by hand (3,072 tokens) a chat about a failing app turned to
    the work layout, and "User: Rule for this project: never add new dependencies, …"
    weighed as any note, below the count of memory calls, and was gone."""
    return is_standing_rule(note) or is_limitation(note)


def _fixed(kind: str, base: float) -> Callable[[str], tuple[str, float]]:
    return lambda _text: (kind, base)


_AS_NOTE = "as note: "  # the kind of a carried line weighed by _as_note


def _as_note(names: tuple[str, ...]) -> Callable[[str], tuple[str, float]]:
    """Between people, a line of the previous summary that no speaker's label marks as a
    note (a model wrote it: "Ana's brother plays the cello", or "has since adopted it at
    the same time") weighs as a note, by what it tells: as a line of its section it
    would outrank every note for good, and a 0.5B model's filler with it."""
    def weigh(text: str) -> tuple[str, float]:
        return (f"{_AS_NOTE}{error_shape(text)}",
                _NOTE_BASE + min(_NOTE_SPAN, salience(text, names, reply=True)))
    return weigh


def _candidates(facts: Facts, previous: dict[str, list[str]], focus_topic: str | None,
                extra_context: str, carried: date | None) -> list[_Line]:
    """Every line the summary could hold, weighed; ``carried``: the session date the
    previous summary stated."""
    names = tuple(facts.participants.values())
    told = _as_note(names) if is_conversation(facts) else None

    def section(name: str, items: Sequence[Item], base: float) -> list[_Line]:
        return _ranked(name, _earlier(previous.get(name, []), told or _fixed("line", base))
                       + _new("line", items, base))

    lines = _goal_lines(facts, previous, focus_topic, carried, told)
    in_goal = {line.order for line in lines if line.order >= 0}  # asks the Goal quotes
    goal = [text_stems(line.text) for line in lines
            if not line.text.startswith((_PARTICIPANTS, _SESSION_DATE, _FOCUS))]
    lines += section("Constraints & Preferences", facts.preferences, 90)
    lines += _progress_lines(facts, previous, told)
    lines += section("Key Decisions", facts.decisions, 80)
    if is_conversation(facts):  # a pair is worth what its answer tells
        # The previous summary's pairs compete too, older than every new one (C10: a
        # live chat lost each pair at its next compaction, however much room was left).
        earlier = [Item(text, _EARLIER + i)
                   for i, text in enumerate(previous.get("Resolved Questions", []))]
        lines += _ranked("Resolved Questions", [
            _Candidate(f"pair {item.order}", item.text, item.order, _NOTE_BASE - _PAIR_COST
                       + min(_NOTE_SPAN, _pair_salience(item.text, names)), note=True)
            for item in [*earlier, *facts.resolved]])
    else:
        lines += section("Resolved Questions", facts.resolved, 60)
    lines += _ranked("Pending User Asks", _new("ask", facts.pending, 85))
    lines += _file_lines(facts, previous.get("Relevant Files", []))
    lines += section("Remaining Work", facts.remaining, 58)
    critical = _earlier(previous.get("Critical Context", []), told or _critical_kind)
    critical += _earlier(previous.get("Other", []), told or _fixed("other", 55))
    critical += _new("error", facts.errors, _CRITICAL["error"][1])
    # In a chat (no tool but memory and session search), a link or a setting only the
    # assistant wrote is its suggestion, often made up: by hand the embedded model's
    # "http://www.rotterdamnews.nl/" held a line of a 100-token summary over the movers'
    # date for five compactions, and its sample code's "Config: capture_output=True" a
    # user's rule. Between people it ranks below every note; in a chat about work, as
    # the assistant's other notes.
    suggested = set() if facts.worked else facts.ai_values - facts.user_values
    low = _TALK_TOOL_BASE if is_conversation(facts) else _CRITICAL["noted"][1]
    for kind, items in (("config", facts.config_values), ("url", facts.urls),
                        ("command", facts.commands)):
        prefix, base = _CRITICAL[kind]
        critical += [_Candidate(kind, prefix + item.text, item.order,
                                low if item.text in suggested else base) for item in items]
    if extra_context.strip():
        prefix, base = _CRITICAL["provider"]
        critical.append(_Candidate("provider", prefix + one_line(extra_context, 600),
                                   facts.turns, base))
    lines += _ranked("Critical Context", critical)
    lines += _note_lines(facts, in_goal, goal)
    lines += _tool_lines(facts, previous.get("Tools & Patterns", []))
    return lines


# Where a note of conversation goes (C18): a dated timeline of events under Done, what
# each participant likes under Preferences, plans and changes under Decisions, the rest
# — facts about the speaker — under Critical Context.
_NOTE_SECTIONS = {"event": "Progress/Done", "preference": "Constraints & Preferences",
                  "plan": "Key Decisions", "fact": "Critical Context"}
# A note weighs from just below read files (45) to just below every kind a pattern
# recognised (55), by its salience: notes compete among themselves for what is left.
_NOTE_BASE = 38.0
_NOTE_SPAN = 16.0
_RULE_BASE = 90.0  # a rule for the assistant's answers (Constraints & Preferences)
_PAIR_COST = 6.0  # a pair repeats its answer's note and pays for the question
_TALK_TOOL_BASE = _NOTE_BASE - 8  # a chat's count of memory calls: below every note
_NAMED = re.compile(r"^(?:\d{1,2} \w{3,9} \d{4} · )?[A-Z][\w .'’-]{0,40}: ")


def _pair_salience(line: str, names: tuple[str, ...]) -> float:
    """What a Resolved Questions pair tells per character: its answer's salience (a
    reply, by definition), spread over the question it also pays for."""
    answer = line.rsplit(" → ", 1)[-1]
    return salience(answer, names, reply=True) * (len(answer) + 10) / (len(line) + 10)


def _of_conversation(previous: dict[str, list[str]]) -> bool:
    """True when ``previous`` (a summary's sections) is the summary of a conversation: its
    Goal names the participants, or its notes carry the unnamed speakers' labels (a work
    session's are "User said: ", …), or its timeline dates a line."""
    if any(line.startswith(_PARTICIPANTS) for line in previous.get("Goal", [])):
        return True
    return any(line.startswith(("User: ", "Assistant: ")) or TIMELINE_DAY.match(line)
               for section in _NOTE_SECTIONS.values()
               for line in previous.get(section, [])) or _talk_in_work_layout(previous)


def _talk_in_work_layout(previous: dict[str, list[str]]) -> bool:
    """True when ``previous`` is laid out as a work session's summary but no work was
    done in its turns: no file, no command or config value, no tool but the talk tools
    (``TALK_TOOLS``). A live chat in a small window compacts two or three texts at a
    time, too few to tell a chat (``is_talk``); seen by hand, its first summary was a work
    session's, so each next one was too, and the user's facts went under a Goal line
    that the next compaction dropped. Whether its turns are talk is still told from
    their text (``is_talk``: a coding question shows work)."""
    if not previous or previous.get("Relevant Files"):
        return False
    if any(line.startswith(("Command: ", "Config: "))
           for line in previous.get("Critical Context", [])):
        return False
    for line in previous.get("Tools & Patterns", []):
        match = TOOL_COUNT.match(line.strip("[]"))
        if match is None or match.group(1) not in TALK_TOOLS:
            return False
    return True


# A line in the user's own words: "I'm …", "I work …", "We now live …", "My …".
_FIRST_PERSON_WORDS = "I|I'm|I’m|I've|We|We're|We’re|We've|My|Our"
_FIRST_PERSON = re.compile(rf"(?:{_FIRST_PERSON_WORDS})\s")


def _without_taken_back(facts: Facts, previous: dict[str, list[str]]
                        ) -> dict[str, list[str]]:
    """``previous`` without the lines (of sections carried whole: a model's Goal, …) that
    name what a correction among the new notes took back ("it's Porto now, not Lisbon":
    ``salience.undone_names``). By hand a model's Goal line, "… recipes for beagles in
    Lisbon.", outlived the correction in every later local merge. A line that takes it
    back itself stays."""
    undone = {key[1:] for note in facts.notes for key in note.keys if key.startswith("!")}
    if not undone:
        return previous
    return {section: [line for line in lines if undone_names(line)
                      or not undone & content_words(line)]
            for section, lines in previous.items()}


def _without_changed_values(facts: Facts, previous: dict[str, list[str]]
                            ) -> dict[str, list[str]]:
    """``previous``, and the pairs, decisions and preferences of ``facts``, as they stand
    after the newer corrections that take back an amount, a day or a month they name,
    about the same thing (``notes.value_change``): "We'll stay 10 days instead of 12."
    takes back "How long will you stay? → Twelve days." (both stood in a trip chat's
    summary), and marks the change in a line that still holds for the rest. (Notes are
    taken back in ``notes.latest_notes``, by speaker; a line here has none, so any
    correction counts.)"""
    by_notes = [(change_of(note.text, note.order), key[1:], note.role)
                for note in facts.notes for key in note.keys if key.startswith("~")]
    changes = [(change, value) for change, value, _ in by_notes]
    for items in (facts.decisions, facts.preferences, facts.resolved):
        changes += [(change_of(item.text, item.order), value) for item in items
                    for value in undone_values(item.text)]
    if not changes:
        return previous
    # An AI assistant's answer cannot take back what the user corrected before the
    # question either (by hand: "How many nights are we staying? → The hotel is booked
    # two nights for 240 euros." after "Actually we booked three nights now, not two";
    # see ``notes._ai_notes_corrected``).
    earlier = [(change, value) for change, value, role in by_notes
               if role == "user"] if is_ai_assistant(facts) else []

    def changed(text: str, order: int, answer: bool = False) -> str | None:
        """``text`` as it stands after the corrections later than ``order`` (and, for an
        AI's answer, the user's before it)."""
        later: dict[tuple[str, str], list[Change]] = {}
        for change, value in changes:
            if change.at > order:
                later.setdefault(("", value), []).append(change)
        for change, value in earlier if answer else ():
            if change.at < order:
                later.setdefault(("", value), []).append(change)
        return _by_sentence(text, lambda part: _value_revised(part, later)) if later else text

    for name in ("decisions", "preferences", "resolved"):
        setattr(facts, name, [Item(text, item.order) for item in getattr(facts, name)
                              if (text := changed(item.text, item.order,
                                                  name == "resolved")) is not None])
    return {section: [text for line in lines if (text := changed(line, -1)) is not None]
            for section, lines in previous.items()}


def _value_revised(sentence: str, changed: dict[tuple[str, str], list[Change]]) -> str | None:
    """``sentence`` after the corrections ``changed``: None when it no longer holds, the
    sentence with the change marked when it holds but for a value (``value_change``)."""
    found = value_change(sentence, text_stems(sentence), "", changed)
    return sentence if found is None else found[1] or None


# A summary line's label: "User: ", "Caroline: ", "8 May 2023 · Caroline: ".
_LINE_LABEL = re.compile(r"^(?:\d{1,2} [A-Z][a-z]{2} \d{4} · )?[^:→\n]{1,40}: ")


def _by_sentence(text: str, revise: Callable[[str], str | None]) -> str | None:
    """``text`` (a summary line: a label, then the sentences of one speaker's notes) with
    ``revise`` applied to each sentence, None when none is left; a pair ("… → …") is
    revised whole. A line holds many notes: one that no longer holds takes only itself
    out."""
    if "→" in text:
        return revise(text)
    label = _LINE_LABEL.match(text)
    head = label.group() if label else ""
    parts = marked_sentences(text[len(head):])
    kept = [revised for part in parts if (revised := revise(part)) is not None]
    if kept == parts:
        return text
    return f"{head}{' '.join(kept)}" if kept else None


def revised_by_later(summary: str, later: Sequence[Message]) -> str:
    """``summary`` as it stands after the corrections the user makes in ``later`` (the
    turns kept whole after it): a line naming what one takes back goes ("it's Porto now,
    not Lisbon"), and so does one whose amount, day or month it takes back — or the
    change is marked in it (``notes.value_change``) — sentence by sentence, as a line
    holds many notes; an AI assistant's line that retold the changed plan goes with the
    user's (``notes.retold_change``). By hand (3,072 tokens) the user's
    "Actually our budget is now 3500 euros, not 4000." was the newest turn, kept whole,
    while the summary beside it still said "Our budget is about 4000 euros", and the
    embedded model answered 4000. Only the user's turns count: an assistant's "Lisbon
    instead of Porto might be better" corrects nothing."""
    said = [content_text(m) for m in later if m.get("role") == "user"]
    names = {name for text in said for name in undone_in(text)}
    by_value: dict[tuple[str, str], list[Change]] = {}
    # Each correction gets its own mark, which tells the lines it changed apart.
    changes = (change for text in said for change in value_changes(text))
    for number, change in enumerate(changes):
        for old, _, _ in change.swaps:
            by_value.setdefault(("", old), []).append(replace(change, at=number))
    # A thing said to be another value now ("the budget is 21,000 euros now"), by the
    # newest message that says so: by hand "El presupuesto ahora es de 70 euros." stood
    # after a summary that still said 50 euros. (Their marks are apart from the swaps'.)
    updates: dict[tuple[str, str], tuple[int, str]] = {}
    for number, text in enumerate(said):
        for thing, _, _, _ in updates_in(text):
            updates[("", thing)] = (-1 - number, text)
    if not names and not by_value and not updates:
        return summary
    lines = summary.split("\n")
    # A correction's mark → the values of the lines (not the AI's) it changes.
    linked: dict[int, set[str]] = {}

    def link(sentence: str) -> str:
        if (found := value_change(sentence, text_stems(sentence), "", by_value)) is not None:
            linked.setdefault(found[0], set()).update(plain_values(sentence))
        return sentence

    for line in lines if by_value else ():
        if (text := line[2:] if line.startswith("- ") else "") and not _by_the_ai(text):
            _by_sentence(text, link)

    def revise(sentence: str, ai: bool) -> str | None:
        if names and names & content_words(sentence) and not undone_names(sentence):
            return None
        found = None
        if by_value:
            stems = text_stems(sentence)
            found = value_change(sentence, stems, "", by_value)
            if found is None and ai and linked:
                found = retold_change(sentence, stems, "", by_value, linked)
        if found is None and updates:
            found = restated(sentence, content_words(sentence), "", updates)
        return sentence if found is None else found[1] or None

    out: list[str] = []
    for line in lines:
        text = line[2:] if line.startswith("- ") else ""
        if not text or text == _NONE:
            out.append(line)
        elif (revised := _by_sentence(text, partial(revise, ai=_by_the_ai(text)))) is not None:
            out.append(line if revised == text else f"- {revised}")
    return "\n".join(out)


def _by_the_ai(line: str) -> bool:
    """Whether a summary line holds an AI assistant's notes (its label: "Assistant: ",
    "Assistant noted: ", after a timeline day or not). A named assistant is a person,
    whose notes are their own."""
    label = _LINE_LABEL.match(line)
    return label is not None and label.group().rsplit("· ", 1)[-1] in (
        "Assistant: ", _NOTED)


def _notes_carried(facts: Facts, previous: dict[str, list[str]],
                   session_date: date | None = None) -> dict[str, list[str]]:
    """Between people: the previous summary's notes become notes again, older than every
    new one (``carried_notes``), and ``previous`` without them. A live conversation is
    compacted again and again; its old notes compete with the new ones by what they
    tell, and a newer note that repeats or replaces one wins."""
    rest = dict(previous)
    carried: list[Note] = []
    # Everyone who spoke (a group chat has more than one name a role), and the labels
    # of unnamed speakers.
    speakers = {name: role for role, name in facts.participants.items()} | facts.speakers
    # A summary laid out for work (a live chat's first compactions hold too few texts to
    # tell a chat) labels the notes "User said: " and "Assistant noted: ". Going on as a
    # chat, they are the speakers' notes again: else each was carried whole, never
    # ranked again, and by hand an assistant's generic advice outlived the user's facts.
    work_labels = {_SAID: f"{facts.participants.get('user', 'User')}: ",
                   _NOTED: f"{facts.participants.get('assistant', 'Assistant')}: "}
    for number, section in enumerate(_NOTE_SECTIONS.values()):
        lines = [next((speaker + line[len(label):] for label, speaker in work_labels.items()
                       if line.startswith(label)), line)
                 for line in previous.get(section, [])]
        notes, rest[section] = carried_notes(lines, speakers, _EARLIER + 10_000 * number)
        carried += notes
    # A Goal line that says where the user lives or works ("I live in Headingley with
    # my partner Sam", a model's first summary put it there, seen by hand) is a fact of
    # theirs, the oldest: as a note, a newer home or job replaces it (else it stayed the
    # Goal after "we now live in York"). So is, in a chat with an AI assistant, a Goal
    # line in the user's words: a work layout's Goal quotes the user's first message of
    # its turns (a live chat's first compactions hold too few texts to tell a chat), and
    # a conversation's quotes none. By hand (3,072 tokens) "The party is on Saturday the
    # 19th at the Zuiderpark pavilion, starting at 19:00." stood there, and went once
    # the summaries went on as a chat's, the party's day and hour with it. Only those: a
    # model's goal ("help the user plan their marathon") reads as no note of anyone's.
    # Quoted as said, its dates were never resolved: they are now, as the note's would
    # have been ("Wednesday the 16th" stayed undated by hand, the model's retelling dated).
    ai = is_ai_assistant(facts)
    stated = [line for line in previous.get("Goal", [])
              if slot_keys(line) or (ai and _in_users_words(line))]
    if stated:
        user = f"{facts.participants.get('user', 'User')}: "
        notes, _ = carried_notes([user + resolve_relative(line, session_date)
                                  for line in stated], speakers, 2 * _EARLIER)
        carried = notes + carried
        rest["Goal"] = [line for line in previous["Goal"] if line not in stated]
    # So is an unlabelled line in the user's own words about where they live or work,
    # in a chat with an AI assistant: a model's summary copies "I'm Tomas. I work as a
    # pharmacist in Leeds." without a label, and carried whole it outranked, by hand in
    # a 3,072-token window, the newer "I now work at the York hospital pharmacy" (the
    # summary told the old job as the current one).
    if ai:
        user = f"{facts.participants.get('user', 'User')}: "
        for number, section in enumerate(_NOTE_SECTIONS.values()):
            own = [line for line in rest.get(section, [])
                   if _FIRST_PERSON.match(line) and slot_keys(line)]
            if own:
                notes, _ = carried_notes([user + line for line in own], speakers,
                                         _EARLIER + 10_000 * number)
                carried += notes
                rest[section] = [line for line in rest[section] if line not in own]
    if carried:
        facts.notes = latest_notes(carried + facts.notes, ai_assistant=ai)
    return rest


# How a statement in the user's own words opens ("The party is on …", "We invited …"),
# and a model's goal does not ("Plan a surprise party", "To suggest recipes …").
_STATEMENT = re.compile(rf"(?:{_FIRST_PERSON_WORDS}|The|This|It|It's|It’s|He|She|They|His"
                        r"|Her|Their)\s")


def _in_users_words(line: str) -> bool:
    """True for a Goal line that quotes a statement of the user's (see ``_notes_carried``):
    not a question (an ask), nor a line about "the user" or "the conversation"."""
    return (_STATEMENT.match(line) is not None and not line.rstrip().endswith("?")
            and _ABOUT_THE_CHAT.search(line) is None)


# An AI assistant talks to the user, not about "the user" or "the conversation": such a
# sentence of its reply is the summary it was shown, retold (by hand the embedded model
# answered "There are no new invites or questions from the user." and "The conversation
# was brief and focused on her daughter's status.", and both became its notes). Not
# "the user manual" or "the user interface": a thing, not the person.
_ABOUT_THE_CHAT = re.compile(
    r"\bthe (?:user(?!\s+(?:manual|guide|interface|experience|account|name|id|agreement"
    r"|group|forum|base|reviews?|rating)s?\b)|(?:current |previous |earlier )?conversation)\b",
    re.IGNORECASE)


def _note_lines(facts: Facts, in_goal: set[int],
                goal: Sequence[frozenset[str]] = ()) -> list[_Line]:
    """Notes of conversation. Between people (``is_conversation``) they fill the
    sections by kind and rank by salience; in a work session they are what the user
    said and the assistant noted beside the work, under Critical Context, all of one
    weight (a statement made once is not outranked by the twentieth look-alike step).
    ``goal``: the stems (``text_stems``) of each Goal line, which an AI assistant's note
    made only of their words restates."""
    talk = is_conversation(facts)
    names = tuple(facts.participants.values())
    # A named assistant is a person in the conversation, whose facts weigh as the
    # user's; an unnamed one is the AI, whose remarks rank just below what it was told.
    person = facts.participants.get("assistant", "Assistant") != "Assistant"
    by_section: dict[str, list[_Candidate]] = {}
    groups: dict[str, int] = {}
    # Rare words rank notes between people only: a work session does not count them.
    rares = rare_words(facts.notes) if talk else [0.0] * len(facts.notes)
    # An open ask is printed under Pending User Asks (it weighs more than any note): as
    # a note too it would take the room twice (by hand, a 3,072-token chat's summary
    # had "What should I eat before a long run?" in both).
    pending = {item.text for item in facts.pending}
    for seq, (note, rare) in enumerate(zip(facts.notes, rares, strict=True)):
        if note.role == "user" and note.order in in_goal:
            continue  # the Goal quotes that message
        if note.text in pending:
            continue
        if talk and not person and note.role == "assistant" and (
                _ABOUT_THE_CHAT.search(note.text) or knows_nothing(note.text)):
            continue
        if goal and not person and note.role == "assistant" and (
                stems := note_stems(note)) and any(stems <= line for line in goal):
            # An AI's restatement of the Goal tells nothing the Goal does not: by hand
            # (3,072 tokens) the embedded model answered "When are we moving?" with the
            # Goal line word for word, and in a summary squeezed to three lines that
            # took the place of "The van costs 380 euros, not 420."
            continue
        room = "said" if note.role == "user" else "noted"
        label = (f"{note.speaker}: " if talk or note.speaker not in ("User", "Assistant")
                 else _SAID if room == "said" else _NOTED)
        # Between people, a speaker's neighbouring notes share the label; in a work
        # session only the notes of one message do.
        merge, head, who = (label if talk else f"{label}|{note.order}"), len(label), ""
        if talk and note.kind == "event" and note.day:  # the timeline: one line a day
            day = f"{note.day} · "
            merge, head, who, label = f"day|{note.day}", len(day), label, day + label
        kind = ("noted " if room == "noted" else "") + _said_kind(note.text)
        rule = False
        if talk:
            # A note carried from the previous summary (its order is before every turn)
            # was kept by a ranking that knew whether it answered a question; read back,
            # that is lost, so it keeps the benefit (else every new reply outranks it).
            reply = note.order < 0 or note.order in facts.replies
            score = note.salience(names, rare=rare, reply=reply)
            if score <= 0:  # no content word left (salience.py)
                continue
            # What the user told an AI assistant in place of an older note ("I now work
            # at the York hospital pharmacy" after "I work in Leeds") is the one it must
            # not miss: its memory may still hold the old one (by hand, in a 3,072-token
            # chat, shorter notes took the room and the new job never reached a
            # summary). Between people every fact is someone's news: they rank as notes.
            replaced = note.replaced and not person and note.role == "user"
            gain = _NOTE_SPAN if replaced else min(_NOTE_SPAN, score)
            base = _NOTE_BASE + gain - (room == "noted" and not person)
            section = _NOTE_SECTIONS[note.kind]
            if not person and note.role == "user" and (
                    is_standing_rule(note.text) or is_limitation(note.text)):
                # A rule the user set for an AI assistant's answers ("please only
                # suggest vegetarian recipes") binds every answer to come: it weighs as
                # a rule does in a work session, and is no restatement of the turns.
                # So does what the user and theirs must not eat ("Carlos is vegetarian,
                # and I can't eat shellfish.") or cannot do ("Mia is afraid of heights"),
                # which every suggestion has to respect.
                # Nor is it left out because another line mentions its words: a rule
                # stated only in passing elsewhere is no rule (``_fit``'s ``known``).
                rule, gain, base, room = True, 0.0, _RULE_BASE, ""
                section = "Constraints & Preferences"
        else:
            gain, base, section = 0.0, _CRITICAL[room][1], "Critical Context"
        text = condensed(note.text) if talk else note.text
        # Between people, each participant's facts are printed together (the label
        # once); the timeline stays in the order things happened.
        group = groups.setdefault(note.speaker, len(groups) + 1) if talk and not who else 0
        by_section.setdefault(section, []).append(_Candidate(
            kind, label + text, note.order, base, room, merge, seq, head, who,
            note.words if talk and not rule else frozenset(), gain, group, talk))
    return [line for section, candidates in by_section.items()
            for line in _ranked(section, candidates)]


# Critical Context lines by kind: (prefix, base weight). "said" is whatever else the user
# said: below every kind a pattern recognised (>= 55), above files that were only read
# (45) or mentioned (35) — a tool can read a file again, nothing recovers what the user
# said once it is summarised away.
_CRITICAL = {"error": ("", 76.0), "config": ("Config: ", 70.0), "url": ("URL: ", 64.0),
             "command": ("Command: ", 60.0), "provider": ("From memory providers: ", 66.0),
             "said": (_SAID, 50.0), "noted": (_NOTED, 47.0)}


def _critical_kind(text: str) -> tuple[str, float]:
    for kind, (prefix, base) in _CRITICAL.items():
        if prefix and text.startswith(prefix):
            shape = _said_kind(text[len(prefix):])
            return {"said": shape, "noted": "noted " + shape}.get(kind, kind), base
    return "error", _CRITICAL["error"][1]


@lru_cache(maxsize=65_536)
def _said_kind(text: str) -> str:
    """Lines of one shape ("step 3: refactor a3.py", "step 4: …" — numbers blanked)
    compete among themselves by recency; a statement made once keeps its full weight,
    however old it is and however many summaries it has been carried through."""
    return f"said {error_shape(text)}"


def _goal_lines(facts: Facts, previous: dict[str, list[str]], focus_topic: str | None,
                carried: date | None,
                told: Callable[[str], tuple[str, float]] | None = None) -> list[_Line]:
    # A new latest request replaces the old one; without one, the old one still holds.
    earlier = _fresh_only(previous.get("Goal", []), *((_LATEST,) if facts.asks else ()),
                          _FOCUS, _PARTICIPANTS, _SESSION_DATE)
    lines = [_Line("Goal", text, _EARLIER + i, told(text)[1], note=True) if told
             else _Line("Goal", text, _EARLIER + i, 100) for i, text in enumerate(earlier)]
    if any(name not in ("User", "Assistant") for name in facts.participants.values()):
        who = ", ".join(f"{name} ({role})" for role, name in sorted(
            facts.participants.items(), key=lambda p: p[0] != "user"))
        lines.append(_Line("Goal", f"{_PARTICIPANTS}{who}", 2 * _EARLIER, 100))
    dated = facts.dated or carried
    if dated is not None:
        lines.append(_Line("Goal", f"{_SESSION_DATE}{format_date(dated)}", 2 * _EARLIER, 100))
    if is_conversation(facts):
        # People talking, no work being done: the notes say what it was about; quoting
        # the first and latest message would only repeat two of them.
        return lines + ([_Line("Goal", f"{_FOCUS}{focus_topic}", 2 * _EARLIER, 100)]
                        if focus_topic else [])
    quoted = bool(facts.asks) and not any(not e.startswith(_LATEST) for e in earlier)
    if quoted:
        lines.append(_Line("Goal", facts.asks[0].text, facts.asks[0].order, 100))
    # (The latest request is not quoted again when it is the one just quoted: by hand a
    # 120-token summary spent a fifth of its room on the same line twice.)
    if facts.asks and (facts.asks[-1].text != facts.asks[0].text or (previous and not quoted)):
        latest = facts.asks[-1]
        lines.append(_Line("Goal", f"{_LATEST}{latest.text}", latest.order, 95))
    if focus_topic:
        lines.append(_Line("Goal", f"{_FOCUS}{focus_topic}", 2 * _EARLIER, 100))
    return lines


def _carried_date(previous: dict[str, list[str]]) -> date | None:
    """The latest session date ``previous`` (a summary's sections) states, if any."""
    return next((find_date(line) for line in previous.get("Goal", [])
                 if line.startswith(_SESSION_DATE)), None)


def _latest_request_said(facts: Facts, previous: dict[str, list[str]]
                         ) -> dict[str, list[str]]:
    """``previous`` with the latest request its Goal quoted, which the new one replaces
    there (``_goal_lines``), moved under Critical Context as what the user said: the
    message was quoted instead of noted, and is nowhere else. Seen by hand in a small
    window, a chat compacted a few texts at a time: "Joe and I moved to York last week"
    was the latest request of one summary and gone from the next."""
    goal = previous.get("Goal", [])
    replaced = [line[len(_LATEST):] for line in goal if line.startswith(_LATEST)]
    if not facts.asks or not replaced:
        return previous
    label = (f"{facts.participants.get('user', 'User')}: " if is_conversation(facts)
             else _SAID)
    return {**previous, "Goal": _fresh_only(goal, _LATEST),
            "Critical Context": [*previous.get("Critical Context", []),
                                 *(label + text for text in replaced)]}


def _fresh_only(items: list[str], *prefixes: str) -> list[str]:
    """Earlier lines without the ones a new compaction replaces."""
    return [item for item in items if not item.startswith(prefixes)]


# A Done line of a call to a tool of talk, as ``_progress_lines`` writes it in a work
# session: "memory target=user action=add content=…".
_TALK_ACTION = re.compile(rf"^(?:{'|'.join(sorted(TALK_TOOLS))}) \w+=")


def _progress_lines(facts: Facts, previous: dict[str, list[str]],
                    told: Callable[[str], tuple[str, float]] | None = None) -> list[_Line]:
    weights = {"write": 60.0, "run": 55.0, "other": 55.0, "read": 45.0}
    done: list[_Candidate] = []
    blocked: list[_Candidate] = []
    reads: Counter[str] = Counter()
    last_read: dict[str, int] = {}
    earlier_done: list[str] = []
    talk = is_conversation(facts)
    for line in previous.get("Progress/Done", []):
        match = _READ_COUNT.match(line)
        if match and talk and match.group(1) in TALK_TOOLS:
            continue  # a chat counts its searches under Tools & Patterns only
        if match:  # carried forward by adding the counts up
            reads[match.group(1)] += int(match.group(2))
            last_read.setdefault(match.group(1), _EARLIER)
        else:
            earlier_done.append(line)
    if talk:  # nor a memory call an earlier summary listed (one made before it was a chat)
        earlier_done = [line for line in earlier_done if not _TALK_ACTION.match(line)]
    for key, note in facts.actions.items():
        if note.name in TALK_TOOLS and (talk or note.last_failed):
            # In a chat what was saved is in the notes already; a refused memory write
            # blocks nothing of the user's, and its entry is what the model made up
            # ("I'm Lisa …", by hand). The count under Tools says both.
            continue
        if note.last_failed:
            blocked.append(_Candidate("blocked", f"{key} → {note.last_error}", note.last, 74))
        elif note.kind == "read":  # one line per reading tool: the files are listed below
            reads[note.name] += note.count
            last_read[note.name] = max(note.last, last_read.get(note.name, note.last))
        else:
            count = f" (×{note.count})" if note.count > 1 else ""
            done.append(_Candidate(note.kind, f"{key}{count}", note.last, weights[note.kind]))
    # The assistant's own reading tools (session search, memory) read no file.
    done += [_Candidate("read", f"{name}: {n} call{'s' if n > 1 else ''}"
                        + ("" if name in TALK_TOOLS else " (see Relevant Files)"),
                        last_read[name], weights["read"]) for name, n in reads.items()]
    done += _earlier(earlier_done, told or _fixed("other", weights["other"]))
    in_progress = _earlier(_fresh_only(previous.get("Progress/In Progress", []), _LAST_STEP),
                           _fixed("earlier", 40))
    if facts.last_intent is not None and not talk:
        in_progress.append(_Candidate("last", f"{_LAST_STEP}{facts.last_intent.text}",
                                      facts.last_intent.order, 62))
    blocked += _earlier(previous.get("Progress/Blocked", []), _fixed("earlier", 50))
    return (_ranked("Progress/Done", done) + _ranked("Progress/In Progress", in_progress)
            + _ranked("Progress/Blocked", blocked))


def _file_lines(facts: Facts, earlier: list[str]) -> list[_Line]:
    fresh = set(facts.files)
    candidates: list[_Candidate] = []
    for path, note in facts.files.items():
        kind, base = _file_kind(note)
        candidates.append(_Candidate(kind, _file_text(path, note), note.last, base))
    candidates += _earlier([e for e in earlier if e.split(" (", 1)[0] not in fresh],
                           _file_kind_of_text)
    return _ranked("Relevant Files", candidates)


def _file_kind(note: FileNote) -> tuple[str, float]:
    if note.actions["written"]:
        return "written", 70.0
    if note.by_user:
        return "user", 68.0
    return ("read", 45.0) if note.actions["read"] else ("mentioned", 35.0)


def _file_kind_of_text(text: str) -> tuple[str, float]:
    notes = text.rsplit(" (", 1)[-1]
    if notes.startswith("written"):
        return "written", 70.0
    if "named by the user" in notes:
        return "user", 68.0
    return ("read", 45.0) if notes.startswith("read") else ("mentioned", 35.0)


def _file_text(path: str, note: FileNote) -> str:
    parts = [f"{action} ×{n}" if n > 1 else action
             for action in ("written", "read") if (n := note.actions[action])]
    if not parts:
        parts.append("mentioned")
    if note.by_user:
        parts.append("named by the user")
    return f"{path} ({', '.join(parts)})"


def _tool_lines(facts: Facts, earlier: list[str]) -> list[_Line]:
    counts: Counter[str] = Counter(facts.tools)
    failures: Counter[str] = Counter(facts.tool_failures)
    other: list[str] = []
    for line in earlier:
        match = TOOL_COUNT.match(line.strip("[]"))  # a model writes "[memory ×2]" too
        if match:
            # One name however a model summary spelt it ("Memory ×7" beside "memory ×9",
            # by hand): tool names are lower case.
            name = match.group(1).lower()
            counts[name] += int(match.group(2))
            failures[name] += int(match.group(3) or 0)
        else:
            other.append(line)
    candidates = _earlier(other, _fixed("other", 45))
    # That the assistant saved or searched its memory tells less than any note: such a
    # count competes as a note, below every other, and is printed only where room is
    # left (a 3,072-token window's summary kept "memory ×4" and left out where the user
    # works; in a chat about work, it outranked the user's rule).
    # Most used first: the order is the negative count, so the decay follows usage.
    for rank, (name, n) in enumerate(counts.most_common()):
        aside = name in TALK_TOOLS
        candidates.append(_Candidate(
            "tool", f"{name} ×{n}" + (f" ({failures[name]} failed)" if failures[name] else ""),
            -rank, _TALK_TOOL_BASE if aside else 52, note=aside))
    return _ranked("Tools & Patterns", candidates)
