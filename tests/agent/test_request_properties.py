"""Property: whatever happens in a session, every request the agent sends is API-valid
and within the model's window (SPEC C12, C19).

Random sessions (seeded, so a failure names the seed that reproduces it) drive a real
agent — real memory files, a real SQLite session store — through tool calls, bad tool
calls, failed and empty replies, context-length errors, compactions that land in the
middle of a tool loop, memory flushes, ``/compact``, ``/new``, ``/reset`` and resuming the
session in a new agent. The model is a strict ``ScriptedChatClient`` whose replies are
drawn from the same seed; it checks every request with ``validate_c12``, and each
request's size is checked against the window by the client's own (rough) count.
"""

from __future__ import annotations

import contextlib
import json
import random
from pathlib import Path
from typing import Any

import pytest

from mnemo.agent import Agent, build_agent
from mnemo.config import MnemoConfig
from mnemo.errors import ContextLengthExceededError, ProviderError, ProviderTimeoutError
from mnemo.home import Home
from mnemo.llm.testing import ChatRequest, ScriptedChatClient
from mnemo.messages import Message
from mnemo.tokens import estimate_messages_tokens_rough

SESSIONS = 1_000

_WORDS = ("deploy", "the", "staging", "server", "uses", "port", "8080", "Lisbon", "tabs",
          "error", "timeout", "retry", "config", "yaml", "Ana", "prefers", "short", "answers")


class RandomModel:
    """Replies drawn from ``rng``: text, empty text, tool calls (good and bad), failures."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.calls = 0

    def __call__(self, request: ChatRequest) -> Any:
        self.calls += 1
        rng = self.rng
        if request.tool_names == ["memory"]:  # the flush turn
            if rng.random() < 0.5:
                return self._calls(["memory"])
            return "nothing to save"
        roll = rng.random()
        if roll < 0.05:
            return ProviderTimeoutError("scripted timeout")
        if roll < 0.10:
            return ContextLengthExceededError("scripted: request too long")
        if roll < 0.15:
            return ""
        if request.tools and roll < 0.55:
            return self._calls(request.tool_names)
        return _text(rng, rng.randint(1, 40))

    def _calls(self, offered: list[str]) -> Message:
        rng = self.rng
        calls = []
        for _ in range(rng.randint(1, 3)):
            self.calls += 1
            name = rng.choice([*offered, "no_such_tool"])
            calls.append({"id": f"call_{self.calls}", "type": "function",
                          "function": {"name": name, "arguments": self._arguments(name)}})
        content = _text(rng, rng.randint(1, 8)) if rng.random() < 0.3 else None
        return {"role": "assistant", "content": content, "tool_calls": calls}

    def _arguments(self, name: str) -> str:
        rng = self.rng
        if rng.random() < 0.1:
            return "{not json"
        if name == "memory":
            action = rng.choice(["add", "add", "read", "remove", "replace"])
            args: dict[str, Any] = {"action": action, "target": rng.choice(["user", "memory"]),
                                    "content": _text(rng, rng.randint(2, 12))}
            if action in ("remove", "replace"):
                args["old_text"] = rng.choice(_WORDS)
            return json.dumps(args)
        if name == "session_search":
            return json.dumps({"query": _text(rng, 2)})
        return json.dumps({"x": 1})


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def _user_text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.02:  # a huge paste: up to ~100 KB
        return "the whole file:\n" + "\n".join(
            f"{i:05d} {_text(rng, 12)}" for i in range(rng.randint(300, 1_400)))
    if roll < 0.10:  # a pasted log or file, sometimes a long one
        return "here is the log:\n" + "\n".join(
            f"{i:05d} {_text(rng, 12)}" for i in range(rng.randint(20, 200)))
    return _text(rng, rng.randint(1, 30))


def _config(rng: random.Random) -> MnemoConfig:
    return MnemoConfig.model_validate({
        "memory": {"flush_min_turns": rng.choice([0, 1, 2, 4]),
                   "nudge_interval": rng.choice([0, 1, 3])},
        "agent": {"max_tool_iterations": rng.randint(1, 5)},
        "context": {"engine": rng.choice(["compressor", "compressor", "lcm"]),
                    "protect_last_n": rng.choice([2, 4, 20])},
    })


def run_session(seed: int, home: Home, cwd: Path) -> ScriptedChatClient:
    """One random session; returns the client that saw every request."""
    rng = random.Random(seed)
    config = _config(rng)
    client = ScriptedChatClient(default=RandomModel(rng),
                                context_length=rng.choice([4096, 8192, 16384, 32768]))

    def new_agent(resume: str | None = None) -> Agent:
        return build_agent(config, home=home, cwd=cwd, client=client,
                           resume_session_id=resume)

    agent = new_agent()
    try:
        for _ in range(rng.randint(2, 8)):
            event = rng.choices(["turn", "compact", "new", "reset", "resume"],
                                weights=[12, 1, 1, 1, 1])[0]
            if event == "turn":
                # A turn may fail as the script says; the session goes on.
                with contextlib.suppress(ProviderError):
                    agent.run_turn(_user_text(rng))
            elif event == "compact":
                agent.compact(rng.choice([None, "the deploy"]))
            elif event in ("new", "reset"):
                agent.new_session(flush=event == "new")
            elif agent.session_id is not None:
                sid = agent.session_id
                agent.close()
                agent = new_agent(resume=sid)
    finally:
        agent.close()
    return client


@pytest.mark.slow
def test_every_request_of_random_sessions_is_valid(tmp_path: Path) -> None:
    failures: list[str] = []
    requests = 0
    for seed in range(SESSIONS):
        root = tmp_path / f"home-{seed % 50}"  # homes are reused: memory and archive grow
        root.mkdir(exist_ok=True)
        client = run_session(seed, Home(root), tmp_path)
        requests += len(client.requests)
        failures += [f"seed {seed}: {v}" for v in client.violations]
        window = client.context_length or 0
        failures += [f"seed {seed}: request #{n} of ~{size:,} tokens over the {window:,} window"
                     for n, r in enumerate(client.requests)
                     if (size := estimate_messages_tokens_rough(r.messages)) > window]
    assert requests > SESSIONS * 5  # the sessions really talked to the model
    assert failures == [], "\n".join(failures[:10])


@pytest.mark.parametrize("seed", [3, 17, 101])
def test_one_random_session_reproduces(seed: int, tmp_path: Path) -> None:
    """Two runs of a seed send the same requests (so a failing seed can be replayed)."""
    first = run_session(seed, Home(tmp_path / "a"), tmp_path)
    second = run_session(seed, Home(tmp_path / "b"), tmp_path)
    shape = [[m["role"] for m in r.messages] for r in first.requests]
    assert shape == [[m["role"] for m in r.messages] for r in second.requests]
