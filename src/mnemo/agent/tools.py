"""The tools the model may call in a turn: one registry, one way to run them.

Each tool is a schema (the inner OpenAI function form, ``{"name", "description",
"parameters"}``) and a handler taking the parsed arguments and returning the tool
message's text. Running a call never raises: bad JSON, an unknown tool or a handler that
fails all come back as a JSON error the model can read and act on, so one bad call costs
a turn, not the conversation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mnemo.context import ContextEngine
from mnemo.memory import MemoryManager
from mnemo.messages import Message, ToolCall
from mnemo.prompt import SKILL_VIEW_SCHEMA
from mnemo.sessions import SESSION_SEARCH_SCHEMA

__all__ = [
    "AGENT_TOOLS",
    "ToolHandler",
    "ToolRegistry",
    "ToolRun",
    "session_tool_schemas",
    "tool_result_message",
]

log = logging.getLogger("mnemo.agent")

ToolHandler = Callable[[dict[str, Any]], str]

# The agent's own tools; "memory" comes through the memory manager's built-in provider.
AGENT_TOOLS = ("session_search", "skill_view")
ToolOwner = Literal["memory", "agent", "engine"]


def session_tool_schemas(manager: MemoryManager,
                         engine: ContextEngine) -> list[tuple[dict[str, Any], ToolOwner]]:
    """Every tool a session offers, in order, with who runs it.

    The one definition of a session's tools: the agent registers handlers from it, and
    ``mnemo prompt`` / ``mnemo context`` derive the prompt's guidance from the same list.
    """
    engine_schemas = engine.get_tool_schemas()
    reserved = [*AGENT_TOOLS, *(s["name"] for s in engine_schemas)]
    tools: list[tuple[dict[str, Any], ToolOwner]] = [
        (schema, "memory") for schema in manager.tool_schemas(reserved=reserved)]
    tools += [(SESSION_SEARCH_SCHEMA, "agent"), (SKILL_VIEW_SCHEMA, "agent")]
    tools += [(schema, "engine") for schema in engine_schemas]
    return tools


@dataclass(frozen=True)
class ToolRun:
    """One executed call: what was asked, what came back, whether it succeeded."""

    name: str
    arguments: dict[str, Any]
    result: str
    ok: bool


class ToolRegistry:
    """Tools by name, in the order they were added (the order the model sees them)."""

    def __init__(self) -> None:
        self._tools: dict[str, tuple[dict[str, Any], ToolHandler]] = {}

    def add(self, schema: Mapping[str, Any], handler: ToolHandler) -> None:
        name = schema.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("a tool schema needs a non-empty 'name'")
        if name in self._tools:
            raise ValueError(f"tool {name!r} is registered twice")
        self._tools[name] = (dict(schema), handler)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self, only: set[str] | None = None) -> list[dict[str, Any]]:
        return [schema for name, (schema, _) in self._tools.items()
                if only is None or name in only]

    def run(self, call: ToolCall | Mapping[str, Any]) -> ToolRun:
        """Run one tool call from an assistant message."""
        function = call.get("function") or {}
        name = str(function.get("name", ""))
        raw = function.get("arguments") or "{}"
        try:
            args = json.loads(raw) if isinstance(raw, str) else dict(raw)
            if not isinstance(args, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            return ToolRun(name, {}, _error(
                f"The arguments of {name} were not a valid JSON object ({exc}); call it "
                "again with a JSON object of its parameters."), ok=False)
        entry = self._tools.get(name)
        if entry is None:
            return ToolRun(name, args, _error(
                f"There is no tool {name!r}; the tools are: {', '.join(self._tools)}."),
                ok=False)
        try:
            result = entry[1](args)
        except Exception as exc:  # a tool must never take the turn down with it
            log.warning("tool %s failed: %s: %s", name, type(exc).__name__, exc)
            return ToolRun(name, args, _error(
                f"The {name} tool failed ({type(exc).__name__}: {exc}); try different "
                "arguments or continue without it."), ok=False)
        return ToolRun(name, args, result, ok=_succeeded(result))


def tool_result_message(call: ToolCall | Mapping[str, Any], run: ToolRun) -> Message:
    return {"role": "tool", "tool_call_id": str(call.get("id", "")), "content": run.result}


def _error(text: str) -> str:
    return json.dumps({"success": False, "error": text}, ensure_ascii=False)


def _succeeded(result: str) -> bool:
    try:
        data = json.loads(result)
    except ValueError:
        return True  # plain text results carry no success flag
    return not (isinstance(data, dict) and data.get("success") is False)
