"""Stances in memory entries: who likes what, and whether the entry flips it (SPEC M9).

A word-level grounding check passes "Carla has a preference for long explanations" when
Carla said "I hate long explanations": every word was said, but the claim is the opposite
of hers. This module reads the *stances* in a text — a liking or a disliking word, with
negation ("don't like"), and the object that follows it ("long explanations") — so the
grounding check can refuse an entry whose stance on an object is the reverse of the one
said in the evidence, and never said the same way.

A comparison carries two stances: "prefer tabs over spaces" is for tabs and against
spaces. Objects are compared as sets of canonical stems (the caller's stemmer, which maps
synonyms to one stem): an entry's stance conflicts only with an evidence stance on the
same object or a narrower one ("long explanations" vs "long explanations", not "short
answers" vs "long answers"), so paraphrases and partial overlaps are never refused here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Stance", "contradictions", "stances"]

_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|[.,;:!?()\n]|\d+", re.UNICODE)

_FOR = frozenset(str.split("""
like likes liked liking love loves loved loving enjoy enjoys enjoyed enjoying prefer prefers
preferred preferring preference preferences fond fan favorite favourite want wants wanted
adore adores adored appreciate appreciates appreciated
"""))
# An allergy is against its object too: by hand the embedded model saved "Oskar loves
# eggs." from "One of the kids, Oskar, is allergic to eggs".
_AGAINST = frozenset(str.split("""
hate hates hated hating dislike dislikes disliked disliking detest detests detested loathe
loathes loathed avoid avoids avoided allergic intolerant
"""))
_NEGATORS = frozenset(str.split("""
not no never don't doesn't didn't isn't aren't wasn't won't hardly neither nor
"""))
# "can't stand" / "cannot stand" is a disliking.
_CANNOT = frozenset({"can't", "cannot", "can’t"})
# A rule for the assistant takes a stance too, when it says always or never: "never
# suggest meat dishes" is against meat dishes, "always use tabs" for tabs ("suggest a
# dinner" takes none). By hand, the embedded model saved "I prefer meat dishes" after
# "I prefer vegetarian recipes. Never suggest meat dishes.": every word was said.
_DIRECTIVE = frozenset(str.split("""
suggest suggests recommend recommends give offer offers serve serves include use uses
mention propose send show cook make add put
"""))
_ALWAYS = frozenset({"always", "only"})
# Words that end an object; after a comparison word the object that follows gets the
# opposite stance ("prefer tabs over spaces", "rather than", "instead of").
_COMPARISON = frozenset({"over", "than", "instead"})
_BOUNDARY = frozenset({"and", "but", "or", "because", "while", "though", "although", "so",
                       "when", "if", "which", "who", "that", "since"})
_OBJECT_LINK = frozenset({"for", "of", "to", "the", "a", "an", "having", "getting", "being",
                          "very", "really", "much", "most", "more", "all", "any", "some",
                          "them", "it", "those", "these", "rather"})
_MAX_OBJECT_WORDS = 4


@dataclass(frozen=True)
class Stance:
    """For (``True``) or against (``False``) an object, as canonical stems; and the
    words that said it, for messages."""

    positive: bool
    obj: frozenset[str]
    phrase: str


def stances(text: str, canon: Callable[[str], str | None]) -> list[Stance]:
    """The stances ``text`` takes. ``canon`` maps a lower-cased word to its canonical stem,
    or to None for a word that carries no content (stop and frame words)."""
    tokens = [t.lower().replace("’", "'") for t in _TOKEN.findall(text)]
    found: list[Stance] = []
    for i, token in enumerate(tokens):
        positive = _polarity(tokens, i)
        if positive is None:
            continue
        if _negated(tokens, i):
            positive = not positive
        obj, phrase, rest = _object(tokens, i + 1, canon)
        if obj:
            found.append(Stance(positive, obj, " ".join([token, *phrase])))
        if rest is not None:
            other, other_phrase, _ = _object(tokens, rest, canon)
            if other:
                found.append(Stance(not positive, other,
                                    " ".join([token, *phrase, *other_phrase])))
    return found


def contradictions(entry: Iterable[Stance], evidence: Iterable[Stance],
                   ) -> list[tuple[str, str]]:
    """(entry phrase, evidence phrase) for each stance of ``entry`` that the evidence takes
    the other way round on the same object, and never the same way."""
    said = list(evidence)
    flipped: list[tuple[str, str]] = []
    for stance in entry:
        same_object = [s for s in said if stance.obj <= s.obj]
        if same_object and all(s.positive != stance.positive for s in same_object):
            flipped.append((stance.phrase, same_object[0].phrase))
    return flipped


def _polarity(tokens: list[str], i: int) -> bool | None:
    token = tokens[i]
    if token in _FOR:
        return True
    if token in _AGAINST:
        return False
    if token == "stand" and i and tokens[i - 1] in _CANNOT:
        return False
    if token in _DIRECTIVE and i and (tokens[i - 1] in _ALWAYS or _negated(tokens, i)):
        return True  # for; "never suggest …" is then negated by the caller: against
    return None


def _negated(tokens: list[str], i: int) -> bool:
    """A negator among the three words before ``i`` in the same clause ("don't really
    like"; not "No, I like")."""
    for token in reversed(tokens[max(0, i - 3):i]):
        if token in _NEGATORS:
            return True
        if not token[:1].isalnum() or token in _BOUNDARY:
            return False
    return False


def _object(tokens: list[str], start: int, canon: Callable[[str], str | None],
            ) -> tuple[frozenset[str], list[str], int | None]:
    """The object that starts at ``start``: its stems, its words, and where a compared
    object starts (after "over" / "than" / "instead of"), if there is one."""
    stems: set[str] = set()
    words: list[str] = []
    for j in range(start, len(tokens)):
        token = tokens[j]
        if token in _COMPARISON and not stems:
            break  # "tabs preferred over spaces": the object came before the verb
        if token in _COMPARISON:
            nxt = j + 1
            if token == "instead" and nxt < len(tokens) and tokens[nxt] == "of":
                nxt += 1
            return frozenset(stems), [*words, token], nxt
        if (not token[:1].isalnum() or token in _BOUNDARY or token in _NEGATORS
                or _polarity(tokens, j) is not None):
            break
        words.append(token)
        if token in _OBJECT_LINK:
            continue
        stem = canon(token)
        if stem is not None:
            stems.add(stem)
            if len(stems) == _MAX_OBJECT_WORDS:
                break
    return frozenset(stems), words, None
