"""Reading the facts out of conversation turns, without a model (the first half of C15).

One pass over the turns collects what a continuing assistant needs: the user's first and
latest asks, sentences that state a constraint or preference, decisions, questions and
whether a later reply answered them, tool actions with their outcome, error lines
verbatim, file paths, URLs, commands and config values. ``local_summary.py`` ranks and
renders them.

Everything here is a bounded regex or a dictionary update per message, and long texts are
read as the summariser would see them (first 4,000 + last 1,500 characters), so the pass
stays linear and fast on transcripts of any length.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mnemo.context.failures import (
    COMMAND_KEYS,
    best_error_lines,
    error_lines,
    error_shape,
    is_logged_error,
    tool_kind,
)
from mnemo.context.markers import PRUNED_TOOL_PLACEHOLDER, is_summary_message
from mnemo.context.prompt import truncate_for_summary
from mnemo.context.pruning import key_arguments
from mnemo.messages import Message, content_text, tool_calls_of

__all__ = [
    "ActionNote",
    "Facts",
    "FileNote",
    "Item",
    "extract_facts",
    "keywords",
    "one_line",
    "sentences",
]

_ITEM_CHARS = 400  # longest single item kept from a sentence or line

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)

_PREFERENCE = re.compile(
    r"\b(?:must(?:n't| not)?|never|always|prefer(?:s|red)?|don'?t|do not|avoid|make sure"
    r"|should(?:n't| not)?|only use|please use|i (?:like|want|need|hate)|no more than"
    r"|at most|at least|required?|requirement|constraint|instead of|please keep|in sync"
    r"|keep (?:the|them|it|this|that|these|those)"
    r"|stick to|i'?d like|i would like|without)\b"
    r"|不要|必须|总是|永远|优先|禁止|请勿",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:decided|decision|we(?:'ll| will) (?:use|go with)|i(?:'ll| will) use|going with"
    r"|chose|choose to|opted|settled on|agreed|let'?s (?:use|go with|keep|switch)"
    r"|switch(?:ed)? to|instead of)\b|决定|选择",
    re.IGNORECASE,
)
_REMAINING = re.compile(
    r"\b(?:todo|to-do|next step|next,? i(?:'ll| will)|still need|remaining|left to do"
    r"|follow[- ]up|later we|after that)\b|待办|下一步",
    re.IGNORECASE,
)
_REQUEST_START = re.compile(
    r"^(?:(?:and|also|oh|btw|by the way|one more thing)[,:]?\s+)?"
    r"(?:can you|could you|would you|will you|please|pls)\b",
    re.IGNORECASE,
)
_URL = re.compile(r"https?://[^\s<>()\[\]{}\"'`]{3,300}")
_EXTENSIONS = (r"(?:py|pyi|js|mjs|ts|tsx|jsx|json|ya?ml|toml|md|rst|txt|cfg|ini|sh|go|rs"
               r"|java|kt|c|h|cc|cpp|hpp|rb|php|sql|html|css|scss|lock|conf|xml|csv|ipynb"
               r"|tf|env|log|db)")
_PATH = re.compile(
    r"(?<![\w/.~-])(?:~|\.{1,2})?/?(?:[\w.@+-]{1,100}/){1,30}[\w.@+-]{1,100}"
    rf"|(?<![\w/.-])[\w-]+\.{_EXTENSIONS}\b"
)
_FILE_NAME = re.compile(rf"[\w.-]+\.{_EXTENSIONS}")
_CONFIG = re.compile(
    r"(?<![\w./-])([A-Za-z][\w-]{0,40}[_.][\w.-]{0,40}[A-Za-z0-9]|[A-Z][A-Z0-9_]{2,40})"
    r"\s?[=:]\s?"
    r"(\"[^\"\n]{1,80}\"|'[^'\n]{1,80}'|[^\s,;'\"()\[\]{}]{1,80})"
)
# Words in capitals before a colon that label prose rather than set a value.
_NOT_CONFIG_KEYS = frozenset((
    "TODO", "NOTE", "WARNING", "WARN", "ERROR", "INFO", "DEBUG", "FIXME", "HACK", "XXX", "FATAL",
    "FAILED", "PASSED", "HTTP", "HTTPS", "FYI", "BTW", "IMPORTANT", "UPDATE", "EDIT", "USER",
    "ASSISTANT", "SYSTEM", "TOOL", "RESULT",
))
_BACKTICK = re.compile(r"`([^`\n]{2,200})`")
_COMMAND_WORDS = frozenset((
    "git", "pip", "pip3", "python", "python3", "pytest", "npm", "npx", "yarn", "pnpm", "node",
    "make", "cargo", "go", "uv", "poetry", "docker", "kubectl", "helm", "terraform", "curl",
    "wget", "ls", "cd", "rm", "mv", "cp", "cat", "grep", "sed", "awk", "bash", "sh", "mnemo",
    "ruff", "mypy", "tox", "nox", "brew", "apt", "apt-get", "systemctl", "psql", "sqlite3", "ssh",
    "scp", "rsync",
))
_PATH_KEYS = ("path", "file_path", "filepath", "file", "filename", "target", "source",
              "destination", "src", "dst", "directory", "dir")
_STOPWORDS = frozenset((
    "the", "and", "you", "can", "could", "would", "what", "which", "how", "why", "does", "did",
    "this", "that", "with", "for", "from", "have", "has", "are", "was", "were", "will", "please",
    "also", "just", "there", "their", "about", "into", "your", "our", "its", "any", "some", "then",
    "than", "when", "where", "who", "whom", "should", "still", "been", "being", "let", "know",
    "need", "want", "like", "make", "tell", "give", "show", "find", "check", "look", "see", "out",
    "not", "but", "all", "one", "get", "got", "use", "using", "used", "now", "here", "more",
    "most", "much", "many", "very", "really", "thing", "things", "way", "yes", "okay", "sure",
    "thanks", "thank", "doing", "done", "going",
))


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


@dataclass
class Facts:
    """What the turns say, before ranking."""

    turns: int = 0
    asks: list[Item] = field(default_factory=list)
    preferences: list[Item] = field(default_factory=list)
    decisions: list[Item] = field(default_factory=list)
    resolved: list[Item] = field(default_factory=list)
    pending: list[Item] = field(default_factory=list)
    remaining: list[Item] = field(default_factory=list)
    errors: list[Item] = field(default_factory=list)
    commands: list[Item] = field(default_factory=list)
    urls: list[Item] = field(default_factory=list)
    config_values: list[Item] = field(default_factory=list)
    files: dict[str, FileNote] = field(default_factory=dict)
    actions: dict[str, ActionNote] = field(default_factory=dict)
    tools: Counter[str] = field(default_factory=Counter)
    tool_failures: Counter[str] = field(default_factory=Counter)
    last_intent: Item | None = None


def one_line(text: str, limit: int = _ITEM_CHARS) -> str:
    """Whitespace collapsed to single spaces, cut at ``limit`` characters with an ellipsis."""
    flat = " ".join(text[: limit * 2].split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_SPLIT.split(text) if s.strip()]


def keywords(text: str) -> frozenset[str]:
    """Content words, lower-cased and cut to five letters (a crude, language-free stem)."""
    return frozenset(w[:5] for w in (m.lower() for m in _WORD.findall(text))
                     if w not in _STOPWORDS)


class _Reader:
    """The state of one pass over the turns."""

    def __init__(self, prior_pending: Iterable[str]) -> None:
        self.facts = Facts()
        self.calls: dict[str, ActionNote] = {}
        self.open_asks: list[_Ask] = [_Ask(q, -1, keywords(q)) for q in prior_pending]
        self.seen: set[tuple[str, str]] = set()
        self.answered: set[str] = set()
        self.errors: dict[str, _Repeat] = {}

    def add(self, bucket: list[Item], kind: str, text: str, order: int) -> None:
        line = one_line(text)
        key = (kind, line.lower())
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

    def scan_values(self, text: str, order: int, *, by_user: bool) -> None:
        """URLs, paths, config values and commands written in prose."""
        facts = self.facts
        for url in _URL.findall(text):
            self.add(facts.urls, "url", url.rstrip(".,:;"), order)
        prose = _URL.sub(" ", text) if "://" in text else text
        for match in _PATH.finditer(prose):
            path = match.group(0)
            if "/" not in path or "." in path.rsplit("/", 1)[-1] or path.startswith(
                    ("/", "~/", "./", "../")) or path.count("/") >= 2:
                self.note_file(path, order, "mentioned", by_user=by_user)
        for key, value in _CONFIG.findall(prose):
            if key not in _NOT_CONFIG_KEYS and not _FILE_NAME.fullmatch(key):
                self.add(facts.config_values, "config", f"{key}={value}", order)
        for span in _BACKTICK.findall(prose):
            first = span.split(maxsplit=1)[0] if span.strip() else ""
            if first in _COMMAND_WORDS:
                self.add(facts.commands, "command", span, order)
        for line in prose.splitlines():
            stripped = line.strip()
            if stripped.startswith("$ ") and len(stripped) > 3:
                self.add(facts.commands, "command", stripped[2:], order)

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

    def user(self, text: str, order: int) -> None:
        facts = self.facts
        if not text.strip():
            return
        facts.asks.append(Item(one_line(text, 300), order))
        for sentence in sentences(text):
            if _PREFERENCE.search(sentence):
                self.add(facts.preferences, "pref", sentence, order)
            if _DECISION.search(sentence):
                self.add(facts.decisions, "decision", sentence, order)
            if sentence.endswith(("?", "？")) or _REQUEST_START.match(sentence):
                self.open_asks.append(_Ask(one_line(sentence, 300), order, keywords(sentence)))
        del self.open_asks[:-200]  # an unbounded backlog would make the pass quadratic
        self.scan_values(text, order, by_user=True)
        self.keep_errors(best_error_lines(error_lines(text), 3), order)

    def assistant(self, message: Message, text: str, order: int) -> None:
        facts = self.facts
        if text.strip():
            self.resolve_asks(text, order)
            found = sentences(text) if (_DECISION.search(text) or _REMAINING.search(text)) else []
            for sentence in found:
                if _DECISION.search(sentence):
                    self.add(facts.decisions, "decision", sentence, order)
                if _REMAINING.search(sentence):
                    self.add(facts.remaining, "todo", sentence, order)
            facts.last_intent = Item(one_line(text, 300), order)
            self.scan_values(text, order, by_user=False)
        for call in tool_calls_of(message):
            self.tool_call(call, order)

    def resolve_asks(self, text: str, order: int) -> None:
        if not self.open_asks:
            return
        words = keywords(text[:3000])
        still_open: list[_Ask] = []
        for ask in self.open_asks:
            overlap = len(ask.words & words)
            needed = min(len(ask.words), max(2, (len(ask.words) + 1) // 2))
            if ask.words and overlap >= needed:
                if ask.text.lower() not in self.answered:
                    self.answered.add(ask.text.lower())
                    answer = max(sentences(text) or [text],
                                 key=lambda s: len(ask.words & keywords(s)))
                    self.add(self.facts.resolved, "resolved",
                             f"{ask.text} → {one_line(answer, 200)}", order)
            else:
                still_open.append(ask)
        self.open_asks = still_open

    def tool_call(self, call: Any, order: int) -> None:
        function = call.get("function") or {}
        name = str(function.get("name", "")) or "tool"
        raw = function.get("arguments")
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            args = raw
        shown = key_arguments(args)
        kind = tool_kind(name, args)
        key = f"{name} {shown}".strip()
        note = self.facts.actions.get(key)
        if note is None:
            note = self.facts.actions[key] = ActionNote(name, shown, kind, order, order)
        note.count += 1
        note.last = order
        self.facts.tools[name] += 1
        self.calls[str(call.get("id", ""))] = note
        if isinstance(args, dict):
            for k in _PATH_KEYS:
                value = args.get(k)
                if isinstance(value, str) and value:
                    self.note_file(value, order, "written" if kind == "write" else "read")
            for k in COMMAND_KEYS:
                value = args.get(k)
                if isinstance(value, str) and value.strip():
                    self.add(self.facts.commands, "command", value, order)
                    self.scan_values(value, order, by_user=False)
            url = args.get("url")
            if isinstance(url, str) and url.startswith(("http://", "https://")):
                self.add(self.facts.urls, "url", url, order)

    def tool_result(self, message: Message, text: str, order: int) -> None:
        note = self.calls.get(str(message.get("tool_call_id", "")))
        kind = note.kind if note is not None else "other"
        if text.startswith(PRUNED_TOOL_PLACEHOLDER):
            # Cleared output: the lines under the placeholder and its description are the
            # failure lines the compressor kept (already known to report an error).
            lines = [ln for ln in text.split("\n")[2:] if ln.strip()]
            self.keep_errors(lines, order)
            error = one_line(lines[0], 200) if lines and kind != "read" else ""
        elif kind == "read":
            # A read returns a file's text: an error in it is content, not a failure,
            # unless the tool says so on its first line ("Error: no such file"). Only
            # log-shaped error lines are kept from it — a listing's ``raise`` is not one.
            head = error_lines(text.lstrip()[:300].split("\n", 1)[0])
            logged = [ln for ln in error_lines(text) if is_logged_error(ln)]
            self.keep_errors(best_error_lines(head + logged, 3), order)
            error = one_line(head[0], 200) if head else ""
        else:
            lines = error_lines(text)
            self.keep_errors(best_error_lines(lines, 3), order)
            error = one_line(best_error_lines(lines, 1)[0], 200) if lines else ""
        if note is None:
            return
        note.last_failed = bool(error)
        if error:
            note.failures += 1
            note.last_error = error
            self.facts.tool_failures[note.name] += 1

    def finish(self) -> Facts:
        for repeat in sorted(self.errors.values(), key=lambda r: r.order):
            count = f" (×{repeat.count})" if repeat.count > 1 else ""
            self.facts.errors.append(Item(one_line(repeat.text) + count, repeat.order))
        for ask in self.open_asks:
            self.facts.pending.append(Item(ask.text, ask.order))
        return self.facts


def extract_facts(turns: Sequence[Message], *, prior_pending: Iterable[str] = ()) -> Facts:
    """Read ``turns`` once. ``prior_pending`` are asks an earlier summary left open, so a
    reply in these turns can move them to the resolved list."""
    reader = _Reader(prior_pending)
    for order, message in enumerate(turns):
        role = message.get("role")
        if is_summary_message(message):
            continue
        text = truncate_for_summary(content_text(message))
        reader.facts.turns += 1
        if role == "user":
            reader.user(text, order)
        elif role == "assistant":
            reader.assistant(message, text, order)
        elif role == "tool":
            reader.tool_result(message, text, order)
        elif text.strip():  # a system or developer note in the middle of the conversation
            for sentence in sentences(text):
                if _PREFERENCE.search(sentence):
                    reader.add(reader.facts.preferences, "pref", sentence, order)
    return reader.finish()
