"""Reading one message, once: the part of fact extraction that depends on nothing else.

``extract.py`` walks the turns in order and keeps the state (open questions, file
notes, counts); everything a message says on its own is read here, and each reading is
kept in ``CACHE`` by content hash (``cache.py``), so a message that was in the middle of
the last compaction costs a lookup the next time:

* ``read_prose`` — a user or assistant text: its sentences without phatic ones and
  without session header lines (``[Session 3, 1:14 pm on 25 May, 2023]``), which are
  read for the date instead; which sentences state a preference, a decision, a to-do,
  or ask something; the values written in it; its error lines;
* ``read_notes`` — the notes of the sentences no pattern claimed (``notes.py``),
  keyed by the session date they are resolved against;
* ``read_result`` — a tool result: the error lines to keep, and the one that says the
  call failed, read in place; a near-copy of one read before (the same output behind
  another first line) is found in ``results.RESTS`` instead;
* ``read_call`` — a tool call: its name, key arguments, kind, and the paths, commands
  and URL in its arguments.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any, NamedTuple

from mnemo.context.failures import (
    COMMAND_KEYS,
    best_error_lines,
    error_lines,
    tool_kind,
)
from mnemo.context.markers import PRUNED_TOOL_PLACEHOLDER
from mnemo.context.prompt import CONTENT_MAX, TRUNCATION_MARKER, truncate_for_summary
from mnemo.context.pruning import key_arguments, parse_call
from mnemo.context.shrink import CUT_MARKER_START
from mnemo.context.summary.cache import MessageCache, text_key
from mnemo.context.summary.dates import HEADER_LINE, find_date
from mnemo.context.summary.notes import Note, take_notes
from mnemo.context.summary.results import (
    RESTS,
    Rest,
    first_line,
    kept_lines,
    view_error_lines,
)
from mnemo.context.summary.salience import is_instruction, is_phatic, is_standing_rule
from mnemo.context.textscan import (
    BACKTICK,
    COMMAND_WORDS,
    CONFIG,
    DECISION,
    FILE_NAME,
    MARKDOWN_MARKS,
    NOT_CONFIG_KEYS,
    PATH,
    PATH_KEYS,
    PREFERENCE,
    REMAINING,
    REQUEST_START,
    URL,
    one_line,
    sentences,
    without_markdown,
)
from mnemo.textjson import CALL_MARKS, call_line_names, made_of_json

__all__ = ["CACHE", "TALK_TOOLS", "Call", "Prose", "Result", "Values", "is_call_text",
           "is_request", "is_talk", "read_call", "read_notes", "read_prose", "read_result",
           "shows_work"]

CACHE = MessageCache()
def _on_lowered(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` (case-insensitive, written in lower case) for text lowered once:
    the same matches, two to three times faster than ``re.IGNORECASE``."""
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


_PREFERENCE_LC = _on_lowered(PREFERENCE)
_DECISION_LC = _on_lowered(DECISION)
_REMAINING_LC = _on_lowered(REMAINING)
# Each English match of ``PREFERENCE``, ``DECISION`` or ``REMAINING`` holds one of these
# (in lower case): an ASCII sentence with none of them is no claim. One search of plain
# words instead of three of patterns tried at every character (most sentences claim
# nothing, and every unique sentence is read).
_CLAIM_WORDS = re.compile(
    r"must|never|always|prefer|don|do not|avoid|make sure|should|only use|please use"
    r"|i like|i want|i need|i hate|no more than|at most|at least|require|constraint"
    r"|instead of|please keep|in sync|keep t|keep it|stick to|d like|i would like|without"
    r"|decid|decis|we'll|we will|i'll use|i will use|going with|chose|choose to|opted|settled on"
    r"|agreed|let's|lets|switch"
    r"|todo|to-do|next|still need|remaining|left to do|follow|later we|after that"
)
# A request to tell something ("can you share more about the game?", "could you suggest a
# gift?") is a question: its reply is the answer, in whatever words, and it is not left
# open once the asker moves on. A request to do something ("can you remind me on Friday
# to book the vet?") stays open until a reply says it is done.
# (Matched where ``REQUEST_START`` ends: "can you", "please".)
_ASKS_TO_TELL = re.compile(
    r"\s*(?:please |pls |maybe |also )?(?:tell|share|show|describe|list|name"
    r"|(?:make|write|give) (?:me |us )?a (?:short |quick )?list"
    r"|explain|suggest|recommend|say|clarify|elaborate|walk me through|help me understand"
    r"|give (?:me |us )?(?:some |a few |any |more )?(?:ideas?|tips?|advice|details|examples?"
    r"|suggestions?|info))\b",
    re.IGNORECASE,
)
# A reply that does what it was asked in so many words — phatic words, so no sentence of
# it is kept to pair the request with: "Sure thing! Here you go.", "Done!", "Just sent
# it.", "All set."
_DONE = re.compile(
    r"\b(?:here (?:you go|you are|it is|they are)|i(?:'ve| have)?(?: just)? (?:sent|booked"
    r"|added|scheduled|shared|uploaded|emailed|forwarded|ordered) (?:it|them|you|that"
    r"|this|the|a|an|over)\b|you'?re all set|(?:it'?s |all )done\b(?! \w))"
    r"|^\W*(?:(?:sure|ok(?:ay)?|yes|yep)\W+)?(?:done|sent|all set|just sent)\b",
    re.IGNORECASE,
)
_DONE_CHARS = 60  # a sentence that says it is done, in more words than phatic ones
_DONE_TEXT_CHARS = 240


def _says_done(text: str, kept: Sequence[str]) -> bool:
    """True when ``text`` only says that what was asked is done: "Sure thing! Here you
    go." (no sentence kept), "Just sent it." — not "Here you go, here's a pic. Nature
    puts me in a great mood!", which says more, and pairs with a request by its words
    or with none."""
    # Lengths first: a reply that says only this is short (most texts are not).
    if len(text) > _DONE_TEXT_CHARS or any(len(s) > _DONE_CHARS for s in kept):
        return False
    return _DONE.search(text) is not None and all(_DONE.search(s) for s in kept)


# The end of a key that names an exception: "sqlite3.OperationalError: database is
# locked" is an error's message, not the value "database" (by hand, a summary line).
_RAISED = ("Error", "Exception", "Warning", "Exit", "Interrupt")
_FILE_KEYS = frozenset({"path", "file_path", "filepath", "file", "filename"})
_PATH_LIKE = re.compile(r"[/\\]|^~|\.\w{1,8}$")
# What marks a text as part of work on code or systems rather than talk between people:
# a code fence, an indented or brace-ended line, a call ``name(…)``, a dotted call, a
# traceback, or the words of software work. People's chat has almost none of these (a
# URL alone does not count: people share links; nor do words as common in life as at
# work — "class", "build", "test", "service").
_CODE = re.compile(r"```|^(?: {4}|\t)\S|[{};]\s*$|\b\w+\.\w+\(|\b[a-z_]\w*\(\)|Traceback \(",
                   re.MULTILINE)
_WORK_WORDS = re.compile(
    r"\b(?:code|bugs?|functions?|apis?|servers?|deploy\w*|databases?|repo|repository"
    r"|commits?|endpoints?|config\w*|scripts?|modules?|quer(?:y|ies)|cache|handlers?"
    r"|exceptions?|refactor\w*|stack ?trace|logs?|request ids?|pull request|unit tests?"
    r"|compil\w+|python|javascript|typescript|sql)\b",
    re.IGNORECASE,
)


# The readings are named tuples, not frozen dataclasses: each message and each new
# sentence of a first read makes one, and a frozen dataclass's ``__init__`` sets every
# field through ``object.__setattr__`` (two to three times the cost).
class Values(NamedTuple):
    """URLs, file paths, config values and commands written in a text."""

    urls: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    config: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()


class Prose(NamedTuple):
    """One user or assistant text, read (see the module docstring)."""

    kept: tuple[str, ...]  # sentences without phatic ones and headers
    date: date | None  # the date a header line in it names
    preferences: tuple[str, ...]
    decisions: tuple[str, ...]
    soft: tuple[tuple[str, str], ...]  # ("pref" | "decision", sentence): see _read_prose
    remaining: tuple[str, ...]
    asks: tuple[tuple[str, bool], ...]  # (sentence, is a request rather than a question)
    unclaimed: tuple[str, ...]
    values: Values
    errors: tuple[str, ...]
    done: bool = False  # it only says what was asked is done ("Here you go."): _says_done


@dataclass(frozen=True)
class Result:
    keep: tuple[str, ...]  # error lines worth keeping
    error: str  # the line that says the call failed, or ""


@dataclass(frozen=True)
class Call:
    name: str
    shown: str
    key: str  # name and key arguments: calls with the same key are one action
    kind: str
    paths: tuple[str, ...]
    commands: tuple[str, ...]
    command_values: tuple[Values, ...]
    url: str


def read_prose(text: str, role: str, names: Sequence[str]) -> Prose:
    """``text`` (a user or assistant message) read once; cached by content."""
    return CACHE.get(("prose", role, tuple(names), *text_key(text)),
                     lambda: _read_prose(whole_sentences(truncate_for_summary(text)), role,
                                         names),
                     size=min(len(text), CONTENT_MAX))


# Where a text was cut: by the window guard (C19: "[… 161 characters cut here …]", the
# whole text in the archive) or to the summariser's cap per message (C9).
_CUT = re.compile(r"\n?(?:" + re.escape(CUT_MARKER_START) + r"[\d,]+ characters cut here"
                  r"[^\]\n]*(?:\n[^\]\n]*)?\]|" + re.escape(TRUNCATION_MARKER.strip())
                  + r")\n?")
_ENDS_SENTENCE = frozenset(".!?。！？…:;\"'”’)»")
_LAST_END = re.compile(r"(?s:.*)(?:[.!?。！？…](?=\s)|\n)")
_FIRST_END = re.compile(r"[.!?。！？…](?:\s|$)|\n")


def whole_sentences(text: str) -> str:
    """``text`` without the pieces of sentences a cut left on either side of it: by hand
    (Spanish, 3,072 tokens) the window guard had cut a reply after "¡La ceremonia es en
    la iglesia de San Pabl" and before "s el domingo 13 de junio", and the two pieces
    were a note "… San Pabl s el domingo …"; a memory call the model wrote as JSON text,
    cut so, was a note of JSON. A piece that is a whole line — it ends a sentence, or the
    next starts one — stays."""
    if CUT_MARKER_START not in text and "[truncated]" not in text:
        return text
    parts = _CUT.split(text)
    for i in range(len(parts) - 1):
        head = parts[i].rstrip()
        last_line = head.rsplit("\n", 1)[-1].lstrip()
        if head and head[-1] not in _ENDS_SENTENCE and last_line[:1] not in MARKDOWN_MARKS:
            whole = _LAST_END.match(head)
            parts[i] = head[:whole.end()] if whole else ""
        tail = parts[i + 1].lstrip()
        if tail and not _starts_sentence(tail):
            end = _FIRST_END.search(tail)
            parts[i + 1] = tail[end.end():] if end else ""
    return "\n".join(part for part in parts if part.strip())


def _starts_sentence(text: str) -> bool:
    first = text[0]
    return (first.isupper() or first.isdigit() or first in MARKDOWN_MARKS
            or first in "¡¿\"'“‘([" or (not first.isascii() and not first.islower()))


def shows_work(text: str, prose: Prose, *, rules: bool = True) -> bool:
    """True when ``text`` (read as ``prose``) is part of work on code or systems rather
    than talk between people: code, paths, commands, config values, errors, a rule or
    decision for the assistant (``rules``: when they count) other than one for its
    answers, or the words of software work (``_CODE``, ``_WORK_WORDS``). Asked only of
    turns without tools (``extract.py``), so a work session never pays for it; cached by
    content."""
    values = prose.values
    if prose.errors or values.paths or values.config or values.commands:
        return True
    # A rule for the answers to come ("please remember: I'm allergic to peanuts, so never
    # suggest recipes with peanuts") is how people talk to an AI assistant: by hand it
    # made a chat's first compaction a work session's, whose memory calls took the room
    # of the partner, the dog and the trip.
    if rules and (prose.preferences or prose.decisions) and not is_standing_rule(text):
        return True
    return CACHE.get(("work", *text_key(text)), lambda: bool(
        _CODE.search(text) or _WORK_WORDS.search(text)))


# A list of turns without tools is a conversation when at most this share of its texts
# show work (code, paths, commands, config values, errors, a rule or decision given to
# the assistant — "never deploy on Fridays": ``shows_work``), and it has at least this
# many texts: a lone question says too little to tell.
_TECHNICAL_SHARE = 0.1
_MIN_TALK_TEXTS = 4


def is_talk(texts: Sequence[tuple[str, Prose]], *, tools: bool, named: bool,
            continued: bool = False) -> bool:
    """People talking rather than work being done: no tool used for work (``tools``:
    one other than the assistant's memory and session search was), and either the
    speakers are ``named`` (people) or the texts are prose (see ``_TECHNICAL_SHARE``):
    ``mnemo chat`` and most chat APIs carry no names. ``continued``: the turns go on
    a conversation (the previous summary was one), so a few texts are enough to tell —
    a live chat's compactions in a small window summarise two or three at a time."""
    if tools:
        return False
    if named:
        return True
    if len(texts) < (0 if continued else _MIN_TALK_TEXTS):
        return False
    # Going on a conversation, one text that looks like work does not end it: by hand the
    # embedded model wrote a memory call as JSON text, the one text of a compaction, and
    # the summary became a work session's whose "Last step" line (the JSON) took the
    # room of every note.
    allowed = max(int(_TECHNICAL_SHARE * len(texts)), 1 if continued else 0)
    work = 0
    for text, prose in texts:
        # Going on a conversation, a rule or a decision is part of it ("don't forget to
        # prepare emotionally", "never suggest meat dishes"): by hand and in the live
        # benchmark one such sentence among a compaction's five texts made the chat's
        # summary a work session's, and the notes gave way to "User said" lines.
        work += shows_work(text, prose, rules=not continued)
        if work > allowed:
            return False
    return True


def read_notes(prose: Prose, *, speaker: str, role: str, order: int, today: date | None,
               names: Sequence[str], soft: bool = True, focus: date | None = None
               ) -> list[Note]:
    """The notes of ``prose``'s unclaimed sentences, for a message at ``order``;
    ``soft``: also those of its soft claims (which only a conversation keeps);
    ``focus``: the day to come the conversation named last (``dates.resolve_relative``)."""
    claims = prose.soft if soft else ()
    if not prose.unclaimed and not claims:
        return []
    key = ("notes", speaker, role, today, focus, tuple(names), prose.unclaimed, claims)

    def read() -> tuple[Note, ...]:
        def notes(sentences: Sequence[str], soft: bool) -> list[Note]:
            # Made at this order: a first reading needs no copy (``Note.at``).
            return take_notes(sentences, speaker=speaker, role=role, order=order,
                              today=today, names=names, soft=soft, checked=True,
                              focus=focus)
        return tuple(notes(prose.unclaimed, False)
                     + notes([s for _, s in claims], True))

    found: tuple[Note, ...] = CACHE.get(key, read)
    return [n.at(order) for n in found]


def read_result(text: str, kind: str) -> Result:
    """A tool result read once; cached by content and the kind of its call.

    A near-copy of a result read before (the same rest behind another first line) is
    found in ``results.RESTS`` without hashing the text; anything else by content hash.
    """
    where = None
    if not text.startswith(PRUNED_TOOL_PLACEHOLDER):
        rest, where = RESTS.find(text)
        if rest is not None:
            CACHE.hits += 1
            return _rest_result(rest, kind)

    def read() -> Result:
        if where is None:
            return _read_result(text, kind)
        return _rest_result(RESTS.read(text, where), kind)

    return CACHE.get(("result", kind, *text_key(text)), read, size=min(len(text), CONTENT_MAX))


def read_call(call: Any) -> Call:
    """A tool call read once; cached by its name and arguments (its id is the caller's:
    the same call made again has another)."""
    function = call.get("function") if isinstance(call, dict) else None
    raw = function.get("arguments") if isinstance(function, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(raw, str) or not isinstance(name, str | None):
        return _read_call(call)
    return CACHE.get(("call", name, raw), lambda: _read_call(call))


def _read_prose(text: str, role: str, names: Sequence[str]) -> Prose:
    day: date | None = None
    kept: list[str] = []
    prefs: list[str] = []
    decisions: list[str] = []
    soft: list[tuple[str, str]] = []
    remaining: list[str] = []
    asks: list[tuple[str, bool]] = []
    unclaimed: list[str] = []
    names = tuple(names)
    for sentence in sentences(text):
        if sentence[0] in MARKDOWN_MARKS:
            sentence = without_markdown(sentence)
            if not sentence:
                continue
        read = _sentence(sentence, role, names)
        if read is None:  # phatic
            continue
        if read.header:
            day = read.date or day
            continue
        kept.append(sentence)
        # A rule or a decision is claimed when it is one ("Never call …", "we decided to
        # use …"). The same words in a remark ("it's not always easy") make a soft claim:
        # the sentence is also a note, and the reader keeps one of the two — the note in
        # a conversation, the claim in a work session, where only rules are claimed and
        # a remark stays a note.
        # Between people every claim is soft (``extract.py`` keeps the notes there).
        if read.preference:
            if read.rule:
                prefs.append(sentence)
            soft.append(("pref", sentence))
        if read.decision:
            if read.rule:
                decisions.append(sentence)
            if not read.preference:
                soft.append(("decision", sentence))
        if read.remaining:
            remaining.append(sentence)
        if read.ask:
            asks.append((sentence, read.request))
            told = _told_before_asking(sentence, names)
            if told is not None:
                unclaimed.append(told)
        if not read.claimed:
            unclaimed.append(sentence)
    errors = tuple(best_error_lines(error_lines(text), 3)) if role == "user" else ()
    return Prose(tuple(kept), day, tuple(prefs), tuple(decisions), tuple(soft),
                 tuple(remaining), tuple(asks), tuple(unclaimed), read_values(text), errors,
                 _says_done(text, kept))


class _Sentence(NamedTuple):
    """What one sentence of a user or assistant text is, by itself (``_sentence``)."""

    header: bool = False  # a session header line (``[Session 3, 1:14 pm on …]``)
    date: date | None = None  # … and the date it names
    preference: bool = False
    decision: bool = False
    rule: bool = False  # the preference or decision is an instruction
    remaining: bool = False
    request: bool = False
    ask: bool = False  # a request or a question

    @property
    def claimed(self) -> bool:
        return self.preference or self.decision or self.remaining or self.ask


_UNDATED_HEADER = _Sentence(header=True)


# A question that opens with what the asker tells: "I'm flying to Hangzhou next Friday
# for work, can we meet?", "我下周五要去杭州出差，我们可以见面吗？". The ask is claimed (a
# question, paired or let go), and the plan went with it: the clause before it is a note.
_TOLD_THEN_ASKED = re.compile(r"^(?P<told>[^?？]{6,}?)(?:,\s+|，\s*)(?P<ask>[^,，]{3,}[?？])$")
_ASKS_FIRST = re.compile(r"^(?:who|what|when|where|why|how|which|do|does|did|is|are|was|were"
                         r"|have|has|can|could|would|will|should|shall|any|anything)\b",
                         re.IGNORECASE)


def _told_before_asking(sentence: str, names: tuple[str, ...]) -> str | None:
    """The statement a question opens with, ended as a sentence, if it has one."""
    match = _TOLD_THEN_ASKED.match(sentence)
    if match is None:
        return None
    told = match.group("told").strip()
    if told.isascii() and told.count(" ") < 3:  # "In that case, …", "I see, …"
        return None
    if _ASKS_FIRST.match(told) or REQUEST_START.match(told) or is_phatic(told, names):
        return None
    return told + ("。" if not told.isascii() else ".")


# A list item's bold label before chit-chat labels nothing: by hand the embedded model's
# last tip, "8. **Enjoy Your Cooking**: Enjoy your cooking!", became a note.
_BOLD_LABEL = re.compile(r"\*\*[^*\n]{1,60}(?::\*\*|\*\*\s*:)\s*")


# A sentence is read the same way in every text it stands in, and an agent's turns
# repeat theirs ("Never change the public API.", "All tests pass."): read each once.
# Bounded; the patterns are searched on the sentence, where they match exactly when
# they match it inside its text (a sentence is cut at whitespace and line breaks).
@lru_cache(maxsize=65_536)
def _sentence(sentence: str, role: str, names: tuple[str, ...]) -> _Sentence | None:
    """What ``sentence`` is (see ``_Sentence``); None when it is phatic."""
    if HEADER_LINE.fullmatch(sentence):
        found = find_date(sentence)
        return _Sentence(header=True, date=found) if found else _UNDATED_HEADER
    if is_phatic(sentence, names) or ("**" in sentence and (
            label := _BOLD_LABEL.match(sentence)) and is_phatic(sentence[label.end():], names)):
        return None
    low = sentence.lower()
    claims = not sentence.isascii() or _CLAIM_WORDS.search(low) is not None
    preference = claims and role == "user" and _PREFERENCE_LC.search(low) is not None
    decision = claims and _DECISION_LC.search(low) is not None
    opening = REQUEST_START.match(sentence)
    question = sentence.endswith(("?", "？"))
    # A rule for the answers to come is no ask to answer once: "Please remember: I'm
    # allergic to peanuts, so never suggest recipes with peanuts." had stood under
    # Pending User Asks, and not under Constraints & Preferences (seen by hand).
    standing = role == "user" and not question and is_standing_rule(sentence)
    request = not standing and _is_request(sentence, opening)
    return _Sentence(
        preference=preference, decision=decision,
        # A question sets no rule ("Have we decided to use Postgres?"); a request put as
        # one may ("Can you always answer in French?").
        rule=(preference or decision) and (opening is not None or not question)
        and is_instruction(sentence),
        remaining=claims and role == "assistant" and _REMAINING_LC.search(low) is not None,
        request=request, ask=not standing and (opening is not None or question))


# Tools an assistant uses while it talks with a person — its memory, its past sessions —
# not to do work: a chat in which it saved "Ana has a beagle" is still a conversation
# (``mnemo chat`` on any model calls ``memory`` whenever the user says something about
# themselves).
TALK_TOOLS = frozenset({"memory", "session_search"})
# A call of one as a summary prints it ("memory target=user action=add content=…"), which
# the embedded model copies into its reply with its result's fields after it (by hand:
# 'Memory target=user action=add usage=15% — … entry_count=5 message="Entry added."').
_CALL_ECHO = re.compile(rf"(?:{'|'.join(sorted(TALK_TOOLS))})(?: \w+=\S+){{2}}",
                        re.IGNORECASE)


def is_call_text(text: str) -> bool:
    """True when ``text`` (an assistant's) is nothing but tool calls or their results
    written as JSON — ``{"name": "memory", "arguments": {…}}``, ``returned: {…}`` — or
    begins as a talk tool's call a summary prints (``_CALL_ECHO``): a small model
    imitating a call, no prose to read (by hand such a text, the one of a compaction,
    made a chat's summary a work session's)."""
    body = text.lstrip()
    if _CALL_ECHO.match(body):
        return True
    if not body.startswith(("{", "returned:", "<tool_")):
        return False  # most texts are prose from their first character: nothing to scan
    result = body.startswith("returned:")
    values = made_of_json(CALL_MARKS.sub(" ", body))
    if values is None:  # a call per line, malformed (``call_line_names``)
        return call_line_names(body) is not None
    # A JSON answer the user asked for is prose of its kind: only calls, or what a
    # "returned:" text says a call gave, are none.
    return result or all(_is_call(value) for value in values)


def _is_call(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get("name"), str) and (
        "arguments" in value or "parameters" in value)


def is_request(ask: str) -> bool:
    """True when ``ask`` (a sentence that asks) asks for something to be done, not told
    (see ``_ASKS_TO_TELL``): it stays open until a reply says it is done."""
    return _is_request(ask, REQUEST_START.match(ask))


def _is_request(sentence: str, opening: re.Match[str] | None) -> bool:
    return opening is not None and not _ASKS_TO_TELL.match(sentence, opening.end())


def read_values(text: str) -> Values:
    """URLs, paths, config values and commands written in prose."""
    urls = tuple(u.rstrip(".,:;") for u in URL.findall(text)) if "://" in text else ()
    prose = URL.sub(" ", text) if urls else text
    paths: list[str] = []
    # A path holds a "/" or a ".", and no whitespace: only the words holding one are
    # searched (joined by spaces, each in the same context as in the text), which
    # spares ``PATH`` its attempts at every other character.
    words = " ".join(w for w in prose.split() if "/" in w or "." in w)
    for match in PATH.finditer(words):
        path = match.group(0)
        if "/" not in path or "." in path.rsplit("/", 1)[-1] or path.startswith(
                ("/", "~/", "./", "../")) or path.count("/") >= 2:
            paths.append(path)
    config = [f"{match[1]}={match[2]}" for match in (
        CONFIG.finditer(prose) if "=" in prose or ":" in prose else ())
              if match[1] not in NOT_CONFIG_KEYS and not FILE_NAME.fullmatch(match[1])
              and not match[1].endswith(_RAISED) and not _speaker_label(prose, match)]
    commands: list[str] = []
    if "`" in prose:
        for span in BACKTICK.findall(prose):
            first = span.split(maxsplit=1)[0] if span.strip() else ""
            if first in COMMAND_WORDS:
                commands.append(span)
    if "$ " in prose:
        for line in prose.splitlines():
            stripped = line.strip()
            if stripped.startswith("$ ") and len(stripped) > 3:
                commands.append(stripped[2:])
    return Values(urls, tuple(paths), tuple(config), tuple(commands))


def _speaker_label(prose: str, match: re.Match[str]) -> bool:
    """Whether ``match`` (of ``CONFIG``) is a name in capitals labelling what someone
    says, not a setting: "LUCIA: Hola, Lucy! …" — a word after the colon, then a comma,
    "!" or "?". By hand the embedded model wrote its answer so, and "Config: LUCIA=Hola"
    stood in a Spanish chat's summary for every later compaction."""
    key, value = match[1], match[2]
    return (key.isalpha() and prose[match.end(1):match.start(2)].strip() == ":"
            and value[:1].isupper() and value[1:].isalpha() and value[1:].islower()
            and prose[match.end(2):match.end(2) + 1] in (",", "!", "?"))


def _read_result(text: str, kind: str) -> Result:
    """``text`` (a tool result, or the summariser's view of one) read whole."""
    if text.startswith(PRUNED_TOOL_PLACEHOLDER):
        # Cleared output: the lines under the placeholder and its description are the
        # failure lines the compressor kept (already known to report an error).
        lines = [ln for ln in truncate_for_summary(text).split("\n")[2:] if ln.strip()]
        return Result(tuple(lines), one_line(lines[0], 200) if lines and kind != "read"
                      else "")
    failed = _json_failure(text)
    if failed:
        return Result((), failed)
    # A read returns a file's text: an error in it is content, not a failure, unless
    # the tool says so on its first line ("Error: no such file").
    head = error_lines(first_line(text)) if kind == "read" else []
    return Result(*kept_lines(view_error_lines(text), head, read=kind == "read"))


# A tool that answers in JSON says it failed with a flag ('{"success": false, "error":
# "Not saved: …"}', as mnemo's own tools do). By hand, three refused memory calls of the
# embedded model — one saving a name it made up — were listed under Done.
_FAILED_FLAG = re.compile(r'^\s*\{[^{}]{0,300}?"(?:success|ok)"\s*:\s*false\b')
_JSON_FAILURE_MAX = 20_000


def _json_failure(text: str) -> str:
    """The error a JSON tool result that says it failed gives (one line), else ""."""
    if not _FAILED_FLAG.match(text) or len(text) > _JSON_FAILURE_MAX:
        return ""
    try:
        found = json.loads(text)
    except ValueError:
        return ""
    if not isinstance(found, dict) or found.get("success", found.get("ok")) is not False:
        return ""
    said = found.get("error") or found.get("message") or "failed"
    return one_line(str(said), 200)


def _rest_result(rest: Rest, kind: str) -> Result:
    """The result of a view whose first line adds nothing (``results.py``), kept with
    its rest for each kind of call."""
    read = kind == "read"
    found = rest.readings.get(read)
    if found is None:
        found = rest.readings[read] = Result(*kept_lines(rest.lines, [], read=read))
    return found  # type: ignore[return-value]


def _read_call(call: Any) -> Call:
    parsed = parse_call(call)
    name, args = parsed.name or "tool", parsed.arguments
    kind = tool_kind(name, args)
    paths: list[str] = []
    commands: list[str] = []
    values: list[Values] = []
    url = ""
    if isinstance(args, dict):
        # "path" and "file" name a file whatever their value; "target", "source" and the
        # like only when the value looks like one (the memory tool's target is "user").
        paths = [v for k in PATH_KEYS if isinstance(v := args.get(k), str) and v and (
            k in _FILE_KEYS or _PATH_LIKE.search(v))]
        for k in COMMAND_KEYS:
            value = args.get(k)
            if isinstance(value, str) and value.strip():
                commands.append(value)
                values.append(read_values(value))
        found = args.get("url")
        if isinstance(found, str) and found.startswith(("http://", "https://")):
            url = found
    shown = key_arguments(args)
    return Call(name, shown, f"{name} {shown}".strip(), kind, tuple(paths), tuple(commands),
                tuple(values), url)
