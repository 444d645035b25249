"""``ContextCompressor`` as the agent uses it: numbers, trigger, the five steps together,
the report, and the progress guard (C3, C5, C13, C14)."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest
from convgen import (
    agent_turns,
    assistant,
    c12_violations,
    call,
    kept_in_order,
    survives,
    system,
    tool,
    user,
)

from mnemo.context import (
    COMPACTION_NOTE,
    PRUNED_TOOL_PLACEHOLDER,
    SUMMARY_END_MARKER,
    SUMMARY_PREFIX,
    ContextCompressor,
    ContextEngine,
    is_summary_message,
)
from mnemo.errors import UsageError
from mnemo.messages import content_text


def _session(turns: int = 30) -> list[dict]:
    return [system(), *agent_turns(turns)]


def test_numbers_follow_the_context_length() -> None:
    engine = ContextCompressor(context_length=100_000)
    assert engine.threshold_tokens == 50_000
    assert engine.tail_token_budget == 10_000
    assert engine.max_summary_tokens == 5_000
    assert (engine.protect_first_n, engine.protect_last_n) == (3, 20)
    big = ContextCompressor(context_length=1_000_000, threshold_percent=0.8,
                            summary_target_ratio=0.1)
    assert big.threshold_tokens == 800_000
    assert big.tail_token_budget == 80_000
    assert big.max_summary_tokens == 12_000  # the ceiling
    big.update_model("other", 10_000)
    assert (big.threshold_tokens, big.max_summary_tokens, big.model) == (8_000, 500, "other")
    assert isinstance(big, ContextEngine) and big.name == "compressor"


@pytest.mark.parametrize("kwargs", [
    {"context_length": 0}, {"context_length": 1000, "threshold_percent": 0},
    {"context_length": 1000, "threshold_percent": 1.5},
    {"context_length": 1000, "summary_target_ratio": 0},
    {"context_length": 1000, "protect_first_n": -1},
])
def test_bad_settings_are_usage_errors(kwargs: dict) -> None:
    with pytest.raises(UsageError):
        ContextCompressor(**kwargs)


def test_trigger_uses_the_reported_prompt_tokens() -> None:
    engine = ContextCompressor(context_length=10_000)
    assert not engine.should_compress()
    engine.update_from_response({"prompt_tokens": 4_999, "completion_tokens": 12})
    assert not engine.should_compress()
    assert engine.last_completion_tokens == 12
    engine.update_from_response(SimpleNamespace(prompt_tokens=5_000, completion_tokens=3))
    assert engine.should_compress()
    # Anthropic counts cached prompt tokens separately; they are part of the prompt.
    engine.update_from_response({"input_tokens": 100, "cache_read_input_tokens": 4_900,
                                 "output_tokens": 7})
    assert engine.last_prompt_tokens == 5_000 and engine.should_compress()
    assert engine.should_compress(prompt_tokens=10) is False
    engine.update_from_response(None)
    assert engine.last_prompt_tokens == 0


def test_preflight_uses_the_rough_estimate() -> None:
    engine = ContextCompressor(context_length=2_000)
    assert not engine.should_compress_preflight([user("hi")])
    assert engine.should_compress_preflight([user("x" * 4_000)])


def test_the_five_steps_together() -> None:
    messages = _session()
    before = copy.deepcopy(messages)
    engine = ContextCompressor(context_length=8_000)
    out = engine.compress(messages, current_tokens=12_345)
    report = engine.last_report
    assert report is not None
    assert messages == before
    assert out[0]["content"] == f"{messages[0]['content']}\n\n{COMPACTION_NOTE}"
    assert out[1:3] == messages[1:3]  # the head (its tool output is pruned below)
    summary = out[4]
    assert is_summary_message(summary) and summary["role"] == "user"
    assert content_text(summary).startswith(SUMMARY_PREFIX + "\n\n## Goal")
    assert report.summary and report.summary.startswith("## Goal")
    assert report.fallback is False and report.skipped_reason is None
    assert report.summarizer == "local" and engine.compression_count == 1
    assert report.tokens_after < report.tokens_before
    assert report.messages_before == len(messages) and report.messages_after == len(out)
    # removed: exactly the middle, which is gone from the output.
    assert report.removed == list(range(4, report.removed[-1] + 1))
    kept_ids = {m.get("tool_call_id") for m in out}
    assert all(messages[i].get("tool_call_id") not in kept_ids for i in report.removed
               if messages[i]["role"] == "tool")
    assert kept_in_order(out, messages, report.removed)
    assert not c12_violations(out, messages)
    # pruned: the head's old tool output, still there as a placeholder.
    assert 3 in report.pruned
    assert out[3]["content"].startswith(PRUNED_TOOL_PLACEHOLDER)
    assert out[-1] == messages[-1]


def test_output_messages_are_new_dicts() -> None:
    messages = _session()
    out = ContextCompressor(context_length=8_000).compress(messages)
    assert all(o is not m for o in out for m in messages)


def test_no_system_message() -> None:
    messages = agent_turns(30)
    out = ContextCompressor(context_length=8_000).compress(messages)
    assert not any(m["role"] == "system" for m in out)
    assert not c12_violations(out, messages)
    assert any(is_summary_message(m) for m in out)


def test_short_conversation_is_left_alone() -> None:
    messages = [system(), user("hi"), assistant("hello"), user("how are you?")]
    engine = ContextCompressor(context_length=8_000)
    out = engine.compress(messages)
    assert out == messages
    report = engine.last_report
    assert report is not None and report.summary is None and not report.changed
    assert report.skipped_reason and report.skipped_reason.startswith("nothing to summarise")
    assert engine.compression_count == 0


def test_second_compression_updates_the_one_summary_and_the_note_stays_single() -> None:
    engine = ContextCompressor(context_length=8_000)
    first = engine.compress(_session())
    second = engine.compress(first + agent_turns(30, start=200))
    assert sum(1 for m in second if is_summary_message(m)) == 1
    assert second[0]["content"].count(COMPACTION_NOTE) == 1
    summary = next(content_text(m) for m in second if is_summary_message(m))
    assert summary.count(SUMMARY_PREFIX) == 1
    assert "Goal\n- Turn 1:" in summary  # the first goal survives the update
    assert summary.count("Latest request in these turns: Turn 2") == 1  # replaced, not added
    assert engine.compression_count == 2


def test_focus_topic_is_reported_and_kept_in_the_local_summary() -> None:
    engine = ContextCompressor(context_length=8_000)
    engine.compress(_session(), focus_topic="  module_12  ")
    report = engine.last_report
    assert report is not None and report.focus_topic == "module_12"
    assert report.summary and "Focus of this compaction: module_12" in report.summary
    assert "src/module_12.py" in report.summary


def test_latest_user_message_survives_a_long_tool_loop() -> None:
    ask = user("Now refactor everything in src/.")
    loop = []
    for k in range(40):
        loop += [assistant("", [call(f"k{k}", path=f"f{k}.py")]), tool(f"k{k}", "o" * 2_000)]
    messages = [system(), *agent_turns(10), ask, *loop, assistant("working")]
    out = ContextCompressor(context_length=8_000).compress(messages)
    assert survives(ask, out)
    assert not c12_violations(out, messages)


def test_a_request_the_last_summary_was_merged_into_stays_in_the_tail() -> None:
    # By hand (3,072 tokens): the summary was merged into the user's message (C12 c),
    # its tool loop filled the window, and the next compaction summarised the request
    # away under "Pending User Asks" — the model then answered the first message.
    ask = "Which days are my night shifts?"
    body = "\n".join(f"- fact {k} about the user" for k in range(30))
    merged = user(f"{SUMMARY_PREFIX}\n\n## Progress\n{body}{SUMMARY_END_MARKER}{ask}")
    loop = []
    for k in range(4):
        loop += [assistant("", [call(f"k{k}", "memory", content=f"fact {k} " * 40)]),
                 tool(f"k{k}", f"reason {k} " * 60)]
    messages = [system(), user("Hi! I'm Tomas, a nurse in Leeds."), *loop[:2], merged,
                *loop[2:]]
    out = ContextCompressor(context_length=3_072).compress(messages)
    requests = [m for m in out if m.get("role") == "user"]
    assert content_text(requests[-1]).endswith(f"{SUMMARY_END_MARKER}{ask}")
    assert content_text(requests[-1]).count(ask) == 1  # not also in the summary
    assert not c12_violations(out, messages)
    # With nothing else to summarise, the merged message is kept as it was.
    again = ContextCompressor(context_length=3_072)
    kept = [system(), user("Hi!"), assistant("Hello."),
            user(f"{SUMMARY_PREFIX}\n\n## Progress\n{body}\n{SUMMARY_END_MARKER}{ask}"),
            *loop[2:]]
    assert again.compress(kept) and again.last_report is not None
    assert again.last_report.removed == [] and not again.last_report.summary


def test_malformed_input_is_a_usage_error() -> None:
    engine = ContextCompressor(context_length=8_000)
    with pytest.raises(UsageError, match="message 1"):
        engine.compress([user("a"), {"content": "no role"}])  # type: ignore[list-item]
    with pytest.raises(UsageError):
        engine.compress("not a list")  # type: ignore[arg-type]


def test_pre_compress_hook_failure_does_not_stop_compression(
        caplog: pytest.LogCaptureFixture) -> None:
    engine = ContextCompressor(context_length=8_000)

    def broken(middle: list[dict]) -> str:
        raise RuntimeError("provider down")

    engine.pre_compress_hook = broken  # type: ignore[assignment]
    engine.compress(_session())
    assert engine.last_report is not None and engine.last_report.summary
    assert "pre-compress hook failed" in caplog.text


def test_hook_text_reaches_the_local_summary() -> None:
    engine = ContextCompressor(context_length=8_000)
    engine.pre_compress_hook = lambda middle: "user prefers Rust"  # type: ignore[assignment]
    engine.compress(_session())
    assert engine.last_report is not None and engine.last_report.summary
    assert "From memory providers: user prefers Rust" in engine.last_report.summary


def _stuck_session() -> list[dict]:
    # The latest request is followed by more tool output than the threshold, all of it
    # in the protected tail: no compression can get under the threshold.
    loop = []
    for k in range(3):
        loop += [assistant("", [call(f"s{k}", path="big.txt")]), tool(f"s{k}", "b" * 150)]
    return [system(), *agent_turns(12), user("x" * 20_000), *loop, assistant("still going")]


def test_progress_guard_pauses_after_two_useless_compressions(
        caplog: pytest.LogCaptureFixture) -> None:
    engine = ContextCompressor(context_length=8_000)
    messages = _stuck_session()
    engine.update_from_response({"prompt_tokens": 9_000})
    assert engine.should_compress()
    engine.compress(messages)
    assert engine.should_compress()  # one miss is not enough
    engine.compress(messages)
    assert not engine.should_compress()
    assert not engine.should_compress_preflight(messages)
    status = engine.get_status()
    assert status["paused"] is True and "paused" in status["paused_reason"]
    assert "compress paused" in caplog.text
    engine.on_session_reset()
    engine.update_from_response({"prompt_tokens": 9_000})
    assert engine.should_compress()


def test_a_compression_that_gets_under_the_threshold_resumes_the_guard() -> None:
    engine = ContextCompressor(context_length=8_000)
    stuck = _stuck_session()
    engine.compress(stuck)
    engine.compress(stuck)
    engine.update_from_response({"prompt_tokens": 9_000})
    assert not engine.should_compress()
    engine.compress(_session(), focus_topic="handlers")  # the user's /compact
    assert engine.should_compress()
    assert engine.get_status()["paused"] is False


def test_a_model_call_under_the_threshold_resumes_the_guard() -> None:
    # The agent cuts oversized messages after a compression that could not get under
    # the threshold (C19): the next prompt is under it, and the pause must not outlive it.
    engine = ContextCompressor(context_length=8_000)
    stuck = _stuck_session()
    engine.compress(stuck)
    engine.update_from_response({"prompt_tokens": 3_500})  # cut under the 4,000 threshold
    engine.compress(stuck)
    engine.update_from_response({"prompt_tokens": 9_000})
    assert engine.should_compress()  # the two misses were not in a row
    engine.compress(stuck)
    engine.compress(stuck)
    assert not engine.should_compress() and engine.get_status()["paused"] is True
    engine.update_from_response({"prompt_tokens": 0})  # a usage record without counts
    assert engine.get_status()["paused"] is True
    engine.update_from_response({"prompt_tokens": 3_900})
    assert engine.get_status()["paused"] is False
    engine.update_from_response({"prompt_tokens": 9_000})
    assert engine.should_compress()


def test_get_status_reports_the_engine_state() -> None:
    engine = ContextCompressor(context_length=8_000, model="m1")
    engine.compress(_session())
    status = engine.get_status()
    assert status["engine"] == "compressor" and status["model"] == "m1"
    assert status["threshold_tokens"] == 4_000 and status["summarizer"] == "local"
    assert status["has_summary"] is True and status["compression_count"] == 1
    assert status["last_compression"]["removed_count"] > 0
    assert "summary" not in status["last_compression"]
    engine.on_session_reset()
    status = engine.get_status()
    assert status["has_summary"] is False and status["compression_count"] == 0


def test_report_is_frozen_and_serialisable() -> None:
    engine = ContextCompressor(context_length=8_000)
    engine.compress(_session())
    report = engine.last_report
    assert report is not None
    with pytest.raises(AttributeError):
        report.summary = "x"  # type: ignore[misc]
    assert set(report.as_dict()) >= {"messages_before", "messages_after", "tokens_before",
                                     "tokens_after", "removed", "pruned", "summary",
                                     "fallback", "skipped_reason", "focus_topic"}


def test_a_new_conversation_does_not_inherit_the_last_summary() -> None:
    engine = ContextCompressor(context_length=8_000)
    alpha = [system(), *[user("SECRET PROJECT ALPHA: " + content_text(m))
                         if m["role"] == "user" else m for m in agent_turns(30)]]
    engine.compress(alpha)
    assert engine.last_report is not None and "ALPHA" in (engine.last_report.summary or "")
    engine.compress([system(), *agent_turns(30, start=500)])
    summary = engine.last_report.summary if engine.last_report else None
    assert summary is not None and "ALPHA" not in summary and "Turn 501" in summary


def test_a_model_is_not_sent_another_conversation_s_summary() -> None:
    prompts: list[str] = []

    def model(prompt: str) -> str:
        prompts.append(prompt)
        return f"## Goal\n- summary {len(prompts)}"

    engine = ContextCompressor(context_length=8_000, summarizer=model,
                               summary_context_length=100_000)
    engine.compress(_session())
    engine.compress([system(), *agent_turns(30, start=500)])
    assert len(prompts) == 2 and "PREVIOUS SUMMARY" not in prompts[1]


@pytest.mark.parametrize("hook", ["on_session_start", "on_session_end", "on_session_reset"])
def test_session_hooks_forget_the_summary(hook: str) -> None:
    engine = ContextCompressor(context_length=8_000)
    engine.compress(_session())
    assert engine.get_status()["has_summary"] is True
    args = {"on_session_start": ("s1",), "on_session_end": ("s1", []), "on_session_reset": ()}
    getattr(engine, hook)(*args[hook])
    assert engine.get_status()["has_summary"] is False


@pytest.mark.parametrize(("bad", "expected"), [
    ({"role": "user", "content": 123}, "'content' must be a string"),
    ({"role": "user", "content": {"text": "hi"}}, "'content' must be a string"),
    ({"role": "user", "content": ["a", "b"]}, "content part 0 must be an object"),
    ({"role": "assistant", "content": "a", "tool_calls": {"id": "x"}}, "must be a list"),
    ({"role": "assistant", "content": "a", "tool_calls": "oops"}, "must be a list"),
    ({"role": "assistant", "content": "a", "tool_calls": [{"id": "x", "function": "f"}]},
     "needs a 'function' object"),
    ({"role": "assistant", "content": "a", "tool_calls": [{"id": "x", "function": None}]},
     "needs a 'function' object"),
    ({"role": "assistant", "content": "a",
      "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": [1, 2]}}]},
     "'arguments' must be a JSON string"),
    ({"role": "tool", "tool_call_id": 5, "content": "y"}, "needs a 'tool_call_id' string"),
    ({"role": "function", "content": "x"}, "role 'function'"),
    ("text", "must be a JSON object"),
])
def test_malformed_messages_are_usage_errors_naming_the_index(bad: object,
                                                              expected: str) -> None:
    messages = [system(), *agent_turns(3)]
    messages.insert(5, bad)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="message 5 is not a valid chat message") as info:
        ContextCompressor(context_length=4_000).compress(messages)
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_an_empty_assistant_reply_is_accepted() -> None:
    messages = [*_session(), {"role": "assistant", "content": None}, user("go on")]
    out = ContextCompressor(context_length=8_000).compress(messages)
    assert out[-1] == messages[-1]


def test_the_pre_compress_hook_cannot_touch_the_callers_messages() -> None:
    engine = ContextCompressor(context_length=8_000)
    messages = _session()
    before = copy.deepcopy(messages)

    def meddling(middle: list[dict]) -> str:
        for message in middle:
            message["content"] = "overwritten"
        middle.clear()
        return "note"

    engine.pre_compress_hook = meddling  # type: ignore[assignment]
    engine.compress(messages)
    assert messages == before
    assert engine.last_report is not None and "Turn 5" in (engine.last_report.summary or "")


def test_a_note_that_retells_the_kept_head_is_left_out_of_the_summary() -> None:
    # By hand (3,072 tokens) the embedded model's retelling of the user's first message,
    # which the head keeps in the context anyway, took a small summary's room.
    facts = ["Our next meeting is on Friday at 19:30 at Sophie's place on Biltstraat 45.",
             "We're reading Klara and the Sun by Kazuo Ishiguro this month.",
             "My friend Daan is allergic to nuts, so no pesto or almond cake.",
             "The bakery on Twijnstraat gives us a 10 percent discount.",
             "Anna brings the wine and Joris brings a cheese board.",
             "Last time we read Stoner by John Williams and everybody loved it."]
    turns = []
    for fact in facts:
        turns += [user(fact),
                  # … in other forms of its words: "runs", "Priya's".
                  assistant("Priya's running a small book club in Utrecht, six members."),
                  user("Filler about the weather in Utrecht today " * 12),
                  assistant("Noted, the weather sounds grey " * 12)]
    messages = [system("You are a helpful assistant in Utrecht."),
                user("Hi! I'm Priya. I run a small book club in Utrecht with six members."),
                assistant("Hello Priya, how can I help?"), *turns,
                user("Which book are we reading?")]
    engine = ContextCompressor(context_length=3_072)
    engine.compress(messages)
    summary = engine.last_report.summary if engine.last_report else None
    assert summary is not None and "Daan is allergic to nuts" in summary
    assert "book club in Utrecht" not in summary
