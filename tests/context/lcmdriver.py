"""The agent's side of the ``lcm`` engine, for the tests: store, compact, sync, walk nodes.

``Driver`` does what the agent does: every message is appended to a real ``SessionStore``
as it happens; compaction sends ``[system] + live`` to ``engine.compress`` and stores the
output (without the system message) with ``sync_live``. ``recovered`` walks the node tree
from the live context down with ``context_expand``, the way a model would.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from convgen import system

from mnemo.context.lcm import LosslessContextEngine
from mnemo.context.lcm_nodes import node_of
from mnemo.messages import content_text
from mnemo.sessions import SessionStore

Msg = dict[str, Any]


class Driver:
    def __init__(self, engine: LosslessContextEngine, store: SessionStore,
                 system_message: Msg | None = None) -> None:
        self.engine = engine
        self.store = store
        self.system = system_message or system()
        self.sid = store.create_session()
        engine.on_session_start(self.sid)
        self.live: list[Msg] = []
        self.sent: list[Msg] = []
        self.outputs: list[tuple[list[Msg], list[Msg]]] = []  # (input, output) pairs

    def say(self, *messages: Msg) -> None:
        for message in messages:
            self.store.append_message(self.sid, message)
            self.live.append(message)
            self.sent.append(message)

    def compact(self, focus: str | None = None) -> list[Msg]:
        before = [self.system, *self.live]
        out: list[Msg] = self.engine.compress(before, focus_topic=focus)  # type: ignore[arg-type,assignment]
        self.outputs.append((before, out))
        report = self.engine.last_report
        assert report is not None
        if report.changed:
            live = out[1:] if out and out[0].get("role") == "system" else out
            self.store.sync_live(self.sid, live)
            self.live = list(live)
        return out

    def tool(self, name: str, **args: Any) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.engine.handle_tool_call(name, args))
        return result

    def expand_all(self, node_id: str, max_tokens: int = 32_000) -> list[Msg]:
        """Every child of a node, paging with ``next_offset``."""
        entries: list[Msg] = []
        offset: int | None = 0
        while offset is not None:
            page = self.tool("context_expand", node_id=node_id, offset=offset,
                             max_tokens=max_tokens)
            assert page["success"], page
            entries += page["messages"]
            offset = page.get("next_offset")
        return entries

    def live_nodes(self, kind: str | None = None) -> list[str]:
        return [found[0] for m in self.live if (found := node_of(m)) is not None
                and kind in (None, found[1])]

    def recovered(self) -> tuple[list[Msg], int]:
        """Every message reachable below the live nodes, and the deepest nesting seen."""
        found: list[Msg] = []
        deepest = 0
        stack = [(node_id, 1) for node_id in self.live_nodes()]
        seen: set[str] = set()
        while stack:
            node_id, depth = stack.pop()
            if node_id in seen:
                continue
            seen.add(node_id)
            deepest = max(deepest, depth)
            for entry in self.expand_all(node_id):
                assert "truncated_chars" not in entry
                found.append(entry)
                if "node_id" in entry:
                    stack.append((entry["node_id"], depth + 1))
        return found, deepest


def same(entry: Msg, message: Msg) -> bool:
    """An expanded entry is this original message."""
    return (entry["role"] == message["role"]
            and entry["content"] == content_text(message)
            and entry.get("tool_call_id") == message.get("tool_call_id")
            and [c["id"] for c in entry.get("tool_calls", [])]
            == [c["id"] for c in message.get("tool_calls") or []])


def unrecoverable(driver: Driver) -> list[Msg]:
    """The messages sent in the session that are neither live nor reachable by expanding."""
    entries, _ = driver.recovered()
    missing = []
    for message in driver.sent:
        if any(m == message for m in driver.live):
            continue
        if not any(same(e, message) for e in entries):
            missing.append(message)
    return missing


def texts(messages: Sequence[Msg]) -> str:
    return "\n".join(content_text(m) for m in messages)
