"""``mnemo mcp``: a real MCP client talks to the server over stdio in a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from mnemo.home import Home
from mnemo.memory.entries import parse_entries

mcp = pytest.importorskip("mcp", reason='needs the MCP SDK: pip install "mnemo[mcp]"')


def _text(result: object) -> str:
    content = getattr(result, "content", [])
    return "".join(getattr(part, "text", "") for part in content)


async def _session(home: Home) -> dict[str, object]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    exe = Path(sys.executable).with_name("mnemo")
    params = StdioServerParameters(
        command=str(exe) if exe.exists() else sys.executable,
        args=["mcp"] if exe.exists() else ["-m", "mnemo", "mcp"],
        env={**os.environ, "MNEMO_HOME": str(home.root)},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        added = await session.call_tool("memory", {"action": "add", "target": "user",
                                                   "content": "Prefers metric units"})
        bad = await session.call_tool("memory", {"action": "remove", "target": "user",
                                                 "old_text": "imperial"})
        recent = await session.call_tool("session_search", {"mode": "recent"})
        return {"tools": {t.name: t for t in tools.tools}, "added": _text(added),
                "bad": _text(bad), "recent": _text(recent)}


def test_mcp_server_exposes_memory_and_session_search(mnemo_home: Home) -> None:
    out = asyncio.run(asyncio.wait_for(_session(mnemo_home), timeout=60))
    tools = out["tools"]
    assert isinstance(tools, dict) and set(tools) == {"memory", "session_search"}
    schema = tools["memory"].input_schema
    assert schema["properties"]["action"]["enum"] == ["add", "replace", "remove", "read", "batch"]
    assert json.loads(str(out["added"]))["success"] is True
    assert json.loads(str(out["bad"]))["success"] is False
    assert json.loads(str(out["recent"]))["success"] is True
    user = (mnemo_home.memories_dir / "USER.md").read_text(encoding="utf-8")
    assert parse_entries(user) == ["Prefers metric units"]


async def _hostile_calls(home: Home) -> dict[str, object]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    exe = Path(sys.executable).with_name("mnemo")
    params = StdioServerParameters(
        command=str(exe) if exe.exists() else sys.executable,
        args=["mcp"] if exe.exists() else ["-m", "mnemo", "mcp"],
        env={**os.environ, "MNEMO_HOME": str(home.root)},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        huge = await session.call_tool("memory", {"action": "add", "target": "memory",
                                                  "content": "word " * 20_000})
        query = " ".join(f"w{i}x" for i in range(3_000))
        long_query = await session.call_tool("session_search", {"query": query})
        negative = await session.call_tool("session_search", {"query": "x", "limit": -3})
        return {"version": init.server_info.version, "huge": _text(huge),
                "long": _text(long_query), "negative": _text(negative)}


def test_mcp_hostile_calls_get_fitting_answers(mnemo_home: Home) -> None:
    import importlib.metadata

    out = asyncio.run(asyncio.wait_for(_hostile_calls(mnemo_home), timeout=60))
    assert out["version"] == importlib.metadata.version("mnemo")
    huge = json.loads(str(out["huge"]))
    assert huge["success"] is False and "limit of 2,200" in huge["error"]
    assert "security scan" not in huge["error"]
    long = json.loads(str(out["long"]))
    assert long["success"] is True and len(long["query"]) < 300
    assert "only the first 32" in long["note"] and len(str(out["long"])) < 2_000
    negative = json.loads(str(out["negative"]))
    assert negative["success"] is False and "limit must be between 1 and 10" in negative["error"]


def test_mcp_serves_memory_when_the_archive_is_damaged(mnemo_home: Home) -> None:
    mnemo_home.ensure()
    mnemo_home.state_db.write_bytes(b"not a database " * 300)
    out = asyncio.run(asyncio.wait_for(_session(mnemo_home), timeout=60))
    assert json.loads(str(out["added"]))["success"] is True
    assert json.loads(str(out["recent"]))["success"] is True
    assert mnemo_home.state_db.read_bytes().startswith(b"not a database")
