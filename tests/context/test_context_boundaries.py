"""Steps 2 and 3 (C7, C8): the head and the tail, never splitting a tool-call group."""

from __future__ import annotations

import pytest
from convgen import assistant, call, system, tool, user

from mnemo.context.boundaries import (
    align_boundary_backward,
    align_boundary_forward,
    find_head_end,
    find_tail_start,
    latest_user_index,
)
from mnemo.context.markers import summary_content


def _group(prefix: str, n: int = 2) -> list[dict]:
    ids = [f"{prefix}{k}" for k in range(n)]
    return [assistant("", [call(i) for i in ids]), *(tool(i, "out") for i in ids)]


def test_head_is_system_plus_protect_first_n() -> None:
    messages = [system(), user("a"), assistant("b"), user("c"), assistant("d"), user("e")]
    assert find_head_end(messages, 3) == 4
    assert find_head_end(messages[1:], 3) == 3
    assert find_head_end(messages, 0) == 1


def test_head_slides_forward_past_tool_results() -> None:
    messages = [system(), user("a"), *_group("g", 3), assistant("x"), user("y")]
    # protect_first_n=2 would end the head after the assistant that called tools.
    assert find_head_end(messages, 2) == 6
    assert align_boundary_forward(messages, 3) == 6


def test_head_stops_in_front_of_an_earlier_summary() -> None:
    messages = [system(), {"role": "user", "content": summary_content("old")},
                assistant("a"), user("b"), assistant("c")]
    assert find_head_end(messages, 3) == 1


def test_tail_keeps_at_least_three_messages() -> None:
    messages = [user("u" * 4000), assistant("a" * 4000), user("u" * 4000),
                assistant("a" * 4000), user("u" * 4000), assistant("a" * 4000)]
    tokens = [1010] * 6
    assert find_tail_start(messages, tokens, 0, budget=10) == 3
    # Small conversations have no middle at all.
    assert find_tail_start(messages[:3], tokens[:3], 0, budget=10) == 0


def test_tail_grows_up_to_one_and_a_half_times_the_budget() -> None:
    messages = [user("q"), *([assistant("a"), user("b")] * 10)]
    tokens = [100] * len(messages)
    # budget 400 → soft ceiling 600 → six messages of 100 tokens.
    cut = find_tail_start(messages, tokens, 1, budget=400)
    assert len(messages) - cut == 6


def test_latest_user_message_is_always_in_the_tail() -> None:
    messages = [user("first"), assistant("a"), user("latest request"),
                *_group("g", 3), *_group("h", 3), *_group("k", 3), assistant("done")]
    tokens = [10] * len(messages)
    cut = find_tail_start(messages, tokens, 1, budget=10)
    assert cut <= 2
    assert latest_user_index(messages) == 2


@pytest.mark.parametrize("position", range(4))
def test_tail_never_starts_inside_a_group(position: int) -> None:
    # A group of one assistant and three results; the token cut lands on each of its
    # four messages in turn, and the tail must start at the assistant every time.
    body = [user("q"), assistant("x"), user("go"), *_group("g", 3), user("next"),
            assistant("fine"), user("more"), assistant("end")]
    group_start = 3
    target = group_start + position
    tokens = [1000] * len(body)
    for i in range(target, len(body)):
        tokens[i] = 1
    tokens[target - 1] = 10_000
    cut = find_tail_start(body, tokens, 1, budget=200)
    assert body[cut]["role"] != "tool"
    assert cut <= group_start or cut > group_start + 3


def test_align_backward_stops_at_the_floor() -> None:
    messages = [system(), *_group("g", 2), user("u")]
    assert align_boundary_backward(messages, 3, floor=1) == 1
    assert align_boundary_backward(messages, 3, floor=2) == 2
    assert align_boundary_backward(messages, 4, floor=1) == 4


def test_latest_user_index_skips_summaries() -> None:
    messages = [user("real"), assistant("a"), {"role": "user", "content": summary_content("s")}]
    assert latest_user_index(messages) == 0
    assert latest_user_index([assistant("a")]) is None
