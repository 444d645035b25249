"""The ``lcm`` engine in a real session: compaction into nodes, nothing lost (C16).

A long scripted session is stored message by message in a real SQLite store and compacted
several times the way the agent does it (compress, then ``sync_live``); then every
original must come back through ``context_expand`` (down through nested nodes) and every
planted fact through ``context_grep``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from convgen import assistant, c12_violations, call, kept_in_order, system, tool, user
from lcmdriver import Driver, same, texts, unrecoverable

from mnemo.config import MnemoConfig
from mnemo.context import (
    PRUNED_TOOL_PLACEHOLDER,
    SUMMARY_PREFIX,
    ContextCompressor,
    ContextEngine,
    create_engine,
    is_summary_message,
)
from mnemo.context.lcm import LosslessContextEngine
from mnemo.context.lcm_nodes import node_of, split_node_body, summary_node_header
from mnemo.context.markers import FALLBACK_NOTICE, split_summary_message, summary_content
from mnemo.errors import ProviderAuthError
from mnemo.home import Home
from mnemo.messages import content_text
from mnemo.sessions import SessionStore

Msg = dict[str, Any]


def fact(t: int) -> str:
    return f"FACT-{t:03d}-{('amber', 'basil', 'cobalt', 'delta')[t % 4]}"


def scripted_turn(t: int) -> list[Msg]:
    """One turn of an agent session; every turn plants a fact somewhere different."""
    cid = f"call_{t}"
    where = t % 4
    ask = f"Turn {t}: look at src/pkg/mod_{t}.py and fix the failing handler."
    if where == 0:
        ask += f" Remember the ticket id {fact(t)}."
    out: list[Msg] = [user(ask)]
    if t % 5 == 3:  # parallel calls, results in reverse order
        calls = [call(f"{cid}a", "read_file", path=f"src/pkg/mod_{t}.py"),
                 call(f"{cid}b", "terminal", command=f"pytest tests/test_mod_{t}.py")]
        out += [assistant("Reading and testing.", calls),
                tool(f"{cid}b", f"FAILED tests/test_mod_{t}.py::test_handler\n" + "." * 900),
                tool(f"{cid}a", f"# mod {t}\n" + "def handler():\n    return None\n" * 40)]
    else:
        output = f"# mod {t}\n" + "def handler():\n    return 1\n" * 45
        if where == 1:
            output += f"\n# config: retries = {t}, marker {fact(t)}\n"
        out += [assistant("Let me read it.", [call(cid, "read_file", path=f"src/pkg/mod_{t}.py")]),
                tool(cid, output)]
    answer = f"Fixed the handler in src/pkg/mod_{t}.py."
    if where == 2:
        answer += f" Note for later: the release tag is {fact(t)}."
    out.append(assistant(answer))
    if where == 3:
        out.append(user(f"Thanks. Also {fact(t)}."))
        out.append(assistant("Noted."))
    return out


@pytest.fixture
def store(tmp_path: Any) -> SessionStore:
    with SessionStore(tmp_path / "state.db") as opened:
        yield opened  # type: ignore[misc]


def run_session(store: SessionStore, turns: int = 60, context_length: int = 12_000,
                **settings: Any) -> Driver:
    engine = LosslessContextEngine(context_length=context_length, sessions=store, **settings)
    driver = Driver(engine, store)
    for t in range(turns):
        driver.say(*scripted_turn(t))
        if engine.should_compress_preflight([driver.system, *driver.live]):
            driver.compact()
    return driver


def test_a_long_session_loses_nothing(store: SessionStore) -> None:
    driver = run_session(store)
    summaries = [out for _, out in driver.outputs if any(is_summary_message(m) for m in out)]
    assert len(summaries) >= 4, "the session should have been compacted several times"
    # Every output is valid for the API and keeps what it did not remove, in order.
    for before, out in driver.outputs:
        assert not c12_violations(out, before)
    # One summary node in the live context, at the top of a tree of nodes.
    live_summaries = [m for m in driver.live if is_summary_message(m)]
    assert len(live_summaries) == 1
    assert node_of(live_summaries[0]) is not None
    # Every original message comes back, through nested nodes.
    assert unrecoverable(driver) == []
    _, deepest = driver.recovered()
    assert deepest >= 3
    # Every planted fact is found by context_grep, and its node gives the message back.
    planted = [t for t in range(60) if fact(t) in texts(driver.sent)]
    assert len(planted) >= 40
    for t in planted:
        result = driver.tool("context_grep", pattern=fact(t))
        assert result["success"], result
        if fact(t) in texts(driver.live) and not result["matches"]:
            continue  # still live: the model sees it
        assert result["matches"], (t, result)
        best = result["matches"][0]
        assert fact(t) in best["snippet"]
        entries = driver.expand_all(best["node_id"])
        hit = [e for e in entries if e["message_id"] == best["message_id"]]
        assert hit and fact(t) in hit[0]["content"]


def test_nodes_look_like_the_spec_says(store: SessionStore) -> None:
    driver = run_session(store, turns=30)
    node = next(m for m in driver.live if is_summary_message(m))
    text = content_text(node)
    # The handoff framing first (so every summary-aware part of mnemo knows it), then
    # the node header, then the summary.
    assert text.startswith(SUMMARY_PREFIX + "\n\n[LCM SUMMARY NODE n")
    body, _ = split_summary_message(node)
    node_id, summary = split_node_body(body)
    assert node_id is not None and f'context_expand(node_id="{node_id}")' in body
    assert "context_grep(pattern)" in body.split("\n", 1)[0]
    assert "## Goal" in summary and text.count(SUMMARY_PREFIX) == 1
    assert "[LCM SUMMARY NODE" not in summary, "an older node header was nested"
    assert "including earlier node" in body.split("\n", 1)[0]
    # Cleared tool outputs that stay in the context are nodes too.
    cleared = [m for m in driver.live if m["role"] == "tool"
               and content_text(m).startswith(PRUNED_TOOL_PLACEHOLDER)]
    assert cleared and all(node_of(m) is not None for m in cleared)
    for message in cleared:
        tool_node = node_of(message)
        assert tool_node is not None
        children = driver.expand_all(tool_node[0])
        original = next(m for m in driver.sent if m.get("tool_call_id") == message["tool_call_id"])
        assert len(children) == 1 and same(children[0], original)


def test_a_summary_node_is_not_revised_between_compactions(store: SessionStore) -> None:
    # The compressor revises its summary at once by a later correction; a node keeps the
    # text it was made with.
    body = (summary_node_header("n1a2b3c4d", 3) + "\n\n## Critical Context\n- User: The "
            "interview is on Tuesday at 10:30 at the hospital.\n")
    later = [system("You help."), user("Hi."), assistant(summary_content(body)),
             user("Actually the interview moved to Wednesday, not Tuesday.")]
    assert ContextCompressor(context_length=12_000).revise(later) is not None  # type: ignore[arg-type]
    engine = LosslessContextEngine(context_length=12_000, sessions=store)
    assert engine.revise(later) is None  # type: ignore[arg-type]


def test_the_report_is_exact_and_input_untouched(store: SessionStore) -> None:
    engine = LosslessContextEngine(context_length=12_000, sessions=store)
    driver = Driver(engine, store)
    for t in range(14):
        driver.say(*scripted_turn(t))
    before = [driver.system, *driver.live]
    frozen = copy.deepcopy(before)
    out = engine.compress(before)
    assert before == frozen
    report = engine.last_report
    assert report is not None and report.summary is not None
    assert kept_in_order(out, before, report.removed)
    node = next(m for m in out if is_summary_message(m))
    header = split_summary_message(node)[0].split("\n", 1)[0]
    assert f"— {len(report.removed)} earlier messages compacted" in header
    # Removed indices are one contiguous span after the head; pruned ones are tool nodes.
    assert report.removed == list(range(report.removed[0], report.removed[-1] + 1))
    kept_tools = {content_text(m): m for m in out if m["role"] == "tool"}
    for i in report.pruned:
        assert before[i]["role"] == "tool" and i not in report.removed
        assert any(m.get("tool_call_id") == before[i]["tool_call_id"] and node_of(m)
                   for m in kept_tools.values())
    assert report.tokens_after < report.tokens_before
    assert report.summary in content_text(node) and not report.summary.startswith("[LCM")


class Recorder:
    """A model summariser that records its prompts."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return f"## Goal\n- summary number {len(self.prompts)}"


def test_summaries_of_summaries_fold_the_older_summary_in(store: SessionStore) -> None:
    recorder = Recorder()
    driver = run_session(store, turns=40, summarizer=recorder)
    assert len(recorder.prompts) >= 3
    later = recorder.prompts[-1]
    assert "PREVIOUS SUMMARY:\n## Goal\n- summary number" in later
    assert "[LCM SUMMARY NODE" not in later and SUMMARY_PREFIX not in later
    node = next(m for m in driver.live if is_summary_message(m))
    assert f"summary number {len(recorder.prompts)}" in content_text(node)
    assert engine_status(driver)["summarizer"] == "model"
    assert unrecoverable(driver) == []


def engine_status(driver: Driver) -> dict[str, Any]:
    return driver.engine.get_status()


def test_status_counts_nodes_and_survives_a_restart(store: SessionStore) -> None:
    driver = run_session(store, turns=30)
    status = engine_status(driver)
    assert status["engine"] == "lcm" and status["session_id"] == driver.sid
    assert status["summary_nodes"] >= 2 and status["tool_output_nodes"] >= 1
    assert status["nodes"] == status["summary_nodes"] + status["tool_output_nodes"]
    assert status["live_nodes"] == len(driver.live_nodes())
    assert status["last_node_id"] in driver.live_nodes()
    # A new process: a new engine on the same store reads the nodes back.
    fresh = LosslessContextEngine(context_length=12_000, sessions=store)
    fresh.on_session_start(driver.sid)
    again = fresh.get_status()
    assert again["nodes"] == status["nodes"]
    assert again["summary_nodes"] == status["summary_nodes"]
    top = driver.live_nodes("summary")[0]
    result = json.loads(fresh.handle_tool_call("context_expand", {"node_id": top}))
    assert result["success"] and result["messages_total"] > 0
    fresh.on_session_reset()
    assert fresh.get_status()["nodes"] == 0 and fresh.session_id is None


def test_a_resumed_session_keeps_compacting_into_the_same_tree(store: SessionStore) -> None:
    driver = run_session(store, turns=24)
    first_top = driver.live_nodes()
    engine = LosslessContextEngine(context_length=12_000, sessions=store)
    engine.on_session_start(driver.sid)
    driver.engine = engine
    driver.live = [m.to_message() for m in store.load_messages(driver.sid)]  # type: ignore[misc]
    for t in range(24, 40):
        driver.say(*scripted_turn(t))
        if engine.should_compress_preflight([driver.system, *driver.live]):
            driver.compact()
    assert driver.live_nodes() != first_top
    assert unrecoverable(driver) == []


def test_selected_by_name_with_its_own_store(tmp_path: Any) -> None:
    home = Home(tmp_path / "home")
    config = MnemoConfig.model_validate({"context": {"engine": "lcm", "protect_first_n": 2,
                                                     "threshold_percent": 0.6}})
    engine: Any = create_engine(config, home=home, context_length=20_000)
    # By name: the registry tests may have imported the module afresh (a new class).
    assert type(engine).__qualname__ == "LosslessContextEngine"
    assert isinstance(engine, ContextEngine) and engine.name == "lcm"
    assert isinstance(engine, ContextCompressor), "lcm compacts like the compressor"
    assert engine.threshold_tokens == 12_000 and engine.protect_first_n == 2
    assert engine.sessions is not None and engine.sessions.path == home.state_db
    assert [s["name"] for s in engine.get_tool_schemas()] == ["context_grep", "context_expand"]
    # The agent's store and the engine's are two handles on one file.
    agent_store = SessionStore(home.state_db)
    driver = Driver(engine, agent_store)
    for t in range(30):
        driver.say(*scripted_turn(t))
    driver.compact()
    assert driver.live_nodes()
    assert unrecoverable(driver) == []
    engine.close()
    agent_store.close()


def test_trigger_semantics_are_the_compressor_s(store: SessionStore) -> None:
    engine = LosslessContextEngine(context_length=10_000, sessions=store)
    assert (engine.threshold_tokens, engine.tail_token_budget) == (5_000, 1_000)
    engine.update_from_response({"prompt_tokens": 4_999, "completion_tokens": 10})
    assert not engine.should_compress()
    engine.update_from_response({"prompt_tokens": 5_000})
    assert engine.should_compress()
    assert engine.should_compress_preflight([user("x" * 20_000)])
    # The progress guard: two compressions that cannot get under the threshold pause it.
    huge = [system(), user("a" * 30_000), assistant("b"), user("c" * 30_000)]
    engine.compress(huge)
    engine.compress(huge)
    assert not engine.should_compress(10_000)
    assert engine.get_status()["paused"]
    engine.on_session_reset()
    assert engine.should_compress(10_000)


class Failing:
    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        raise self.error


def test_a_failing_summariser_still_leaves_a_recoverable_node(store: SessionStore) -> None:
    summarizer = Failing(RuntimeError("model exploded"))
    driver = run_session(store, turns=30, summarizer=summarizer)
    node = next(m for m in driver.live if is_summary_message(m))
    assert FALLBACK_NOTICE in content_text(node)
    assert summarizer.calls == 1, "the cooldown must stop the retries"
    assert content_text(node).count(FALLBACK_NOTICE) == 1
    assert unrecoverable(driver) == []


def test_auth_failure_leaves_the_conversation_and_makes_no_node(store: SessionStore) -> None:
    engine = LosslessContextEngine(context_length=12_000, sessions=store,
                                   summarizer=Failing(ProviderAuthError("401")))
    driver = Driver(engine, store)
    for t in range(20):
        driver.say(*scripted_turn(t))
    before = [driver.system, *driver.live]
    out = driver.compact()
    assert out == before
    report = engine.last_report
    assert report is not None and not report.changed and "authentication" in str(
        report.skipped_reason)
    assert engine.get_status()["nodes"] == 0 and engine.last_node_id is None


def test_focus_reaches_the_summary(store: SessionStore) -> None:
    recorder = Recorder()
    engine = LosslessContextEngine(context_length=12_000, sessions=store, summarizer=recorder)
    driver = Driver(engine, store)
    for t in range(20):
        driver.say(*scripted_turn(t))
    driver.compact(focus="the release tag")
    assert 'FOCUS TOPIC: "the release tag"' in recorder.prompts[-1]
    assert engine.last_report is not None and engine.last_report.focus_topic == "the release tag"


def test_repeated_runs_of_messages_are_still_recoverable(store: SessionStore) -> None:
    """sync_live lines repeated messages up with their earlier copies, so the copies that
    left can end up archived without a replacement naming them: a node still takes them."""
    engine = LosslessContextEngine(context_length=600, sessions=store, protect_first_n=0)
    driver = Driver(engine, store)
    # Turns long enough that their summary is smaller than they are (else no node).
    pairs = [m for i in range(8) for m in (user(f"ask {i}: fix the bug in the parser"),
                                           assistant(f"answer {i}: fixed the parser bug"))]
    driver.say(*pairs)
    driver.compact()
    driver.say(*pairs[:12])
    driver.compact()
    assert driver.live_nodes("summary")
    assert unrecoverable(driver) == []


def test_repeated_tool_results_are_still_recoverable(store: SessionStore) -> None:
    """The same turn again, call ids and all: a result archived without a replacement
    goes to the cleared copy of itself."""
    engine = LosslessContextEngine(context_length=600, sessions=store, protect_first_n=0)
    driver = Driver(engine, store)
    a, b = "fix the bug" + "x" * 600, "why does it fail?" + "x" * 600

    def turn(second: bool) -> list[Msg]:
        tool_name, text = ("read_file", a) if second else ("search", b)
        return [user("ask 0: fix the bug"),
                assistant("", [call("c0_0_0", path="src/c0_0_0.py")]), tool("c0_0_0", a),
                assistant("" if second else "Checking.",
                          [call("c0_1_0", tool_name, path="src/c0_1_0.py")]),
                tool("c0_1_0", text),
                assistant(None, [call("c0_2_0", "terminal", path="src/c0_2_0.py"),
                                 call("c0_2_1", "search", path="src/c0_2_1.py"),
                                 call("c0_2_2", path="src/c0_2_2.py")]),
                tool("c0_2_0", "https://example.com/" + "x" * 300), tool("c0_2_1", b),
                tool("c0_2_2", a), assistant("answer 0 fix the bug")]

    driver.say(*turn(False))
    driver.compact()
    driver.say(*turn(True))
    driver.compact()
    assert unrecoverable(driver) == []


def test_originals_handed_to_a_plain_copy_go_to_a_node(store: SessionStore) -> None:
    """When sync_live stores an unchanged-looking copy as the replacement of archived
    messages, those messages still belong under a node."""
    engine = LosslessContextEngine(context_length=600, sessions=store, protect_first_n=0)
    driver = Driver(engine, store)
    out = "fix the bug" + "x" * 300
    pairs = [m for i in range(6) for m in (user(f"ask {i}: fix the bug"),
                                           assistant(f"answer {i} fix the bug"))]
    reads = [call("c6_0_0", path="src/c6_0_0.py"), call("c6_0_1", path="src/c6_0_1.py")]
    driver.say(*pairs, user("ask 6: fix the bug"), assistant("", reads), tool("c6_0_0", out),
               tool("c6_0_1", out), assistant("", [call("c6_1_0", path="src/c6_1_0.py")]),
               tool("c6_1_0", out), assistant("answer 6 "))
    driver.compact()
    driver.say(*pairs, user("ask 6: fix the bug"), assistant("", reads[:1]), tool("c6_0_0", out),
               assistant("", [call("c6_1_0", path="src/c6_1_0.py")]), tool("c6_1_0", out),
               assistant("answer 6 "))
    driver.compact()
    assert unrecoverable(driver) == []
