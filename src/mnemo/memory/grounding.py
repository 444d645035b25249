"""Grounded memory writes (SPEC M9): a model may only remember what was actually said.

A small model asked to save "Hi! I'm Ana and I like short answers" may write "I love
eating cookies", or embellish "works on billing" into "has worked on billing for over a
year". A false memory is worse than none — it reaches every later system prompt, unseen
by the user — so before a write made by the model is stored, its text is checked against
the *evidence*: what the user and the tools said in the live conversation (never the
assistant's own words).

The check is deterministic and offline (no second model call):

* **names and numbers** must appear in the evidence exactly (``Carla``, ``8080``,
  ``3.11``; small number words count as their digits);
* **content words** (stop words and the frame words every memory entry uses — "user",
  "prefers", "name" — aside) must be supported by an evidence word with the same stem,
  or by one of a few synonyms people use for preferences ("like" ~ "prefer" ~ "love");
* **CJK** text is checked by characters, since it has no spaces to split on;
* in ``strict`` mode a **name is linked** to what the entry says of it: some evidence text
  that names it also says one of the other things the entry's sentence claims. A small
  model merges two facts into a false one ("I teach maths at a school in Glasgow", from
  "I teach maths at a school in Bristol" and "my brother lives in Glasgow now"), every
  word of which was said. A name the user introduced themselves by ("I'm Priya") is
  linked to everything;
* in every mode but ``off``, an entry may not say the user **is someone else**: "I am
  Jonas" or "Name: Jonas" when the user introduced themselves by another name, or called
  Jonas someone of theirs ("my partner Jonas").

``strict`` refuses a write with any unsupported word; ``lenient`` (for hosted models,
which hallucinate less and paraphrase more) accepts one with names and numbers intact
and most content words supported. ``off`` accepts everything. Writes a user makes through
the CLI never come here.

``route_target`` is the second half of M9: facts about the user belong in ``user``,
facts about the environment in ``memory``; a write whose text clearly says which one it
is, and names the other, is moved.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from mnemo.languages import FUNCTION_WORDS, LOWER_CASE_FUNCTION_WORDS
from mnemo.memory.polarity import Stance, contradictions, stances

__all__ = [
    "NUMBER_WORDS",
    "Evidence",
    "GroundingMode",
    "GroundingVerdict",
    "asked_only",
    "check_grounding",
    "corrected_entry",
    "grounded_part",
    "names_in",
    "near_duplicate",
    "refusal_message",
    "route_target",
    "split_grounded",
    "suggested_entry",
]

GroundingMode = Literal["strict", "lenient", "off"]

# Lenient mode: share of content words that must be supported.
_LENIENT_SUPPORT = 0.6
_MAX_REPORTED = 6  # unsupported words named in a refusal
_MAX_SUGGESTED_CHARS = 200  # a sentence of the evidence offered as an entry

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*", re.UNICODE)
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_SENTENCE_END = re.compile(r"\n+|(?<=[.!?;])\s+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")

_STOP_WORDS = frozenset(str.split("""
a an the and or but if then so of to in on at by for from with without about as into onto
over under than that this these those there here it its is are was were be been being am
do does did done doing have has had having will would shall should can could may might
must not no nor very just also too only own same such both each few more most other some
any all i me my mine myself you your yours we us our ours he him his she her hers they
them their theirs what which who whom whose when where why how again further once up down
out off s t don't doesn't didn't isn't aren't i'm i've i'd i'll it's let's that's
get gets got really quite much many lot lots one ones thing things
"""))

# Words a memory entry uses to frame a fact, whoever said it: "User prefers…",
# "The user's name is…", "Remember that…". They carry no claim of their own.
_FRAME_WORDS = frozenset(str.split("""
user users user's person people assistant agent note notes fact facts memory remember
remembered said says say told tell tells mentioned mentions mention stated states state
name named called call goes go is are was his her their they he she them
prefer prefers preferred preference preferences preferring
like likes liked want wants wanted wish wishes
currently usually always generally often sometimes
project projects repo repository codebase environment setup machine team system
use uses used using
occupation role title location hometown age email timezone info details
"""))

# The same frame words in CJK text ("用户喜欢…" is "the user likes…").
_CJK_FRAME = re.compile("用户|用戶|使用者|ユーザー|사용자")

# Words people use for the same preference: one stands for the others.
_SYNONYMS: tuple[frozenset[str], ...] = (
    frozenset({"like", "love", "enjoy", "prefer", "fond", "favorite", "favourite", "want",
               "adore", "appreciate"}),
    frozenset({"hate", "dislike", "detest", "loathe", "avoid", "can't", "cannot"}),
    frozenset({"short", "brief", "concise", "terse", "succinct", "shorter"}),
    frozenset({"long", "lengthy", "verbose", "longer", "wordy"}),
    frozenset({"answer", "response", "reply", "explanation", "answers", "responses"}),
    frozenset({"work", "job", "employ", "employed"}),
    frozenset({"live", "reside", "based", "stay", "from", "move", "moved", "relocate"}),
)

# Number words and their digits ("one" is left out: it is a pronoun as often as a
# number). The summary's restatement check reads them too (``summary/notes.py``).
NUMBER_WORDS: dict[str, str] = {
    "zero": "0", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10",
    "eleven": "11", "twelve": "12", "twenty": "20", "hundred": "100"}

# Common CJK function characters (particles, pronouns, copulas) that support nothing.
_CJK_FUNCTION = frozenset("的了是在我你他她它们这那有和就不也都要会说吗呢吧啊很与及把被着过个之")

_USER_SIGNALS = re.compile(
    r"\b(?:user|user's|the user|his|her|their|he|she|they|prefers?|likes?|dislikes?|hates?|"
    r"loves?|name is|is called|lives? in|born|birthday|works? (?:on|at|as|for)|"
    r"communication|speaks?|timezone|time zone|pronouns?)\b", re.IGNORECASE)
_ENV_SIGNALS = re.compile(
    r"(?:[~.]?/[\w.-]+/|`[^`]+`|\b[\w-]+\.(?:py|js|ts|go|rs|toml|ya?ml|json|md|sh|cfg|ini|"
    r"lock|txt)\b|\b(?:repo|repository|server|port|version|install(?:ed)?|deploy(?:s|ed)?|"
    r"config(?:uration)?|database|endpoint|branch|pipeline|build|compiler|docker|"
    r"kubernetes|env(?:ironment)? var(?:iable)?s?|command|cli|api|package|library|"
    r"python|node|npm|pip|make|ci)\b)", re.IGNORECASE)
# How people introduce themselves: "I'm Priya", "my name is Priya", "call me Priya",
# "I go by Priya", "I'm called Priya".
_INTRODUCED = re.compile(r"\b(?:I['’]m|I am|[Mm]y name is|[Cc]all me|[Nn]ame:|I go by|"
                         r"(?:I['’]m|I am) (?:called|named))\s+([A-Z][^\W\d_]+)")
_USER_ONLY_NAMES = re.compile(r"^(?:the )?user\b", re.IGNORECASE)
# What an entry's sentence says the user is called ("I am Jonas", "Name: Jonas", "The
# user's name is Jonas"); not "I am Jonas's partner", which says whose, nor "Partner
# name: Jonas" ("Name:" opens the sentence).
_SAYS_USER_IS = re.compile(r"(?:\b(?:I['’]m|I am|[Mm]y name is|[Cc]all me|"
                           r"(?:[Tt]he )?[Uu]ser(?:['’]s name)? is)|"
                           r"^\s*(?:(?:[Tt]he )?[Uu]ser(?:['’]s)? )?[Nn]ame:)\s+"
                           r"([A-Z][^\W\d_]+)\b(?!['’])")


@dataclass(frozen=True)
class GroundingVerdict:
    """Whether a memory entry is supported by the evidence, and which words are not."""

    grounded: bool
    unsupported: tuple[str, ...] = ()
    support: float = 1.0  # share of the entry's checked words found in the evidence
    # Stances the entry takes the other way round from the evidence ("prefers long
    # explanations" when the user said "I hate long explanations").
    contradicted: tuple[str, ...] = ()
    said_instead: tuple[str, ...] = ()  # what the evidence said, one per contradiction
    # Names that were said, but never with the rest of what the entry says of them.
    unlinked: tuple[str, ...] = ()


class Evidence:
    """What the user and the tools said, indexed for ``check_grounding``.

    Built once per check from the texts (the agent passes the user messages and tool
    results of its live conversation); each text is read once.
    """

    def __init__(self, texts: Iterable[str]) -> None:
        self.stems: set[str] = set()
        self.words: set[str] = set()
        self.numbers: set[str] = set()
        self.cjk: set[str] = set()
        self.stances: list[Stance] = []
        self.sentences: list[str] = []  # short sentences, to offer as an entry
        # Where each capitalised word was said (indices into ``_texts``) and the names
        # people introduced themselves by: what links a name to a claim.
        self._named: dict[str, set[int]] = {}
        self._texts: list[str] = []
        self._text_stems: dict[int, frozenset[str]] = {}
        self._lower: set[str] = set()  # words also said in lower case: not only names
        self.introduced: set[str] = set()
        # Verbs the user said they did, and those said as done to them (``user_did``).
        self._user_verbs: dict[str, str] | None = None
        self._done_to_user: set[str] = set()
        for text in texts:
            self._read(_normalise(text))

    def _read(self, text: str) -> None:
        words = self.words
        index = len(self._texts)
        self._texts.append(text)
        for match in _WORD.finditer(text):
            raw = match.group()
            word = raw.lower()
            if raw[0].isupper():
                # "Alina's class" says something of Alina.
                self._named.setdefault(_possessor(word), set()).add(index)
            elif raw[0].islower():
                self._lower.add(word)
            if word in words:
                continue  # stemmed already: a long text says most words many times
            words.add(word)
            self.stems.add(_stem(word))
            if word in NUMBER_WORDS:
                self.numbers.add(NUMBER_WORDS[word])
        for match in _NUMBER.finditer(text):
            self.numbers.update(_number_forms(match.group()))
        self.cjk.update(_CJK.findall(text))
        self.stances.extend(stances(text, _canonical_stem))
        self.sentences += [part.strip() for part in _SENTENCE_END.split(text)
                           if 0 < len(part.strip()) <= _MAX_SUGGESTED_CHARS]
        self.introduced.update(name.lower() for name in _INTRODUCED.findall(text))

    def is_name(self, word: str) -> bool:
        """True when ``word`` (lower-cased) was said, always capitalised: a name even at
        the start of an entry's sentence ("Ravi teaches maths")."""
        return word in self._named and word not in self._lower and word not in _STOP_WORDS

    def links(self, name: str, claims: frozenset[str]) -> bool:
        """True when a text that says ``name`` (lower-cased) also says one of ``claims``
        (claim stems), or when nothing ties the name to a text: it was introduced by its
        bearer, only ever written in lower case, or the entry claims nothing else."""
        where = self._named.get(name)
        if not claims or not where or name in self.introduced:
            return True
        for index in where:
            stems = self._text_stems.get(index)
            if stems is None:
                stems = self._text_stems[index] = _claim_stems(self._texts[index])
            if claims & stems:
                return True
        return False

    def names_as(self, name: str, role: str) -> bool:
        """True when a text calls ``name`` (lower-cased) the ``role`` ("my daughter
        Alina": Alina is the daughter) and none says ``name``'s ``role``."""
        named = re.compile(rf"\b{re.escape(role)}s? {re.escape(name)}\b", re.IGNORECASE)
        owner = re.compile(rf"\b{re.escape(name)}['’]s {re.escape(role)}\b", re.IGNORECASE)
        return (any(named.search(text) for text in self._texts)
                and not any(owner.search(text) for text in self._texts))

    def said_who_user_is(self, name: str) -> str | None:
        """For a ``name`` (lower-cased) the user never introduced themselves by: the
        sentence that calls it someone of the user's ("my partner Jonas", "Jonas is my
        partner", "my dog is named Pixel") or names someone else by it ("a cat called
        Figo"), else the one in which the user introduced themselves by another name;
        None when neither was said (nothing tells who the user is)."""
        if name in self.introduced:
            return None
        named = re.escape(name)
        theirs = re.compile(
            rf"\b(?:my|our)\s+(?:[^\W\d_]+(?:['’]s)?\s+){{1,2}}(?:(?:is|was)\s+)?"
            rf"(?:(?:named|called)\s+)?{named}\b|\b{named}(?:,|\s+is)\s+(?:my|our)\b|"
            rf"(?<!I['’]m )(?<!I am )\b(?:named|called)\s+{named}\b", re.IGNORECASE)
        introduction = None
        for text in self._texts:
            for sentence in _SENTENCE_END.split(text):
                if theirs.search(sentence):
                    return sentence.strip().rstrip(",;:")
                if introduction is None and _INTRODUCED.search(sentence):
                    introduction = sentence.strip().rstrip(",;:")
        return introduction

    def user_did(self, stem: str) -> str | None:
        """The sentence in which the user said they (or "we") did the verb of ``stem``,
        unless a text also says it was done to them; else None."""
        if self._user_verbs is None:
            self._user_verbs, self._done_to_user = {}, set()
            for text in self._texts:
                for sentence in _SENTENCE_END.split(text):
                    for match in _USER_DOES.finditer(sentence):
                        self._user_verbs.setdefault(_stem(match.group(1).lower()),
                                                    sentence.strip())
                    self._done_to_user.update(_stem(m.group(1).lower())
                                              for m in _DONE_TO_USER.finditer(sentence))
        if stem in self._done_to_user:
            return None
        return self._user_verbs.get(stem)

    def supports_word(self, word: str) -> bool:
        """``word`` or its stem was said, or a synonym of it was (preference words)."""
        stem = _stem(word)
        if word in self.words or stem in self.stems:
            return True
        return any(stem in group and group & self.stems for group in _SYNONYM_STEMS)


def check_grounding(content: str, evidence: Evidence | Sequence[str],
                    mode: GroundingMode = "strict") -> GroundingVerdict:
    """Is ``content`` (a memory entry the model wants to write) supported by ``evidence``?"""
    if mode == "off":
        return GroundingVerdict(True)
    if not isinstance(evidence, Evidence):
        evidence = Evidence(evidence)
    text = _normalise(content)
    unsupported: list[str] = []
    exact_missing = False
    checked = supported = 0
    for number in dict.fromkeys(m.group() for m in _NUMBER.finditer(text)):
        checked += 1
        if _number_forms(number) & evidence.numbers:
            supported += 1
        else:
            unsupported.append(number)
            exact_missing = True
    for match in _WORD.finditer(text):
        raw = match.group()
        word = raw.lower()
        if word in NUMBER_WORDS:
            checked += 1
            if NUMBER_WORDS[word] in evidence.numbers or word in evidence.words:
                supported += 1
            else:
                unsupported.append(raw)
                exact_missing = True
            continue
        if _no_claim(word) or (raw.islower() and word in LOWER_CASE_FUNCTION_WORDS):
            continue  # ("del" and "una" in Spanish; "Del" and "Una" may be names)
        checked += 1
        if _is_name(raw, match.start(), text):
            # A name matches as a whole word, never a stem; "Alina's" is Alina's.
            if word in evidence.words or _possessor(word) in evidence.words:
                supported += 1
            else:
                unsupported.append(raw)
                exact_missing = True
        elif evidence.supports_word(word):
            supported += 1
        else:
            unsupported.append(raw)
    for char in dict.fromkeys(_CJK.findall(_CJK_FRAME.sub(" ", text))):
        if char in _CJK_FUNCTION:
            continue
        checked += 1
        if char in evidence.cjk:
            supported += 1
        else:
            unsupported.append(char)
    share = supported / checked if checked else 1.0
    unique = tuple(dict.fromkeys(unsupported))
    # A flipped stance is a falsehood in every mode, however well its words are grounded;
    # so is the user made someone else.
    pairs = dict(contradictions(stances(text, _canonical_stem), evidence.stances))
    pairs.update(_someone_else_as_user(text, evidence))
    flipped, said = tuple(pairs), tuple(pairs.values())
    if mode == "strict":
        unlinked = () if unique else _unlinked_names(text, evidence)
        turned = dict(_user_turned_object(text, evidence))
        flipped, said = flipped + tuple(turned), said + tuple(turned.values())
        return GroundingVerdict(not unique and not flipped and not unlinked, unique, share,
                                flipped, said, unlinked)
    grounded = not exact_missing and not flipped and share >= _LENIENT_SUPPORT
    return GroundingVerdict(grounded, unique, share, flipped, said)


# Words that time or soften a claim without making one: a name said beside "now" is not
# thereby linked to whatever else is "now".
_UNLINKING = frozenset({"now", "actually", "still", "recently", "today", "also", "again",
                        "new", "currently"})


# Where a sentence joins two statements: "Kersti loves dinosaurs, the cake will be a
# stegosaurus" says nothing of Kersti and the cake together.
_CLAUSE_BREAK = re.compile(r"\s*[,;:]\s+|\s+[-–—]\s+|\s+(?:and|but|so|because|while)\s+",
                           re.IGNORECASE)


def _unlinked_names(text: str, evidence: Evidence) -> tuple[str, ...]:
    """The names in ``text`` no evidence text links to the rest of their clause.

    A clause, not the sentence: the embedded model wrote "Kersti loves dinosaurs, the
    cake will be shaped like a stegosaurus." from "Alina loves dinosaurs, so the cake
    will be shaped like a stegosaurus" and "My wife Kersti is baking the cake" (seen by
    hand), and the cake of the second clause had linked Kersti to the whole sentence.
    A clause that says nothing but its names ("Kersti, my wife, …") is read with the
    rest of its sentence."""
    unlinked: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        found = [(_possessor(m.group()), m.group(), m.start()) for m in _WORD.finditer(sentence)
                 if _is_name(m.group(), m.start(), sentence)
                 or (m.group()[0].isupper() and evidence.is_name(_possessor(m.group())))]
        if not found:
            continue
        # What a clause says of its names: its other words. Another name is no such
        # claim: the user's own name stands beside every fact of theirs.
        names = {_stem(name) for name, _, _ in found}
        whole = _claim_stems(sentence) - _UNLINKING - names
        breaks = list(_CLAUSE_BREAK.finditer(sentence))
        clauses = list(zip([0] + [b.end() for b in breaks],
                           [b.start() for b in breaks] + [len(sentence)], strict=True))
        for name, raw, at in found:
            clause = next(sentence[start:end] for start, end in clauses if at < end)
            claims = (_claim_stems(clause) - _UNLINKING - names) or whole
            if not evidence.links(name, claims) or _owner_of_itself(sentence, raw, at, name,
                                                                    evidence):
                unlinked.append(raw)
    return tuple(dict.fromkeys(unlinked))


# A verb with the user as its object ("… are inviting us"), and the user doing one ("we
# invited …", "I also called …"): a word between may time or soften it.
_DONE_TO_USER = re.compile(r"\b([^\W\d_]+)\s+(?:us|me)\b", re.IGNORECASE)
_USER_DOES = re.compile(r"\b(?:we|i)\s+(?:(?:just|already|also|all|both|then|finally|"
                        r"recently|never|\w+ly)\s+)?([^\W\d_]+)", re.IGNORECASE)
# Verbs whose two sides do the same thing: "Liis met us" is "we met Liis".
_MUTUAL = frozenset({"met", "meet", "marry", "date"})


def _user_turned_object(text: str, evidence: Evidence) -> list[tuple[str, str]]:
    """(entry sentence, what the user said) for each sentence of ``text`` that makes the
    user the object of a verb the user only ever said they did: by hand the embedded
    model saved "Twelve kids from Alina's class are inviting us to the party." from
    "We invited twelve kids from Alina's class"."""
    turned: list[tuple[str, str]] = []
    for sentence in _SENTENCE_END.split(text):
        for match in _DONE_TO_USER.finditer(sentence):
            verb = match.group(1).lower()
            if verb in _STOP_WORDS or _stem(verb) in _MUTUAL:
                continue
            said = evidence.user_did(_stem(verb))
            if said is not None:
                turned.append((sentence.strip(), said))
                break
    return turned


def _someone_else_as_user(text: str, evidence: Evidence) -> list[tuple[str, str]]:
    """(entry sentence, what the user said) for each sentence of ``text`` that gives the
    user a name they are not: by hand the embedded model saved "I am Jonas. I have a cat
    called Figo." for Marta, from "My partner Jonas is a nurse; we have a cat called
    Figo." (she had said "Hi, I'm Marta.")."""
    found: list[tuple[str, str]] = []
    for sentence in _SENTENCE_END.split(text):
        for name in _SAYS_USER_IS.findall(sentence):
            # Only a name the evidence says as one: "I'm Vegan." capitalises "vegan".
            said = (evidence.said_who_user_is(name.lower())
                    if evidence.is_name(name.lower()) else None)
            if said is not None:
                found.append((sentence.strip(), said))
                break
    return found


def _owner_of_itself(sentence: str, raw: str, at: int, name: str, evidence: Evidence) -> bool:
    """True when ``raw`` ("Alina's") owns the word after it ("daughter") in ``sentence``
    while the evidence only ever calls the name that ("my daughter Alina"): by hand the
    embedded model saved "Alina's daughter turned seven next Saturday." from "My
    daughter Alina turns seven next Saturday", a granddaughter nobody has."""
    if not raw.lower().replace("’", "'").endswith("'s"):
        return False
    role = _WORD.match(sentence, at + len(raw) + 1)
    return role is not None and evidence.names_as(name, role.group().lower())


def _possessor(word: str) -> str:
    """``word`` lower-cased, without a possessive "'s" ("Priya's" is Priya's name)."""
    word = word.lower().replace("’", "'")
    return word[:-2] if word.endswith("'s") else word


# A question that says something of its asker ("Did I tell you I'm vegan?") or sets a
# rule ("Can you always answer in French?") states a fact as well as asking.
_STATES = re.compile(r"\b(?:I['’]m|I am|I['’]ve|I have|I (?:hate|like|love|prefer)|my|"
                     r"we['’]re|we are|our|always|never|from now on|remember|keep in mind|"
                     r"please)\b", re.IGNORECASE)


def asked_only(content: str, evidence: Evidence) -> str | None:
    """The user's question that ``content`` only retells, or None: every claim of the
    entry is in one question of the evidence, and the evidence's statements do not make
    them all. By hand the embedded model saved "Cook tonight." from "What should I cook
    tonight?": a question is no fact about the user."""
    claims = _claim_stems(content) - _UNLINKING
    if not claims:
        return None
    # The questions first: most entries retell none, and then no statement is read (a
    # work session's evidence holds whole files).
    asked = next((sentence for text in evidence._texts if "?" in text or "？" in text
                  for sentence in _questions(text) if claims <= _claim_stems(sentence)),
                 None)
    if asked is None:
        return None
    stated: set[str] = set()
    for text in evidence._texts:
        for sentence in (part.strip() for part in _SENTENCE_END.split(text)):
            if sentence and not _is_asking(sentence):
                stated |= _claim_stems(sentence)
    return None if claims <= stated else asked


def _is_asking(sentence: str) -> bool:
    """A question that says nothing of its asker nor sets a rule (see ``_STATES``)."""
    return sentence.endswith(("?", "？")) and not _STATES.search(sentence)


def _questions(text: str) -> list[str]:
    return [sentence for part in _SENTENCE_END.split(text)
            if _is_asking(sentence := part.strip())]


def grounded_part(content: str, evidence: Evidence,
                  mode: GroundingMode = "strict") -> str:
    """The sentences (and lines) of ``content`` that are grounded, joined; "" if none.

    Small models append what they last read to a fact ("I prefer tabs. 2% — 40/1,375
    chars"): this is the fact without the echo."""
    return split_grounded(content, evidence, mode)[0]


def split_grounded(content: str, evidence: Evidence,
                   mode: GroundingMode = "strict") -> tuple[str, str]:
    """``content``'s grounded sentences (and lines), joined, and the others, joined."""
    kept: list[str] = []
    dropped: list[str] = []
    for part in (part.strip() for part in _SENTENCE_END.split(content)):
        if part:
            (kept if check_grounding(part, evidence, mode).grounded else dropped).append(part)
    return " ".join(kept), " ".join(dropped)


def suggested_entry(content: str, evidence: Evidence) -> str | None:
    """The user's (or a tool's) own sentence that says most of what ``content`` claims,
    to offer in a refusal; None when no sentence but a question shares a content word
    with it."""
    claims = _claim_stems(content)
    best: tuple[int, int, str] | None = None
    for sentence in evidence.sentences:
        # A question is no entry (``asked_only``): by hand "What should I cook tonight?"
        # was offered, beside the user's "I'm allergic to peanuts, …", and copied.
        if _is_asking(sentence):
            continue
        shared = len(claims & _claim_stems(sentence))
        if shared and (best is None or (shared, -len(sentence)) > best[:2]):
            best = (shared, -len(sentence), sentence)
    return best[2] if best else None


def near_duplicate(content: str, entries: Iterable[str]) -> str | None:
    """An entry that already says what ``content`` says (the same content words, up to
    stems and preference synonyms), or None. Small models save one fact twice in a turn
    ("I like short answers", then "I prefer shorter answers")."""
    # "I now teach maths" says what "I teach maths" says.
    words = _claim_stems(content) - _UNLINKING
    if not words:
        return None
    for entry in entries:
        if words <= _claim_stems(entry):
            return entry
    return None


def corrected_entry(content: str, taken_back: Iterable[str], entries: Iterable[str],
                    negated: Iterable[str] = ()) -> str | None:
    """The entry that ``content`` corrects, or None: the user took back a name
    (``taken_back``, lower-cased: "he lives in Glasgow now, not Manchester" takes back
    "manchester"), the entry names it, and the two are about the same thing: besides the
    name, ``content`` says at least half of what the entry claims, and something ("My
    brother Ravi lives in …": brother, Ravi, lives; "My sister lives in …" is another
    thing). ``content`` must not say the name again, unless among the names it puts
    after "not" (``negated``: ``salience.named_after_not``). Of several, the one that
    shares most."""
    taken = {name for name in taken_back if name}
    if not taken or taken & names_in(content) - set(negated):
        return None
    stems = {_stem(name) for name in taken}
    claims = _claim_stems(content) - stems
    best: tuple[int, str] | None = None
    for entry in entries:
        if not taken & names_in(entry):
            continue
        its = _claim_stems(entry) - stems
        shared = len(claims & its)
        if shared and 2 * shared >= len(its) and (best is None or shared > best[0]):
            best = (shared, entry)
    return best[1] if best else None


def names_in(text: str) -> set[str]:
    """The words of ``text``, lower-cased, possessives as their owner ("Priya's": priya)."""
    return {_possessor(m.group()) for m in _WORD.finditer(_normalise(text))}


def _claim_stems(text: str) -> frozenset[str]:
    """The stems of what ``text`` claims: content words (synonyms as one), numbers, CJK."""
    text = _normalise(text)
    stems: set[str] = set(_NUMBER.findall(text))
    for match in _WORD.finditer(text):
        stem = _canonical_stem(match.group().lower())
        if stem is not None:
            stems.add(stem)
    stems.update(c for c in _CJK.findall(_CJK_FRAME.sub(" ", text)) if c not in _CJK_FUNCTION)
    return frozenset(stems)


def _no_claim(word: str) -> bool:
    """True for a word (lower-cased) that claims nothing: a stop or frame word, a
    function word of another language ("tu", "une": ``mnemo.languages``), a CJK one."""
    return (word in _STOP_WORDS or word in _FRAME_WORDS or word in FUNCTION_WORDS
            or _CJK.search(word) is not None)


def _canonical_stem(word: str) -> str | None:
    """A content word's stem, one per synonym group; None for stop, frame and CJK words."""
    if _no_claim(word):
        return None
    stem = _stem(word)
    group = next((g for g in _SYNONYM_STEMS if stem in g), None)
    return min(group) if group else stem


def refusal_message(verdict: GroundingVerdict, suggestion: str | None = None) -> str:
    """The tool error for an ungrounded write: what is unsupported and what to do
    (with ``suggestion``, an entry in the user's own words to save instead)."""
    if verdict.unlinked and not verdict.unsupported and not verdict.contradicted:
        names = ", ".join(repr(n) for n in verdict.unlinked[:_MAX_REPORTED])
        return (f"Not saved: the user said {names}, but not together with the rest of "
                "that sentence, so the entry joins facts that are not one. Save each fact "
                "as the user said it and call memory again"
                + (f", for example with content {suggestion!r}." if suggestion else "."))
    if verdict.contradicted and not verdict.unsupported:
        # Small models copy what a refusal shows them, so it ends with a ready entry made
        # of the user's own words.
        entry, said = verdict.contradicted[0], verdict.said_instead[0]
        how = ("gives the user a name that is not theirs" if _SAYS_USER_IS.search(entry)
               else "says the opposite")
        return (f"Not saved: the entry says {entry!r}, but the user said {said!r}: the "
                f"entry {how}. Call memory again with what the user said, for example "
                f"content \"User: {said}\".")
    words = ", ".join(repr(w) for w in verdict.unsupported[:_MAX_REPORTED])
    more = len(verdict.unsupported) - _MAX_REPORTED
    if more > 0:
        words += f" and {more} more"
    return (f"Not saved: the entry says things nobody in this conversation said ({words}). "
            "Memory keeps only facts the user or a tool stated. Restate the fact in the "
            "user's own words, leaving out anything they did not say, and call memory "
            "again" + (f", for example with content {suggestion!r}." if suggestion else ".")
            + (f" Also, the user said {verdict.said_instead[0]!r}, not "
               f"{verdict.contradicted[0]!r}." if verdict.contradicted else ""))


def route_target(content: str, target: str) -> str:
    """The store ``content`` belongs in: ``target``, unless the text clearly says otherwise.

    An entry with signs of a fact about the user ("prefers", "name is", "works on") and
    none of the environment (paths, commands, servers, versions) goes to ``user``; the
    reverse goes to ``memory``. Anything mixed or unclear stays where the model put it.
    """
    about_user = bool(_USER_SIGNALS.search(content))
    about_env = bool(_ENV_SIGNALS.search(content)) and not _USER_ONLY_NAMES.match(content)
    if target == "memory" and about_user and not about_env:
        return "user"
    if target == "user" and about_env and not about_user:
        return "memory"
    return target


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _is_name(raw: str, start: int, text: str) -> bool:
    """A capitalised word that is not merely the first word of a sentence or clause
    (small models capitalise after a comma too: "Name: Priya, Maintains the API")."""
    if not raw[:1].isupper() or raw.lower() in _STOP_WORDS:
        return False
    before = text[:start].rstrip()
    sentence_start = not before or before[-1] in ".!?:;,\n-•*"
    return not sentence_start or (len(raw) > 1 and raw[1:].lower() != raw[1:])


def _number_forms(number: str) -> set[str]:
    """A number as written and without thousands separators ("8,080" is "8080")."""
    return {number, number.replace(",", "")}


_SUFFIXES = ("ational", "ization", "fulness", "iveness", "ations", "ation", "ments", "ment",
             "ings", "ing", "edly", "ness", "ies", "ied", "ers", "er", "ed", "es", "ly", "s")


def _stem(word: str) -> str:
    """A light suffix-stripping stem: enough that "works", "worked" and "working" meet."""
    word = word.replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    for suffix in _SUFFIXES:
        # Two-letter endings need a longer rest: "reply" and "user" are not "rep" + "ly"
        # and "us" + "er".
        rest = 4 if suffix in ("ly", "er") else 3
        if word.endswith(suffix) and len(word) - len(suffix) >= rest:
            stem = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                stem += "y"
            if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "aeiouls":
                stem = stem[:-1]  # "running" → "run", but "called" stays "call"
            return stem.rstrip("e") if len(stem) > 3 else stem
    return word.rstrip("e") if len(word) > 3 else word


_SYNONYM_STEMS: tuple[frozenset[str], ...] = tuple(
    frozenset(_stem(word) for word in group) for group in _SYNONYMS)
