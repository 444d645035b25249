"""The window invariant (C19) in the agent: no request over the window, whatever is pasted.

``WindowModel`` is a scripted model with a tokenizer of its own (exposed to the agent as
``token_counter()``, like the embedded model's) and a hard window, like llama.cpp: it
counts every request it receives with its own framing (which the agent does not know)
and refuses one that is too long. The property test throws random conversations at it —
pastes and tool outputs up to 100 KB, windows from 2k to 200k tokens — and checks every
request fits the budget, is valid for an API (C12) and that the archive still holds every
byte that was said.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemo.agent import Agent, build_agent
from mnemo.config import MnemoConfig
from mnemo.context import CompressionReport, validate_c12
from mnemo.context.markers import summary_content
from mnemo.errors import ContextLengthExceededError
from mnemo.home import Home
from mnemo.llm.testing import ChatRequest, ScriptedChatClient, assistant_tool_call
from mnemo.llm.types import ChatResponse, Usage
from mnemo.messages import Message, content_text
from mnemo.sessions import SessionStore

_WORD = re.compile(r"\w{1,5}|[^\w\s]|\n")
READ_LOG = {"name": "read_log", "description": "Read a log file.",
            "parameters": {"type": "object", "properties": {"size": {"type": "integer"}},
                           "required": ["size"]}}


class ModelTokenizer:
    """The test model's tokenizer: up to five word characters, or one symbol or newline."""

    def count(self, text: str) -> int:
        return len(_WORD.findall(text))


class WindowModel(ScriptedChatClient):
    """A scripted model that counts prompts with its own tokenizer and framing (6 tokens a
    message, 60 around the tools) and refuses, like llama.cpp, a prompt over its window."""

    def __init__(self, window: int, **kwargs: Any) -> None:
        super().__init__(context_length=window, **kwargs)
        self.tokenizer = ModelTokenizer()
        self.sizes: list[int] = []

    def token_counter(self) -> ModelTokenizer:
        return self.tokenizer

    def prompt_tokens(self, messages: Sequence[Message],
                      tools: Sequence[Any] | None) -> int:
        total = sum(self.tokenizer.count(content_text(m)) + 6 for m in messages)
        for m in messages:
            for call in m.get("tool_calls") or []:
                total += self.tokenizer.count(call["function"]["name"]
                                              + call["function"]["arguments"])
        if tools:
            total += self.tokenizer.count(json.dumps(list(tools))) + 60
        return total

    def complete(self, messages: Sequence[Message], *, tools: Sequence[Any] | None = None,
                 max_tokens: int | None = None, temperature: float | None = None
                 ) -> ChatResponse:
        size = self.prompt_tokens(messages, tools)
        self.sizes.append(size)
        assert self.context_length is not None
        if size > self.context_length:
            raise ContextLengthExceededError(
                f"request ({size} tokens) exceeds the available context size "
                f"({self.context_length} tokens)")
        response = super().complete(messages, tools=tools, max_tokens=max_tokens,
                                    temperature=temperature)
        return ChatResponse(message=response.message,
                            usage=Usage.of(size, response.usage.completion_tokens),
                            finish_reason=response.finish_reason, model=self.model)


def log_text(size: int, seed: int) -> str:
    """``size`` characters of a log (digits and symbols: about 2.3× the rough estimate)."""
    lines, n = [], 0
    while n < size:
        ident = (n * 2654435761 + seed) % 2**32
        line = (f"2026-11-30 15:{(seed + n) % 60:02d}:{n % 60:02d},{n % 997:03d} INFO "
                f"[worker-{seed % 9}] id=0x{ident:08x} took {n % 1000} ms")
        lines.append(line)
        n += len(line) + 1
    return "\n".join(lines)[:size]


def reply(request: ChatRequest) -> str | Message:
    """Call read_log when the user asks (``tool:N``) and it is offered; else answer."""
    last = request.messages[-1]
    if last["role"] == "user" and "read_log" in request.tool_names:
        asked = re.match(r"tool:(\d+)", content_text(last))
        if asked:
            return assistant_tool_call("read_log", {"size": int(asked.group(1))},
                                       call_id=f"call_{len(request.messages)}")
    return "Noted: the log shows the worker timings."


def make_agent(root: Path, window: int, **config: Any) -> tuple[Agent, WindowModel]:
    home = Home(root)
    home.ensure()
    client = WindowModel(window, default=reply)
    cfg = MnemoConfig.model_validate(config)
    agent = build_agent(cfg, home=home, cwd=root, client=client)
    agent.start()
    agent.tools.add(READ_LOG, lambda args: log_text(int(args["size"]), 7))
    return agent, client


turns = st.lists(
    st.tuples(st.integers(min_value=5, max_value=100_000),  # the user's message
              st.one_of(st.none(), st.integers(min_value=10, max_value=100_000))),  # tool
    min_size=1, max_size=6)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(window=st.integers(min_value=2_000, max_value=200_000), plan=turns)
def test_no_request_exceeds_the_window(window: int, plan: list[tuple[int, int | None]]
                                       ) -> None:
    with tempfile.TemporaryDirectory() as folder:
        agent, model = make_agent(Path(folder), window, memory={"flush_min_turns": 1})
        said: list[str] = []
        with agent:
            for number, (size, tool) in enumerate(plan):
                prefix = f"tool:{tool} " if tool else ""
                text = prefix + log_text(size, number)
                said.append(text)
                result = agent.run_turn(text)
                said += [run.result for run in result.tool_runs]
            budget = agent.window.budget
            session = agent.session_id
        assert model.sizes and max(model.sizes) <= budget <= window
        for request in model.requests:
            assert validate_c12(request.messages) == []
        store = SessionStore(Home(Path(folder)).state_db)
        try:
            assert session is not None
            archived = {content_text(m.to_message())
                        for m in store.read_session(session, limit=None)}
        finally:
            store.close()
        missing = [t[:40] for t in said if t not in archived]
        assert not missing, f"not in the archive: {missing}"


def test_the_issue_paste_sequence_fits_an_8k_window(tmp_path: Path) -> None:
    """Issue 11: four ~2.6 KB log pastes, then a 4 KB one, in an 8k window."""
    agent, model = make_agent(tmp_path / "home", 8192)
    with agent:
        notices = []
        for number, size in enumerate([2600, 2600, 2600, 2600, 4000]):
            result = agent.run_turn(f"Here is a log:\n{log_text(size, number)}")
            notices += [c.describe() for c in result.compactions]
        assert max(model.sizes) <= agent.window.budget
        assert notices and all("nothing compacted" not in n for n in notices)


def test_manual_compact_never_says_nothing_while_over_the_threshold(tmp_path: Path) -> None:
    """The middle is too small to summarise (two big pastes in head and tail): /compact
    truncates instead, and says so."""
    agent, _ = make_agent(tmp_path / "home", 8192, compression={"enabled": False})
    with agent:
        agent.run_turn(log_text(9_000, 1))
        agent.run_turn(log_text(9_000, 2))
        assert agent.window.count([agent._system_message(), *agent.messages]) > \
            agent.engine.threshold_tokens
        compaction = agent.compact()
        assert compaction.changed
        assert "truncated" in compaction.describe()
        assert "nothing compacted" not in compaction.describe()
        # Counted with the tools a request carries (a small window's short schemas).
        assert agent.window.count([agent._system_message(), *agent.messages],
                                  agent._offered_tools()) <= agent.engine.threshold_tokens


def chat_agent(root: Path, window: int) -> tuple[Agent, WindowModel]:
    """The agent of ``mnemo chat`` (background off, no nudges) on a scripted chat model."""
    home = Home(root / "home")
    home.ensure()
    client = WindowModel(window, default=lambda request: (
        "Noted: the harbour, the ferry and the bakery are on your list for the week."))
    cfg = MnemoConfig.model_validate({"compression": {"background": False},
                                      "memory": {"nudge_interval": 0}})
    return build_agent(cfg, home=home, cwd=root, client=client), client


def chat_line(turn: int) -> str:
    return (f"Day {turn}: my friend Ana{turn} took the ferry to the harbour museum with "
            f"{turn % 7 + 2} cousins.")


def test_a_long_chat_in_an_8k_window_compacts_every_few_turns_not_every_turn(
        tmp_path: Path) -> None:
    """Seen by hand on the embedded model: once past the threshold, a chat compacted at
    nearly every turn — the trigger counted the full tool schemas where the request
    carries the short ones of a small window, and the summary was sized as if the
    request carried none. Scripted replies; the agent, compressor and guard are real."""
    agent, client = chat_agent(tmp_path, 8192)
    compacted_at = []
    with agent:
        for turn in range(90):
            result = agent.run_turn(chat_line(turn))
            if any(c.changed for c in result.compactions):
                compacted_at.append(turn)
            # What was sent after a compaction is what the trigger counts, tools included.
            assert client.sizes[-1] <= agent.window.budget
    assert len(compacted_at) >= 3  # the chat did reach the threshold, again and again
    gaps = [b - a for a, b in pairwise(compacted_at)]
    assert min(gaps) >= 3, compacted_at


def test_in_a_3k_window_the_tail_gives_way_and_the_summary_is_never_cut(
        tmp_path: Path) -> None:
    """Where the system prompt and the tool schemas fill half the threshold, a summary
    written to its floor beside a full tail was cut by the window guard to its first
    line at every compaction: the tail gives way first (C8's three messages at least)."""
    agent, client = chat_agent(tmp_path, 3072)
    summaries = 0
    with agent:
        for turn in range(40):
            agent.run_turn(chat_line(turn))
            for message in agent.messages:
                text = content_text(message)
                if text.startswith("[CONTEXT COMPACTION"):
                    summaries += 1
                    assert "characters cut here" not in text
                    assert "## Goal" in text and "## Critical Context" in text
            assert client.sizes[-1] <= agent.window.budget
    assert summaries


def test_cuts_to_get_under_the_threshold_leave_the_summary_whole(tmp_path: Path) -> None:
    """Seen by hand (3,072 tokens, a turn of memory calls): after a compaction the
    agent cut messages to get under the threshold, the summary among them, and the user
    fact in its cut middle was lost from every later summary. Only the window may cut a
    summary; the threshold leaves it whole and cuts the rest."""
    agent, _ = make_agent(tmp_path / "home", 3072)
    facts = "\n".join(f"- User: fact number {i} about the harbour museum." for i in range(60))
    summary = summary_content(f"## Critical Context\n{facts}")
    with agent:
        agent.run_turn("Hello!")
        agent.messages = [
            {"role": "user", "content": summary},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "tool:900 please read the log"},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "c1", "type": "function",
                "function": {"name": "read_log", "arguments": '{"size": 900}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": log_text(900, 1)}]

        def nothing_to_summarise(messages: Sequence[Message], *_: Any, **__: Any
                                 ) -> list[Message]:
            # As by hand: the summary in the protected head, too little between.
            agent.engine.last_report = CompressionReport(
                len(messages), len(messages), 0, 0, skipped_reason="nothing to summarise")
            return list(messages)

        agent.engine.compress = nothing_to_summarise  # type: ignore[method-assign]
        compaction = agent.compact(reason="auto")
        kept = [content_text(m) for m in agent.messages]
    assert summary in kept
    assert compaction.fit is not None and [c.kind for c in compaction.fit.cuts] == [
        "tool output"]


def test_an_overflow_error_teaches_the_meter_and_the_retry_fits(tmp_path: Path) -> None:
    """A model whose tokenizer the agent cannot see counts 3× the estimate; its refusal
    names the size, the agent learns the ratio, cuts, and the retry is accepted."""

    class HiddenTokenizer(WindowModel):
        token_counter = None  # type: ignore[assignment]

        def prompt_tokens(self, messages: Sequence[Message],
                          tools: Sequence[Any] | None) -> int:
            return 3 * super().prompt_tokens(messages, tools)

    home = Home(tmp_path / "home")
    home.ensure()
    client = HiddenTokenizer(8192, default=reply)
    agent = build_agent(MnemoConfig(), home=home, cwd=tmp_path, client=client)
    with agent:
        agent.run_turn("x " * 5000)
        assert agent.window.meter.ratio > 1.5
    refused = [s for s in client.sizes if s > 8192]
    assert len(refused) <= 1  # at most the first, before anything was learnt
    assert client.sizes[-1] <= 8192


@pytest.mark.parametrize("window", [2_000, 4_096])
def test_tiny_windows_call_without_tools_rather_than_fail(tmp_path: Path, window: int) -> None:
    agent, model = make_agent(tmp_path / "home", window)
    with agent:
        result = agent.run_turn("tool:500 " + log_text(20_000, 3))
    assert result.text
    assert max(model.sizes) <= window


def test_the_memory_flush_turn_goes_through_the_guard_too(tmp_path: Path) -> None:
    agent, model = make_agent(tmp_path / "home", 8192, memory={"flush_min_turns": 1})
    with agent:
        for number in range(4):
            agent.run_turn(log_text(12_000, number))
    flushes = [r for r in model.requests if "memory" in r.tool_names
               and r.tool_names == ["memory"]]
    assert flushes, "a flush turn was expected before the compactions"
    assert max(model.sizes) <= agent.window.budget


def test_the_counter_is_the_models_own_when_there_is_one() -> None:
    from mnemo.agent.window import counter_for, reported_tokens

    model = WindowModel(8192)
    counter, exact = counter_for(model)
    assert exact and counter is not None and counter.count("abc def") == 2
    counter, exact = counter_for(ScriptedChatClient(model="some-local-llama"))
    assert (counter, exact) == (None, False)  # the shaped estimate
    pytest.importorskip("bpe_openai", reason='needs pip install "mnemo[tokenizer]"')
    counter, exact = counter_for(ScriptedChatClient(model="gpt-4o-mini"))
    assert exact and counter is not None and counter.count("hello world") == 2
    assert reported_tokens(ValueError(
        "request (10,308 tokens) exceeds the available context size (8,192 tokens)")) == 10308
    assert reported_tokens(ValueError("maximum context length is 128000 tokens. However, "
                                      "your messages resulted in 130512 tokens")) == 130512
    assert reported_tokens(ValueError("too long")) is None
