"""Memory nudges and the flush turn (SPEC M8): reminding the model to save what lasts.

Models forget to use their memory. Every ``nudge_interval`` user turns without a memory
write, the request carries a short reminder; and before a session ends or is compacted,
if ``flush_min_turns`` turns passed since the last write, the model gets one extra turn
with only the memory tool, to save durable facts before the turns they came from leave
its context.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FLUSH_PROMPT", "NUDGE_TEXT", "MemoryNudger"]

NUDGE_TEXT = (
    "[Reminder: if this conversation revealed a durable fact — a user preference, a "
    "correction, an environment detail, a convention — save it with the memory tool. "
    "Skip task progress and temporary state.]"
)

FLUSH_PROMPT = (
    "[System: the earlier part of this conversation is about to leave your context "
    "({reason}). Before it does, save anything worth keeping across sessions with the "
    "memory tool: the user's preferences and corrections, environment facts, conventions, "
    "lessons learned. Do not save task progress. If nothing is worth saving, reply with "
    "just: nothing to save.]"
)


@dataclass
class MemoryNudger:
    """Counts user turns since the last memory write and says when to nudge or flush."""

    nudge_interval: int = 10
    flush_min_turns: int = 6
    turns_since_write: int = 0

    def start_turn(self) -> bool:
        """Count a new user turn; True when this turn's request should carry the nudge."""
        self.turns_since_write += 1
        return (self.nudge_interval > 0
                and self.turns_since_write % self.nudge_interval == 0)

    def wrote(self) -> None:
        """A memory write happened: the count starts again."""
        self.turns_since_write = 0

    def flush_due(self) -> bool:
        return 0 < self.flush_min_turns <= self.turns_since_write
