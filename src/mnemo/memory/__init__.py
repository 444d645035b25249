"""Memory that lasts across sessions: the curated stores, the memory tool, and providers.

``MemoryStore`` keeps MEMORY.md and USER.md (durable, lock-protected, frozen snapshot for
the system prompt); ``memory_tool`` and ``MEMORY_SCHEMA`` expose it to a model.
"""

from mnemo.memory.entries import ENTRY_DELIMITER, TARGETS, Target
from mnemo.memory.store import MemoryStore
from mnemo.memory.tool import MEMORY_SCHEMA, memory_tool

__all__ = ["ENTRY_DELIMITER", "MEMORY_SCHEMA", "TARGETS", "MemoryStore", "Target", "memory_tool"]
