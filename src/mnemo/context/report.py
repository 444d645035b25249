"""What one compression found and did: the input check, the draft, and the report.

``check_messages`` refuses input that is not a list of chat messages with a
``UsageError`` naming the index and the problem (``mnemo.transcripts.validate_message``),
before any step can trip over it.

A ``Draft`` is filled in by the steps of ``ContextCompressor.compress``. The steps work
on the *repaired* input (``repair.py``: stray tool results dropped, same-role neighbours
merged), so the draft keeps the repair and maps every index back to the list the caller
passed in when it becomes the frozen ``CompressionReport``: ``removed`` and ``pruned``
always name input messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mnemo.context.engine import CompressionReport
from mnemo.context.markers import is_summary_message, split_summary_message
from mnemo.context.repair import Origins, Repair
from mnemo.errors import UsageError
from mnemo.messages import Message
from mnemo.tokens import estimate_message_tokens_rough
from mnemo.transcripts import validate_message

__all__ = ["MIN_MIDDLE_TOKENS", "Draft", "check_messages", "report_status"]

MIN_MIDDLE_TOKENS = 100  # a smaller middle costs more as a summary than as itself


def check_messages(messages: Any) -> None:
    """``UsageError`` unless ``messages`` is a list of valid chat messages."""
    if not isinstance(messages, list | tuple):
        raise UsageError("compress() takes a list of message dicts, got "
                         f"{type(messages).__name__}")
    for i, message in enumerate(messages):
        if (isinstance(message, dict) and message.get("role") == "assistant"
                and message.get("content") is None and not message.get("tool_calls")):
            continue  # an empty reply: a model can send one, and it compresses fine
        problem = validate_message(message)
        if problem:
            raise UsageError(f"message {i} is not a valid chat message: {problem}")


@dataclass
class Draft:
    """What ``compress`` has found so far. Indices are positions in ``repair.messages``."""

    messages: Sequence[Message]  # the caller's list
    repair: Repair  # the caller's list repaired: what the steps work on
    tokens_before: int
    pruned: list[int]
    focus_topic: str | None
    pruned_list: list[Message]
    tokens: list[int]  # of ``pruned_list``
    summary: str | None = None
    fallback: bool = False
    skipped_reason: str | None = None
    calls: int = 0
    prepared: int = 0  # middle messages covered by a summary prepared in the background
    local: bool = False  # the local summariser wrote it although a model is configured
    stubs: int = 0
    unreachable: bool = False  # the summariser could not be reached (auth, network)

    def count(self, out: Sequence[Message], origins: Origins) -> int:
        """Rough tokens of ``out``; messages that kept their content are not counted again."""
        total = 0
        for message, origin in zip(out, origins, strict=True):
            if origin is not None and message.get("content") is self.pruned_list[origin].get(
                    "content") and message.get("tool_calls") is self.pruned_list[origin].get(
                    "tool_calls"):
                total += self.tokens[origin]
            else:
                total += estimate_message_tokens_rough(message)
        return total

    def _remade(self, out: Sequence[Message], origins: Origins,
                present: set[int | None]) -> set[int]:
        """Input summaries that are in ``out`` unchanged although made anew: a summary
        merged into a turn is taken apart for the steps and merged again
        (``repair.split_merged_summaries``) — kept, not removed."""
        made = [(message.get("role"), split_summary_message(message)) for message, origin
                in zip(out, origins, strict=True)
                if origin is None and is_summary_message(message)]
        if not made:
            return set()
        # (Compared taken apart: the summary's own blank lines at its end are not kept.
        # And in the same role: the same text made anew as the other role — a summary in
        # the head folded into the next one — replaced the input's, it was not kept.)
        return {i for i, message in enumerate(self.messages)
                if i not in present and is_summary_message(message)
                and (message.get("role"), split_summary_message(message)) in made}

    def skip(self, reason: str) -> None:
        """No summary this time, for ``reason``; the repairs made, if any, are named too."""
        repaired = self.repair.describe()
        self.skipped_reason = f"{reason}; repaired for the API: {repaired}" if repaired else reason

    def report(self, out: Sequence[Message], origins: Origins | None,
               summarizer: str) -> CompressionReport:
        """The report of this compression; ``origins is None`` means ``out`` is the input
        unchanged."""
        n = len(self.messages)
        if origins is None:
            removed: list[int] = []
            pruned: list[int] = []
            tokens_after = self.tokens_before
        else:
            work = self.repair.origins
            present_work = {o for o in origins if o is not None}
            present = {work[o] for o in present_work}
            present |= self._remade(out, origins, present)
            removed = [i for i in range(n) if i not in present]
            pruned = [o for i in self.pruned if i in present_work
                      and (o := work[i]) is not None]
            tokens_after = self.count(out, origins)
        return CompressionReport(
            messages_before=n,
            messages_after=len(out),
            tokens_before=self.tokens_before,
            tokens_after=tokens_after,
            removed=removed,
            pruned=pruned,
            summary=self.summary,
            fallback=self.fallback,
            skipped_reason=self.skipped_reason,
            focus_topic=self.focus_topic,
            summarizer=summarizer,
            summary_calls=self.calls,
            prepared_messages=self.prepared,
            stubs_added=self.stubs + self.repair.stubs,
        )


def report_status(report: CompressionReport | None) -> dict[str, Any] | None:
    """A report for ``get_status``: counts instead of the index lists and the summary."""
    if report is None:
        return None
    status = report.as_dict()
    del status["summary"], status["removed"], status["pruned"]
    status["removed_count"] = len(report.removed)
    status["pruned_count"] = len(report.pruned)
    return status
