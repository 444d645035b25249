"""The memory tool (SPEC M7): JSON results, validation of action/target, the loop breaker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemo.memory import MEMORY_SCHEMA, MemoryStore, memory_tool
from mnemo.memory.tool import MAX_FAILED_CALLS_PER_TURN


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path)


def call(store: MemoryStore, **kwargs: object) -> dict[str, object]:
    result = json.loads(memory_tool(store=store, **kwargs))  # type: ignore[arg-type]
    assert isinstance(result, dict)
    return result


def test_schema_is_an_openai_function_named_memory() -> None:
    assert MEMORY_SCHEMA["name"] == "memory"
    params = MEMORY_SCHEMA["parameters"]
    assert params["required"] == ["action", "target"]
    assert params["properties"]["action"]["enum"] == ["add", "replace", "remove", "read", "batch"]
    assert params["properties"]["target"]["enum"] == ["memory", "user"]
    json.dumps(MEMORY_SCHEMA)  # serialisable as sent to the API


def test_schema_description_carries_the_guidance() -> None:
    text = MEMORY_SCHEMA["description"]
    for phrase in ("remember this", "preference", "environment", "convention",
                   "session_search", "TODO"):
        assert phrase in text


def test_round_trip_through_the_tool(store: MemoryStore) -> None:
    assert call(store, action="add", target="user", content="Prefers short answers")["success"]
    result = call(store, action="read", target="user")
    assert result["entries"] == ["Prefers short answers"]
    assert call(store, action="replace", target="user", old_text="short",
                content="Prefers terse answers")["success"]
    assert call(store, action="batch", target="user", operations=[
        {"action": "add", "content": "Works in Berlin"},
        {"action": "remove", "old_text": "terse"},
    ])["success"]
    assert call(store, action="read", target="user")["entries"] == ["Works in Berlin"]
    assert call(store, action="remove", target="user", old_text="Berlin")["success"]


@pytest.mark.parametrize(("kwargs", "listed"), [
    ({"action": "forget", "target": "memory"}, "add, replace, remove, read, batch"),
    ({"action": "add", "target": "notes", "content": "x"}, "memory, user"),
])
def test_unknown_action_or_target_lists_valid_values(store: MemoryStore,
                                                     kwargs: dict[str, str], listed: str) -> None:
    result = call(store, **kwargs)
    assert result["success"] is False
    assert listed in str(result["error"])


def test_fourth_failure_in_a_turn_is_terminal(store: MemoryStore) -> None:
    for _ in range(MAX_FAILED_CALLS_PER_TURN):
        result = call(store, action="remove", target="memory", old_text="nothing here")
        assert result["success"] is False and "terminal" not in result
    result = call(store, action="add", target="memory", content="a valid fact")
    assert result["success"] is False
    assert result["terminal"] is True
    assert "answer the user" in str(result["error"])
    assert store.read("memory")["entries"] == []  # the 4th call did nothing
    store.failed_calls_this_turn = 0  # the agent starts a new turn
    assert call(store, action="add", target="memory", content="a valid fact")["success"]


def test_successes_do_not_count_towards_the_loop_breaker(store: MemoryStore) -> None:
    for i in range(10):
        assert call(store, action="add", target="memory", content=f"fact {i}")["success"]
    assert store.failed_calls_this_turn == 0
