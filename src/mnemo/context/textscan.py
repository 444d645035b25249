"""The text side of reading facts: sentences, content words, and the patterns of C15.

``extract.py`` reads conversation turns with these; ``local_summary.py`` uses the same
words to decide what a focus topic (C14) is about. Everything here works on text in any
language the agents are used in:

* ``sentences`` splits after ``. ! ?`` followed by whitespace, and after ``。！？；``
  whatever follows (CJK text puts no space between sentences);
* ``keywords`` are the content words: Latin-script words of three letters or more,
  lower-cased and cut to five letters (a crude, language-free stem), and the character
  bigrams of CJK runs (CJK has no spaces, so a run is a whole clause: its bigrams are
  what two texts share when they talk about the same thing);
* ``topic_matcher`` decides whether a line is about a focus topic: it contains the topic,
  shares a Latin keyword with it, or holds at least half of the topic's CJK bigrams;
* the patterns spot preferences and constraints, decisions, to-dos, requests, URLs, file
  paths, config values and commands. Every one is bounded (no unbounded repeat next to
  another), so a pass stays linear on text of any length.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = [
    "BACKTICK",
    "CJK_CLASS",
    "COMMAND_WORDS",
    "CONFIG",
    "DECISION",
    "FILE_NAME",
    "ITEM_CHARS",
    "MARKDOWN_MARKS",
    "NOT_CONFIG_KEYS",
    "PATH",
    "PATH_KEYS",
    "PREFERENCE",
    "REMAINING",
    "REQUEST_START",
    "STOPWORDS",
    "URL",
    "cjk_bigrams",
    "keywords",
    "latin_keywords",
    "one_line",
    "sentences",
    "topic_matcher",
    "without_markdown",
]

ITEM_CHARS = 400  # longest single item kept from a sentence or line

# Western punctuation ends a sentence before whitespace; CJK punctuation ends one
# whatever follows (CJK text puts no space between sentences).
# A title's full stop ends no sentence ("Sr. Costa gave me the crate"), nor does an
# initial's ("J.K. Rowling", "the U.S. embassy"), "e.g.", "i.e." or "vs."; a time's
# ("5 p.m.") only before a capital letter. A list number's at the start of a line ends
# none either: "1. Tips:" cut in two left "Tips:" a sentence of its own, where the list
# rule of ``without_markdown`` never saw it; nor does a nested item's, indented by up to
# four spaces or a tab. Each is a lookbehind of its own: Python's must each have one width.
_NOT_AFTER = "".join(rf"(?<!\b{t}\.)" for t in (
    "Mr", "Mrs", "Ms", "Dr", "Sr", "Sra", "Jr", "St", "Mt", "Prof", "[A-Z]", r"e\.g", r"i\.e",
    "vs", r"[ap]\.m")) + "".join(
    rf"(?<!^{indent}{number}\.)" for indent in ("", " ", "  ", "   ", "    ", "\t")
    for number in (r"\d", r"\d\d"))
_SENTENCE_GAP = rf"(?<=[.!?]){_NOT_AFTER}\s+|(?<=\b[ap]\.m\.)\s+(?=[A-Z])"
_SENTENCE_SPLIT = re.compile(rf"{_SENTENCE_GAP}|(?<=[。！？；])\s*|\n+", re.MULTILINE)
# The same split where no CJK punctuation can be: one branch fewer to try at every
# character, half the time (``sentences`` reads every user and assistant text).
_ASCII_SENTENCE_SPLIT = re.compile(rf"{_SENTENCE_GAP}|\n+", re.MULTILINE)
# Hiragana, katakana, CJK ideographs (and extension A, compatibility), hangul.
CJK_CLASS = _CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_LATIN_WORD = re.compile(f"[^\\W_{_CJK}]{{3,}}")

# (``summary/reading._CLAIM_WORDS`` holds a word of each English branch of these three:
# a new branch needs one there, or the reader never tries it.)
PREFERENCE = re.compile(
    r"\b(?:must(?:n't| not)?|never|always|prefer(?:s|red)?|don'?t|do not|avoid|make sure"
    r"|should(?:n't| not)?|only use|please use|i (?:like|want|need|hate)|no more than"
    r"|at most|at least|required?|requirement|constraint|instead of|please keep|in sync"
    r"|keep (?:the|them|it|this|that|these|those)"
    r"|stick to|i'?d like|i would like|without)\b"
    r"|不要|必须|总是|永远|优先|禁止|请勿",
    re.IGNORECASE,
)
DECISION = re.compile(
    r"\b(?:decided|decision|we(?:'ll| will) (?:use|go with)|i(?:'ll| will) use|going with"
    r"|chose|choose to|opted|settled on|agreed|let'?s (?:use|go with|keep|switch)"
    r"|switch(?:ed)? to|instead of)\b|决定|选择",
    re.IGNORECASE,
)
REMAINING = re.compile(
    r"\b(?:todo|to-do|next step|next,? i(?:'ll| will)|still need|remaining|left to do"
    r"|follow[- ]up|later we|after that)\b|待办|下一步",
    re.IGNORECASE,
)
REQUEST_START = re.compile(
    r"^(?:(?:and|also|oh|btw|by the way|one more thing)[,:]?\s+)?"
    r"(?:can you|could you|would you|will you|please|pls)\b",
    re.IGNORECASE,
)
URL = re.compile(r"https?://[^\s<>()\[\]{}\"'`]{3,300}")
_EXTENSIONS = (r"(?:py|pyi|js|mjs|ts|tsx|jsx|json|ya?ml|toml|md|rst|txt|cfg|ini|sh|go|rs"
               r"|java|kt|c|h|cc|cpp|hpp|rb|php|sql|html|css|scss|lock|conf|xml|csv|ipynb"
               r"|tf|env|log|db)")
PATH = re.compile(
    r"(?<![\w/.~-])(?:~|\.{1,2})?/?(?:[\w.@+-]{1,100}/){1,30}[\w.@+-]{1,100}"
    rf"|(?<![\w/.-])[\w-]+\.{_EXTENSIONS}\b"
)
FILE_NAME = re.compile(rf"[\w.-]+\.{_EXTENSIONS}")
CONFIG = re.compile(
    r"(?<![\w./-])([A-Za-z][\w-]{0,40}[_.][\w.-]{0,40}[A-Za-z0-9]|[A-Z][A-Z0-9_]{2,40})"
    r"\s?(?:=(?!=)|:)\s?"  # ("x == 0" compares: by hand, "Config: result.returncode==")
    r"(\"[^\"\n]{1,80}\"|'[^'\n]{1,80}'|[^\s,;'\"()\[\]{}]{1,80})"
)
# Words in capitals before a colon that label prose rather than set a value.
NOT_CONFIG_KEYS = frozenset((
    "TODO", "NOTE", "WARNING", "WARN", "ERROR", "INFO", "DEBUG", "FIXME", "HACK", "XXX", "FATAL",
    "FAILED", "PASSED", "HTTP", "HTTPS", "FYI", "BTW", "IMPORTANT", "UPDATE", "EDIT", "USER",
    "ASSISTANT", "SYSTEM", "TOOL", "RESULT",
))
BACKTICK = re.compile(r"`([^`\n]{2,200})`")
COMMAND_WORDS = frozenset((
    "git", "pip", "pip3", "python", "python3", "pytest", "npm", "npx", "yarn", "pnpm", "node",
    "make", "cargo", "go", "uv", "poetry", "docker", "kubectl", "helm", "terraform", "curl",
    "wget", "ls", "cd", "rm", "mv", "cp", "cat", "grep", "sed", "awk", "bash", "sh", "mnemo",
    "ruff", "mypy", "tox", "nox", "brew", "apt", "apt-get", "systemctl", "psql", "sqlite3", "ssh",
    "scp", "rsync",
))
PATH_KEYS = ("path", "file_path", "filepath", "file", "filename", "target", "source",
              "destination", "src", "dst", "directory", "dir")
STOPWORDS = frozenset((
    "the", "and", "you", "can", "could", "would", "what", "which", "how", "why", "does", "did",
    "this", "that", "with", "for", "from", "have", "has", "are", "was", "were", "will", "please",
    "also", "just", "there", "their", "about", "into", "your", "our", "its", "any", "some", "then",
    "than", "when", "where", "who", "whom", "should", "still", "been", "being", "let", "know",
    "need", "want", "like", "make", "tell", "give", "show", "find", "check", "look", "see", "out",
    "not", "but", "all", "one", "get", "got", "use", "using", "used", "now", "here", "more",
    "most", "much", "many", "very", "really", "thing", "things", "way", "yes", "okay", "sure",
    "thanks", "thank", "doing", "done", "going",
))


def one_line(text: str, limit: int = ITEM_CHARS) -> str:
    """Whitespace collapsed to single spaces, cut at ``limit`` characters with an ellipsis."""
    flat = " ".join(text[: limit * 2].split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def sentences(text: str) -> list[str]:
    split = _ASCII_SENTENCE_SPLIT.split if text.isascii() else _SENTENCE_SPLIT.split
    return [s.strip() for s in split(text) if s.strip()]


# A line of Markdown: a heading or a list item. A short heading labels what follows
# ("### Done", "## Day 2") and is no sentence; a list item is the sentence after its
# mark. By hand the embedded model wrote its reply in a summary's layout, and its notes
# read "- Mia has turned from 10 to 12. - The conversation was brief … ### In Progress".
MARKDOWN_MARKS = frozenset("-*•#0123456789")  # what such a line opens with
_LIST_MARK = re.compile(r"(?:[-*•]|\d{1,2}[.)])\s+")
_HEADING = re.compile(r"#{1,6}(?:\s+|$)")
_SHORT_HEADING_SPACES = 3  # a heading of up to four words is a label


def without_markdown(line: str) -> str:
    """``line`` (a sentence from ``sentences``) without its Markdown mark; "" for a
    short heading, a lone list number ("1."), or a list item that is only a short label
    of what follows ("- Remaining work:", "1. Tips:")."""
    heading = _HEADING.match(line)
    if heading is not None:
        rest = line[heading.end():].strip(" #")
        return rest if rest.count(" ") >= _SHORT_HEADING_SPACES else ""
    mark = _LIST_MARK.match(line + " ")
    if mark is None:
        return line
    # A task box goes with its mark. By hand the embedded model wrote its reply in a
    # summary's layout, and its "- [ ] Remaining work:" became a to-do of the next one.
    item = _TASK_BOX.sub("", line[mark.end():])
    if item.endswith(":") and item.count(" ") < _SHORT_HEADING_SPACES:
        return ""
    return item


_TASK_BOX = re.compile(r"^\[[ xX]\]\s+")


def latin_keywords(text: str) -> frozenset[str]:
    """Latin-script content words, lower-cased and cut to five letters."""
    return frozenset(w[:5] for w in (m.lower() for m in _LATIN_WORD.findall(text))
                     if w not in STOPWORDS)


def cjk_bigrams(text: str) -> frozenset[str]:
    """The character bigrams of the CJK runs of ``text`` (a lone character counts alone)."""
    grams: set[str] = set()
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            grams.add(run)
        grams.update(run[i:i + 2] for i in range(len(run) - 1))
    return frozenset(grams)


def keywords(text: str) -> frozenset[str]:
    """Content words: Latin stems and CJK bigrams (see the module docstring)."""
    return latin_keywords(text) | cjk_bigrams(text)


def topic_matcher(topic: str) -> Callable[[str], bool]:
    """A test for "this line is about ``topic``" (see the module docstring)."""
    folded = topic.strip().casefold()
    latin = latin_keywords(topic)
    grams = cjk_bigrams(topic)

    def about(text: str) -> bool:
        if folded and folded in text.casefold():
            return True
        if latin and latin & latin_keywords(text):
            return True
        return bool(grams) and 2 * len(grams & cjk_bigrams(text)) >= len(grams)

    return about
