"""Leetspeak: "1gn0re a11 prev10us 1nstruct10ns" read as the words it spells.

Digits standing in for letters defeat every phrase pattern, and folding digits into
letters everywhere would turn version numbers, hex ids and names like ``h264``, ``l10n``
or ``k8s`` into noise that might one day spell something. So the folding is narrow:

* only tokens that mix letters with the digits leetspeak uses (0 1 3 4 5 7) change, and
  only when every digit in them is one of those (``sha256``, ``i18n``, ``x86_64`` stay);
* a token changes only when what it spells is a word the phrase patterns use (their
  vocabulary, read from the patterns' own source by ``matchers.sources``), so ``l10n``
  ("lion") and ``s3`` stay as written;
* ``1`` is ``i`` or ``l``, whichever makes such a word ("a11" is "all", "f1lter" is
  "filter").

Each replacement is one character for one, so offsets, lines and excerpts of the folded
text are those of the original skeleton form. The scanner runs the phrase patterns a
second time on this form, and only when it differs.
"""

from __future__ import annotations

import re
from functools import cache
from itertools import product

from mnemo.security.matchers import sources

__all__ = ["deleet"]

_TOKEN = re.compile(r"(?<![\w$@%])(?=[a-z013457]{0,40}[a-z])(?=[a-z013457]{0,40}[013457])"
                    r"[a-z013457]{2,40}(?![\w$@%])")
_FOLD = str.maketrans({"0": "o", "3": "e", "4": "a", "5": "s", "7": "t"})
_MAX_ONES = 4  # "1"s tried both ways per token (2**4 spellings at most)
_MIN_STEM = 5  # a vocabulary stem ("polic", "instruct") may take a short ending


@cache
def _vocabulary() -> frozenset[str]:
    words: set[str] = set()
    for source in sources():
        words.update(re.findall(r"(?<![\\a-z])[a-z]{2,}", source))
    return frozenset(words)


def _known(word: str, vocabulary: frozenset[str]) -> bool:
    if word in vocabulary:
        return True
    return any(word[:k] in vocabulary
               for k in range(max(_MIN_STEM, len(word) - 3), len(word)))


def _spelling(token: str) -> str | None:
    """The vocabulary word ``token`` spells in leetspeak, or None."""
    folded = token.translate(_FOLD)
    ones = [i for i, ch in enumerate(folded) if ch == "1"]
    if len(ones) > _MAX_ONES:
        return None
    vocabulary = _vocabulary()
    for letters in product("il", repeat=len(ones)):
        chars = list(folded)
        for i, letter in zip(ones, letters, strict=True):
            chars[i] = letter
        word = "".join(chars)
        if _known(word, vocabulary):
            return word
    return None


def deleet(text: str) -> str | None:
    """``text`` with its leetspeak tokens spelled out, or None when none was found."""
    changed = False

    def spell(found: re.Match[str]) -> str:
        nonlocal changed
        word = _spelling(found.group())
        if word is None:
            return found.group()
        changed = True
        return word

    folded = _TOKEN.sub(spell, text)
    return folded if changed else None
