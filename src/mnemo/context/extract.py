"""Reading the facts out of conversation turns, without a model (the first half of C15).

One pass over the turns collects what a continuing assistant needs: the user's first and
latest asks, sentences that state a constraint or preference, decisions, questions and
whether a later reply answered them, whatever else the user said (so a fact stated in
words no pattern knows is not lost while the summary has room), tool actions with their
outcome, error lines verbatim, file paths, URLs, commands and config values.
``local_summary.py`` ranks and renders them; ``textscan.py`` holds the patterns.

Everything here is a bounded regex or a dictionary update per message, and long texts are
read as the summariser would see them (first 4,000 + last 1,500 characters), so the pass
stays linear and fast on transcripts of any length.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
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
from mnemo.context.pruning import key_arguments, parse_call
from mnemo.context.textscan import (
    BACKTICK,
    COMMAND_WORDS,
    CONFIG,
    DECISION,
    FILE_NAME,
    NOT_CONFIG_KEYS,
    PATH,
    PATH_KEYS,
    PREFERENCE,
    REMAINING,
    REQUEST_START,
    URL,
    keywords,
    one_line,
    sentences,
)
from mnemo.messages import Message, content_text, tool_calls_of

__all__ = ["ActionNote", "Facts", "FileNote", "Item", "extract_facts"]


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
    said: list[Item] = field(default_factory=list)  # user sentences no pattern took
    noted: list[Item] = field(default_factory=list)  # assistant statements no pattern took
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


_MIN_NOTED_CHARS = 25


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
        for url in URL.findall(text):
            self.add(facts.urls, "url", url.rstrip(".,:;"), order)
        prose = URL.sub(" ", text) if "://" in text else text
        for match in PATH.finditer(prose):
            path = match.group(0)
            if "/" not in path or "." in path.rsplit("/", 1)[-1] or path.startswith(
                    ("/", "~/", "./", "../")) or path.count("/") >= 2:
                self.note_file(path, order, "mentioned", by_user=by_user)
        for key, value in CONFIG.findall(prose):
            if key not in NOT_CONFIG_KEYS and not FILE_NAME.fullmatch(key):
                self.add(facts.config_values, "config", f"{key}={value}", order)
        for span in BACKTICK.findall(prose):
            first = span.split(maxsplit=1)[0] if span.strip() else ""
            if first in COMMAND_WORDS:
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

    @staticmethod
    def claim(text: str, rules: Sequence[tuple[Callable[[str], object],
                                               Callable[[str], None]]]) -> list[str]:
        """Give each sentence of ``text`` to every rule whose test it passes; return the
        sentences no rule took."""
        unclaimed: list[str] = []
        for sentence in sentences(text):
            taken = [act for test, act in rules if test(sentence)]
            for act in taken:
                act(sentence)
            if not taken:
                unclaimed.append(sentence)
        return unclaimed

    def user(self, text: str, order: int) -> None:
        facts = self.facts
        if not text.strip():
            return
        facts.asks.append(Item(one_line(text, 300), order))

        def ask(sentence: str) -> None:
            self.open_asks.append(_Ask(one_line(sentence, 300), order, keywords(sentence)))

        unclaimed = self.claim(text, [
            (PREFERENCE.search, lambda s: self.add(facts.preferences, "pref", s, order)),
            (DECISION.search, lambda s: self.add(facts.decisions, "decision", s, order)),
            (lambda s: s.endswith(("?", "？")) or REQUEST_START.match(s), ask),
        ])
        if unclaimed:  # what the user said that no pattern recognised: kept if room
            self.add(facts.said, "said", " ".join(unclaimed), order)
        del self.open_asks[:-200]  # an unbounded backlog would make the pass quadratic
        self.scan_values(text, order, by_user=True)
        self.keep_errors(best_error_lines(error_lines(text), 3), order)

    def assistant(self, message: Message, text: str, order: int) -> None:
        facts = self.facts
        if text.strip():
            self.resolve_asks(text, order)
            # The rest is what the assistant found out ("the worker retries three times");
            # short acknowledgements ("Done.") carry nothing worth a line.
            unclaimed = [s for s in self.claim(text, [
                (DECISION.search, lambda s: self.add(facts.decisions, "decision", s, order)),
                (REMAINING.search, lambda s: self.add(facts.remaining, "todo", s, order)),
            ]) if len(s) >= _MIN_NOTED_CHARS]
            if unclaimed:
                self.add(facts.noted, "noted", " ".join(unclaimed), order)
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
        parsed = parse_call(call)
        name, args = parsed.name or "tool", parsed.arguments
        shown = key_arguments(args)
        kind = tool_kind(name, args)
        key = f"{name} {shown}".strip()
        note = self.facts.actions.get(key)
        if note is None:
            note = self.facts.actions[key] = ActionNote(name, shown, kind, order, order)
        note.count += 1
        note.last = order
        self.facts.tools[name] += 1
        self.calls[parsed.id] = note
        if isinstance(args, dict):
            for k in PATH_KEYS:
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
                if PREFERENCE.search(sentence):
                    reader.add(reader.facts.preferences, "pref", sentence, order)
    return reader.finish()
