"""One model call as the agent makes it: streamed when the face wants it, tool calls
accepted however the model wrote them.

``ModelCaller.complete`` asks the client for a reply. When the face (the CLI) set an
``on_text`` callback and the client can stream (``supports_streaming``, a capability as
data), the reply is streamed and its text handed over as it is generated — through a
``StreamGate``, so a reply that turns out to be a tool call written as text is not shown.
Either way the reply then goes through ``accept_text_tool_calls``: a call a small model
wrote into its text, naming an offered tool with valid arguments, becomes a real call.

``partial_text`` keeps what was shown of the reply in progress, so an interrupted turn
can store the part the user saw.

A reply that only repeats the user's question, or one question of their message
(``repeats_question``), is no answer: the embedded 0.5B model, in a long chat where it
had restated the user's messages, went on to answer every question with the question
itself (seen by hand). Streamed, such a reply is held while it is word for word the
start of a question (``questions_of``), and not shown when it is a repeat; the agent
asks once more (``agent.py``). And a clause that restates the memory reminder is not
shown (``withheld``: ``nudges.reminder_clause``), as it is not kept.

Nor is a reply that copies an earlier reply of the conversation given to another message
(``copied_reply``): by hand the embedded model answered five different messages with the
paragraph it had written about its first memory call ("The user's last message is: …"),
each copy the model of the next. Streamed, a reply that opens with an earlier reply's
first words is held to its end, and not shown when it is a copy; the agent asks once
more without the copied reply in the request (``agent.py``). So is a reply made only of
sentences said earlier in the conversation — the user's or its own — none of them about
the message it answers (``restates_earlier``, in a small window): streamed, a reply that
opens like such a sentence is held to its end.

A reply that loops — says again, word for word, what it already said — is ended where
the loop began, and its stream stopped there (``loops.py``).

In a small window, nor is a reply in another language than an English message
(``other_language``): by hand the embedded model answered "How do I say thank you in
Portuguese?" in Portuguese, then every later English message too ("O nome de Biscuit é
Tom."). Streamed, the reply's first words wait until they tell its language
(``_HeldIfForeign``); the agent asks once more, and takes the second reply as it is.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from difflib import SequenceMatcher
from typing import Any

from mnemo.agent.loops import LoopWatch, loop_start
from mnemo.context.extract import kind_asked
from mnemo.context.summary.salience import undone_in
from mnemo.context.textscan import STOPWORDS, sentences
from mnemo.llm import ChatClient, ChatResponse
from mnemo.llm.streaming import StreamHandlers
from mnemo.llm.text_tool_calls import (
    StreamGate,
    accept_text_tool_calls,
    call_attempt,
    echoes_results,
    instruction_openings,
)
from mnemo.messages import Message

__all__ = ["ModelCaller", "copied_reply", "other_language", "questions_of",
           "repeats_question", "restates_earlier"]

log = logging.getLogger("mnemo.agent")

_WORD = re.compile(r"\w+")
# A reply whose words match this share of a question's (difflib's ratio over the two
# word sequences) repeats it: "Can you suggest a name for your basil plant?" to "… for
# my basil plant?" is 0.89; a reply that quotes the question and then answers it in a
# few words ("What am I allergic to? Peanuts, so no satay.") is below 0.7.
_REPEAT_RATIO = 0.8
_MIN_QUESTION_WORDS = 3  # "Really?" answered "Really?" may be fine
# A reply of at least this many words whose words match an earlier reply's this closely
# copies it (the by-hand copies, with another name quoted in them, were above 0.9); a
# short one ("You're welcome!", "Peanuts.") may well be said twice.
_COPY_RATIO = 0.8
_MIN_COPY_WORDS = 12
_OPENING_WORDS = 6  # a streamed reply opening with an earlier one's first words is held


class ModelCaller:
    """Calls ``client``; streams to ``on_text`` / ``on_progress`` when both sides can."""

    def __init__(self, client: ChatClient,
                 withheld: Callable[[str], str] | None = None) -> None:
        self.client = client
        self.withheld = withheld  # judges each streamed clause (``ClauseFilter``)
        self.on_text: Callable[[str], None] | None = None
        self.on_progress: Callable[[int, int], None] | None = None
        self.partial_text = ""

    @property
    def streams(self) -> bool:
        return self.on_text is not None and bool(
            getattr(self.client, "supports_streaming", False))

    def complete(self, messages: Sequence[Message],
                 tools: Sequence[Mapping[str, Any]] | None,
                 known: Sequence[Mapping[str, Any]] = (),
                 results: Sequence[str] = (), stop_at: Sequence[str] = (),
                 asked: str = "", earlier: Sequence[tuple[str, str]] = (),
                 said_before: Sequence[str] = (), language_of: str = "") -> ChatResponse:
        """The reply to ``messages``, with text tool calls made real. A streamed reply that
        is nothing but a call written as text — of ``tools`` or of the ``known`` ones not
        offered this time — a copy of this turn's tool ``results``, a repeat of the
        user's question ``asked``, a copy of one of the ``earlier`` replies (each with
        the message it answered), or only sentences of ``said_before`` (the earlier
        messages) about something else, or one in another language than the message
        ``language_of`` (``other_language``) is not shown: the agent decides what the
        user sees instead. Nor is a streamed reply from the first of the ``stop_at``
        strings on (``StreamGate``). A reply that loops ends where the loop began,
        streamed or not (``loops.py``)."""
        self.partial_text = ""
        if not self.streams or self.on_text is None:
            response = self.client.complete(messages, tools=tools)
            return accept_text_tool_calls(
                _without_loop(response, loop_start(response.text or "", asked)), tools)
        sink = self.on_text

        def show(text: str) -> None:
            self.partial_text += text
            sink(text)

        gate = StreamGate(show, stop_at, echo_of=questions_of(asked),
                          withheld=self.withheld,
                          copy_openings=[*_openings(asked, earlier, said_before),
                                         *instruction_openings(results, _OPENING_WORDS)])
        held = _HeldIfForeign(gate.feed, language_of)
        watch = LoopWatch(held.feed, asked)
        handlers = StreamHandlers(on_text=watch.feed, on_progress=self.on_progress,
                                  stop=watch.stopped)
        complete: Any = self.client.complete  # the streaming keyword is a capability
        response = accept_text_tool_calls(
            _without_loop(complete(messages, tools=tools, stream=handlers), watch.cut), tools)
        text = response.text or ""
        watch.finish()
        held.finish()
        attempt = call_attempt(text, [*(tools or ()), *known])
        gate.finish(was_call=bool(response.tool_calls) or attempt is not None
                    or echoes_results(text, results) or repeats_question(text, asked)
                    or bool(copied_reply(text, asked, earlier))
                    or restates_earlier(text, asked, said_before) or held.foreign)
        return response


def _without_loop(response: ChatResponse, cut: int | None) -> ChatResponse:
    """``response`` with its text ended where it began to loop (``loops.py``)."""
    if cut is None:
        return response
    log.info("the reply looped: kept its first %d of %d characters, the repeat dropped",
             cut, len(response.text or ""))
    return replace(response, message={**response.message,
                                      "content": (response.text or "")[:cut].rstrip() or None})


# English words that other languages written in Latin letters do not share ("a", "do",
# "no", "in" are Portuguese, Spanish or German words too), and some of those languages'
# own: a reply with none of the first and one of the second, or two words with letters
# English does not write, is in another language ("Café Nero, Leeds." is not).
_ENGLISH = frozenset({
    "the", "is", "are", "was", "were", "i", "you", "your", "my", "me", "to", "of",
    "and", "it", "for", "with", "that", "this", "be", "what", "we", "our", "have",
    "has", "can", "will", "at", "not", "there", "they", "he", "she",
})
_FOREIGN = frozenset({
    "de", "del", "la", "el", "le", "les", "des", "y", "por", "und", "der", "die", "das",
    "mit", "ein", "eine", "que", "como", "para", "você", "é", "em", "um", "uma", "os",
    "com", "seu", "sua", "meu", "minha", "nosso", "nossa", "também", "las", "los",
    "est", "es", "sont", "avec", "pour", "ist", "nicht", "não",
})
# A message that names a language or asks for a translation may want its answer in it.
_LANGUAGE_NAMED = re.compile(
    r"(?i)\b(?:translat\w*|portuguese|spanish|french|german|italian|chinese|japanese"
    r"|korean|russian|dutch|arabic|hindi|greek|polish|swedish|turkish|latin)\b")
_LANGUAGE_WORDS = 4  # fewer words than this ("Obrigado!", "Bom dia, Ana.") tell nothing
_UNDECIDED_WORDS = 8  # a streamed reply that told nothing by then is shown


def other_language(text: str, asked: str) -> bool:
    """True when ``asked`` is an English message that names no language and the reply
    ``text`` is in another language (see ``_ENGLISH``)."""
    return _asks_in_english(asked) and _foreign(_WORD.findall(text.lower()))


def _asks_in_english(asked: str) -> bool:
    words = _WORD.findall(asked.lower())
    return (len(words) >= 3 and asked.isascii() and bool(_ENGLISH.intersection(words))
            and not _LANGUAGE_NAMED.search(asked))


def _foreign(words: Sequence[str]) -> bool:
    return (len(words) >= _LANGUAGE_WORDS and not _ENGLISH.intersection(words)
            and (bool(_FOREIGN.intersection(words))
                 or sum(not word.isascii() for word in words) >= 2))


class _HeldIfForeign:
    """Streamed text to ``feed``, but a reply's first words wait until they tell whether
    it is in another language than the message ``asked`` (``other_language``): an
    English word, another language's words, or eight words without either. A reply
    that is is never fed (``foreign``). A message that is not English holds nothing."""

    def __init__(self, feed: Callable[[str], None], asked: str) -> None:
        self._feed = feed
        self._judging = bool(asked) and _asks_in_english(asked)
        self._held = ""
        self.foreign = False

    def feed(self, delta: str) -> None:
        if not self._judging:
            if not self.foreign:
                self._feed(delta)
            return
        self._held += delta
        words = _WORD.findall(self._held.lower())
        if words and self._held[-1:].isalnum():
            words.pop()  # a word still being written
        # An English word tells at once (most replies: "The …", "Your dog …"), as does
        # another language's word once there are enough; else the first few words do.
        if (_ENGLISH.intersection(words) or _foreign(words)
                or len(words) >= _UNDECIDED_WORDS):
            self._decide(words)

    def finish(self) -> None:
        if self._judging:
            self._decide(_WORD.findall(self._held.lower()))

    def _decide(self, words: Sequence[str]) -> None:
        self._judging = False
        self.foreign = _foreign(words)
        if not self.foreign and self._held:
            self._feed(self._held)
        self._held = ""


def _copyable(asked: str, earlier: Sequence[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """The ``earlier`` replies (with their words) a reply to ``asked`` may not copy: long
    enough, and given to another message (the same question twice may well get the same
    answer twice)."""
    asked_words = _WORD.findall(asked.lower())
    out: list[tuple[str, list[str]]] = []
    for message, reply in earlier:
        words = _WORD.findall(reply.lower())
        if len(words) < _MIN_COPY_WORDS:
            continue
        matcher = SequenceMatcher(None, _WORD.findall(message.lower()), asked_words,
                                  autojunk=False)
        if matcher.ratio() < _COPY_RATIO:
            out.append((reply, words))
    return out


def _openings(asked: str, earlier: Sequence[tuple[str, str]],
              said_before: Sequence[str] = ()) -> list[str]:
    replies = [" ".join(words[:_OPENING_WORDS]) for _, words in _copyable(asked, earlier)]
    # Each earlier message's opening and each of its sentences': a restatement may start
    # anywhere ("Hi! I'm Tomas, …" opens on a sentence too short to tell).
    said = [_WORD.findall(text.lower()) for text in said_before]
    told = [" ".join(words[:_OPENING_WORDS]) for words in (*said, *_sentence_words(said_before))
            if len(words) >= _MIN_OPENING_SENTENCE_WORDS]
    return list(dict.fromkeys((*replies, *told)))


# A reply made only of sentences said before, this many words in all, that shares no
# content word with the message it answers restates the conversation instead of
# answering (``restates_earlier``); an earlier sentence of at least this many words holds
# a streamed reply that opens like it.
_MIN_RESTATED_WORDS = 6
_MIN_OPENING_SENTENCE_WORDS = 4


def _sentence_words(texts: Sequence[str]) -> list[list[str]]:
    return [words for text in texts for sentence in sentences(text)
            if (words := _WORD.findall(sentence.lower()))]


def restates_earlier(text: str, asked: str, said_before: Sequence[str]) -> bool:
    """True when the reply ``text`` is only sentences of ``said_before`` (the earlier
    messages of the conversation, the user's and the replies), word for word or nearly,
    none of them about ``asked``: by hand (3,072 tokens) the embedded model answered
    "How do I say thank you in Portuguese?" with "You should not add peanuts. Remember:
    I'm allergic to peanuts, …", and later messages with "Hi! I'm Tomas, I work as a
    nurse in Leeds." — the user's first message. A restatement that shares a word with
    the message ("We have a dog called Biscuit." to "What's my dog's name?") may well be
    the answer — unless the word is one the message takes back: by hand the model
    answered "Actually we changed the trip: it's Porto now, not Lisbon." with the user's
    own "I'm learning Portuguese because we're going to Lisbon in May.". Nor is one that
    gives what the message asks for (a place for "where", a day for "when", a number, a
    name for "who": ``extract.kind_asked``) and shares a word with it besides the
    question's frame (``_gives_what_is_asked``): by hand "Where are we going on
    Saturday?" was answered with the user's own "We're going to Maastricht rather than
    the Ardennes, …", and asked again."""
    parts = _sentence_words([text])
    if sum(map(len, parts)) < _MIN_RESTATED_WORDS:
        return False
    taken = undone_in(asked)
    asked_words = {w for w in _WORD.findall(asked.lower())
                   if len(w) >= 3 and w not in STOPWORDS and w not in taken}
    # A message without content words ("Why?") gives nothing to judge a reply against.
    if not asked_words or any(asked_words.intersection(words) for words in parts):
        return False
    if _gives_what_is_asked(asked, text):
        return False
    earlier = _sentence_words(said_before)
    known = {tuple(words) for words in earlier}
    matcher = SequenceMatcher(None, autojunk=False)
    for words in parts:
        if tuple(words) in known:
            continue
        matcher.set_seq2(words)
        for before in earlier:
            matcher.set_seq1(before)
            if _copies(matcher):
                break
        else:
            return False
    return True


# The words a question is made of whatever it asks about: "going" of "Where are we going
# on Saturday?" is about something, as the stop words have it not (``STOPWORDS``).
_QUESTION_FRAME = frozenset(
    """where when what which who whom whose how why are was were the and you your our
    did does will can could would should for with from this that they them their have
    has had been there""".split()  # noqa: SIM905 - a word list reads better as text
)


def _gives_what_is_asked(asked: str, text: str) -> bool:
    """True when a sentence of ``text`` gives the kind of thing the last question of
    ``asked`` asks for (``extract.kind_asked``) and ``text`` shares a word with it
    besides its frame: "… we're going to Maastricht …" for "Where are we going on
    Saturday?", "The meeting moved to Friday … Sophie will host it at her place on
    Biltstraat 45 …" for "Where is the meeting?", not "We planned a day trip to the
    Ardennes on Saturday." for "When do my parents land?"."""
    questions = [s for s in sentences(asked) if s.rstrip().endswith("?")]
    question = questions[-1] if questions else ""
    gives = kind_asked(question) if question else None
    if gives is None:
        return False
    terms = {w for w in _WORD.findall(question.lower())
             if len(w) >= 3 and w not in _QUESTION_FRAME}
    return bool(terms.intersection(_WORD.findall(text.lower()))) and any(
        gives(s) for s in sentences(text))


def _copies(matcher: SequenceMatcher[str]) -> bool:
    """The matcher's two word sequences match at least ``_COPY_RATIO`` (the cheap upper
    bounds first: most pairs fail them)."""
    return (matcher.real_quick_ratio() >= _COPY_RATIO and matcher.quick_ratio() >= _COPY_RATIO
            and matcher.ratio() >= _COPY_RATIO)


def copied_reply(text: str, asked: str, earlier: Sequence[tuple[str, str]]) -> str | None:
    """The earlier reply that the reply ``text`` to ``asked`` copies, word for word or
    nearly (see ``_COPY_RATIO``), or None. ``earlier``: (a message, the reply to it)."""
    said = _WORD.findall(text.lower())
    if len(said) < _MIN_COPY_WORDS:
        return None
    # An earlier answer that gives what this message asks may be its answer too: by
    # hand "Where are we going on Saturday?" got "We're going to Maastricht rather than
    # the Ardennes, …", given before to another message, and was asked again.
    if _gives_what_is_asked(asked, text):
        return None
    matcher = SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(said)
    for reply, words in _copyable(asked, earlier):
        matcher.set_seq1(words)
        if _copies(matcher):
            return reply
    return None


def repeats_question(text: str, asked: str) -> bool:
    """True when the reply ``text`` only repeats the question ``asked`` (a user message
    that asks something), or one question of it, in its words or nearly (see
    ``_REPEAT_RATIO``)."""
    said = _WORD.findall(text.lower())
    if not said:
        return False
    matcher = SequenceMatcher(None, autojunk=False)
    matcher.set_seq1(said)
    for question in questions_of(asked):
        matcher.set_seq2(_WORD.findall(question.lower()))
        if matcher.ratio() >= _REPEAT_RATIO:
            return True
    return False


def questions_of(asked: str) -> list[str]:
    """What a reply to ``asked`` may only repeat: the message when it asks something, and
    each question in it of a few words. By hand the embedded model answered "Please
    remember: I'm allergic to peanuts, so never suggest recipes with peanuts. What
    should I cook tonight?" with "What should I cook tonight?"."""
    if not _is_question(asked):
        return []
    parts = [asked, *(s for s in sentences(asked) if s.endswith(("?", "？")))]
    return [part for part in dict.fromkeys(parts) if _is_question(part)]


def _is_question(text: str) -> bool:
    return "?" in text and len(_WORD.findall(text)) >= _MIN_QUESTION_WORDS
