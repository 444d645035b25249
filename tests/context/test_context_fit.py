"""Fitting a request to the window (C19): the meter, cutting one message, fitting a list."""

from __future__ import annotations

import copy
import json

import pytest

from mnemo.context import validate_c12
from mnemo.context.fit import MIN_CUT_TOKENS, fit_request
from mnemo.context.markers import (
    SUMMARY_END_MARKER,
    SUMMARY_PREFIX,
    is_summary_message,
    own_text,
    summary_content,
)
from mnemo.context.shrink import CUT_MARKER_START, cut_message, cut_text
from mnemo.context.window import RequestMeter, reply_reserve, request_budget
from mnemo.messages import Message
from mnemo.tokens import CachedTokenCounter


def log(lines: int, seed: int = 0) -> str:
    return "\n".join(f"2026-11-30 15:23:{(i + seed) % 60:02d},123 WARN id=0x{i * 7919:08x} "
                     f"took {i} ms" for i in range(lines))


class CountingCounter:
    """Counts words, and how many texts it was asked about."""

    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return len(text.split())


def test_reply_reserve_and_budget() -> None:
    assert reply_reserve(8192) == 1024
    assert reply_reserve(2000) == 256
    assert reply_reserve(200_000) == 4096
    assert reply_reserve(8192, max_tokens=2000) == 2000
    assert reply_reserve(8192, max_tokens=2000, configured=500) == 500
    assert reply_reserve(1000, configured=900) == 500  # never more than half the window
    assert request_budget(8192, 1024) == 8192 - 1024 - 81


def test_the_meter_learns_the_reported_ratio_and_keeps_the_largest_recent_one() -> None:
    meter = RequestMeter()
    request: list[Message] = [{"role": "user", "content": "word " * 400}]
    raw = meter.raw(request)
    assert meter.count(request) == raw
    meter.observe(raw, 2 * raw)
    meter.observe(raw, raw)
    assert meter.count(request) == 2 * raw  # the largest of the last three
    for _ in range(3):
        meter.observe(raw, raw * 6 // 10)
    assert meter.count(request) == raw  # never corrected downwards
    meter.observe(raw, 100 * raw)  # nonsense is ignored
    assert meter.ratio == 1.0
    meter.reset()
    assert meter.ratio == 1.0


def test_the_meter_only_corrects_upwards() -> None:
    meter = RequestMeter(CountingCounter(), exact=True)
    meter.observe(1000, 700)
    assert meter.ratio == 1.0
    meter.observe(1000, 1100)
    assert meter.ratio == pytest.approx(1.1)


def test_unchanged_messages_are_not_counted_again() -> None:
    counter = CountingCounter()
    meter = RequestMeter(CachedTokenCounter(counter))
    request: list[Message] = [{"role": "user", "content": f"message number {i} " * 10}
                              for i in range(50)]
    meter.raw(request)
    assert counter.calls == 50
    meter.raw([*request, {"role": "assistant", "content": "one more message here " * 3}])
    assert counter.calls == 51


def test_cut_text_keeps_head_and_tail_on_line_breaks() -> None:
    text = log(400)
    cut = cut_text(text, 2000)
    head, _, tail = cut.partition("\n" + CUT_MARKER_START)
    assert text.startswith(head) and head.endswith("ms")
    assert text.endswith(tail.split("\n", 1)[1])
    assert 1500 < len(cut) < 2400
    assert cut_text("short", 2000) == "short"


def test_cut_message_keeps_structure_and_json_arguments() -> None:
    call: Message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "write", "arguments": json.dumps({"text": log(500)})}}]}
    before = copy.deepcopy(call)
    cut = cut_message(call, 1000)
    assert call == before  # the input is not touched
    assert cut["tool_calls"][0]["id"] == "c1"
    args = json.loads(cut["tool_calls"][0]["function"]["arguments"])
    assert list(args) == ["text"] and CUT_MARKER_START in args["text"]  # the call's shape
    assert len(cut["tool_calls"][0]["function"]["arguments"]) < 1400
    memory: Message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c2", "type": "function", "function": {"name": "memory", "arguments": json.dumps(
            {"action": "add", "target": "user", "content": log(300)})}}]}
    args = json.loads(cut_message(memory, 600)["tool_calls"][0]["function"]["arguments"])
    assert args["action"] == "add" and args["target"] == "user"
    assert CUT_MARKER_START in args["content"]
    odd: Message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c3", "type": "function",
         "function": {"name": "write", "arguments": json.dumps([log(300)])}}]}
    args = json.loads(cut_message(odd, 600)["tool_calls"][0]["function"]["arguments"])
    assert CUT_MARKER_START in args["cut_arguments"]  # not an object: held whole, cut
    parts: Message = {"role": "user", "content": [{"type": "text", "text": log(500)},
                                                  {"type": "image_url", "image_url": {}}]}
    cut_parts = cut_message(parts, 1000)
    assert cut_parts["content"][1] == {"type": "image_url", "image_url": {}}
    assert len(cut_parts["content"][0]["text"]) < 1400


def test_a_cut_summary_keeps_its_prefix_and_is_still_a_summary() -> None:
    # Seen by hand: the window guard cut into the prefix, the next compaction and the
    # memory grounding no longer knew the message for a summary, and its "## Remaining
    # Work" heading was offered to the model as something the user said.
    summary: Message = {"role": "user", "content": summary_content(
        "## Critical Context\n" + "\n".join(f"- User: fact number {i}." for i in range(200)))
        + SUMMARY_END_MARKER + "My husband Arjun is an engineer."}
    cut = cut_message(summary, 600)
    text = str(cut["content"])
    assert text.startswith(SUMMARY_PREFIX) and CUT_MARKER_START in text
    assert is_summary_message(cut)
    assert own_text(cut) == "My husband Arjun is an engineer."  # the merged turn: the tail
    assert len(text) < len(SUMMARY_PREFIX) + 900
    parts: Message = {"role": "user", "content": [{"type": "text", "text": str(
        summary["content"])}]}
    assert is_summary_message(cut_message(parts, 600))


def conversation() -> list[Message]:
    return [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "read the log"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": log(2000, 1)},
        {"role": "assistant", "content": "It shows warnings."},
        {"role": "user", "content": "and this one:\n" + log(100, 2)},
    ]


def test_old_tool_outputs_are_cut_before_the_newest_message() -> None:
    messages = conversation()
    before = copy.deepcopy(messages)
    meter = RequestMeter()
    fit = fit_request(messages, budget=8000, meter=meter)
    assert messages == before
    assert fit.fits and fit.tokens <= 8000 < fit.tokens_before
    assert [c.index for c in fit.cuts] == [3] and not fit.dropped
    assert fit.messages[5] == messages[5]  # the newest message is whole
    assert validate_c12(fit.messages, messages) == []
    assert "truncated 1 oversized message (tool output)" in fit.describe()


def test_the_newest_message_is_cut_last_and_old_turns_go_whole() -> None:
    messages = conversation()
    fit = fit_request(messages, budget=600, meter=RequestMeter())
    assert fit.fits
    assert fit.dropped == (1, 2, 3, 4)  # the whole first turn, call and result together
    assert [c.kind for c in fit.cuts] == ["your newest message"]
    assert validate_c12(fit.messages, messages) == []
    assert fit.messages[0] == messages[0]
    newest = fit.messages[-1]["content"]
    assert newest.startswith("and this one:") and CUT_MARKER_START in newest


def test_without_drop_or_newest_what_cannot_be_cut_is_reported() -> None:
    messages = conversation()
    fit = fit_request(messages, budget=600, meter=RequestMeter(), allow_drop=False,
                      allow_newest=False)
    assert not fit.fits and fit.cuts and not fit.dropped
    assert fit.messages[-1] == messages[-1]


def test_a_summary_kept_from_cuts_stays_whole_and_the_rest_is_cut() -> None:
    # Seen by hand (3,072-token window): cut to get under the compaction threshold, a
    # summary lost "I'm Tomas. I work as a pharmacist in Leeds." in its cut middle, and
    # every later summary merged the cut one: the fact was gone for good.
    summary: Message = {"role": "user", "content": summary_content(
        "## Critical Context\n" + "\n".join(f"- User: fact number {i}." for i in range(60)))}
    messages = [conversation()[0], summary, *conversation()[1:]]
    cut = fit_request(messages, budget=900, meter=RequestMeter(), allow_drop=False,
                      allow_newest=False)
    assert 1 in [c.index for c in cut.cuts]  # the summary is cut when nothing says not to
    kept = fit_request(messages, budget=900, meter=RequestMeter(), allow_drop=False,
                       allow_newest=False, keep_summary=True)
    assert kept.messages[1] == summary and 1 not in [c.index for c in kept.cuts]
    assert [c.index for c in kept.cuts] == [4]  # the old tool output still is
    assert not kept.fits  # the caller learns it is still over (the progress guard counts)


def test_a_cut_keeps_some_text_of_its_own() -> None:
    messages = conversation()
    fit = fit_request(messages, budget=1, meter=RequestMeter())
    assert not fit.fits
    meter = RequestMeter()
    marker_only = meter.message_tokens(cut_message(messages[-1], 0))
    assert meter.message_tokens(fit.messages[-1]) >= marker_only + MIN_CUT_TOKENS // 2


def test_a_request_that_fits_is_returned_unchanged() -> None:
    messages = [*conversation()[:3], {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    fit = fit_request(messages, budget=10_000, meter=RequestMeter())
    assert not fit.changed and fit.messages == messages
    assert fit.describe().startswith("fits")
