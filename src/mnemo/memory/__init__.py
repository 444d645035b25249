"""Memory that lasts across sessions: the curated stores, the memory tool, and providers.

``MemoryStore`` keeps MEMORY.md and USER.md (durable, lock-protected, frozen snapshot for
the system prompt); ``memory_tool`` and ``MEMORY_SCHEMA`` expose it to a model.
``MemoryProvider`` is the interface of recall sources, ``MemoryManager`` runs the built-in
provider plus at most one external one, and ``build_memory_context_block`` fences what
they recall before it reaches the model.
"""

from mnemo.memory.builtin import BuiltinMemoryProvider
from mnemo.memory.entries import ENTRY_DELIMITER, TARGETS, Target
from mnemo.memory.fencing import build_memory_context_block, sanitize_context
from mnemo.memory.manager import MemoryManager
from mnemo.memory.provider import MemoryProvider
from mnemo.memory.store import MemoryStore
from mnemo.memory.tool import MEMORY_SCHEMA, memory_tool

__all__ = [
    "ENTRY_DELIMITER",
    "MEMORY_SCHEMA",
    "TARGETS",
    "BuiltinMemoryProvider",
    "MemoryManager",
    "MemoryProvider",
    "MemoryStore",
    "Target",
    "build_memory_context_block",
    "memory_tool",
    "sanitize_context",
]
