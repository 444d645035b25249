"""Making a request fit its budget, whatever is in it: the last guard before a model call.

``fit_request(messages, budget=…, meter=…)`` returns a ``Fit``: the messages as they may
be sent, and what was done to them. It is pure (the input is never modified) and runs in
this order, stopping as soon as the request fits:

1. cut oversized messages before the newest user message, biggest first — old tool
   outputs and pastes (``shrink.py``: head and tail kept, a marker in between) — and a
   compaction's summary last, or never (``keep_summary``: cuts for the compaction
   threshold rather than the window);
2. cut oversized messages of the newest turn after the user's message (tool outputs of
   this turn), biggest first;
3. leave out the oldest whole turns (``allow_drop``; a turn goes whole, so tool calls keep
   their results) — the compaction before the call normally summarised them already;
4. as the last resort (``allow_newest``), cut the newest user message itself.

The system message is never touched: when it and the newest message's smallest cut do
not fit, ``Fit.fits`` is false and the caller must not send. Everything cut or left out
is still in the session archive; ``Fit.describe()`` says what happened, for a notice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mnemo.context.markers import SYSTEM_ROLES, is_summary_message
from mnemo.context.shrink import ARCHIVE, arguments_chars, cut_message, message_kind
from mnemo.context.window import RequestMeter
from mnemo.messages import Message, content_text

__all__ = ["MIN_CUT_TOKENS", "Cut", "Fit", "fit_request"]

# A cut message keeps at least this many tokens of its own text besides the marker:
# less would keep nothing worth reading.
MIN_CUT_TOKENS = 32
_CUT_ATTEMPTS = 6  # proportional cuts converge in one or two; text is not uniform


@dataclass(frozen=True)
class Cut:
    """One message shortened by ``fit_request``; ``index`` is its place in the input."""

    index: int
    kind: str  # "tool output", "paste", "reply", "tool call", "your newest message"
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True)
class Fit:
    """A request made to fit, and what it took. Token counts are the meter's (corrected)."""

    messages: list[Message]
    tokens_before: int
    tokens: int
    budget: int
    cuts: tuple[Cut, ...] = ()
    dropped: tuple[int, ...] = field(default=())  # input indices left out
    kept_in: str = "the session archive"  # where the whole text is, for the notice
    goal: str = "fit the context window"  # what the budget is, for the notice

    @property
    def fits(self) -> bool:
        return self.tokens <= self.budget

    @property
    def changed(self) -> bool:
        return bool(self.cuts or self.dropped)

    def describe(self) -> str:
        """One line for a notice: what was truncated or left out, and the numbers."""
        parts = []
        if self.cuts:
            kinds = ", ".join(_counted(self.cuts))
            parts.append(f"truncated {len(self.cuts)} oversized message"
                         f"{'s' if len(self.cuts) != 1 else ''} ({kinds})")
        if self.dropped:
            parts.append(f"left out the {len(self.dropped)} oldest message"
                         f"{'s' if len(self.dropped) != 1 else ''}")
        if not parts:
            return f"fits (~{self.tokens:,} of {self.budget:,} tokens)"
        return (f"{' and '.join(parts)} to {self.goal} (~{self.tokens_before:,} → "
                f"~{self.tokens:,} tokens, budget {self.budget:,}); the full text is in "
                f"{self.kept_in}")


def _counted(cuts: Sequence[Cut]) -> list[str]:
    counts: dict[str, int] = {}
    for cut in cuts:
        counts[cut.kind] = counts.get(cut.kind, 0) + 1
    return [kind if n == 1 else f"{n} × {kind}" for kind, n in counts.items()]


def fit_request(
    messages: Sequence[Message],
    *,
    budget: int,
    meter: RequestMeter,
    tools: Sequence[Mapping[str, Any]] | None = None,
    allow_drop: bool = True,
    allow_newest: bool = True,
    keep_summary: bool = False,
    kept_in: str = ARCHIVE,
) -> Fit:
    """``messages`` made to fit ``budget`` tokens (see the module docstring); the cut
    markers say the whole text is in ``kept_in``. ``keep_summary``: a compaction's summary
    is never cut (the budget is the compaction threshold, not the window: the next
    compaction merges that summary, and what a cut took from it would be gone for good)."""
    work: list[Message | None] = [dict(m) for m in messages]  # type: ignore[misc]
    raw = [meter.message_tokens(m) for m in messages]
    fixed = meter.tools_tokens(tools)
    before = meter.corrected(sum(raw) + fixed)
    cuts: dict[int, Cut] = {}
    dropped: list[int] = []

    def total() -> int:
        return meter.corrected(sum(t for t, m in zip(raw, work, strict=True) if m is not None)
                               + fixed)

    def excess_raw() -> int:
        over = total() - budget
        return 0 if over <= 0 else -int(-over // meter.ratio)

    def cut(index: int, kind: str) -> None:
        message = work[index]
        need = excess_raw()
        if message is None or need <= 0:
            return
        original = messages[index]
        shorter, tokens = _cut_to(original, raw[index] - need, meter, kept_in)
        if tokens >= raw[index]:
            return
        cuts[index] = Cut(index, kind, raw[index], tokens)
        work[index], raw[index] = shorter, tokens

    newest = _newest_user(messages)
    body = [i for i, m in enumerate(messages) if m.get("role") not in SYSTEM_ROLES]
    # 1. oversized messages before the newest turn, biggest first; a compaction's summary
    # last (it is what the compaction just made, and the densest text there is)
    for i in sorted((i for i in body if newest is None or i < newest),
                    key=lambda i: (is_summary_message(messages[i]), -raw[i])):
        if not (keep_summary and is_summary_message(messages[i])):
            cut(i, message_kind(messages[i]))
    # 2. the newest turn after the user's message, biggest first
    for i in sorted((i for i in body if newest is not None and i > newest),
                    key=lambda i: -raw[i]):
        cut(i, message_kind(messages[i]))
    # 3. the oldest whole turns
    if allow_drop and newest is not None:
        while excess_raw() > 0:
            turn = _oldest_turn(work, newest)
            if not turn:
                break
            for i in turn:
                work[i] = None
                cuts.pop(i, None)
            dropped.extend(turn)
    # 4. the newest user message itself
    if allow_newest and newest is not None:
        cut(newest, message_kind(messages[newest], newest=True))
    out = [m for m in work if m is not None]
    return Fit(out, before, total(), budget,
               tuple(sorted(cuts.values(), key=lambda c: c.index)), tuple(dropped),
               kept_in.split(" (")[0])


def _cut_to(original: Message, target: int, meter: RequestMeter,
            kept_in: str) -> tuple[Message, int]:
    """``original`` cut to about ``target`` tokens (never below ``MIN_CUT_TOKENS`` of its
    own text), and its tokens. The first guess assumes the text is equally dense
    throughout; later ones learn the density of what was kept."""
    before = meter.message_tokens(original)
    floor = meter.message_tokens(cut_message(original, 0, kept_in))  # marker and framing
    target = max(target, floor + MIN_CUT_TOKENS)
    if target >= before:
        return original, before
    density = max(before - floor, 1) / max(_text_chars(original), 1)
    keep = int((target - floor) / density)
    shorter, tokens = original, before
    for _ in range(_CUT_ATTEMPTS):
        shorter = cut_message(original, keep, kept_in)
        tokens = meter.message_tokens(shorter)
        if tokens <= target or keep == 0:
            break
        density = max(tokens - floor, 1) / max(keep, 1)
        keep = int((target - floor) / density * 0.95)
    return shorter, tokens


def _newest_user(messages: Sequence[Message]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return None


def _oldest_turn(work: Sequence[Message | None], newest: int) -> list[int]:
    """Indices of the oldest turn still present before ``newest``: its first message up to
    (not including) the next user message."""
    start = next((i for i, m in enumerate(work[:newest])
                  if m is not None and m.get("role") not in SYSTEM_ROLES), None)
    if start is None:
        return []
    end = next((i for i in range(start + 1, newest)
                if work[i] is not None and work[i].get("role") == "user"),  # type: ignore[union-attr]
               newest)
    return [i for i in range(start, end) if work[i] is not None]


def _text_chars(message: Message) -> int:
    return len(content_text(message)) + arguments_chars(message)
