"""``mnemo mcp``: serve the memory and session_search tools over MCP (stdio).

Any MCP client (Claude Desktop, an IDE, another agent framework) then shares the same
MEMORY.md, USER.md and session archive as ``mnemo chat``. The tools are the very
functions the built-in agent calls, with the same schemas and rules; the server is a
thin face over them. Needs the extra: ``pip install "mnemo[mcp]"``.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any, Literal

import click

from mnemo.cli.common import CliState, pass_state
from mnemo.errors import UsageError
from mnemo.memory import MEMORY_SCHEMA, TARGETS, BuiltinMemoryProvider
from mnemo.sessions.tool import SESSION_SEARCH_SCHEMA, session_search
from mnemo.storage.factory import open_memory_store, open_session_store_or_scratch

__all__ = ["build_server", "mcp"]

_INSTRUCTIONS = (
    "mnemo keeps long-term memory across sessions. Use `memory` to save durable facts "
    "about the user (target 'user') and your own notes (target 'memory'); use "
    "`session_search` to find what was said or done in earlier conversations."
)


def _version() -> str:
    """mnemo's installed version, which the server reports to clients on initialize."""
    try:
        return importlib.metadata.version("mnemo")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "0+unknown"


def build_server(state: CliState) -> Any:
    """An ``MCPServer`` exposing ``memory`` and ``session_search`` for this home."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError as exc:
        raise UsageError('mnemo mcp needs the MCP SDK: pip install "mnemo[mcp]"') from exc

    config = state.config
    store = open_memory_store(config, state.home)
    enabled = {"memory": config.memory.memory_enabled,
               "user": config.memory.user_profile_enabled}
    builtin = BuiltinMemoryProvider(store, targets=[t for t in TARGETS if enabled[t]])
    # A damaged archive leaves memory usable: search answers from an empty scratch store.
    sessions, warning = open_session_store_or_scratch(config, state.home)
    if warning:
        click.echo(f"warning: {warning}", err=True)  # stderr: stdout is the MCP channel
    server = MCPServer(name="mnemo", instructions=_INSTRUCTIONS, version=_version())

    def memory(
        action: Literal["add", "replace", "remove", "read", "batch"],
        target: Literal["memory", "user"] = "memory",
        content: str | None = None,
        old_text: str | None = None,
        operations: list[dict[str, Any]] | None = None,
    ) -> str:
        # An MCP client has no notion of mnemo's turns, so the per-turn loop breaker is
        # reset on every call; the client's own limits apply.
        store.failed_calls_this_turn = 0
        return builtin.handle_tool_call("memory", {
            "action": action, "target": target, "content": content, "old_text": old_text,
            "operations": operations})

    def search(
        query: str | None = None,
        mode: Literal["search", "read", "around", "recent"] = "search",
        session_id: str | None = None,
        message_id: int | None = None,
        limit: int = 3,
        offset: int = 0,
    ) -> str:
        return session_search(query, mode=mode, session_id=session_id, message_id=message_id,
                              limit=limit, offset=offset, store=sessions)

    if builtin.is_available():  # at least one store is enabled in config.yaml
        server.add_tool(memory, name="memory", description=MEMORY_SCHEMA["description"])
    server.add_tool(search, name="session_search",
                    description=SESSION_SEARCH_SCHEMA["description"])
    return server


@click.command()
@pass_state
def mcp(state: CliState) -> None:
    """Serve the memory and session_search tools to an MCP client over stdio.

    Configure your client to run `mnemo mcp` (with MNEMO_HOME set if you use a
    non-default home). Needs: pip install "mnemo[mcp]".
    """
    build_server(state).run("stdio")
