"""The built-in memory provider: MEMORY.md and USER.md through the provider interface.

It owns the ``memory`` tool and the two snapshot blocks. It is always registered first
and never counts against the one-external-provider rule.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mnemo.memory.entries import TARGETS, Target
from mnemo.memory.provider import MemoryProvider
from mnemo.memory.store import MemoryStore
from mnemo.memory.tool import MEMORY_SCHEMA, memory_tool

__all__ = ["WRITE_ACTIONS", "BuiltinMemoryProvider"]

WRITE_ACTIONS = frozenset({"add", "replace", "remove", "batch"})


class BuiltinMemoryProvider(MemoryProvider):
    """Wraps a ``MemoryStore``; ``targets`` limits which stores the tool may use."""

    builtin = True

    def __init__(self, store: MemoryStore, *, targets: Sequence[Target] = TARGETS) -> None:
        self.store = store
        self.targets = tuple(t for t in TARGETS if t in targets)

    @property
    def name(self) -> str:
        return "builtin"

    def is_available(self) -> bool:
        return bool(self.targets)

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.store.load_from_disk()

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        if not self.targets:
            return []
        if self.targets == TARGETS:
            return [MEMORY_SCHEMA]
        # Offer only the enabled stores, so the model is never invited to use a disabled one.
        schema = json.loads(json.dumps(MEMORY_SCHEMA))
        schema["parameters"]["properties"]["target"]["enum"] = list(self.targets)
        return [schema]

    def system_prompt_block(self) -> str:
        blocks = [self.store.format_for_system_prompt(t) for t in self.targets]
        return "\n\n".join(b for b in blocks if b)

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        target = args.get("target", "memory")
        if target in TARGETS and target not in self.targets:
            return json.dumps({"success": False,
                               "error": f"The {target!r} store is disabled in config.yaml "
                                        f"(memory.*_enabled); use: {', '.join(self.targets)}."},
                              ensure_ascii=False)
        return memory_tool(
            str(args.get("action", "")),
            target,
            content=args.get("content"),
            old_text=args.get("old_text"),
            operations=args.get("operations"),
            store=self.store,
        )
