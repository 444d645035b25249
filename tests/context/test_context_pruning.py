"""Step 1 (C6): old tool output becomes a placeholder that says which call produced it."""

from __future__ import annotations

import copy

from convgen import assistant, call, tool, user

from mnemo.context import PRUNED_TOOL_PLACEHOLDER
from mnemo.context.pruning import (
    calls_by_id,
    describe_call,
    protected_start,
    prune_tool_results,
)
from mnemo.tokens import estimate_message_tokens_rough


def _prune(messages: list[dict], budget: int) -> tuple[list[dict], list[int]]:
    tokens = [estimate_message_tokens_rough(m) for m in messages]
    return prune_tool_results(messages, tokens, budget)  # type: ignore[arg-type,return-value]


def _session() -> list[dict]:
    big = "line of output\n" * 1000  # 15,000 chars
    return [
        user("read the app"),
        assistant("", [call("c1", "read_file", path="src/app.py", encoding="utf-8")]),
        tool("c1", big),
        assistant("", [call("c2", "terminal", command="pytest -q")]),
        tool("c2", "short result"),
        user("and now?"),
        assistant("", [call("c3", "read_file", path="src/other.py")]),
        tool("c3", "other\n" * 100),
        assistant("done"),
    ]


def test_old_large_output_becomes_a_placeholder_with_a_description() -> None:
    messages = _session()
    result, pruned = _prune(messages, budget=200)
    assert pruned == [2]
    content = result[2]["content"]
    assert content.startswith(PRUNED_TOOL_PLACEHOLDER)
    assert content.splitlines()[1] == "read_file path=src/app.py encoding=utf-8 (15,000 chars)"
    assert result[2]["tool_call_id"] == "c1"


def test_short_outputs_and_outputs_in_the_tail_budget_are_kept() -> None:
    messages = _session()
    result, pruned = _prune(messages, budget=200)
    assert result[4] is messages[4]  # 12 chars: never worth clearing
    assert result[7] is messages[7]  # inside the newest 200 tokens
    result, pruned = _prune(messages, budget=100_000)
    assert pruned == []


def test_input_is_not_modified() -> None:
    messages = _session()
    before = copy.deepcopy(messages)
    result, _ = _prune(messages, budget=10)
    assert messages == before
    assert result is not messages


def test_only_the_newest_copy_of_identical_outputs_is_kept() -> None:
    same = "identical listing\n" * 50
    messages = [
        assistant("", [call("a", "read_file", path="x.py")]), tool("a", same),
        assistant("", [call("b", "read_file", path="x.py")]), tool("b", same),
        assistant("", [call("c", "read_file", path="x.py")]), tool("c", same),
        assistant("ok"),
    ]
    result, pruned = _prune(messages, budget=100_000)  # everything is "recent"
    assert pruned == [1, 3]
    assert "identical to a later result" in result[1]["content"]
    assert result[5] is messages[5]


def test_placeholders_are_not_cleared_again() -> None:
    messages = _session()
    once, _ = _prune(messages, budget=10)
    twice, pruned = _prune(once, budget=10)
    assert pruned == []
    assert twice == once


def test_protected_start_keeps_at_least_three_messages() -> None:
    assert protected_start([10] * 6, budget=45) == 2  # four fit in the budget
    assert protected_start([10, 10, 10, 10], budget=25) == 1  # the minimum wins
    assert protected_start([10, 500, 500, 500], budget=25) == 1
    assert protected_start([1, 1], budget=0) == 0


def test_multimodal_tool_content_is_measured_and_replaced() -> None:
    parts = [{"type": "text", "text": "z" * 500}]
    messages = [assistant("", [call("m", "screenshot")]),
                {"role": "tool", "tool_call_id": "m", "content": parts},
                user("next"), assistant("a"), user("b"), assistant("c")]
    result, pruned = _prune(messages, budget=0)
    assert pruned == [1]
    assert result[1]["content"].endswith("screenshot (500 chars)")


def test_describe_call_handles_odd_arguments() -> None:
    assert describe_call("grep", '{"pattern": "a b", "path": "src"}', 1234) == (
        "grep path=src pattern=a b (1,234 chars)")
    assert describe_call("run", "not json", 300) == "run not json (300 chars)"
    long = describe_call("write_file", {"path": "a.py", "content": "x" * 500}, 501)
    assert "content=" in long and "…" in long and len(long) < 150
    assert describe_call("", None, 201) == "tool (201 chars)"


def test_placeholder_line_is_describe_call_of_the_parsed_call() -> None:
    big = "x\n" * 200
    shapes: list[object] = ['{"path": "a.py", "pattern": "b"}', "not json", {"path": "c.py"},
                            '"{\\"path\\": \\"d.py\\"}"', None]
    messages: list[dict] = [user("go")]
    for k, arguments in enumerate(shapes):
        messages.append(assistant("", [{"id": f"c{k}", "type": "function",
                                        "function": {"name": "grep", "arguments": arguments}}]))
        messages.append(tool(f"c{k}", big + str(k)))
    messages.append(tool("missing", big + "m"))  # no call: the repair step's concern
    messages += [user("next"), assistant("ok"), user("more"), assistant("done")]
    calls = calls_by_id(messages)  # type: ignore[arg-type]
    expected = [describe_call(calls[f"c{k}"].name, calls[f"c{k}"].arguments, len(big) + 1)
                for k in range(len(shapes))] + [describe_call("", None, len(big) + 1)]
    for _ in range(2):  # the second time from the label cache
        result, pruned = _prune(messages, budget=0)
        assert [result[i]["content"].splitlines()[1] for i in pruned] == expected
