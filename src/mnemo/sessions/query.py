"""Turning any text a user or a model typed into a safe, useful search.

Nothing of the user's text ever reaches FTS5 as syntax: the query is cut into words here,
each word is sent as a double-quoted string (quotes inside doubled), and the words are
joined by ``OR`` by this code. So ``AND``, ``NOT``, ``*``, ``:``, ``-``, parentheses and
unbalanced quotes are just characters, and no input can raise an FTS5 syntax error.

The words kept are the ones that carry meaning: common English function words ("what",
"did", "the") are dropped unless nothing else is left, duplicates are merged, and each
term remembers whether it can be matched as a prefix. Runs of Chinese, Japanese or Korean
characters are kept apart (``cjk``): the word tokenizer sees a whole sentence without
spaces as one token, so they are matched through the trigram index (3+ characters) or a
substring scan (1–2 characters) instead.

Any text is a valid query at any length, and the cost stays bounded: only the first
``MAX_TERMS`` distinct content words (and ``MAX_TERMS`` CJK runs) are searched, and a
query of symbols only is matched on its first ``MAX_LITERAL_CHARS`` characters.
``ParsedQuery.truncated`` records a cut and ``limits_note`` says it in one line, so a
caller can tell the user or the model instead of cutting silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemo.sessions.records import CJK_CLASS

__all__ = [
    "MAX_LITERAL_CHARS",
    "MAX_TERMS",
    "STOP_WORDS",
    "ParsedQuery",
    "Term",
    "escape_like",
    "fts_quote",
    "limits_note",
    "parse_query",
]

# A question rarely has more than a dozen content words; 32 keeps every real query whole
# while a pasted log of 100,000 words costs 32 index look-ups, not 100,000.
MAX_TERMS = 32
# A symbols-only query is matched as one substring; past this length it is cut (a match
# on 2,000 exact characters is as specific as one on 50,000).
MAX_LITERAL_CHARS = 2000

# Function words of English questions and chat. Kept short on purpose: a word that is
# rare in the archive is worth searching even when it is common in English.
_STOP_TEXT = """
a about above after again against all also am an and any are aren as at be because been
before being below between both but by can cannot could couldn did didn do does doesn
doing don down during each else ever few for from further get gets getting got had hadn
has hasn have haven having he her here hers herself him himself his how i if in into is
isn it its itself just let me might more most much must mustn my myself no nor not now of
off on once only or other ought our ours ourselves out over own really same shall shan she
should shouldn so some such than that the their theirs them themselves then there these
they this those through to too under until up upon us very was wasn way we were weren
what when where whether which while who whom whose why will with won would wouldn yet
you your yours yourself yourselves ll re ve d s t m
like likely kind sort thing things something anything everything one ones
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
# What the unicode61 tokenizer keeps as token characters: letters and digits.
_WORD = re.compile(r"[^\W_]+")
_APOSTROPHE = re.compile("['\u2019\u02bc]")
_TABS_AND_NEWLINES = {ord("\t"): " ", ord("\n"): " ", ord("\r"): " "}
_MIN_PREFIX_CHARS = 4  # shorter prefixes match too much to be worth it


@dataclass(frozen=True)
class Term:
    """One query term: the words of one whitespace-separated chunk (a phrase if several)."""

    tokens: tuple[str, ...]
    stop: bool = False

    @property
    def text(self) -> str:
        return " ".join(self.tokens)

    def fts(self, *, prefix: bool) -> str:
        """This term as an FTS5 string (quoted; a trailing ``*`` for a prefix match)."""
        star = "*" if prefix and len(self.tokens[-1]) >= _MIN_PREFIX_CHARS else ""
        return fts_quote(self.text) + star


@dataclass(frozen=True)
class ParsedQuery:
    """The searchable parts of a query."""

    raw: str
    terms: tuple[Term, ...]  # word terms, stop words already removed when others remain
    cjk: tuple[str, ...]  # runs of CJK characters, in order, without duplicates
    truncated: bool = False  # terms past ``MAX_TERMS`` (or CJK runs) were left out

    @property
    def literal(self) -> str:
        """The query as one literal string, for the substring fallback (capped)."""
        return " ".join(self.raw.split())[:MAX_LITERAL_CHARS]

    @property
    def literal_cut(self) -> bool:
        """True when the substring fallback uses only the start of a longer query."""
        return not self.terms and not self.cjk and len(" ".join(self.raw.split())) > len(
            self.literal)

    @property
    def is_empty(self) -> bool:
        return not self.terms and not self.cjk and not self.literal

    def fts_expression(self, *, prefix: bool = True) -> str:
        """The OR-query over all word terms ("" when there are none)."""
        return " OR ".join(t.fts(prefix=prefix) for t in self.terms)


def fts_quote(text: str) -> str:
    """``text`` as an FTS5 string literal: inside double quotes, quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def escape_like(text: str) -> str:
    """``text`` for a ``LIKE ... ESCAPE '\\'`` pattern, matched literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def parse_query(query: str, *, stop_words: bool = True) -> ParsedQuery:
    """Cut ``query`` into search terms; never fails, whatever the text.

    Reading stops once ``MAX_TERMS`` content words are found (``truncated`` then says
    the rest was left out), so a pasted page costs what a short query costs.
    """
    # NUL and other control characters are never part of stored words.
    flat = query.translate(_TABS_AND_NEWLINES)
    cleaned = flat if flat.isprintable() else "".join(
        ch if ch.isprintable() else " " for ch in flat)
    # "Caroline's", "don't": the tokenizer splits at the apostrophe too, so searching the
    # parts as separate words ("s", "t" are stop words) matches what was indexed.
    chunks = _APOSTROPHE.sub(" ", cleaned).split()
    terms: list[Term] = []
    seen: set[tuple[str, ...]] = set()
    cjk: list[str] = []
    seen_cjk: set[str] = set()
    content = 0  # terms that are not stop words
    truncated = False
    for chunk in chunks:
        if content >= MAX_TERMS or len(cjk) >= MAX_TERMS:
            truncated = True
            break
        for run in _CJK_RUN.findall(chunk):
            if run not in seen_cjk:  # a set: a long query must not cost quadratic time
                seen_cjk.add(run)
                cjk.append(run)
        rest = _CJK_RUN.sub(" ", chunk)
        tokens = tuple(w.casefold() for w in _WORD.findall(rest))
        if not tokens or tokens in seen:
            continue
        seen.add(tokens)
        stop = all(t in STOP_WORDS for t in tokens)
        content += not stop
        terms.append(Term(tokens, stop=stop))
    if stop_words and content:
        terms = [t for t in terms if not t.stop]
    return ParsedQuery(raw=cleaned.strip(), terms=tuple(terms[:MAX_TERMS]),
                       cjk=tuple(cjk[:MAX_TERMS]),
                       truncated=truncated or len(terms) > MAX_TERMS)


def limits_note(query: str) -> str | None:
    """One line saying which part of ``query`` a search leaves out, or None if nothing."""
    parsed = parse_query(query)
    if parsed.truncated:
        return (f"the query has more than {MAX_TERMS} distinct words; only the first "
                f"{MAX_TERMS} were searched. Use a few distinctive keywords.")
    if parsed.literal_cut:
        return (f"the query has no words, only symbols; its first {MAX_LITERAL_CHARS:,} "
                "characters were searched as they are.")
    return None
