"""Reading the facts out of conversation turns, without a model (the first half of C15).

One pass over the turns collects what a continuing assistant needs: the user's first and
latest asks, sentences that state a constraint or preference, decisions, questions paired
with the reply that answers them, the notes of ordinary conversation (C18: who said what,
when — ``summary/notes.py``), tool actions with their outcome, error lines verbatim, file
paths, URLs, commands and config values. ``local_summary.py`` ranks and renders them;
``textscan.py`` holds the patterns.

What a message says on its own is read once and cached by content hash
(``summary/reading.py``): this pass only keeps the state — open questions, file notes,
counts, the session date — so a live session's repeated compactions cost a lookup per
old message, and a first reading is a bounded regex or two per message (long texts are
read as the summariser would see them: first 4,000 + last 1,500 characters).

Questions. A question is answered by the reply that follows it — the other speaker's
next text, up to the next message of the asker — when a sentence of that reply shares
its content words; then the pair goes to "Resolved Questions". Otherwise it is left
unpaired: a request ("can you …", "please …") stays open under "Pending User Asks"
until a later reply answers it or says it is done ("Here you go.", "Sent!"), a plain
question is dropped once the other speaker replies with something that is not another
question nor puts it off ("Let me check.") — answered in other words — or once the
asker speaks again (the conversation moved on). Phatic text is never a question, a fact
or a note.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from datetime import date
from functools import lru_cache
from typing import Any

from mnemo.context.failures import error_shape
from mnemo.context.markers import is_summary_message, without_agent_notices
from mnemo.context.summary.dates import day_ahead
from mnemo.context.summary.notes import Note, answer_text, asked_stems, echoes, latest_notes
from mnemo.context.summary.reading import (
    TALK_TOOLS,
    Prose,
    Values,
    is_call_text,
    is_request,
    is_talk,
    read_call,
    read_notes,
    read_prose,
    read_result,
)
from mnemo.context.summary.resume import Resumes, turn_chain
from mnemo.context.summary.salience import PRONOUNS, cjk_runs, clean, knows_nothing
from mnemo.context.textscan import PREFERENCE, keywords, one_line, sentences
from mnemo.messages import Message, content_text, tool_calls_of

__all__ = ["RESUMES", "TALK_TOOLS", "ActionNote", "Facts", "FileNote", "Item",
           "extract_facts", "is_ai_assistant", "is_conversation", "kind_asked"]


@dataclass
class Item:
    """One line for the summary, with where it came from (its turn) for ordering."""

    text: str
    order: int


@dataclass
class FileNote:
    first: int
    last: int
    actions: Counter[str] = field(default_factory=Counter)  # written / read / mentioned
    by_user: bool = False


@dataclass
class ActionNote:
    name: str
    args: str
    kind: str  # write / read / run / other
    first: int
    last: int
    count: int = 0
    failures: int = 0
    last_failed: bool = False
    last_error: str = ""


@dataclass
class _Repeat:
    text: str
    order: int
    count: int = 1


@dataclass
class _Ask:
    text: str
    order: int
    words: frozenset[str]
    request: bool = True  # a request stays open; a plain question only until answered
    asker: str = "user"


@dataclass
class Facts:
    """What the turns say, before ranking."""

    turns: int = 0
    asks: list[Item] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)  # conversation worth keeping (C18)
    participants: dict[str, str] = field(default_factory=dict)  # role -> name
    speakers: dict[str, str] = field(default_factory=dict)  # every name -> its role
    preferences: list[Item] = field(default_factory=list)
    decisions: list[Item] = field(default_factory=list)
    resolved: list[Item] = field(default_factory=list)
    pending: list[Item] = field(default_factory=list)
    remaining: list[Item] = field(default_factory=list)
    errors: list[Item] = field(default_factory=list)
    commands: list[Item] = field(default_factory=list)
    urls: list[Item] = field(default_factory=list)
    # The URLs and config pairs an AI wrote in its prose, and those the user wrote: in a
    # chat a small model makes up links ("[Rotterdam News](http://www.rotterdamnews.nl/)",
    # by hand) and writes sample code ("capture_output=True").
    ai_values: set[str] = field(default_factory=set)
    user_values: set[str] = field(default_factory=set)
    config_values: list[Item] = field(default_factory=list)
    files: dict[str, FileNote] = field(default_factory=dict)
    actions: dict[str, ActionNote] = field(default_factory=dict)
    tools: Counter[str] = field(default_factory=Counter)
    tool_failures: Counter[str] = field(default_factory=Counter)
    last_intent: Item | None = None
    worked: bool = False  # a tool other than ``TALK_TOOLS`` was called
    conversation: bool = False  # people talking rather than work (``is_conversation``)
    replies: set[int] = field(default_factory=set)  # texts that answer a question (orders)
    dated: date | None = None  # the date the latest header line of the turns names


_LABELS = {"user": "User", "assistant": "Assistant"}


def is_conversation(facts: Facts) -> bool:
    """People talking rather than work being done (decided by ``extract_facts``)."""
    return facts.conversation


def _uncached_line(text: str) -> tuple[str, str]:
    """``text`` as one line, and lowered."""
    line = one_line(text)
    return line, line.lower()


# The same commands, URLs and values come back in every call of a session: short ones
# are made one line once (bounded; longer texts are not kept alive for it).
_line = lru_cache(maxsize=16_384)(_uncached_line)
_SHORT_LINE = 200


# A question and a reply that share only a pronoun ("what's her name?" — "I'll call
# her!") or a word of time ("Where could we eat afterwards?" — "The party will be held
# after Noor and Sami.", paired by hand) are not about the same thing: what pairs them
# is the words of their topic.
_NOT_TOPIC = frozenset(p[:5] for p in PRONOUNS) | frozenset(
    ("after", "befor", "later", "soon", "again", "maybe"))


# What a question asks for, by its opening, and what a sentence that gives it holds.
_ASKS_WHEN = re.compile(r"^(?:when|what (?:time|date|day|year|month)|how long ago)\b",
                        re.IGNORECASE)
_ASKS_WHERE = re.compile(r"^(?:where|which (?:city|country|town|place|school|company))\b",
                         re.IGNORECASE)
_ASKS_NUMBER = re.compile(r"^how (?:many|much|old|long|far|often)\b", re.IGNORECASE)
_ASKS_NAME = re.compile(r"^(?:who|what(?:'s| is| was) (?:the |your |his |her |their )?"
                        r"(?:\w+(?:'s)? )?name)\b", re.IGNORECASE)
_GIVES_DATE = re.compile(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|march|april|may|june|july|aug(?:ust)?|sept?(?:ember)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday|yesterday|today|tonight|tomorrow|ago"
    r"|(?:next|last|this|every) (?:week(?:end)?|month|year|summer|winter|spring|fall)"
    r"|\d{4}|\d{1,2}(?::\d{2})? ?(?:am|pm)|\d{1,2}(?:st|nd|rd|th))\b", re.IGNORECASE)
_GIVES_NUMBER = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty"
    r"|thirty|forty|fifty|hundred|dozen|half|a few|a couple)\b", re.IGNORECASE)
# A name is a capitalised word inside the sentence, a place one after a preposition of
# place — neither a day nor a month ("Anyway, my pottery class starts on Monday" does
# not tell where the kids go to school).
_NOT_A_NAME = (r"(?!(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January"
               r"|February|March|April|May|June|July|August|September|October|November"
               r"|December|I)\b)")
_GIVES_NAME = re.compile(rf"(?<=[a-z,] ){_NOT_A_NAME}[A-Z][a-z]+")
# (The preposition may open the reply: "In Jaipur.")
_GIVES_PLACE = re.compile(r"\b(?:[Ii]n|[Aa]t|[Oo]n|to|[Ff]rom|[Nn]ear|visited) (?:the )?"
                          rf"{_NOT_A_NAME}[A-Z][a-z]+")
# "Which gym do you go to?", "Which ryokan did you choose?": a question for one of a
# kind, answered by its name — inside the sentence, after a preposition of place, or as
# the whole sentence ("Fukuzumiro.", "The Majestic.").
_ASKS_WHICH = re.compile(r"^(?:which \w+|what (?:are|is|was|did|will) (?:you|they|he|she|we)"
                         r" (?:call|name)(?:ing|ed)?)\b", re.IGNORECASE)
_IS_A_NAME = re.compile(rf"(?:The )?{_NOT_A_NAME}[A-Z][\w'’.-]*"
                        r"(?: (?:&|and|of|the|de) [A-Z][\w'’.-]*| [A-Z][\w'’.-]*){0,3}[.!]?")


# "What should we see in Kyoto?", "What do you recommend for a first visit?", "Any tips
# for the hike?": a question for advice, answered by the reply right after it in words
# of its own — by a sentence that names something ("Fushimi Inari, Kinkaku-ji and the
# bamboo grove."), else by its first that does not put the answer off ("Cash in an
# envelope is traditional."). Before, such a question was let go unpaired and the
# advice stood alone, apart from what it answered.
_ASKS_ADVICE = re.compile(
    r"^(?:what (?:should|shall|could|can|would) (?:i|we) (?:\w+ )?(?:see|do|visit|eat|try"
    r"|order|read|watch|cook|make|buy|get|bring|wear|pack|take)"
    r"|what (?:do|would) you (?:recommend|suggest)"
    r"|(?:any|some) (?:recommendations?|suggestions?|tips|ideas|advice)"
    r"|what(?:'s| is| are) (?:a |some )?good)\b", re.IGNORECASE)


def _advice(sentences: Sequence[str]) -> str | None:
    offered = [s for s in sentences if not _DEFERS.search(s)]
    return next((s for s in offered if _gives_one_by_name(s)), offered[0] if offered else None)


def _gives_one_by_name(sentence: str) -> bool:
    return (_GIVES_NAME.search(sentence) is not None or _GIVES_PLACE.search(sentence) is not None
            or _IS_A_NAME.fullmatch(sentence) is not None)


# What a sentence that shares the words of a question for an amount or a length needs
# besides: a number, a date or a span ("How long have you been creating art?" is not
# answered by "It's amazing how art can show things that are hard to put into words.").
_ASKS_AMOUNT = re.compile(r"^how (?:many|much|old|long|far)\b", re.IGNORECASE)
_GIVES_SPAN = re.compile(r"\b(?:since|ages|years?|months?|weeks?|days?|hours?|minutes?"
                         r"|while|forever|decades?|km|miles?)\b", re.IGNORECASE)


def _gives_amount(sentence: str) -> bool:
    return any(p.search(sentence) for p in (_GIVES_NUMBER, _GIVES_DATE, _GIVES_SPAN))


# The same in Chinese, where a question's words are pairs of characters and seldom the
# reply's: "你们什么时候出发？" → "十月三号从上海出发。", "京都有什么好玩的？" → "伏见稻荷大社、
# 金阁寺和岚山竹林都很值得去。" (by hand no Chinese question was ever paired). A question for
# a date or a number pairs with a sentence that gives one; one for a place, a person or
# advice (a place in Chinese has no mark to find it by) with the reply's first sentence
# that does not put it off.
_CJK_NUMERAL = "[0-9０-９一二两三四五六七八九十百千万半几]"
_CJK_ASKS: tuple[tuple[re.Pattern[str], Callable[[str], object]], ...] = (
    (re.compile("什么时候|几点|哪天|哪一天|何时|几号|几月|哪年"),
     re.compile(f"{_CJK_NUMERAL}+ ?[年月号日点]|星期|礼拜|周[一二三四五六日末]|昨天|今天|明天"
                "|后天|前天|上周|下周|这周|去年|明年|今年|早上|晚上|下午|上午").search),
    (re.compile("多少|几个|几天|几岁|几年|几次|多久|多长|多大|多远"),
     re.compile(_CJK_NUMERAL).search),
    (re.compile("哪里|哪儿|在哪|去哪|住哪|哪个|哪家|谁|推荐|建议|有什么好|应该"),
     bool),
)
_CJK_DEFERS = re.compile("不知道|不确定|不清楚|还没定|让我想想|我查一下|我想想|说不好")


def _typed_answer(question: str, sentences: Sequence[str]) -> str | None:
    """The first of ``sentences`` that gives what ``question`` asks for (a date, a
    place, a number, a name, advice), if the question asks for one of those."""
    question = clean(question)  # "Hey Jon, when …": past the greeting
    if _ASKS_ADVICE.match(question):
        return _advice(sentences)
    if not question.isascii() and cjk_runs(question):
        cjk = next((gives for asks, gives in _CJK_ASKS if asks.search(question)), None)
        return None if cjk is None else next(
            (s for s in sentences if cjk(s) and not _CJK_DEFERS.search(s)), None)
    gives = kind_asked(question) or (_gives_one_by_name if _ASKS_WHICH.match(question)
                                     else None)
    if gives is None:
        return None
    return next((s for s in sentences if gives(s) and not _DEFERS.search(s)), None)


def kind_asked(question: str) -> Callable[[str], object] | None:
    """What tells whether a sentence gives the kind of thing ``question`` asks for — a
    date for "when", a number for "how many", a place for "where", a name for "who" —
    or None for a question of another kind."""
    question = clean(question)
    return (_GIVES_DATE.search if _ASKS_WHEN.match(question) else _GIVES_NUMBER.search
            if _ASKS_NUMBER.match(question) else _GIVES_PLACE.search
            if _ASKS_WHERE.match(question) else _GIVES_NAME.search
            if _ASKS_NAME.match(question) else None)


def is_ai_assistant(facts: Facts) -> bool:
    """True when the assistant of these turns is an AI, not a person: it has no name."""
    return facts.participants.get("assistant", _LABELS["assistant"]) == _LABELS["assistant"]


def _topic(sentence: str) -> frozenset[str]:
    return keywords(sentence) - _NOT_TOPIC


# A reply that puts the answer off or does not have it leaves the question open.
_DEFERS = re.compile(
    r"\b(?:let me (?:check|look|see|find|think|ask)|i'?ll (?:check|look|find|get back|see"
    r"|ask|let you know)|i (?:don'?t|do not) (?:know|remember)|(?:i'?m )?not sure|no idea"
    r"|i can'?t (?:say|tell|find|remember|recall)|(?:looking|checking) (?:into )?(?:it|that)"
    r"|give me a (?:moment|minute|sec))\b",
    re.IGNORECASE,
)
_MIN_NOTED_CHARS = 25
_OPEN_ASKS_LIMIT = 200  # an unbounded backlog would make the pass quadratic


class _Reader:
    """The state of one pass over the turns."""

    def __init__(self, prior_pending: Iterable[str], today: date | None,
                 focus: date | None = None) -> None:
        self.facts = Facts()
        self.calls: dict[str, ActionNote] = {}
        # An earlier summary's open asks: a question among them closes as one asked in
        # these turns would (its asker moves on); only a request stays open (else a
        # live chat's questions piled up, one more at every compaction).
        self.open_asks: list[_Ask] = [_Ask(q, -1, _topic(q), is_request(q))
                                      for q in prior_pending]
        self.seen: set[tuple[str, str]] = set()
        self.answered: set[str] = set()
        self.errors: dict[str, _Repeat] = {}
        self.today = today  # the session date, until a header line says another
        # The day to come the conversation named last ("next Friday [11 Dec 2026]"), what
        # a later "on Monday" is read beside (``dates.resolve_relative``); and what it
        # was before the text being read, for that text's answers.
        self.focus: date | None = focus
        self.focus_before: date | None = focus
        self.soft: list[tuple[str, str, int]] = []  # (kind, sentence, order): see finish
        self.texts: list[tuple[str, Prose]] = []  # user and assistant texts: see is_talk
        self.asked_by = ""  # the role whose last text asked something, or ""
        # The role and order of the text before the one being read, and of that one.
        self.before: tuple[str, int] = ("", -1)
        self.latest: tuple[str, int] = ("", -1)
        self.asked_words: frozenset[str] = frozenset()  # of the user's text before: echoes

    def copy(self) -> _Reader:
        """A copy that a pass can go on with, leaving this one as it is (``resume.py``):
        what the pass changes in place — file and action notes, repeats, the lists
        and sets — is copied; notes, items and readings never change."""
        new = copy.copy(self)
        facts = new.facts = copy.copy(self.facts)
        for name in ("asks", "notes", "preferences", "decisions", "resolved", "pending",
                     "remaining", "errors", "commands", "urls", "config_values"):
            setattr(facts, name, list(getattr(facts, name)))
        facts.participants, facts.speakers = dict(facts.participants), dict(facts.speakers)
        facts.replies = set(facts.replies)
        facts.ai_values, facts.user_values = set(facts.ai_values), set(facts.user_values)
        facts.files = {p: dc_replace(n, actions=Counter(n.actions))
                       for p, n in facts.files.items()}
        facts.actions = {k: dc_replace(n) for k, n in facts.actions.items()}
        by_id = {id(old): facts.actions[k] for k, old in self.facts.actions.items()}
        new.calls = {i: by_id[id(n)] for i, n in self.calls.items()}
        facts.tools, facts.tool_failures = Counter(facts.tools), Counter(facts.tool_failures)
        new.errors = {k: dc_replace(r) for k, r in self.errors.items()}
        new.open_asks, new.soft, new.texts = (list(self.open_asks), list(self.soft),
                                              list(self.texts))
        new.seen, new.answered = set(self.seen), set(self.answered)
        return new

    def add(self, bucket: list[Item], kind: str, text: str, order: int) -> None:
        line, lowered = _line(text) if len(text) <= _SHORT_LINE else _uncached_line(text)
        key = (kind, lowered)
        if line and key not in self.seen:
            self.seen.add(key)
            bucket.append(Item(line, order))

    def note_file(self, path: str, order: int, action: str, *, by_user: bool = False) -> None:
        path = path.strip().rstrip(".,:;")
        if len(path) < 3 or len(path) > 260 or "://" in path:
            return
        note = self.facts.files.get(path)
        if note is None:
            note = self.facts.files[path] = FileNote(order, order)
        note.last = order
        note.actions[action] += 1
        note.by_user = note.by_user or by_user

    def keep_values(self, values: Values, order: int, *, by_user: bool) -> None:
        facts = self.facts
        for url in values.urls:
            self.add(facts.urls, "url", url, order)
        for path in values.paths:
            self.note_file(path, order, "mentioned", by_user=by_user)
        for pair in values.config:
            self.add(facts.config_values, "config", pair, order)
        for command in values.commands:
            self.add(facts.commands, "command", command, order)

    def keep_errors(self, lines: Sequence[str], order: int) -> None:
        """Keep error lines verbatim; a failure repeated with other numbers (the same
        assertion in ten runs) is one line, the latest, with a count."""
        for line in lines:
            key = error_shape(line)
            known = self.errors.get(key)
            if known is None:
                self.errors[key] = _Repeat(line, order)
            else:
                known.text, known.order, known.count = line, order, known.count + 1

    # -- people -------------------------------------------------------------------------

    def speaker(self, message: Message, role: str) -> str:
        """The speaker's name (the message's ``name``), else ``User`` / ``Assistant``."""
        name = message.get("name")
        if isinstance(name, str) and name.strip():
            label = one_line(name, 40)
            self.facts.participants.setdefault(role, label)
            self.facts.speakers.setdefault(label, role)
            return label
        return self.facts.participants.get(role, _LABELS[role])

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.facts.participants.values()))

    def prose(self, message: Message, text: str, role: str, order: int
              ) -> tuple[Prose, str] | None:
        if not text.strip():
            return None
        speaker = self.speaker(message, role)
        prose = read_prose(text, role, self.names())
        if prose.date is not None:
            if prose.date != self.today:
                self.focus = None  # another session: its days to come are its own
            self.today = self.facts.dated = prose.date
        self.texts.append((text, prose))
        # A text right after the other speaker asked something is a reply: what it says
        # is what was asked about, and a reader is likely to ask again (salience.py).
        if self.asked_by and self.asked_by != role:
            self.facts.replies.add(order)
        self.asked_by = role if prose.asks else ""
        self.before, self.latest = self.latest, (role, order)
        self.soft += [(kind, sentence, order) for kind, sentence in prose.soft]
        # A soft claim's note is kept only in a conversation, and a session that used a
        # tool for work is none (``finish``): from the first such call on, they are not
        # taken.
        notes = read_notes(prose, speaker=speaker, role=role, order=order, today=self.today,
                           names=self.names(), soft=not self.facts.worked, focus=self.focus)
        self.focus_before = self.focus
        for note in reversed(notes):
            if "[" in note.text and (day := day_ahead(note.text, self.today)) is not None:
                self.focus = day
                break
        # A reply made only of the words of the question before it repeats the question
        # (the embedded model does: "Quick dinner for tonight."); a reply that restates
        # a statement is left out later (``latest_notes``).
        if self.asked_words and role == "assistant":
            notes = [n for n in notes if not echoes(n, self.asked_words)]
        self.asked_words = (asked_stems(s for s, _ in prose.asks)
                            if role == "user" and prose.asks else frozenset())
        self.facts.notes += notes
        return prose, speaker

    # -- turns --------------------------------------------------------------------------

    def user(self, message: Message, text: str, order: int) -> None:
        read = self.prose(message, text, "user", order)
        if read is None:
            return
        prose, speaker = read
        facts = self.facts
        self.answer("user", speaker, prose, order)
        if prose.kept:
            # A sentence pasted again and again is quoted once: the 300 characters of
            # the line are for what the user asked.
            facts.asks.append(Item(one_line(" ".join(dict.fromkeys(prose.kept)), 300), order))
        for sentence in prose.preferences:
            self.add(facts.preferences, "pref", sentence, order)
        for sentence in prose.decisions:
            self.add(facts.decisions, "decision", sentence, order)
        for sentence, request in prose.asks:
            self.open_asks.append(_Ask(one_line(sentence, 300), order, _topic(sentence),
                                       request, "user"))
        del self.open_asks[:-_OPEN_ASKS_LIMIT]
        self.keep_values(prose.values, order, by_user=True)
        facts.user_values.update(prose.values.urls, prose.values.config)
        self.keep_errors(prose.errors, order)

    def assistant(self, message: Message, text: str, order: int) -> None:
        facts = self.facts
        text = without_agent_notices(text)  # the agent's, not the model's: no reply
        if is_call_text(text):  # a call written as JSON text: no prose either
            text = ""
        read = self.prose(message, text, "assistant", order)
        if read is not None:
            prose, speaker = read
            self.answer("assistant", speaker, prose, order)
            for sentence in prose.decisions:
                self.add(facts.decisions, "decision", sentence, order)
            for sentence in prose.remaining:
                self.add(facts.remaining, "todo", sentence, order)
            # The assistant's own questions are answered by the user's next message.
            for sentence, _request in prose.asks[-1:]:
                self.open_asks.append(_Ask(one_line(sentence, 300), order,
                                           _topic(sentence), False, "assistant"))
            # "Hi! How can I assist you today?" is no step of any work: nothing is one.
            facts.last_intent = Item(one_line(text, 300), order) if prose.kept else None
            self.keep_values(prose.values, order, by_user=False)
            facts.ai_values.update(prose.values.urls, prose.values.config)
        for call in tool_calls_of(message):
            self.tool_call(call, order)

    def answer(self, role: str, speaker: str, prose: Prose, order: int) -> None:
        """Pair the open questions of the other side with the sentence of this reply
        that answers them; questions of this side that got no answer are let go, unless
        they are requests (see the module docstring)."""
        if not self.open_asks:
            return
        # A sentence that only says it knows nothing answers nothing.
        replies = [(s, _topic(s)) for s in prose.kept
                   if not s.endswith(("?", "？")) and not knows_nothing(s)]
        # "Here you go." does what the text before it asked, not any older request.
        before, asked_at = self.before
        done_at = asked_at if prose.done and before and before != role else None
        still_open: list[_Ask] = []
        used: set[str] = set()  # a sentence answers one question of the text it replies to
        for ask in self.open_asks:
            if ask.asker == role:  # the asker speaks again: a plain question moved on
                if ask.request:
                    still_open.append(ask)
                continue
            needed = (1 if not ask.request and len(ask.words) <= 3 else
                      min(len(ask.words), max(2, (len(ask.words) + 1) // 2)))
            # A sentence made only of the question's words ("Quick dinner for tonight."
            # after "Can you suggest a quick dinner for tonight?") repeats it: no answer.
            best, overlap = max(((s, len(ask.words & w)) for s, w in replies
                                 if not w <= ask.words and s not in used),
                                key=lambda p: p[1], default=("", 0))
            if best and _ASKS_AMOUNT.match(clean(ask.text)) and not _gives_amount(best):
                overlap = 0  # its words but no amount: the search below may find one
            if (not ask.words or overlap < needed) and not ask.request and (
                    before == ask.asker and asked_at == ask.order):
                # The reply right after a question that asks for a date, a place, a
                # number or a name, in a sentence that holds one, answers it in other
                # words ("When is your wedding?" → "It's on June 12th in Porto!").
                # A question of no content word ("Where?") pairs only this way.
                best = _typed_answer(ask.text, [s for s, _ in replies if s not in used]) or ""
                overlap = needed if best else 0
            if not (ask.words or best) or overlap < needed:
                # A plain question the reply answers in other words ("What's a good
                # gift?" → "Cash in an envelope is traditional.") is not open, even
                # before the asker speaks again: that may be in the turns kept whole.
                answered = not ask.request and any(not _DEFERS.search(s) for s, _ in replies)
                if not answered and not (ask.request and ask.order == done_at):
                    still_open.append(ask)
                continue
            used.add(best)
            if ask.text.lower() not in self.answered:
                self.answered.add(ask.text.lower())
                asker = self.facts.participants.get(ask.asker)
                answer = answer_text(best, self.today, self.names(), self.focus_before)
                # ("Thanks, and where should we stay?": the question, past its thanks.)
                question = clean(ask.text) or ask.text
                line = (f"{asker}: {question} → {speaker}: {answer}" if asker
                        else f"{question} → {answer}")
                self.add(self.facts.resolved, "resolved", line, order)
        self.open_asks = still_open

    def tool_call(self, call: Any, order: int) -> None:
        info = read_call(call)
        key = info.key
        note = self.facts.actions.get(key)
        if note is None:
            note = self.facts.actions[key] = ActionNote(info.name, info.shown, info.kind,
                                                        order, order)
        note.count += 1
        note.last = order
        self.facts.tools[info.name] += 1
        self.facts.worked = self.facts.worked or info.name not in TALK_TOOLS
        self.calls[str(call.get("id", "")) if isinstance(call, dict) else ""] = note
        for path in info.paths:
            self.note_file(path, order, "written" if info.kind == "write" else "read")
        for command in info.commands:
            self.add(self.facts.commands, "command", command, order)
        for values in info.command_values:
            self.keep_values(values, order, by_user=False)
        if info.url:
            self.add(self.facts.urls, "url", info.url, order)

    def tool_result(self, message: Message, text: str, order: int) -> None:
        note = self.calls.get(str(message.get("tool_call_id", "")))
        result = read_result(text, note.kind if note is not None else "other")
        self.keep_errors(result.keep, order)
        if note is None:
            return
        note.last_failed = bool(result.error)
        if result.error:
            note.failures += 1
            note.last_error = result.error
            self.facts.tool_failures[note.name] += 1

    def finish(self, continued: bool = False) -> Facts:
        for repeat in sorted(self.errors.values(), key=lambda r: r.order):
            count = f" (×{repeat.count})" if repeat.count > 1 else ""
            self.facts.errors.append(Item(one_line(repeat.text) + count, repeat.order))
        for ask in self.open_asks:
            if ask.asker == "user":
                self.facts.pending.append(Item(ask.text, ask.order))
        # Between people, what matched a rule's words is a note like any other: it is
        # ranked by what it tells. In a work session it is a preference or a decision,
        # ranked as one (a rule — "Never deploy on Fridays" — above a remark).
        facts = self.facts
        facts.conversation = is_talk(self.texts, tools=facts.worked,
                                     named=bool(facts.participants), continued=continued)
        if facts.conversation:
            for role, label in _LABELS.items():  # unnamed speakers are "User", "Assistant"
                facts.participants.setdefault(role, label)
            self.facts.preferences, self.facts.decisions = [], []
            notes = list(self.facts.notes)
        else:
            # An unnamed assistant's short acknowledgements at work ("Done.", "answer 3
            # fixed") carry nothing worth a line; a person's short sentence may ("I got
            # a dog.").
            notes = [n for n in self.facts.notes if not n.soft and (
                n.role != "assistant" or "assistant" in facts.participants
                or len(n.text) >= _MIN_NOTED_CHARS)]
            for kind, sentence, order in self.soft:
                if sentence.rstrip().endswith(("?", "？")):
                    continue  # "What should I eat …?" asks; it is no rule nor decision
                bucket = self.facts.preferences if kind == "pref" else self.facts.decisions
                self.add(bucket, kind, sentence, order)
            for bucket in (self.facts.preferences, self.facts.decisions):
                bucket.sort(key=lambda item: item.order)
        # A question that was paired is printed with its answer: as a note of its own it
        # only says it again (by hand, "What should we eat in Osaka?" stood twice in a
        # 3,072-token chat's summary).
        paired = {clean(asked).lower() for asked in self.answered}
        if paired:
            notes = [n for n in notes if n.text.lower() not in paired]
        self.facts.notes = latest_notes(notes, ai_assistant=is_ai_assistant(facts))
        return self.facts


# The state at the end of the last passes, for a pass over the same turns and more.
RESUMES: Resumes[_Reader] = Resumes()


def extract_facts(turns: Sequence[Message], *, prior_pending: Iterable[str] = (),
                  continued: bool = False, session_date: date | None = None,
                  focus: date | None = None) -> Facts:
    """Read ``turns`` once. ``prior_pending`` are asks an earlier summary left open, so a
    reply in these turns can move them to the resolved list; ``continued``: the earlier
    summary was of a conversation (``is_talk``); ``session_date``: what relative dates
    are resolved against until a header line in the turns names a date; ``focus``: the
    day to come the earlier summary named last (``dates.resolve_relative``)."""
    pending = tuple(prior_pending)
    start = (pending, session_date, focus)
    chain = turn_chain(turns)
    found = RESUMES.latest(chain, start)
    done, reader = ((found[0], found[1].copy()) if found
                    else (0, _Reader(pending, session_date, focus)))
    for order in range(done, len(turns)):
        message = turns[order]
        role = message.get("role")
        if is_summary_message(message):
            continue
        text = content_text(message)
        reader.facts.turns += 1
        if role == "user":
            reader.user(message, text, order)
        elif role == "assistant":
            reader.assistant(message, text, order)
        elif role == "tool":
            reader.tool_result(message, text, order)
        elif text.strip():  # a system or developer note in the middle of the conversation
            for sentence in sentences(text[:6000]):
                if PREFERENCE.search(sentence):
                    reader.add(reader.facts.preferences, "pref", sentence, order)
    if len(chain) == len(turns) + 1:  # every turn stood for: the next pass may resume
        RESUMES.keep(chain, start, reader.copy())
    return reader.finish(continued)
