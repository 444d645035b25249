"""The forms text is matched in, and the check for text hidden from a human reader (SPEC S3).

An attacker who knows the patterns writes ``іgnore`` with a Cyrillic і, ``ig\u00adnore``
with a soft hyphen, ``ignore\\n> previous`` over two quoted lines or ``ｉｇｎｏｒｅ`` in
full-width letters. Matching therefore never runs on the raw text but on its
*skeleton*, built line by line so that every offset maps back to a line of the original:

1. characters a reader cannot see are dropped (format characters, variation selectors,
   tag characters, the combining grapheme joiner, Hangul fillers);
2. NFKC, then case folding;
3. NFD with the combining marks dropped (``é`` → ``e``; the patterns are written without
   accents), then every character Unicode lists as confusable with an ASCII character
   (UTS #39 ``confusables.txt``, see ``_confusables.py``) becomes that character;
4. every dash becomes ``-`` and every run of whitespace (tabs, no-break and ideographic
   spaces included) one space; a shell, cmd or PowerShell line continuation is removed,
   and leading comment or quote markers (``#``, ``//``, ``>``, ``;``) are dropped, so a
   phrase split over commented or quoted lines still reads as one.

Lines stay separate in the form (joined by ``\\n``), so a pattern that allows whitespace
between words also spans lines. ``hidden_text`` reports, per raw line, the characters
that are there to hide something; that is a finding in itself, not something to strip.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache

from mnemo.security._confusables import PROTOTYPES

__all__ = ["Form", "build_form", "fold_with_origins", "hidden_text", "mixed_script",
           "skeleton"]

_FILLERS = "\u115f\u1160\u3164\uffa0"  # Hangul fillers: letters that draw nothing
_VARIATION = range(0xFE00, 0xFE10)
_VARIATION_SUPPLEMENT = range(0xE0100, 0xE01F0)
_TAGS = range(0xE0000, 0xE0080)
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_ZERO_WIDTH = frozenset("\u200b\u2060\ufeff\u2061\u2062\u2063\u2064\u180e")
_JOINERS = frozenset("\u200c\u200d")


class _DropTable(dict[int, "str | None"]):
    """``str.translate`` table of what is removed before NFKC, filled per character on
    first sight (building it for all of Unicode up front would cost every process)."""

    def __missing__(self, cp: int) -> str | None:
        if cp < 0x80:
            raise LookupError(cp)  # ASCII: unchanged
        category = unicodedata.category(chr(cp))
        if (category == "Cf" or cp in _VARIATION or cp in _VARIATION_SUPPLEMENT
                or chr(cp) in _FILLERS or cp == 0x034F):
            self[cp] = None
            return None
        raise LookupError(cp)


class _FoldTable(dict[int, "str | None"]):
    """Applied after NFD: marks removed, confusables mapped, dashes and spaces unified."""

    def __missing__(self, cp: int) -> str | None:
        if cp < 0x80:
            raise LookupError(cp)
        category = unicodedata.category(chr(cp))
        value: str | None
        if category == "Mn":
            value = None
        elif category == "Pd" or cp == 0x2014:
            value = "-"
        elif category in ("Zs", "Zl", "Zp") or cp == 0x2800:  # braille blank looks blank
            value = " "
        else:
            value = _PROTOTYPE_OF.get(chr(cp))
            if value is None:
                raise LookupError(cp)
        self[cp] = value
        return value


_PROTOTYPE_OF = {ch: target for target, sources in PROTOTYPES.items() for ch in sources}
_DROP = _DropTable()
_FOLD = _FoldTable({0x09: " ", 0x0B: " ", 0x0C: " ", 0x0D: " "})


def _tables() -> tuple[dict[int, str | None], dict[int, str | None]]:
    return _DROP, _FOLD


def skeleton(text: str) -> str:
    """``text`` in the form patterns are matched in (one line; no whitespace collapse)."""
    if text.isascii():
        return text.lower().replace("\t", " ").replace("\r", " ")
    drop, fold = _tables()
    text = unicodedata.normalize("NFKC", text.translate(drop)).casefold()
    return unicodedata.normalize("NFD", text).translate(fold)


_SPACES = re.compile(r" {2,}")
_LETTER_SPACED = re.compile(r"(?<!\w)(?:\w ){3,}\w(?!\w)")  # "i g n o r e" -> "ignore"
# "d-i-s-r-e-g-a-r-d", "a*l*l": letters only (so numbers, IPs and versions stay), one
# separator kind per word.
_LETTER_DASHED = re.compile(r"(?<![\w.*-])[a-z](?:-[a-z]){2,}(?![\w*-])"
                            r"|(?<![\w.*-])[a-z](?:\*[a-z]){2,}(?![\w*-])")
_LEADER = re.compile(r"^(?:[#>;]+|//+)(?: |$)")
_CONTINUED = re.compile(r"(?: [\\^`]|\\)$")


@dataclass(frozen=True)
class Form:
    """The skeleton of a text, with the map from its offsets to the original's lines.

    ``continued[i]`` is True when line ``i + 1`` (1-based) ended with a continuation
    marker, so a command analysis can read the next line as part of the same command.
    ``plain_lines`` are the lines before the confusable mapping (NFKC, lower case,
    invisible characters dropped): where a look-alike letter must *not* count as the
    ASCII one, such as the host name of a URL.
    """

    text: str
    line_starts: tuple[int, ...]
    continued: tuple[bool, ...]
    plain_lines: tuple[str, ...]

    def line_of(self, offset: int) -> int:
        """1-based line number of ``offset``."""
        return bisect_right(self.line_starts, offset)


def build_form(raw_lines: list[str]) -> Form:
    """The skeleton form of ``raw_lines`` (the text split at ``\\n``)."""
    lines: list[str] = []
    continued: list[bool] = []
    plain: list[str] = []
    for raw in raw_lines:
        plain.append(raw.lower() if raw.isascii() else
                     unicodedata.normalize("NFKC", raw.translate(_tables()[0])).casefold())
        line = skeleton(raw)
        if "-" in line or "*" in line:
            line = _LETTER_DASHED.sub(lambda m: m.group()[::2], line)
        if " " in line:
            line = _LETTER_SPACED.sub(lambda m: m.group().replace(" ", ""), line)
            line = _SPACES.sub(" ", line).strip()
        line = _LEADER.sub("", line)
        marker = _CONTINUED.search(line)
        continued.append(marker is not None)
        if marker is not None:
            line = line[: marker.start()]
        lines.append(line)
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return Form("\n".join(lines), tuple(starts), tuple(continued), tuple(plain))


@cache
def _fold_char(ch: str) -> str:
    return _SPACES.sub(" ", skeleton(ch))


def fold_with_origins(text: str) -> tuple[str, list[int]]:
    """The skeleton of ``text`` char by char, and for each folded char its source index.

    Used to find fence tags however they are disguised and cut them out of the original.
    Each character is folded on its own, so offsets map back exactly.
    """
    out: list[str] = []
    origins: list[int] = []
    for index, ch in enumerate(text):
        folded = ch.lower() if ch.isascii() else _fold_char(ch)
        out.append(folded)
        origins.extend([index] * len(folded))
    return "".join(out), origins


_WORDS = re.compile(r"\w{4,}")
_SCRIPTS = ("CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC")


def mixed_script(line: str) -> bool:
    """True if a word of ``line`` mixes Latin letters with look-alikes from another script.

    UTS #39 calls this a mixed-script confusable: "раypal" with a Cyrillic р. Words of one
    script (Russian, Greek) and short symbols ("10μs") are not flagged.
    """
    if line.isascii():
        return False
    for found in _WORDS.finditer(unicodedata.normalize("NFKC", line)):
        word = found.group()
        if word.isascii() or not any("a" <= c <= "z" or "A" <= c <= "Z" for c in word):
            continue
        if any(not c.isascii() and c.isalpha()
               and unicodedata.name(c, "").startswith(_SCRIPTS) for c in word):
            return True
    return False


# -- hidden text ----------------------------------------------------------------------------


def _is_latin_letter(ch: str) -> bool:
    if ch.isascii():
        return ch.isalpha()
    return ch.isalpha() and unicodedata.name(ch, "").startswith(("LATIN", "GREEK", "CYRILLIC"))


def _emoji_like(ch: str) -> bool:
    return unicodedata.category(ch) in ("So", "Sk", "Sm") or ord(ch) >= 0x1F000 or (
        ord(ch) in range(0x2190, 0x2c00))


def hidden_text(line: str, *, first_line: bool = False) -> list[str]:
    """Why ``line`` hides text from a human reader: one description per kind, or [].

    Legitimate uses stay allowed: an emoji with its presentation selector (``❤️``), a
    keycap, a flag tag sequence, ZWJ emoji sequences and the ZWNJ of Persian or Indic
    words, left-to-right and right-to-left marks in mixed-direction text, a byte order
    mark at the very start, and the accents of any language (up to two on one letter).
    """
    if line.isascii():
        return []
    found: dict[str, str] = {}
    length = len(line)
    index = 0
    while index < length:
        ch = line[index]
        cp = ord(ch)
        prev = line[index - 1] if index else ""
        nxt = line[index + 1] if index + 1 < length else ""
        if cp in _TAGS:
            if not _flag_tag_sequence(line, index):
                found.setdefault("tags", f"Unicode tag characters (U+{cp:04X}) carry "
                                         "invisible text")
        elif cp in _VARIATION or cp in _VARIATION_SUPPLEMENT:
            ok = (prev and nxt not in _VS_ALL and prev not in _VS_ALL and (
                _emoji_like(prev) or nxt == "\u20e3"
                or (cp in _VARIATION_SUPPLEMENT and unicodedata.category(prev) == "Lo")))
            if not ok:
                found.setdefault("vs", f"variation selector U+{cp:04X} outside an emoji "
                                       "(can encode hidden data)")
        elif ch in _BIDI:
            found.setdefault("bidi", f"bidirectional control U+{cp:04X} "
                                     f"{unicodedata.name(ch, '')} can reorder what is shown")
        elif ch in _ZERO_WIDTH:
            if not (ch == "\ufeff" and index == 0 and first_line):
                found.setdefault("zw", f"invisible character U+{cp:04X} "
                                       f"{unicodedata.name(ch, 'ZERO WIDTH')}")
        elif ch in _JOINERS:
            run = nxt in _JOINERS or nxt in _ZERO_WIDTH or prev in _JOINERS
            if run or _is_latin_letter(prev) or _is_latin_letter(nxt) or not prev or not nxt:
                found.setdefault("zw", f"invisible character U+{cp:04X} "
                                       f"{unicodedata.name(ch, '')} inside a word or run")
        elif ch in _FILLERS or cp == 0x034F or cp == 0x2800:
            found.setdefault("filler", f"invisible filler U+{cp:04X} "
                                       f"{unicodedata.name(ch, '')}")
        elif unicodedata.category(ch) == "Mn" and prev:
            end = index
            while end < length and unicodedata.category(line[end]) == "Mn":
                end += 1
            base = line[index - 1]
            if end - index >= 3 and (_is_latin_letter(base) or base.isdigit()):
                found.setdefault("marks", "stacked combining marks inside a word")
            index = end
            continue
        index += 1
    return list(found.values())


_VS_ALL = frozenset(chr(cp) for cp in [*_VARIATION, *_VARIATION_SUPPLEMENT])


def _flag_tag_sequence(line: str, index: int) -> bool:
    """True if the tag character at ``index`` belongs to an emoji flag (🏴 + tags + U+E007F)."""
    start = index
    while start > 0 and ord(line[start - 1]) in _TAGS:
        start -= 1
    end = index
    while end < len(line) and ord(line[end]) in _TAGS:
        end += 1
    run = line[start:end]
    return (start > 0 and line[start - 1] == "\U0001f3f4" and 2 <= len(run) <= 7
            and run[-1] == "\U000e007f" and all(c.isascii() or ord(c) - 0xE0000 < 0x7F
                                                for c in run[:-1])
            and all(chr(ord(c) - 0xE0000).isalnum() for c in run[:-1]))

