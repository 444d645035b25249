"""The ``memory`` tool the model calls: its schema (the guidance it lives by) and dispatcher.

``memory_tool`` validates the action and target, runs the store operation and returns the
result as a JSON string. It also breaks retry loops: after ``MAX_FAILED_CALLS_PER_TURN``
failed calls in one turn, further calls are refused with a terminal error until the agent
starts the next turn (``MemoryStore.failed_calls_this_turn`` is reset by the agent).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mnemo.memory.entries import TARGETS
from mnemo.memory.store import MemoryStore, Result

__all__ = ["ACTIONS", "MAX_FAILED_CALLS_PER_TURN", "MEMORY_SCHEMA", "memory_tool"]

ACTIONS = ("add", "replace", "remove", "read", "batch")
MAX_FAILED_CALLS_PER_TURN = 3

_DESCRIPTION = """\
Your long-term memory, kept across sessions. Two stores, both shown to you at the start \
of every session:
- target "user": who the user is — name, role, preferences, communication style, habits.
- target "memory": your own notes — facts about the environment, project conventions, \
tool quirks, lessons learned.

SAVE WITHOUT BEING ASKED when:
- the user corrects you, or says "remember this" or "don't do that again";
- the user shares a preference, a habit or a personal detail;
- you discover a durable fact about the environment (paths, versions, how to run things);
- you learn a convention, an API quirk or a workflow that will matter next time.

DO NOT save task progress, session outcomes, logs of completed work or TODO state: those \
live in the session history, which session_search can find. Save facts that will still be \
true and useful in a month.

Write each entry as one short, self-contained fact. Space is limited (the usage is shown \
in the header of each store): when a store is nearly full, merge related entries with \
replace or remove stale ones; a batch does several changes at once and checks the limit \
only at the end.

Actions: add (content), replace (old_text = a short unique substring of the entry, \
content = the new text), remove (old_text), read (current entries), batch (operations). \
Changes are saved at once but appear in your instructions from the next session on."""

MEMORY_SCHEMA: dict[str, Any] = {
    "name": "memory",
    "description": _DESCRIPTION,
    "parameters": {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": list(ACTIONS),
                "description": "What to do.",
            },
            "target": {
                "type": "string",
                "enum": list(TARGETS),
                "description": "'user' for facts about the user, 'memory' for your own notes.",
            },
            "content": {
                "type": "string",
                "description": "The entry text (add) or the new text (replace).",
            },
            "old_text": {
                "type": "string",
                "description": "A short substring that identifies one entry (replace, remove).",
            },
            "operations": {
                "type": "array",
                "description": "For batch: changes applied all-or-nothing.",
                "items": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["add", "replace", "remove"]},
                        "content": {"type": "string"},
                        "old_text": {"type": "string"},
                    },
                    "required": ["action"],
                },
            },
        },
        "required": ["action", "target"],
    },
}


def _dispatch(
    store: MemoryStore,
    action: str,
    target: Any,
    content: str | None,
    old_text: str | None,
    operations: Sequence[dict[str, Any]] | None,
) -> Result:
    if action not in ACTIONS:
        return {"success": False,
                "error": f"Unknown action {action!r}; use one of: {', '.join(ACTIONS)}."}
    if target not in TARGETS:
        return {"success": False,
                "error": f"Unknown target {target!r}; use one of: {', '.join(TARGETS)}."}
    if action == "add":
        return store.add(target, content or "")
    if action == "replace":
        return store.replace(target, old_text or "", content or "")
    if action == "remove":
        return store.remove(target, old_text or "")
    if action == "read":
        return store.read(target)
    return store.batch(target, operations if operations is not None else [])


def memory_tool(
    action: str,
    target: str = "memory",
    content: str | None = None,
    old_text: str | None = None,
    operations: Sequence[dict[str, Any]] | None = None,
    *,
    store: MemoryStore,
) -> str:
    """Run one memory tool call and return its result as JSON text."""
    if store.failed_calls_this_turn >= MAX_FAILED_CALLS_PER_TURN:
        result: Result = {
            "success": False,
            "terminal": True,
            "error": (
                f"{store.failed_calls_this_turn} memory calls failed in this turn. Stop "
                "calling the memory tool now and answer the user; you can save the fact in "
                "a later turn."
            ),
        }
    else:
        result = _dispatch(store, action, target, content, old_text, operations)
        if not result.get("success"):
            store.failed_calls_this_turn += 1
    return json.dumps(result, ensure_ascii=False)
