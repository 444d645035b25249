"""Notes: the sentences of a conversation worth keeping, with who said them and when.

``extract.py`` gives every sentence that no coding pattern claimed to ``take_notes``:
phatic text is dropped, leading interjections are cut, relative dates are resolved
against the session date, and what is left becomes a ``Note`` with its salience and
kind (``salience.py``). ``latest_notes`` then drops near-identical notes and notes
about the same thing ("my dog's name is …") that a newer note of the same speaker
replaces, in one pass from the newest.

``carried_notes`` reads the notes of a previous summary back ("8 May 2023 · Caroline:
a. b. Melanie: c."): at the next compaction of a live conversation they compete with
the new notes as equals — ranked by what they tell, deduplicated against newer ones —
instead of as lines of one flat weight that only ever lose ground.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache

from mnemo.context.summary.dates import (
    RESOLVED_DATE,
    WEEKDAYS,
    day_ahead,
    format_date,
    resolve_relative,
)
from mnemo.context.summary.other_languages import is_day_number
from mnemo.context.summary.salience import (
    cjk_runs,
    clean,
    fact_key,
    is_foreign_correction,
    is_phatic,
    kind,
    names_in,
    replacements,
    salience,
    same_kind,
    slot_keys,
    stated_values,
    subject_key,
    undone_names,
    undone_values,
    updated_things,
    value_swaps,
    values_in,
    without_phatic_clauses,
)
from mnemo.context.textscan import (
    CJK_CLASS,
    STOPWORDS,
    cjk_bigrams,
    one_line,
    sentences,
    without_markdown,
)
from mnemo.languages import FUNCTION_WORDS
from mnemo.memory.grounding import NUMBER_WORDS
from mnemo.textjson import json_objects

__all__ = ["CHANGE_MARK", "TIMELINE_DAY", "Change", "Note", "answer_text", "asked_stems",
           "carried_notes", "change_of", "content_words", "echoes", "latest_notes",
           "marked_sentences", "note_stems", "plain_values", "rare_words", "restated",
           "retold_change", "stems_of", "take_notes", "text_stems", "told_in",
           "updated_value", "updates_in", "value_change", "value_changes"]

# A word of any alphabet but CJK (whose text has no spaces: ``content_words``), so
# "sábado" is one word and not "bado"; ASCII text has the same words by a pattern that
# costs a third.
_LETTER = f"[^\\W\\d_{CJK_CLASS}]"
_WORD = re.compile(f"{_LETTER}(?:{_LETTER}|['’]){{2,}}|\\d+")
_ASCII_WORD = re.compile(r"[a-z][a-z'’]{2,}|\d+")
_MIN_CHARS = 6  # shorter, a sentence tells nothing a reader needs ("Ok.", "Me too.")
# What French and Italian elide before a word ("l'examen", "dell'esame", "qu'elle"); an
# English contraction ("don't", "I'm") keeps its words. An apostrophe before a word of
# three letters is searched for, and the word before it looked up: English text has
# few such apostrophes, and a search of the elisions themselves costs ten times more.
_ELISIONS = frozenset(("l", "d", "j", "m", "n", "s", "t", "c", "qu", "dell", "all", "nell",
                       "dall", "sull", "un", "quest", "quell"))
_BEFORE_A_WORD = re.compile(r"['’](?=[^\W\d_]{3})")


def _without_elisions(low: str) -> str:
    """``low`` without the elided articles and prepositions (``_ELISIONS``) in it."""
    kept: list[str] = []
    done = 0
    for mark in _BEFORE_A_WORD.finditer(low):
        start = mark.start()
        while start > done and low[start - 1].isalpha():
            start -= 1
        before = low[start - 1] if start else " "
        if low[start:mark.start()] in _ELISIONS and not before.isalnum() and before not in "'’":
            kept.append(low[done:start])
            done = mark.end()
    return "".join(kept) + low[done:] if kept else low


@lru_cache(maxsize=65_536)
def _kind(text: str) -> str:
    return kind(text)


@dataclass(frozen=True)
class Note:
    """One sentence worth keeping: ``kind`` is event / preference / plan / fact."""

    speaker: str
    role: str  # user / assistant
    text: str
    order: int
    day: str  # the session date ("8 May 2023"), or ""
    soft: bool = False  # it matched a preference's or decision's words (reading.py)
    keys: tuple[str, ...] = ()  # what a newer note that repeats or replaces it shares
    words: frozenset[str] = frozenset()  # its content words, for ``rare_words``
    # It replaced an older note ("I now work at …": ``latest_notes``), or it takes a value
    # or a name back itself ("three nights now, not two"): a correction keeps its rank
    # when what it corrected is gone (a summary read back keeps only the correction).
    replaced: bool = False

    def at(self, order: int) -> Note:
        """The same note, for a message at ``order`` (a cached reading is reused)."""
        if order == self.order:
            return self
        # A copy of the fields, not ``__init__``: a frozen dataclass sets each field
        # through ``object.__setattr__``, and a live session's compaction makes one copy
        # per note of every message it has read before.
        copy = object.__new__(Note)
        fields = copy.__dict__
        fields.update(self.__dict__)
        fields["order"] = order
        return copy

    @property
    def kind(self) -> str:
        """``event``, ``preference``, ``plan`` or ``fact`` (``salience.kind``)."""
        return _kind(self.text)

    def salience(self, names: tuple[str, ...], *, rare: float = 0.0,
                 reply: bool = False) -> float:
        """What it tells a later reader (``salience.salience``): computed when a
        conversation between people is ranked, never for a work session's notes."""
        return salience(self.text, names, rare=rare, reply=reply)


def take_notes(sentences: Iterable[str], *, speaker: str, role: str, order: int,
               today: date | None, names: Sequence[str], soft: bool = False,
               checked: bool = False, day: str = "", focus: date | None = None
               ) -> list[Note]:
    """The notes of one message's sentences (see the module docstring); ``checked``:
    the sentences are known not to be phatic (``reading.py`` tested them already);
    ``day``: the notes' date when there is no ``today`` to resolve against (notes read
    back from a summary, their relative dates resolved already); ``focus``: the day to
    come the conversation named last (``dates.resolve_relative``), then each note's."""
    day = format_date(today) if today else day
    notes: list[Note] = []
    names = tuple(names)
    for raw in sentences:
        # A JSON object opening a sentence, which a small model writes before its words
        # as a tool call's arguments ('{"target": "session_search"} Gas is more …', by
        # hand at 3,072 tokens), is no part of what it tells, and the model imitates it
        # in its next answers when the summary keeps it.
        if raw.startswith("{") and (opening := json_objects(raw)) and opening[0][0] == 0:
            raw = raw[opening[0][1]:].strip()
        # An AI telling how it searched, or copying its memory tool's description ("…
        # your name, preferences and habits (target user); …"): no fact of anyone's. (A
        # user's sentence about the tool may be one, in a session that works on it.)
        if not raw or (role == "assistant" and _TOOL_TALK.search(raw)):
            continue
        noted = _noted(raw, today, names, checked, focus)
        if noted is not None:
            focus = day_ahead(noted[0], today) or focus
            # The fields set directly, as ``Note.at`` does: a first reading of a long
            # transcript makes a note for most of its sentences.
            note = object.__new__(Note)
            note.__dict__.update(speaker=speaker, role=role, text=noted[0], order=order,
                                 day=day, soft=soft, keys=noted[1], words=noted[2],
                                 replaced=_corrects(noted[0], noted[1]))
            notes.append(note)
    return notes


def _corrects(text: str, keys: tuple[str, ...]) -> bool:
    """True when a note of ``text`` and ``keys`` takes a value or a name back in its own
    words ("three nights now, not two"), says what a thing is now ("the budget is 21,000
    euros now": ``updated_things``), or puts one thing in the place of another
    ("Sophie will host it at her place instead of my flat"), not by a mark a summary
    gave it."""
    if CHANGE_MARK in text:
        return False
    if any(key[0] in "~!^" for key in keys):
        return True
    return ("instead of" in text or "rather than" in text) and (
        _IN_PLACE_OF.search(text) is not None)


# What a thing is put in the place of, when it is no name nor value (``undone_names``,
# ``undone_values`` take those back): "instead of my flat", "rather than the pavilion".
# Nothing older is taken back for it (a common noun names too much), but the note is a
# change of plan, and ranks as one. By hand (3,072 tokens) "Sophie will host it at her
# place on Biltstraat 45 instead of my flat." gave way to a bakery's discount, and the
# embedded model sent the book club to the old flat.
_IN_PLACE_OF = re.compile(r"\b(?:instead of|rather than) (?:my|our|the|his|her|their|your)"
                          r" [a-z][\w'-]+")


# Markdown bold, which the embedded model puts around a label ("**Travel**: They are
# traveling …"): its stars are no part of what a note tells, and in a summary's line
# they read as a heading of their own. Bounded.
_BOLD = re.compile(r"\*\*(?=\S)([^*\n]{1,120}?)(?<=\S)\*\*")


# A sentence is noted the same way wherever it stands: an agent's transcript repeats its
# sentences ("Never change the public API.", "All tests pass.") in many messages, which
# the cache of whole messages (``reading.py``) cannot see. Bounded.
@lru_cache(maxsize=65_536)
def _noted(raw: str, today: date | None, names: tuple[str, ...], checked: bool,
           focus: date | None) -> tuple[str, tuple[str, ...], frozenset[str]] | None:
    """The text, keys and content words of the note ``raw`` makes, or None."""
    if not checked and is_phatic(raw, names):
        return None
    if "**" in raw:
        raw = _BOLD.sub(r"\1", raw)
    text = clean(without_phatic_clauses(raw, names))
    if not text:
        return None
    text = one_line(resolve_relative(text, today, focus), 400)
    if len(text) < _MIN_CHARS:
        return None
    # Only a sentence with "my " in it can say what its subject is (``subject_key``).
    subject = subject_key(text) if "my " in text.lower() else None
    keys = (("=" + fact_key(text),) + (("my " + subject,) if subject else ()) + slot_keys(text)
            + tuple("!" + name for name in undone_names(text))
            + tuple("~" + value for value in undone_values(text)))
    if not any(key[0] == "~" for key in keys):
        keys += tuple("^" + thing for thing in updated_things(text))
    return text, keys, content_words(text)


def content_words(text: str) -> frozenset[str]:
    """The content words of ``text`` as a note counts its own (``Note.words``). CJK text
    has no spaces to split on: its words are the overlapping pairs of characters of each
    run, split at pronouns and particles ("我对花生过敏": 对花, 花生, 生过, 过敏), which two
    sentences about the same thing share. (With none, a model summary's lines in Chinese
    had no words, and all were left out as telling nothing: seen by hand.) A French or
    Italian article or preposition elided before a word is no part of it: "l'esame" is
    "esame"."""
    low = text.lower()
    if "'" in low or "’" in low:
        low = _without_elisions(low)
    words = {w for w in (_ASCII_WORD if text.isascii() else _WORD).findall(low)
             if w not in STOPWORDS and w not in FUNCTION_WORDS}
    if not text.isascii():
        words.update(piece[i:i + 2] for run in cjk_runs(text)
                     for piece in _CJK_FUNCTION.split(run) for i in range(len(piece) - 1))
    return frozenset(words)


# Pronouns and particles, which CJK pieces of content are split at: "你对花生过敏" restates
# "我对花生过敏" (pieces of one character tell nothing alone and are dropped).
_CJK_FUNCTION = re.compile("[我你您他她它们的了是也都就很吗呢吧啊呀着]+")


# A text of which another holds this share of the content words is told there already
# ("User: my brother plays the cello" beside "Ana's brother plays the cello").
_TOLD_SHARE = 0.75


def told_in(words: AbstractSet[str], known: AbstractSet[str]) -> bool:
    """True when ``known`` (the content words of another text) tells what a text of
    content ``words`` tells, every number of it too ("On day 5 I visited the museum" is
    not told by "On day 0 I visited the museum"); never for a text without content
    words."""
    return bool(words) and len(words & known) >= _TOLD_SHARE * len(words) and all(
        word in known for word in words if any(c.isdigit() for c in word))


# A timeline line's date ("8 May 2023 · "), as ``format_date`` writes it.
TIMELINE_DAY = re.compile(r"^(\d{1,2} [A-Z][a-z]{2} \d{1,4}) · ")


def carried_notes(lines: Sequence[str], speakers: Mapping[str, str], first_order: int
                  ) -> tuple[list[Note], list[str]]:
    """The notes in a previous summary's ``lines`` of the ``speakers`` (name → role), at
    orders from ``first_order`` on, one order per speaker's stretch of a line; and the
    lines that are no notes of theirs, as they were (see the module docstring)."""
    names = tuple(speakers)
    if not names:
        return [], list(lines)
    # Longest name first: "Jo: " must not cut "Joanna: " short.
    labels = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    label = re.compile(rf"(?:^| )({labels}): ")
    notes: list[Note] = []
    others: list[str] = []
    order = first_order
    for line in lines:
        dated = TIMELINE_DAY.match(line)
        parts = label.split(line[dated.end():] if dated else line)
        if len(parts) < 3 or parts[0].strip():
            others.append(line)
            continue
        for speaker, text in zip(parts[1::2], parts[2::2], strict=True):
            said = [s for s in map(without_markdown, marked_sentences(text)) if s]
            notes += take_notes(said, speaker=speaker,
                                role=speakers.get(speaker, "user"), order=order, today=None,
                                names=names, day=dated.group(1) if dated else "")
            order += 1
    return notes, others


def marked_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (a carried line), each value correction's mark kept
    after the sentence it marks rather than read as a sentence of its own: by hand
    (3,072 tokens) the next compaction marked the sentence again ("… in Amersfoort.
    [Since changed: Friday, not Thursday.] [Since changed: Friday, not Thursday.]"), and
    one after that left the marks standing where the sentence had gone. A mark the
    sentence carries already, or one with no sentence before it, goes."""
    said: list[str] = []
    for at, piece in enumerate(_MARK.split(text)):
        if at % 2 == 0:
            said += sentences(piece)
        elif said and piece not in said[-1]:
            said[-1] = f"{said[-1]} {piece}"
    return said


def answer_text(sentence: str, today: date | None, names: Sequence[str],
                focus: date | None = None) -> str:
    """A reply sentence as a note would keep it (the pair carries it instead)."""
    text = clean(without_phatic_clauses(sentence, names)) or sentence
    return one_line(resolve_relative(text, today, focus), 200)


def latest_notes(notes: Sequence[Note], *, ai_assistant: bool = False) -> list[Note]:
    """``notes`` without those a newer note of the same speaker repeats or replaces, and
    without the assistant's echoes of what the user had just said (``_without_echoes``);
    ``ai_assistant``: the assistant is an AI (no name), whose echo of anything the user
    said before is left out (``_without_restated``, which covers the other)."""
    seen: dict[tuple[str, str], int] = {}  # a key → the newest kept note holding it
    kept: list[Note] = []
    replacing: set[int] = set()
    # A correction (its place in ``kept``) → the values of the user's notes it took a
    # value back from: an AI note holding one of them beside the taken-back value retold
    # the same plan (``_ai_notes_corrected``).
    linked: dict[int, set[str]] = {}
    # A name a newer note of the speaker took back ("Porto now, not Lisbon": a "!" key)
    # → that note: an older note of theirs with the name in it no longer holds.
    undone: dict[tuple[str, str], int] = {}
    gone: list[Note] = []  # the user's notes a newer one repeats, replaces or takes back
    # An amount, day or month a newer note of the speaker took back ("10 days instead of
    # 12": a "~" key) → that note (``change_of``): an older note of theirs about the same
    # thing with that value no longer holds.
    changed: dict[tuple[str, str], list[Change]] = {}
    # A thing a newer note of the speaker says is something else now ("the budget is
    # 21,000 euros now": a "^" key) → that note's place and text: an older note of theirs
    # that said the thing was another value of the kind no longer holds (``restated``).
    updates: dict[tuple[str, str], tuple[int, str]] = {}
    # The character pairs of each speaker's newest kept notes in Chinese (``_near_copy``).
    grams: dict[str, list[frozenset[str]]] = {}
    for note in reversed(notes):
        keys = [(note.speaker, key) for key in note.keys]
        hit = next((k for k in keys if k in seen), None)
        if hit is None and not note.text.isascii():
            pairs = cjk_bigrams(note.text)
            newer = grams.setdefault(note.speaker, [])
            if _near_copy(pairs, newer):
                gone.append(note)
                continue
            newer.append(pairs)
            del newer[:-_NEAR_COPY_WINDOW]
        if hit is None and (changed or updates):
            whose = "user" if ai_assistant and note.role == "assistant" else note.speaker
            found = value_change(note.text, note_stems(note), whose, changed) if (
                changed) else None
            if found is None and updates:
                found = restated(note.text, note.words, whose, updates)
            if found is not None and ai_assistant and note.role == "user":
                linked.setdefault(found[0], set()).update(plain_values(note.text))
            if found is not None and not found[1]:
                replacing.add(found[0])
                gone.append(note)
                continue
            if found is not None:  # still holds, but for the value: marked
                # The correction alone tells the new value: it replaced the old one
                # (by hand, "Actually we booked three nights now, not two, …" gave way
                # in a small summary, and the marked line was left to tell "two").
                replacing.add(found[0])
                note = replace(note, text=found[1])
        if hit is None and undone:
            # (An AI assistant's notes are about the user's plans: "Lisbon is lovely in
            # May" no longer holds either. Between people they are the other's own.)
            whose = "user" if ai_assistant and note.role == "assistant" else note.speaker
            taken = next((name for name in note.words if (whose, name) in undone), None)
            if taken is not None:
                at = undone[(whose, taken)]
                replacing.add(at)
                marked = (_name_marked(note.text, taken, kept[at].text)
                          if note.role == "user" or not ai_assistant else None)
                if marked is None:
                    gone.append(note)
                    continue
                note = replace(note, text=marked)
        if hit is not None:
            if not hit[1].startswith("="):  # not a repeat: the newer note replaced it
                replacing.add(seen[hit])
            gone.append(note)
            continue
        # A "+" key replaces older notes of that key, and no newer note replaces it.
        for who, key in keys:
            if key.startswith("~"):
                entry = change_of(note.text, len(kept), note_stems(note))
                changed.setdefault((who, key[1:]), []).append(entry)
                if ai_assistant and note.role == "user":
                    changed.setdefault(("user", key[1:]), []).append(entry)
            elif key.startswith("!"):
                undone.setdefault((who, key[1:]), len(kept))
                if ai_assistant and note.role == "user":
                    undone.setdefault(("user", key[1:]), len(kept))
            elif key.startswith("^"):
                updates.setdefault((who, key[1:]), (len(kept), note.text))
                if ai_assistant and note.role == "user":
                    updates.setdefault(("user", key[1:]), (len(kept), note.text))
            else:
                seen.setdefault((who, key.lstrip("+")), len(kept))
        kept.append(note)
    kept = [replace(note, replaced=True) if number in replacing else note
            for number, note in enumerate(kept)]
    if ai_assistant and (changed or undone or updates):
        kept = _ai_notes_corrected(kept, changed, linked, undone, updates)
    kept.reverse()
    # An AI's echo of any earlier user note includes one of the message just before.
    return _without_restated(kept, gone) if ai_assistant else _without_echoes(kept)


# An AI's words about its tools: "session_search", its description's "(target user)",
# and "Session search "429" recent:" (by hand, copied into a summary's line).
_TOOL_TALK = re.compile(r"session[_ ]search|\(target ", re.IGNORECASE)


# A note in Chinese that shares this much of its character pairs with a newer note of
# its speaker says the same again in other characters: by hand the embedded model
# restated one sentence three times ("我叫 Nina和我的丈夫Carlos October正在旅行到大阪，
# 十五号从东京回国。", "我是 Nina和我的丈夫 Carlos …"), one character apart, and each
# took a place among the notes (their keys are their runs, and the runs differ). Only
# the newest notes of a speaker are compared: a repeat follows what it repeats closely.
_NEAR_COPY_SHARE = 0.75
_NEAR_COPY_WINDOW = 32


def _near_copy(pairs: frozenset[str], newer: Sequence[frozenset[str]]) -> bool:
    """True when ``pairs`` (a note's CJK character pairs) are mostly those of one of
    ``newer`` (see ``_NEAR_COPY_SHARE``)."""
    if len(pairs) < 4:  # too short to tell a copy from a like sentence
        return False
    return any(len(pairs & other) >= _NEAR_COPY_SHARE * len(pairs | other) for other in newer)


# How a line that still holds, but for a value taken back, is marked (``value_change``).
CHANGE_MARK = "[Since changed: "
_MARK = re.compile(rf"\s*({re.escape(CHANGE_MARK)}[^\]]*\])")


# Words of the change itself, which tell nothing of what changed.
_CHANGE_STEMS = frozenset(("inste", "rathe", "now", "actua", "longe", "moved", "chang",
                           "switc", "pushe", "postp", "resch", "shift"))


@dataclass(frozen=True)
class Change:
    """A correction that took back an amount, a day or a month (``value_swaps``)."""

    at: int  # where it stands: a mark of the caller's (its place, its order)
    about: frozenset[str]  # its stems but its values and the words of the change
    told: frozenset[str]  # the values and names it holds
    swaps: tuple[tuple[str, str, str], ...]  # ``value_swaps``
    # Its longer words, when it is in one of the other languages
    # (``is_foreign_correction``): a compound ending with one is about the same thing,
    # "die Prüfung" of "meine Fahrprüfung", "het examen" of "mijn rijexamen".
    tails: frozenset[str] = frozenset()


def change_of(text: str, at: int, stems: AbstractSet[str] | None = None) -> Change:
    """The correction ``text`` (its stems ``stems``, else read from it) at ``at``: "We'll
    stay 10 days instead of 12." is about "stay days" and tells 10 and 12."""
    values = values_in(text)
    cut = {value[:5] for value in values}
    about = frozenset(stem for stem in (text_stems(text) if stems is None else stems)
                      if stem not in cut and stem not in _CHANGE_STEMS
                      and not stem[:1].isdigit())
    swaps = value_swaps(text)
    tails = frozenset(word for word in content_words(text) if len(word) >= _TAIL
                      and word[:5] in about) if swaps and is_foreign_correction(text) else (
        frozenset())
    return Change(at, about, values | names_in(text), swaps, tails)


# The shortest word a compound may end with (``Change.tails``), and how much longer the
# compound is: "examen" in "rijexamen"; not "sword" in "password".
_TAIL = 6
_HEAD = 3


def _in_compound(text: str, tails: AbstractSet[str]) -> bool:
    """Whether a word of ``text`` is a compound that ends with one of ``tails``."""
    return any(len(word) >= len(tail) + _HEAD and word.endswith(tail)
               for word in content_words(text) for tail in tails)


def value_changes(text: str) -> list[Change]:
    """The corrections of amounts, days and months in ``text``, one a sentence that makes
    any (``value_swaps``): "Actually our budget is now 3500 euros, not 4000." takes back
    4000 of the budget, for 3500."""
    return [change for sentence in sentences(text)
            if (change := change_of(sentence, 0)).swaps]


def text_stems(text: str) -> frozenset[str]:
    """The stems of ``text``'s content words, as a note's (``note_stems``)."""
    return stems_of(content_words(text))


def value_change(text: str, stems: AbstractSet[str], whose: str,
                 changed: Mapping[tuple[str, str], Sequence[Change]]) -> tuple[int, str] | None:
    """What a newer correction does to ``text`` (of ``whose``, about ``stems``) when it
    takes back a value the text names and is about a thing the text is about too: (its
    mark; "" when it tells every other value and name of the text, which then no longer
    holds at all, else the text with the change marked). "We land in Osaka on October
    3rd and fly home on the 15th." after "we land on October 5th instead of the 3rd"
    keeps the city and the return: "… on the 15th. [Since changed: 5th, not 3rd.]"."""
    values = values_in(text)
    for value in values:
        for change in changed.get((whose, value), ()):
            if not change.about & stems and not (change.tails
                                                  and _in_compound(text, change.tails)):
                continue
            if _superseded(text, {value}, change.told):
                return change.at, ""
            old, new = next((w, n) for v, w, n in change.swaps if v == value)
            mark = _change_mark(new, old)
            # A line marked before still names the old value: carried into the next
            # compaction beside its correction, it was marked twice (seen by hand).
            if mark in text:
                return change.at, text
            return change.at, _with_new_amount(text, value, old, new).rstrip() + mark
    return None


def restated(text: str, words: AbstractSet[str], whose: str,
             updates: Mapping[tuple[str, str], tuple[int, str]]) -> tuple[int, str] | None:
    """What a newer note that says a thing is something else now does to ``text`` (of
    ``whose``, its content words ``words``) when the text said the thing was another
    value of the same kind (``updated_value``): as ``value_change`` does, (the newer
    note's mark; "" when the text tells nothing else, else the text with the change
    marked). "Our budget is 18,000 euros." goes after "the budget is 21,000 euros now";
    "… 18,000 euros, and Bram starts on Monday." is marked."""
    if not any((whose, word) in updates or (whose, word[:-1]) in updates for word in words):
        return None
    for thing, _, _, _ in stated_values(text):
        if (whose, thing) not in updates:
            continue
        at, correction = updates[(whose, thing)]
        found = updated_values(text, correction)
        if not found:
            continue
        if _superseded(text, {value for value, _, _ in found},
                       values_in(correction) | names_in(correction)):
            return at, ""
        (_, first, into), *others = found
        mark = _change_mark(into, first, *((new, old) for _, old, new in others))
        if mark in text:
            return at, text
        for value, written, new in found:
            text = _with_new_amount(text, value, written, new)
        return at, _with_new_day(text, found).rstrip() + mark
    return None


@lru_cache(maxsize=1024)
def updates_in(correction: str) -> tuple[tuple[str, str, str, str], ...]:
    """What the sentences of ``correction`` say things are now (``stated_values`` of the
    things ``updated_things`` finds); read once per text: ``updated_value`` asks it of
    every older note or saved entry."""
    return tuple(stated for sentence in sentences(correction)
                 if (things := updated_things(sentence))
                 for stated in stated_values(sentence) if stated[0] in things)


def updated_value(text: str, correction: str) -> tuple[str, str, str] | None:
    """(the value as ``value_word``; as ``text`` writes it; the new value as
    ``correction`` writes it) when ``correction`` says a thing ``text`` states
    (``stated_values``) is another value of the same kind now (``updated_things``):
    "Our budget is 18,000 euros." and "Correction: the budget is 21,000 euros now"
    give ("18,000", "18,000", "21,000"). None when it says no such thing."""
    found = updated_values(text, correction)
    return found[0] if found else None


def updated_values(text: str, correction: str) -> tuple[tuple[str, str, str], ...]:
    """Every value ``updated_value`` finds, in ``text``'s order: "… they come on
    Thursday the 14th at 8:00." after "the movers come on Friday the 15th now" has two
    (the day and the date; the hour still holds). A value the correction states again
    for the thing is no change, even beside another of its kind."""
    newer = updates_in(correction)
    if not newer:
        return ()
    found: list[tuple[str, str, str]] = []
    for thing, of_kind, value, written in stated_values(text):
        alike = [(v, w) for t, k, v, w in newer if t == thing and same_kind(k, of_kind)]
        if alike and all(v != value for v, _ in alike):
            found.append((value, written, alike[0][1]))
    return tuple(dict.fromkeys(found))


# How many days, hours or amounts of its own keep a line whose name was taken back.
_OWN_VALUES = 2


def _name_marked(text: str, name: str, correction: str) -> str | None:
    """``text``, a note naming ``name`` that the newer ``correction`` took back, with
    the change marked when it tells much besides the name: ``_OWN_VALUES`` days, hours
    or amounts the correction does not tell. By hand (3,072 tokens) "The party is on
    Saturday the 19th at the Zuiderpark pavilion, starting at 19:00." went after "it's
    the boathouse at Kralingen now, not the Zuiderpark pavilion", and the party's day
    and hour with it. None for a note that tells less, which goes: kept beside "it's
    Porto now, not Lisbon", "… going to Lisbon in May" had the embedded model answer
    Lisbon, and "May" alone is little to lose."""
    told = values_in(correction)
    if sum(value not in told for value in values_in(text)) < _OWN_VALUES:
        return None
    written = re.search(rf"\b{re.escape(name)}\b", text, re.IGNORECASE)
    if written is None:
        return None
    new = next((new for old, new in replacements(correction) if old == name), "")
    mark = _change_mark(new, written.group())
    return text if mark in text else text.rstrip() + mark


def _change_mark(new: str, old: str, *more: tuple[str, str]) -> str:
    """The mark a line keeps after what a correction took back: " [Since changed: three,
    not two.]", or " [Since changed: not two.]" when it named nothing in its place;
    ``more``: further pairs of new and old values ("[Since changed: Friday, not
    Thursday; 15th, not 14th.]")."""
    pairs = [(new, old), *more]
    return " " + CHANGE_MARK + "; ".join(f"{f'{n}, ' if n else ''}not {o}"
                                         for n, o in pairs) + ".]"


def _with_new_amount(text: str, value: str, old: str, new: str) -> str:
    """``text`` with the amount ``old`` (its value ``value``) it names once written
    ``new``: the mark after it tells what it was. By hand (3,072 tokens) the embedded
    model answered "two nights" from "… we booked two nights for 240 euros. [Since
    changed: three, not two.]": it copies a sentence and leaves its mark. Only the one
    amount of its sentence, though: that one, written "three nights", would give three
    nights a price nobody said, and stays marked. Nor a day, a month or a date
    ("October 3rd"): "next Thursday [10 Dec 2026]" written "next Friday" would name a day
    nobody said. An hour is written anew the same way when it is the sentence's only one
    ("… at 10:00 with Dr. Vermeulen." after "the appointment is at 11:30 now")."""
    clock = bool(_CLOCK.fullmatch(old) and _CLOCK.fullmatch(new)
                 and len(_CLOCK.findall(_unmarked(text))) == 1)
    amount = bool(_AMOUNT.fullmatch(old) and _AMOUNT.fullmatch(new)) and not any(
        other != value and _AMOUNT.fullmatch(other) for other in plain_values(text))
    if not new or not (clock or amount):
        return text
    brackets = [m.span() for m in _BRACKET.finditer(text)]
    found = [m for m in re.finditer(rf"(?<![\w.,]){re.escape(old)}(?![\w]|[.,]\d)", text,
                                    re.IGNORECASE)
             if not any(start <= m.start() < end for start, end in brackets)]
    if len(found) != 1:  # which of two it was, the text does not tell
        return text
    at = found[0]
    if is_day_number(text, at.start(), at.end()):  # "el sábado 12 de junio": a date
        return text
    word = new[0].upper() + new[1:] if at.group()[0].isupper() else new
    return text[:at.start()] + word + text[at.end():]


def _with_new_day(text: str, found: Sequence[tuple[str, str, str]]) -> str:
    """``text`` with the day and date it names together ("Thursday the 14th") written as
    the new ones of ``found`` (``updated_values``), when both changed and the text names
    that day and date once: "Friday the 15th" is what the user said. By hand the
    embedded model copies a sentence and leaves its mark; a day alone stays as it was
    (see ``_with_new_amount``)."""
    days = [(written, new) for _, written, new in found if written.lower() in WEEKDAYS]
    dates = [(written, new) for _, written, new in found if _ORDINAL.fullmatch(written)]
    if len(days) != 1 or len(dates) != 1 or not _ORDINAL.fullmatch(dates[0][1]) \
            or days[0][1].lower() not in WEEKDAYS:
        return text
    (old_day, new_day), (old_date, new_date) = days[0], dates[0]
    # (The date the day was resolved to goes with it: "Wednesday [9 Dec 2026] the 9th".)
    together = list(re.finditer(rf"\b{re.escape(old_day)}(?: \[[^\]\n]*\])?(,? (?:the )?)"
                                rf"{re.escape(old_date)}\b(?! \[)", text))
    if len(together) != 1:
        return text
    at = together[0]
    return f"{text[:at.start()]}{new_day}{at.group(1)}{new_date}{text[at.end():]}"


_ORDINAL = re.compile(r"\d{1,2}(?:st|nd|rd|th)", re.IGNORECASE)


# A number in digits or words ("4000", "2,500", "two"), not an ordinal or a day.
_AMOUNT = re.compile(r"\d+(?:[.,]\d+)*|" + "|".join(sorted(NUMBER_WORDS, key=len,
                                                              reverse=True)),
                     re.IGNORECASE)
_BRACKET = re.compile(r"\[[^\]]*\]")


def _ai_notes_corrected(notes: list[Note], changed: Mapping[tuple[str, str], Sequence[Change]],
                        linked: Mapping[int, AbstractSet[str]],
                        undone: Mapping[tuple[str, str], int] | None = None,
                        updates: Mapping[tuple[str, str], tuple[int, str]] | None = None
                        ) -> list[Note]:
    """``notes`` (newest first, as ``latest_notes`` keeps them; ``changed``: the
    corrections by where they stand there, ``undone`` the names taken back) with an AI
    assistant's note a user's correction changes marked, or left out, as the user's own
    note would be:
    * one made *after* the correction that names the value taken back, about the same
      thing: the AI cannot take back the user's word. By hand (3,072 tokens) the embedded
      model answered "How many nights are we staying?" with "The hotel is booked two
      nights for 240 euros." after "Actually we booked three nights now, not two", and a
      later summary held that and not the correction. (``latest_notes`` reads newest
      first: there a correction reaches only the notes older than itself.) So is one
      made after it that names a name taken back, unless it takes it back too: by hand
      "The Ardennes is easy with the wheelchair. We planned a day trip to the Ardennes
      on Saturday." followed "we're going to Maastricht rather than the Ardennes". A
      value the note takes back too ("… moved to Sunday, not Saturday") is no such value.
    * one that retold a plan a correction changed (``retold_change``);
    * one made after the user said what a thing is now (``updates``: "the movers come on
      Friday the 15th now") that gives the thing another value of the kind: by hand the
      embedded model answered that with "Change of plans: the movers come on Thursday
      the 14th now, same time.", a near copy, newer, which took the correction's place
      in the next summary."""
    users = {key: entries for key, entries in changed.items() if key[0] == "user"}
    stated = {key: update for key, update in (updates or {}).items() if key[0] == "user"}
    names = {name: at for (who, name), at in (undone or {}).items() if who == "user"}
    out: list[Note] = []
    for at, note in enumerate(notes):
        found = None
        if note.role == "assistant" and names and any(
                names.get(word, -1) > at and "!" + word not in note.keys
                for word in note.words):
            continue
        if note.role == "assistant":
            stems = note_stems(note)
            # A value the note takes back itself is no value it still holds: by hand the
            # embedded model retold "the dinner moved to Sunday …, not Saturday", and was
            # marked "[Since changed: Sunday, not Saturday.]" for it.
            before = {key: older for key, entries in users.items()
                      if "~" + key[1] not in note.keys
                      and (older := [change for change in entries if change.at > at])}
            found = value_change(note.text, stems, "user", before) if before else None
            if found is None and linked:
                found = retold_change(note.text, stems, "user", changed, linked)
            if found is None and stated:
                found = restated(note.text, note.words, "user",
                                 {key: update for key, update in stated.items()
                                  if update[0] > at})
        if found is None:
            out.append(note)
        elif found[1]:
            out.append(replace(note, text=found[1]))
    return out


def retold_change(text: str, stems: AbstractSet[str], whose: str,
                  changed: Mapping[tuple[str, str], Sequence[Change]],
                  linked: Mapping[int, AbstractSet[str]]) -> tuple[int, str] | None:
    """What a correction does to ``text``, an AI assistant's retelling of a plan it
    changed (as ``value_change``): the text names the value taken back and another value
    of a note the correction changed (``linked``: a correction's mark → those notes'
    values), though none of the correction's words. By hand (3,072 tokens) the embedded
    model turned "I need to bring my BIG registration number and two payslips." into
    "… two payslips at 10:30 on Tuesday", the interview's old hour and day, and after
    "the interview moved to Wednesday at 14:00, not Tuesday" answered "Tuesday" from it."""
    values = plain_values(text)
    for value in values:
        about = frozenset(stem for change in changed.get((whose, value), ())
                          if (values - {value}) & (linked.get(change.at, set()) - {value})
                          for stem in change.about)
        if about:
            return value_change(text, stems | about, whose, changed)
    return None


def plain_values(text: str) -> frozenset[str]:
    """The values ``text`` names itself: not the dates resolved in it, nor a change mark's."""
    return values_in(_unmarked(text))


def _unmarked(text: str) -> str:
    """``text`` without the dates resolved in it and the change marks it carries."""
    return RESOLVED_DATE.sub("", text) if "[" in text else text


def _superseded(text: str, values: AbstractSet[str], told: AbstractSet[str]) -> bool:
    """Whether a correction that tells ``told`` and takes back ``values`` leaves nothing
    of ``text`` standing: every other value and name of it is told again — the date a
    relative day was resolved to goes with the day, and an hour with a new hour. By hand
    (3,072 tokens) "The interview is on Tuesday [8 Dec 2026] at 10:30." stayed beside
    "the interview moved to Wednesday at 14:00, not Tuesday", marked, and the embedded
    model answered Tuesday at 10:30 whenever it was asked."""
    plain = _unmarked(text)
    rest = (values_in(plain) | names_in(plain)) - values
    if any(_CLOCK.fullmatch(word) for word in told):
        rest = frozenset(word for word in rest if not _CLOCK.fullmatch(word))
    return rest <= told


_CLOCK = re.compile(r"\d{1,2}[:.]\d{2}")


def _without_restated(notes: list[Note], gone: Sequence[Note] = ()) -> list[Note]:
    """``notes`` without an AI assistant's note made only of the words of one note the
    user made before it, however long before (seen by hand: the embedded model answers
    "we are planning a trip to Norway in June." to the user's statement, and the two
    are summarised in different compactions), or saying where "it" lives or works.
    Between people the same words are the other person's own fact ("I love pizza" said
    by both); an AI's restatement tells nothing the user's note does not. Nor does its
    restatement of a user note ``gone`` (a newer one replaced or took it back): by hand
    the embedded model answered "it's Porto now, not Lisbon" with the user's "we're going
    to Lisbon in May", and the summary kept that as the assistant's."""
    told: dict[str, list[frozenset[str]]] = {}  # stem → the user notes' stems holding it
    for note in gone:
        if note.role == "user":
            stems = note_stems(note)
            for stem in stems:
                told.setdefault(stem, []).append(stems)
    kept: list[Note] = []
    for note in notes:
        stems = note_stems(note) if note.role == "user" else _said_stems(note)
        if note.role == "user":
            for stem in stems:
                told.setdefault(stem, []).append(stems)
        elif note.role == "assistant" and (any(key.lstrip("+").startswith("slot")
                                               or key == _NAME_KEY for key in note.keys)
                                           or _CLAIMED_NAME.match(note.text)
                                           or _CLAIMED_FAMILY.search(note.text)):
            # An AI lives and works nowhere: "I'm working as a pharmacist in Leeds now"
            # is the user's fact retold in the first person (by hand, the old job, and
            # it outlived the new one, which only the user's notes replace). Nor has it a
            # name: by hand, the embedded model's "My name is Dmitri and I'm a carpenter
            # in Tallinn." stood in every summary of a 3,072-token chat beside the
            # user's own first message, while the user's later facts gave way; and
            # again as "I'm Sanne, a nurse in Rotterdam and applying for a job …". Nor
            # a family: "My wife Ewa and I are planning a weekend in Ghent." (by hand,
            # the user's first message retold).
            continue
        elif (stems := stems - _FRAMING) and note.role == "assistant" and _restates(stems,
                                                                                    told):
            continue
        kept.append(note)
    return kept


def _restates(stems: frozenset[str], told: Mapping[str, Sequence[frozenset[str]]]) -> bool:
    """Whether ``stems`` (an AI's note) are all the words of one user note (one of them
    maybe in another form: ``_inflected``), or of two together (``told``: a stem → the
    stems of the user notes holding it). By hand (3,072 tokens) the embedded model
    joined "The interview is on Tuesday at 10:30." and "I need to bring my BIG
    registration number and two payslips." into "… two payslips at 10:30 on Tuesday":
    nothing new but a link the user never made, and it outlived the interview's move to
    Wednesday."""
    def holding(stem: str) -> Sequence[frozenset[str]]:
        return told.get(stem, ())

    first = holding(min(stems, key=lambda stem: len(holding(stem))))
    if any(stems <= words for words in first):
        return True
    if not first and len(stems) >= _MIN_INFLECTED_WORDS:  # one word in another form?
        held = [stem for stem in stems if holding(stem)]
        if len(held) == len(stems) - 1:
            (other,) = stems.difference(held)
            rarest = holding(min(held, key=lambda stem: len(holding(stem))))
            if any(set(held) <= words and _inflected(other, words) for words in rarest):
                return True
    # Two notes: the first holds the rarest word. Words held by many notes make a
    # retelling of any two likely by chance (and the pairs many): not looked for.
    if len(first) > _PAIR_LIMIT:
        return False
    for words in first:
        rest = stems - words
        second = holding(min(rest, key=lambda stem: len(holding(stem))))
        if len(second) <= _PAIR_LIMIT and any(rest <= more for more in second):
            return True
    return False


_PAIR_LIMIT = 8
# An AI's note of this many words or more restates a user's note with all its words but
# one, and that one in another form (``_inflected``).
_MIN_INFLECTED_WORDS = 4
_SHARED_ROOT = 3


def _inflected(stem: str, words: frozenset[str]) -> bool:
    """Whether ``stem`` is one of ``words`` in another form: a word of four letters or
    more that shares its first three with one of them. By hand, in a Spanish chat, the
    embedded model retold "Mi hermano Javier se casa el sábado 12 de junio en Córdoba."
    as "… se casó …" (and in English "we move" is retold "we moved"); its retelling, a
    note of its own, took the room of the user's budget."""
    return len(stem) > _SHARED_ROOT and stem.isalpha() and any(
        len(word) > _SHARED_ROOT and word[:_SHARED_ROOT] == stem[:_SHARED_ROOT]
        and word.isalpha() for word in words)


_MIN_ECHO_WORDS = 1
# An AI's words that only frame the user's as a topic: by hand (3,072 tokens) the
# embedded model answered "We're renovating the kitchen in our house in Haarlem." with
# "Let's talk about renovating the kitchen in our house in Haarlem.", kept as its note.
_FRAMING = frozenset({"let", "talk", "discu"})
_NAME_KEY = "my name"  # the key of "My name is …" (``subject_key``)
# "I'm Sanne, …", "I am Dmitri and …": a name claimed (case-sensitive: "I'm sorry, …").
_CLAIMED_NAME = re.compile(r"(?:I'm|I’m|I am) [A-Z][a-z]+(?:,|\.| and\b| from\b)")
_CLAIMED_FAMILY = re.compile(
    r"\b(?:my|our) (?:wife|husband|partner|boyfriend|girlfriend|fianc[eé]e?|son|daughter"
    r"|sister|brother|mother|father|mom|mum|dad|parents|kids|children|grandma|grandpa"
    r"|grandmother|grandfather|niece|nephew|aunt|uncle|cousin)s?\b", re.IGNORECASE)


def note_stems(note: Note) -> frozenset[str]:
    """The note's content words cut to five letters, clitics off ("I'm" is no word), in
    one spelling ("favourite" is "favorite", "colour" "color": a model answering in the
    other spelling still only restates), small numbers in digits ("seven" is "7")."""
    return stems_of(note.words)


# Every pass asks it of every note (``_without_echoes``, ``_without_restated``), and a
# live session's notes are mostly the last pass's.
@lru_cache(maxsize=65_536)
def stems_of(words: frozenset[str]) -> frozenset[str]:
    bases = (w.replace("’", "'").split("'", 1)[0] for w in words)
    # A small number is one word however it is written: by hand the embedded model
    # restated "My daughter Alina turns seven next Saturday" as "Alina turns 7 this …".
    return frozenset(NUMBER_WORDS.get(b) or b.replace("our", "or")[:5] for b in bases
                     if (len(b) >= 3 or b.isdigit() or not b.isascii()) and b not in STOPWORDS
                     and b not in FUNCTION_WORDS)



def asked_stems(questions: Iterable[str]) -> frozenset[str]:
    """The stems (``note_stems``) of what a message asked, for ``echoes``."""
    return stems_of(content_words(" ".join(questions)))


def echoes(note: Note, asked: frozenset[str]) -> bool:
    """True when ``note`` — a reply's — is made only of the words of the question it
    replies to (``asked_stems``): "Quick dinner for tonight." after "Can you suggest a
    quick dinner for tonight?" repeats the question and tells nothing. A date resolved
    in it ("tonight [1 Dec 2026]") is no word of its own."""
    stems = _said_stems(note)
    return len(stems) >= _MIN_ECHO_WORDS and stems <= asked


def _said_stems(note: Note) -> frozenset[str]:
    """``note_stems`` without the words of the dates resolved in the note: the reader
    wrote those, and a restatement is no less one for a date its original was not given
    (by hand a summary's Goal quoted the user's "The party is on Saturday the 19th …"
    unresolved, and the model's "The party will be on Saturday [12 Dec 2026] the 19th …"
    stood beside it as a note of its own)."""
    if "[" not in note.text:
        return note_stems(note)
    return stems_of(content_words(_unmarked(note.text)))


def _without_echoes(notes: list[Note]) -> list[Note]:
    """``notes`` without an assistant's note made only of words of a note of the user's
    message before it ("I work as a nurse at Santa Maria hospital." after "I work as a
    nurse at Santa Maria hospital, night shifts mostly."): a reply restating what it
    was told adds nothing, and a small model's restatement is often wrong besides
    ("I'm Rita getting married" after "my sister Rita is getting married"). A note that
    adds one word of its own ("I went to a pride parade too, last year") stays."""
    told: list[frozenset[str]] = []
    told_at: int | None = None
    kept: list[Note] = []
    for note in notes:
        if note.role == "user":
            if note.order != told_at:
                told, told_at = [], note.order
            told.append(note_stems(note))
        elif told:
            stems = note_stems(note)
            if len(stems) >= _MIN_ECHO_WORDS and any(stems <= words for words in told):
                continue
        kept.append(note)
    return kept


def rare_words(notes: Sequence[Note]) -> list[float]:
    """For each note, how many of its words occur in at most two notes: the specific
    things ("taekwondo", "peach cobbler", "Kyle") a reader asks about later, where the
    words a conversation keeps coming back to ("support", "family") tell less."""
    df: Counter[str] = Counter(w for n in notes for w in n.words)
    return [sum(1 / df[w] for w in n.words if df[w] <= 3) for n in notes]
