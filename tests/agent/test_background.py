"""Background preparation of compaction summaries in a live agent session (C17).

The main model is scripted (``ScriptedChatClient``): every turn reads a file through a
tool, then answers. The summariser runs on the preparer's real worker thread and blocks
until the test lets it go: the test opens it only while "the user pauses" between turns,
and waits for the worker to run out of work (nothing sleeps). A summariser call made on
the main thread — a turn waiting for a summary — is recorded and answered at once, so
the test fails on it instead of hanging.
"""

from __future__ import annotations

import itertools
import random
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mnemo.agent import Agent, build_agent
from mnemo.config import MnemoConfig
from mnemo.context import TEMPLATE_SECTIONS, validate_c12
from mnemo.context.engine import CompressionReport
from mnemo.context.prepare_worker import ThreadRunner
from mnemo.errors import CallStoppedError
from mnemo.home import Home
from mnemo.llm.testing import ChatRequest, ScriptedChatClient, assistant_tool_call
from mnemo.messages import content_text

READ_FILE = {
    "name": "read_file",
    "description": "Read a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}
MARK = "MODEL-WROTE-THIS"


def _model(request: ChatRequest) -> Any:
    last = request.messages[-1]
    if last["role"] == "user":
        found = re.search(r"turn (\d+):", content_text(last))
        if found is None or "read_file" not in request.tool_names:
            return "nothing to save"  # a memory flush turn
        n = found.group(1)
        return assistant_tool_call("read_file", {"path": f"src/m{n}.py"}, call_id=f"r{n}")
    return "Read it; the module looks fine."


class _Summariser:
    """Blocks on the worker thread until ``allowed``; never blocks the main thread."""

    def __init__(self) -> None:
        self.allowed = threading.Event()
        self.worker_calls = 0
        self.main_thread_calls = 0

    def __call__(self, prompt: str) -> str:
        if threading.current_thread() is threading.main_thread():
            self.main_thread_calls += 1
        else:
            self.allowed.wait(timeout=60)  # a safety net only: the test opens it
            self.worker_calls += 1
        return "\n\n".join(f"## {name}\n- {MARK}" for name in TEMPLATE_SECTIONS)


def _agent(home: Home, tmp_path: Path, summariser: _Summariser, client: ScriptedChatClient,
           read: Callable[[dict[str, Any]], str] | None = None, **compression: Any) -> Agent:
    config = MnemoConfig.model_validate({
        "compression": compression,
        "memory": {"nudge_interval": 0, "memory_char_limit": 100_000}})
    agent = build_agent(config, home=home, cwd=tmp_path, client=client, summarizer=summariser)
    agent.start()
    rng = random.Random(5)
    # Code full of digits: the window guard counts it at two to three times the rough
    # estimate, and the compressor sizes its tail with the guard's count (``count_with``).
    agent.tools.add(READ_FILE, read or (lambda args: f"# {args.get('path')}\n" + "\n".join(
        f"def f{i}(): return {rng.random():.8f}" for i in range(rng.randint(40, 150)))))
    return agent


def _pause(agent: Agent, summariser: _Summariser) -> None:
    """The user reads the answer: the worker may call the model and catches up."""
    preparer = getattr(agent.engine, "preparer", None)
    if preparer is None and not agent.config.compression.background:
        return  # the synchronous run has no worker to wait for
    assert preparer is not None and isinstance(preparer.runner, ThreadRunner)
    summariser.allowed.set()
    preparer.runner.join()
    summariser.allowed.clear()


def test_no_turn_waits_for_the_summariser_and_summaries_are_the_models(
        mnemo_home: Home, tmp_path: Path) -> None:
    summariser = _Summariser()
    client = ScriptedChatClient(default=_model, context_length=8_000)
    reports: list[CompressionReport] = []
    with _agent(mnemo_home, tmp_path, summariser, client) as agent:
        for turn in range(60):
            result = agent.run_turn(f"turn {turn}: please review src/m{turn}.py")
            reports += [c.report for c in result.compactions if c.report.summary]
            _pause(agent, summariser)
        status = agent.status()
    assert summariser.main_thread_calls == 0  # no turn waited for a summary
    assert summariser.worker_calls > 0
    assert len(reports) >= 4
    prepared = [r for r in reports if r.prepared_messages]
    assert len(prepared) >= 0.8 * len(reports)  # "almost every compaction"
    for report in prepared:
        assert report.summary_calls == 0 and not report.fallback
        assert report.summary is not None and MARK in report.summary
    turns = [r for r in client.requests if "read_file" in r.tool_names]
    assert turns
    for request in turns:  # (memory flush requests are the lead's, issue 17)
        assert validate_c12(request.messages) == []
    assert status["preparation"] is not None


def _unexplained_breaks(home: Home, tmp_path: Path, **compression: Any) -> tuple[int, int]:
    """(requests whose prefix differs from the one before with no compaction between
    them, compactions) over 30 turns."""
    home.ensure()
    summariser = _Summariser()
    client = ScriptedChatClient(default=_model, context_length=8_000)
    sent_before: list[int] = []  # for each compaction, how many requests were sent before it
    with _agent(home, tmp_path, summariser, client, **compression) as agent:
        agent.on_event = lambda kind, details: (
            sent_before.append(len(client.requests)) if kind == "compaction" else None)
        for turn in range(30):
            agent.run_turn(f"turn {turn}: please review src/m{turn}.py")
            _pause(agent, summariser)
    turns = [(i, r) for i, r in enumerate(client.requests) if "read_file" in r.tool_names]
    unexplained = sum(1 for (i, a), (j, b) in itertools.pairwise(turns)
                      if b.messages[:len(a.messages)] != a.messages
                      and not any(i < n <= j for n in sent_before))
    return unexplained, len(sent_before)


def test_requests_stay_byte_identical_between_compactions(tmp_path: Path) -> None:
    """Preparation adds no change to what is sent: every request whose prefix differs
    from the one before follows a compaction (a summary, cleared tool outputs or the
    window guard's cut, each shown to the user), no more often unexplained than in the
    synchronous run of the same session."""
    unexplained, compactions = _unexplained_breaks(Home(tmp_path / "bg"), tmp_path,
                                                   background=True)
    sync_unexplained, sync_compactions = _unexplained_breaks(
        Home(tmp_path / "sync"), tmp_path, background=False)
    assert compactions > 0 and sync_compactions > 0
    assert unexplained <= sync_unexplained
    assert unexplained == 0


def test_background_false_keeps_the_synchronous_summary(mnemo_home: Home,
                                                        tmp_path: Path) -> None:
    summariser = _Summariser()
    client = ScriptedChatClient(default=_model, context_length=8_000)
    with _agent(mnemo_home, tmp_path, summariser, client, background=False) as agent:
        assert getattr(agent.engine, "preparer", None) is None
        for turn in range(25):
            agent.run_turn(f"turn {turn}: please review src/m{turn}.py")
        assert "summary:" not in agent.status_line()
    assert summariser.main_thread_calls > 0 and summariser.worker_calls == 0


def test_status_line_shows_the_preparation_and_new_session_forgets_it(
        mnemo_home: Home, tmp_path: Path) -> None:
    summariser = _Summariser()
    client = ScriptedChatClient(default=_model, context_length=8_000)
    with _agent(mnemo_home, tmp_path, summariser, client) as agent:
        seen: set[str] = set()
        for turn in range(12):
            agent.run_turn(f"turn {turn}: please review src/m{turn}.py")
            _pause(agent, summariser)
            seen.add(agent.status()["preparation"]["state"])
            line = agent.status_line()
            assert "summary: idle" in line or "summary: ready, covering " in line
        assert "ready" in seen
        agent.new_session()
        assert agent.status()["preparation"]["state"] == "idle"


class _GrammarClient(ScriptedChatClient):
    """A scripted client that takes grammars, as the embedded model's client does."""

    supports_grammar = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.grammars: list[str | None] = []
        self.meanwhile: Callable[[], object] | None = None  # what happens during a call

    def complete(self, messages: Any, *, tools: Any = None, max_tokens: int | None = None,
                 temperature: float | None = None, grammar: str | None = None) -> Any:
        self.grammars.append(grammar)
        if self.meanwhile is not None:
            self.meanwhile()
        return super().complete(messages, tools=tools, max_tokens=max_tokens,
                                temperature=temperature)


def test_the_embedded_main_model_prepares_summaries_with_its_grammar(
        mnemo_home: Home, tmp_path: Path, monkeypatch: Any) -> None:
    import mnemo.agent.setup as setup

    monkeypatch.setattr(setup, "_main_kind", lambda config, home: "local")
    client = _GrammarClient(default="## Goal\n- ok", context_length=8_000)
    agent = build_agent(MnemoConfig(), home=mnemo_home, cwd=tmp_path, client=client)
    preparer = getattr(agent.engine, "preparer", None)
    assert getattr(agent.engine, "summarizer", None) is None  # at the threshold: local
    assert preparer is not None
    preparer.summarizer("a summary prompt")
    assert client.grammars and client.grammars[-1]  # the section grammar went along
    assert preparer.complete  # its capped answers are filled up by the local summariser
    # A turn that begins while a summary runs stops it: the server has one slot.
    turn = agent.gate.turn_call()
    client.meanwhile = turn.__enter__
    with pytest.raises(CallStoppedError):
        preparer.summarizer("a summary prompt")
    turn.__exit__(None, None, None)
    client.meanwhile = None
    agent.close()
    # Closed, the session's background work is over: its model server is stopped next.
    with pytest.raises(CallStoppedError):
        preparer.summarizer("a summary prompt")
    with build_agent(MnemoConfig.model_validate({"compression": {"background": False}}),
                     home=mnemo_home, cwd=tmp_path, client=client) as sync:
        assert sync.engine.get_status()["preparation"] is None


def test_the_gate_is_shut_from_the_users_message_to_the_answer(
        mnemo_home: Home, tmp_path: Path) -> None:
    # A summary sent between a tool round and the turn's next call would be served first
    # by a one-slot server (the embedded model): background work waits for the answer.
    summariser = _Summariser()
    client = ScriptedChatClient(default=_model, context_length=8_000)
    shut_while_a_tool_ran: list[bool] = []

    def read(args: dict[str, Any]) -> str:
        shut_while_a_tool_ran.append(agent.gate.busy)
        return "def f(): return 1"

    with _agent(mnemo_home, tmp_path, summariser, client, read) as agent:
        for turn in range(3):
            agent.run_turn(f"turn {turn}: please review src/m{turn}.py")
            assert not agent.gate.busy  # the user reads the answer: the worker may go
            _pause(agent, summariser)
    assert shut_while_a_tool_ran == [True, True, True]


def test_the_gate_is_shut_while_a_session_ends_and_for_good_once_closed(
        mnemo_home: Home, tmp_path: Path) -> None:
    summariser = _Summariser()
    client = ScriptedChatClient(default=_model, context_length=8_000)
    agent = _agent(mnemo_home, tmp_path, summariser, client)
    shut_at_the_end: list[bool] = []
    ending = agent.engine.on_session_end
    agent.engine.on_session_end = lambda *args: (  # type: ignore[method-assign]
        shut_at_the_end.append(agent.gate.busy), ending(*args))[1]
    agent.run_turn("turn 0: please review src/m0.py")
    agent.new_session()  # /new: the old session's summary would be thrown away
    assert shut_at_the_end == [True] and not agent.gate.busy
    agent.run_turn("turn 1: please review src/m1.py")
    agent.close()
    assert shut_at_the_end == [True, True] and agent.gate.busy
