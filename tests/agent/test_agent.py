"""The agent turn loop (SPEC A1, M8, C3, C14) with scripted model replies.

Every test here uses ``ScriptedChatClient`` (scripted replies, no model), a real
``MemoryStore`` and a real SQLite ``SessionStore`` in the test's home.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from mnemo.agent import Agent, build_agent
from mnemo.agent.agent import Compaction
from mnemo.agent.nudges import NUDGE_TEXT
from mnemo.config import MnemoConfig
from mnemo.context import SUMMARY_PREFIX, CompressionReport
from mnemo.errors import ContextLengthExceededError, ProviderConnectionError, UsageError
from mnemo.home import Home
from mnemo.llm.testing import ChatRequest, ScriptedChatClient, assistant_tool_call
from mnemo.messages import Message, content_text
from mnemo.sessions import SESSION_SEARCH_SCHEMA, SessionStore

FIXED_NOW = datetime(2026, 11, 29, 9, 30)


def make_agent(home: Home, client: ScriptedChatClient, tmp_path: Path,
               **config: Any) -> Agent:
    cfg = MnemoConfig.model_validate(config)
    return build_agent(cfg, home=home, cwd=tmp_path, client=client, clock=lambda: FIXED_NOW)


def system_of(request: ChatRequest) -> str:
    first = request.messages[0]
    assert first["role"] == "system"
    return content_text(first)


def assert_valid(messages: list[Message]) -> None:
    """C12: every tool result follows its call, every call has a result, a user survives."""
    open_calls: set[str] = set()
    for m in messages:
        if m["role"] == "assistant":
            assert not open_calls, f"tool calls without results: {open_calls}"
            open_calls = {c["id"] for c in m.get("tool_calls") or []}
        elif m["role"] == "tool":
            assert m["tool_call_id"] in open_calls
            open_calls.discard(m["tool_call_id"])
        else:
            assert not open_calls
    assert any(m["role"] == "user" for m in messages)


def test_a_simple_turn_is_persisted(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient(["Hello! How can I help?"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("hi there")
        assert result.text == "Hello! How can I help?"
        assert result.model_calls == 1 and result.prompt_tokens > 0
        sid = agent.session_id
        assert sid is not None
    store = SessionStore(mnemo_home.state_db)
    stored = [m.to_message() for m in store.load_messages(sid)]
    assert stored == [{"role": "user", "content": "hi there"},
                      {"role": "assistant", "content": "Hello! How can I help?"}]
    info = store.get_session(sid)
    assert info is not None and info.title == "hi there" and info.ended_at is not None
    assert "Conversation started: 2026-11-29" in info.system_prompt


def test_tools_offered_and_run(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([
        assistant_tool_call("memory", {"action": "add", "target": "user",
                                       "content": "Prefers short answers"}),
        "Saved.",
    ], context_length=128_000)  # a large window: every tool, full schemas (small: see
    # tests/agent/test_agent_local_model.py)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Please keep answers short, remember that")
    assert result.text == "Saved." and result.memory_written
    assert {"memory", "session_search", "skill_view"} <= set(client.requests[0].tool_names)
    tool_message = client.requests[1].messages[-1]
    assert tool_message["role"] == "tool" and json.loads(content_text(tool_message))["success"]
    assert (mnemo_home.memories_dir / "USER.md").read_text(encoding="utf-8") == \
        "Prefers short answers"


def test_bad_tool_calls_come_back_as_errors_not_exceptions(mnemo_home: Home,
                                                           tmp_path: Path) -> None:
    client = ScriptedChatClient([
        assistant_tool_call("nonexistent", {}),
        assistant_tool_call("memory", "{not json"),
        "ok",
    ])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("go")
    errors = [json.loads(run.result)["error"] for run in result.tool_runs]
    assert "There is no tool 'nonexistent'" in errors[0]
    assert "not a valid JSON object" in errors[1]
    assert result.text == "ok"


def test_a_blank_message_is_refused_before_anything_is_stored(mnemo_home: Home,
                                                              tmp_path: Path) -> None:
    client = ScriptedChatClient(["hi"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("hello")
        with pytest.raises(UsageError, match="the message is empty"):
            agent.run_turn(" \n")
        assert [m["role"] for m in agent.messages] == ["user", "assistant"]
    assert len(client.requests) == 1


def test_tool_iterations_are_bounded(mnemo_home: Home, tmp_path: Path) -> None:
    def new_search_each_time(request: ChatRequest) -> Any:
        if not request.tools:
            return "final answer"
        return assistant_tool_call("session_search", {"query": f"q{len(request.messages)}"})

    client = ScriptedChatClient(default=new_search_each_time)
    with make_agent(mnemo_home, client, tmp_path, agent={"max_tool_iterations": 3}) as agent:
        result = agent.run_turn("loop forever")
    assert result.model_calls == 4 and result.stopped_early
    assert result.text == "final answer"
    assert client.requests[-1].tools is None


def test_a_model_repeating_the_same_call_is_made_to_answer(mnemo_home: Home,
                                                           tmp_path: Path) -> None:
    loop = assistant_tool_call("memory", {"action": "read", "target": "memory"})
    client = ScriptedChatClient(default=lambda r: loop if r.tools else "final answer")
    with make_agent(mnemo_home, client, tmp_path, agent={"max_tool_iterations": 10}) as agent:
        result = agent.run_turn("loop forever")
    # The second call only repeated the first: the third is made without tools.
    assert result.model_calls == 3 and not result.stopped_early
    assert result.text == "final answer" and client.requests[-1].tools is None


def test_recall_and_nudge_reach_the_request_but_are_never_stored(mnemo_home: Home,
                                                                 tmp_path: Path) -> None:
    store = SessionStore(mnemo_home.state_db)
    old = store.create_session(title="old")
    store.append_message(old, {"role": "user", "content": "The VPN gateway is vpn.corp.example"})
    store.close()
    client = ScriptedChatClient(default="noted")
    with make_agent(mnemo_home, client, tmp_path,
                    memory={"provider": "recall", "nudge_interval": 2}) as agent:
        agent.run_turn("what is the VPN gateway address?")
        agent.run_turn("thanks")
        sent_first = content_text(client.requests[0].messages[-1])
        assert "<memory-context>" in sent_first and "vpn.corp.example" in sent_first
        assert NUDGE_TEXT in content_text(client.requests[1].messages[-1])
        assert NUDGE_TEXT not in sent_first
        assert agent.messages[0] == {"role": "user",
                                     "content": "what is the VPN gateway address?"}
        sid = agent.session_id
    stored = SessionStore(mnemo_home.state_db).load_messages(str(sid))
    assert all("<memory-context>" not in m.text and NUDGE_TEXT not in m.text for m in stored)


def test_the_scripted_story(mnemo_home: Home, tmp_path: Path) -> None:
    """Issue 8's scenario: write memory, overflow and compact, continue, new session."""
    big = "log line with details\n" * 400  # ~2,200 tokens of tool output per call

    def reply(request: ChatRequest) -> Any:
        last = request.messages[-1]
        text = content_text(last)
        if "remember" in text and last["role"] == "user":
            return assistant_tool_call("memory", {"action": "add", "target": "memory",
                                                  "content": "Deploys go through make ship"})
        if last["role"] == "user" and "inspect" in text:
            return assistant_tool_call("session_search", {"mode": "recent"},
                                       content=big[:2000])
        return "done: " + text[:30]

    client = ScriptedChatClient(default=reply, context_length=8000)
    agent = make_agent(mnemo_home, client, tmp_path,
                       memory={"flush_min_turns": 0, "nudge_interval": 0})
    agent.run_turn("remember: deploys go through make ship")
    prompts = set()
    compactions = []
    for i in range(12):
        result = agent.run_turn(f"inspect step {i} " + big[:3000])
        compactions += result.compactions
        prompts |= {system_of(r) for r in client.requests if r.tools}
        assert_valid(agent.messages)
    assert any(c.report.changed for c in compactions), "the threshold was never reached"
    assert agent.engine.compression_count >= 1
    # The prompt changes exactly once per compaction (C14), never because of memory writes.
    assert len(prompts) <= 1 + agent.engine.compression_count
    first_prompt = system_of(client.requests[0])
    assert "Deploys go through make ship" not in first_prompt  # frozen snapshot
    # After a compaction the live context starts with the summary and stays valid.
    assert any(SUMMARY_PREFIX in content_text(m) for m in agent.messages)
    assert agent.messages[-1]["role"] == "assistant"
    sid = agent.session_id
    agent.close()
    # Everything that left the live context is archived, never deleted.
    store = SessionStore(mnemo_home.state_db)
    all_messages = store.load_messages(str(sid), active_only=False)
    assert sum(1 for m in all_messages if m.compacted) > 0
    assert sum(1 for m in all_messages if m.role == "user") >= 13
    # A new session shows the memory written in the first one.
    client2 = ScriptedChatClient(default="hello again")
    with make_agent(mnemo_home, client2, tmp_path) as agent2:
        agent2.run_turn("hi")
        agent2.run_turn("and again")
        prompts2 = {system_of(r) for r in client2.requests}
    assert len(prompts2) == 1
    assert "Deploys go through make ship" in prompts2.pop()


def test_system_prompt_is_byte_identical_across_turns_with_memory_writes(
        mnemo_home: Home, tmp_path: Path) -> None:
    script: list[Any] = []
    for i in range(5):
        script += [assistant_tool_call("memory", {"action": "add", "target": "user",
                                                  "content": f"fact number {i}"}),
                   f"saved {i}"]
    client = ScriptedChatClient(script)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        for i in range(5):
            agent.run_turn(f"remember fact {i}")
    assert len({system_of(r) for r in client.requests}) == 1
    assert len(client.requests) == 10


def test_context_length_error_compacts_and_retries_once(mnemo_home: Home,
                                                         tmp_path: Path) -> None:
    client = ScriptedChatClient(default="fine")
    with make_agent(mnemo_home, client, tmp_path,
                    compression={"enabled": False}) as agent:
        for i in range(30):
            agent.run_turn(f"message {i} " + "padding words " * 200)
        client.add(ContextLengthExceededError("too long"), "recovered")
        result = agent.run_turn("one more")
    assert result.text == "recovered"
    assert [c.reason for c in result.compactions] == ["overflow"]
    assert result.compactions[0].report.changed


def test_context_length_error_without_anything_to_compact_is_raised(
        mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([ContextLengthExceededError("too long")])
    with make_agent(mnemo_home, client, tmp_path) as agent, \
            pytest.raises(ContextLengthExceededError):
        agent.run_turn("hi")


def test_unreachable_model_keeps_the_conversation(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient(["first answer", ProviderConnectionError("refused"),
                                 "back again"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("first")
        with pytest.raises(ProviderConnectionError):
            agent.run_turn("second")
        result = agent.run_turn("third")
        assert result.text == "back again"
        texts = [content_text(m) for m in agent.messages]
    # The failed turn is closed by a note, so the stored conversation still alternates.
    assert texts == ["first", "first answer", "second",
                     "[no answer: the model call failed (ProviderConnectionError)]",
                     "third", "back again"]


def test_flush_turn_before_session_end(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient(default="ok")
    agent = make_agent(mnemo_home, client, tmp_path, memory={"flush_min_turns": 2})
    agent.run_turn("I always use tabs")
    agent.run_turn("and I live in Lisbon")
    client.add(assistant_tool_call("memory", {"action": "add", "target": "user",
                                              "content": "Lives in Lisbon; uses tabs"}),
               "nothing else")
    agent.close()
    flush = client.requests[2]
    assert flush.tool_names == ["memory"]
    assert "about to leave your context" in flush.last_text
    assert "Lives in Lisbon" in (mnemo_home.memories_dir / "USER.md").read_text()


def test_no_flush_when_memory_was_just_written(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient([
        assistant_tool_call("memory", {"action": "add", "target": "user", "content": "x1"}),
        "saved",
    ])
    agent = make_agent(mnemo_home, client, tmp_path, memory={"flush_min_turns": 1})
    agent.run_turn("remember x1")
    agent.close()
    assert len(client.requests) == 2


@pytest.mark.parametrize(("pruned", "stubs", "said"), [
    ([3, 5], 0, "compacted — cleared 2 old tool outputs (no summary: too small)"),
    # By hand: "cleared 0 old tool outputs" when only a repair had changed the list.
    ([], 1, "compacted — no summary (too small)"),
])
def test_a_compaction_without_summary_says_what_it_did(pruned: list[int], stubs: int,
                                                       said: str) -> None:
    report = CompressionReport(10, 10, 900, 800, pruned=pruned, stubs_added=stubs,
                               skipped_reason="too small")
    assert Compaction("auto", report).describe() == said


def test_manual_compact_with_focus_and_prompt_rebuilt_once(mnemo_home: Home,
                                                           tmp_path: Path) -> None:
    # A window where the turns stay under the threshold (in 8k the system prompt and the
    # tool schemas alone are half of it, and every turn compacts): /compact does it all.
    client = ScriptedChatClient(default="ok", context_length=32_000)
    with make_agent(mnemo_home, client, tmp_path,
                    memory={"flush_min_turns": 0}) as agent:
        for i in range(25):
            agent.run_turn(f"talk about topic {i} " + "words " * 150)
        agent.memory.add("user", "Written before the compaction")
        compaction = agent.compact("topic 3")
        assert compaction.report.changed and compaction.report.focus_topic == "topic 3"
        assert "compacted" in compaction.describe()
        agent.run_turn("continue")
        agent.run_turn("and more")
    after = [system_of(r) for r in client.requests[-2:]]
    assert after[0] == after[1]
    assert "Written before the compaction" in after[0]
    assert "compacted into a handoff summary" in after[0]


def test_a_correction_after_a_compaction_revises_the_summary_at_once(
        mnemo_home: Home, tmp_path: Path) -> None:
    # By hand (3,072 tokens) the correction came two turns after a compaction, and the
    # embedded model answered "When is my interview?" from the summary's old line.
    client = ScriptedChatClient(default="ok", context_length=32_000)
    with make_agent(mnemo_home, client, tmp_path,
                    memory={"flush_min_turns": 0}) as agent:
        agent.run_turn("Hi, I need help with a job interview.")  # the head: kept whole
        agent.run_turn("It is for a nursing job.")
        agent.run_turn("The interview is on Tuesday at 10:30. My sister Anna drives me.")
        for i in range(25):
            agent.run_turn(f"talk about topic {i} " + "words " * 150)
        assert agent.compact().report.changed
        agent.run_turn("What next?")
        before = client.requests[-1].messages
        agent.run_turn("Actually the interview moved to Wednesday at 14:00, not Tuesday.")
        after = client.requests[-1].messages
        sid = agent.session_id
        assert sid is not None
    summaries = [[content_text(m) for m in request if content_text(m).startswith(
        SUMMARY_PREFIX)] for request in (before, after)]
    assert "Tuesday" in summaries[0][0] and "10:30" in summaries[0][0]
    assert "10:30" not in summaries[1][0] and "Anna" in summaries[1][0]
    # What comes before the summary is as it was: only the summary changed.
    assert before[:before.index(next(m for m in before if content_text(m) == summaries[0][0]))]\
        == after[:after.index(next(m for m in after if content_text(m) == summaries[1][0]))]
    # The session holds the revised summary: a resumed chat sees it too.
    live = [content_text(m.to_message()) for m in SessionStore(mnemo_home.state_db)
            .load_messages(sid)]
    assert summaries[1][0] in live and summaries[0][0] not in live


def test_new_session_and_reset(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient(default="ok")
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("one")
        first = agent.session_id
        agent.new_session()
        agent.run_turn("two")
        second = agent.session_id
        agent.new_session(flush=False)
        agent.run_turn("three")
        third = agent.session_id
    assert len({first, second, third}) == 3
    store = SessionStore(mnemo_home.state_db)
    assert [m.text for m in store.load_messages(str(second))] == ["two", "ok"]


def test_resume_continues_the_stored_conversation(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient(default="ok")
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("remember the number 42")
        sid = agent.session_id
    client2 = ScriptedChatClient(default="it was 42")
    cfg = MnemoConfig()
    with build_agent(cfg, home=mnemo_home, cwd=tmp_path, client=client2,
                     resume_session_id=sid) as agent2:
        agent2.run_turn("what number?")
    texts = [content_text(m) for m in client2.requests[0].messages[1:]]
    assert texts == ["remember the number 42", "ok", "what number?"]


def test_status_line(mnemo_home: Home, tmp_path: Path) -> None:
    client = ScriptedChatClient(default="ok", context_length=10_000)
    with make_agent(mnemo_home, client, tmp_path) as agent:
        agent.run_turn("hi")
        line = agent.status_line()
    assert line.startswith("tokens ") and "/5,000" in line and "compactions 0" in line


def test_lcm_engine_end_to_end(mnemo_home: Home, tmp_path: Path) -> None:
    """With context.engine: lcm, compacted turns come back through the engine's tools."""
    planted = "the staging password rotates on Tuesdays"
    client = ScriptedChatClient(default="ok", context_length=6000)
    with make_agent(mnemo_home, client, tmp_path, context={"engine": "lcm"},
                    memory={"flush_min_turns": 0}) as agent:
        for i in range(20):
            if i == 3:
                agent.run_turn(f"note: {planted}")
            agent.run_turn(f"filler turn {i} " + "lorem ipsum dolor " * 60)
        assert agent.engine.compression_count >= 1
        live = [content_text(m) for m in agent.messages]
        assert f"note: {planted}" not in live  # the turn itself left the live context
        assert {"context_grep", "context_expand"} <= set(client.requests[-1].tool_names)
        client.add(assistant_tool_call("context_grep", {"pattern": "staging password"}),
                   "found it")
        result = agent.run_turn("what did I say about the staging password?")
        grep = json.loads(result.tool_runs[0].result)
        assert grep["success"] and grep["matches"]
        node = grep["matches"][0]["node_id"]
        client.add(assistant_tool_call("context_expand", {"node_id": node}), "here it is")
        result = agent.run_turn("show me the original")
        assert planted in result.tool_runs[0].result


def test_an_endpoint_set_only_by_the_environment_is_remote(
        mnemo_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mnemo.agent import summarizer_for
    from mnemo.agent.setup import context_window

    config = MnemoConfig()
    assert summarizer_for(config, mnemo_home) is None  # the local model: local summaries
    assert context_window(config, mnemo_home) == config.local.context_length
    monkeypatch.setenv("MNEMO_BASE_URL", "http://127.0.0.1:9/v1")
    assert callable(summarizer_for(config, mnemo_home))
    assert context_window(config, mnemo_home) == 128_000


def test_the_flush_turn_runs_only_the_memory_tool(mnemo_home: Home, tmp_path: Path) -> None:
    store = SessionStore(mnemo_home.state_db)
    before = store.count_messages()
    store.close()
    client = ScriptedChatClient(default="ok")
    agent = make_agent(mnemo_home, client, tmp_path, memory={"flush_min_turns": 1})
    agent.run_turn("I use fish as my shell")
    searched: list[dict[str, Any]] = []
    agent.tools._tools["session_search"] = (SESSION_SEARCH_SCHEMA,
                                            lambda args: searched.append(args) or "{}")
    client.add({"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function",
         "function": {"name": "session_search", "arguments": '{"query": "x"}'}},
        {"id": "b", "type": "function",
         "function": {"name": "memory", "arguments": json.dumps(
             {"action": "add", "target": "user", "content": "Uses the fish shell"})}}]},
        "done")
    agent.close()
    assert searched == []  # never ran
    flush_reply = client.requests[-1].messages
    refused = [m for m in flush_reply if m.get("tool_call_id") == "a"]
    assert refused and "Only the memory tool" in content_text(refused[0])
    assert "Uses the fish shell" in (mnemo_home.memories_dir / "USER.md").read_text()
    assert SessionStore(mnemo_home.state_db).count_messages() == before + 2


WATCHER = """
import time
from mnemo.memory import MemoryProvider

class Watcher(MemoryProvider):
    name = "watcher"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.log = open(kwargs["settings"]["log"], "a", encoding="utf-8")

    def get_tool_schemas(self):
        return []

    def _note(self, text):
        self.log.write(text + "\\n")
        self.log.flush()

    def sync_turn(self, user, assistant):
        time.sleep(0.05)  # a slow remote write
        self._note("sync " + user)

    def on_turn_start(self, turn, message):
        self._note(f"start {turn} {message}")

    def on_session_end(self, messages):
        self._note("end")
"""


def test_providers_see_the_last_sync_before_the_session_ends(mnemo_home: Home,
                                                             tmp_path: Path) -> None:
    folder = mnemo_home.plugins_dir / "memory" / "watcher"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(WATCHER, encoding="utf-8")
    log = tmp_path / "order.log"
    client = ScriptedChatClient(default="ok")
    agent = make_agent(mnemo_home, client, tmp_path, memory={
        "provider": "watcher", "providers": {"watcher": {"log": str(log)}}})
    agent.run_turn("one")
    agent.run_turn("two")
    agent.close()
    order = log.read_text(encoding="utf-8").splitlines()
    assert order[-1] == "end"
    assert order.index("start 1 one") < order.index("sync one")
    assert order.index("start 2 two") < order.index("sync two") < order.index("end")


def test_a_reply_that_retells_what_a_tool_told_the_model_is_asked_again(
        mnemo_home: Home, tmp_path: Path) -> None:
    """By hand the embedded model answered a question with session_search's hint ("To
    read more, call again with mode 'around' …"); here, with the memory tool's refusal."""
    client = ScriptedChatClient([
        assistant_tool_call("memory", {"action": "add", "target": "user",
                                       "content": "I love eating cookies."}),
        "Sure! Memory keeps only facts the user or a tool stated.",
        "Nice to meet you, Ana."])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn("Hi! I'm Ana.")
    assert result.text == "Nice to meet you, Ana."


def test_a_reply_made_of_the_memory_tools_usage_and_message_is_asked_again(
        mnemo_home: Home, tmp_path: Path) -> None:
    """By hand (3,072 tokens) the embedded model answered a fact it had saved with the
    memory result's fields in words, "3% — 54/1,375 chars\n\nEntry added.", and every
    later reply copied that one."""
    said = "Yesterday I had my first driving lesson with my instructor Piet."

    def copied(request: ChatRequest) -> str:
        result = json.loads(content_text(request.messages[-1]))
        return f"{result['usage']}\n\n{result['message']}"

    client = ScriptedChatClient([
        assistant_tool_call("memory", {"action": "add", "target": "user", "content": said}),
        copied, "Good luck with the lessons with Piet!"])
    with make_agent(mnemo_home, client, tmp_path) as agent:
        result = agent.run_turn(said)
        replies = [content_text(m) for m in agent.messages if m["role"] == "assistant"]
    assert result.text == "Good luck with the lessons with Piet!"
    assert not any("1,375 chars" in text for text in replies)
