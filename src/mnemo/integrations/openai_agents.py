"""mnemo inside the OpenAI Agents SDK (SPEC I2): a ``Session``, instructions and tools.

``MnemoSession(runtime)`` implements the SDK's ``Session`` protocol on mnemo's session
store. The items it returns from ``get_items`` are the live context; when ``add_items``
brings the conversation to the threshold, the configured engine compacts it and the
compacted items become the live context — the messages it replaced stay in the archive
(marked ``compacted``, never deleted), where ``session_search`` finds them.

``mnemo_instructions(runtime, base)`` gives the agent's instructions with the frozen
memory snapshot after them; ``mnemo_tools(runtime)`` gives ``memory`` and
``session_search`` as ``FunctionTool``s with mnemo's own schemas::

    runtime = MnemoRuntime(source="openai-agents")
    agent = Agent(name="assistant", instructions=mnemo_instructions(runtime, "Be brief."),
                  tools=mnemo_tools(runtime), model=...)
    await Runner.run(agent, "hello", session=MnemoSession(runtime))

Items are converted once each (kept alongside the live context), so a turn costs the
conversion of its new items and the engine's threshold check.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from mnemo.integrations.openai_agents_items import Item, from_mnemo, to_mnemo
from mnemo.integrations.runtime import MnemoRuntime
from mnemo.memory.tool import MEMORY_SCHEMA
from mnemo.messages import Message
from mnemo.sessions.tool import SESSION_SEARCH_SCHEMA

try:
    from agents import FunctionTool, RunContextWrapper
    from agents.memory.session_settings import SessionSettings
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError('mnemo.integrations.openai_agents needs the OpenAI Agents SDK: '
                      'pip install "mnemo[openai-agents]"') from exc

__all__ = ["MnemoRuntime", "MnemoSession", "mnemo_instructions", "mnemo_tools"]


class MnemoSession:
    """An Agents SDK ``Session`` whose history mnemo keeps within the window.

    ``session_id`` is mnemo's session id (the runtime's, created on first use; pass a
    runtime built with ``session_id=`` to resume a stored one).
    """

    session_settings: SessionSettings | None = None

    def __init__(self, runtime: MnemoRuntime, *, system: str | None = None) -> None:
        self.runtime = runtime
        # The agent's own instructions, counted for the threshold with mnemo's snapshot
        # (both are sent with every request).
        self.system = system
        self.session_id = runtime.start()
        self._messages: list[Message] = runtime.live
        self._items: list[list[Item]] = [from_mnemo([m]) for m in self._messages]

    async def get_items(self, limit: int | None = None) -> list[Item]:
        """The live context as the SDK's items, oldest first (the latest ``limit``)."""
        items = [item for group in self._items for item in group]
        return items[-limit:] if limit else items

    async def add_items(self, items: list[Item]) -> None:
        """Store ``items``; compact the history if it has reached the threshold."""
        if not items:
            return
        # The last message may continue in the new items (an assistant message whose
        # function calls arrive in the next batch), so it is converted again with them.
        tail = self._items[-1] if self._messages and self._messages[-1]["role"] == "assistant" \
            else []
        keep = len(self._messages) - (1 if tail else 0)
        converted = to_mnemo([*tail, *items])
        if tail and converted and converted[0] == self._messages[-1]:
            converted[0] = self._messages[-1]
        messages = [*self._messages[:keep], *converted]
        groups = [*self._items[:keep], *(from_mnemo([m]) for m in converted)]
        system = "\n\n".join(s for s in (self.system, self.runtime.instructions()) if s)
        compacted = self.runtime.process(messages, system)
        if compacted is None:
            self._messages, self._items = messages, groups
            return
        self._messages = compacted
        self._items = [from_mnemo([m]) for m in compacted]

    async def pop_item(self) -> Item | None:
        """Remove the newest item from the live context (it stays in the archive)."""
        if not self._items:
            return None
        items = [item for group in self._items for item in group]
        popped = items.pop()
        self._messages = to_mnemo(items)
        self._items = [from_mnemo([m]) for m in self._messages]
        self.runtime.record(self._messages)
        return popped

    async def clear_session(self) -> None:
        """Empty the live context; every message stays in the archive, searchable."""
        self._messages, self._items = [], []
        self.runtime.record([])


def mnemo_instructions(runtime: MnemoRuntime,
                       base: str = "") -> Callable[[RunContextWrapper[Any], Any], str]:
    """Dynamic instructions: ``base``, then the session's frozen memory snapshot."""

    def instructions(ctx: RunContextWrapper[Any], agent: Any) -> str:
        snapshot = runtime.instructions()
        return f"{base}\n\n{snapshot}" if base else snapshot

    return instructions


def mnemo_tools(runtime: MnemoRuntime) -> list[FunctionTool]:
    """``memory`` and ``session_search`` as the SDK's function tools."""
    return [_tool(MEMORY_SCHEMA, runtime.memory_tool),
            _tool(SESSION_SEARCH_SCHEMA, runtime.session_search_tool)]


def _tool(schema: dict[str, Any], run: Callable[..., str]) -> FunctionTool:
    async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
        try:
            args = json.loads(arguments or "{}")
            if not isinstance(args, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            return json.dumps({"success": False, "error": f"The arguments of {schema['name']} "
                               f"were not a JSON object ({exc}); call it again."})
        known = schema["parameters"]["properties"]
        return run(**{k: v for k, v in args.items() if k in known})

    handler: Callable[[ToolContext[Any], str], Awaitable[str]] = invoke
    return FunctionTool(name=schema["name"], description=schema["description"],
                        params_json_schema=schema["parameters"], on_invoke_tool=handler,
                        strict_json_schema=False)
