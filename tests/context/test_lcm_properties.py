"""Property-based tests of the ``lcm`` engine: every output valid (C12), nothing lost (C16).

The same generated conversations as the compressor's property tests (system message or
none, a resumed summary, multimodal turns, parallel tool calls with results in any order,
duplicate outputs; and conversations with the defects C12 must repair). First every
single output is checked; then conversations are stored
in a real SQLite file, compacted, grown and compacted again the way the agent does it,
and every message ever sent must come back through ``context_expand``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from convgen import (
    c12_violations,
    check_compression,
    conversations,
    messy_conversations,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lcmdriver import Driver, unrecoverable

from mnemo.context import is_summary_message
from mnemo.context.lcm import LosslessContextEngine
from mnemo.context.lcm_nodes import node_of
from mnemo.messages import content_text
from mnemo.sessions import SessionStore

Msg = dict[str, Any]


def check_output(engine: LosslessContextEngine, conversation: list[Msg]) -> list[Msg]:
    output = check_compression(engine, conversation)
    report = engine.last_report
    assert report is not None
    for message in output:
        assert content_text(message).count("[LCM SUMMARY NODE") <= 1, "a node was nested"
    if report.summary is not None:
        summaries = [m for m in output if is_summary_message(m)]
        assert node_of(summaries[0]) == (engine.last_node_id, "summary")
    # Every cleared output left in the context is a node that points at its original.
    for message in output:
        if message.get("role") == "tool" and content_text(message).startswith(
                "[Old tool output cleared"):
            pruned_here = any(content_text(m) == content_text(message) for m in conversation)
            assert pruned_here or node_of(message) is not None
    for i in report.pruned:
        assert conversation[i]["role"] == "tool" and i not in report.removed
    return output


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversation=conversations(),
       context_length=st.sampled_from([600, 1_500, 4_000, 20_000]),
       protect_first_n=st.integers(0, 4))
def test_every_output_is_valid_and_honest(conversation: list[Msg], context_length: int,
                                          protect_first_n: int) -> None:
    engine = LosslessContextEngine(context_length=context_length,
                                   protect_first_n=protect_first_n)
    check_output(engine, conversation)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversation=messy_conversations(),
       context_length=st.sampled_from([600, 1_500, 4_000, 20_000]),
       protect_first_n=st.integers(0, 4))
def test_defects_in_the_input_are_repaired(conversation: list[Msg], context_length: int,
                                           protect_first_n: int) -> None:
    engine = LosslessContextEngine(context_length=context_length,
                                   protect_first_n=protect_first_n)
    check_output(engine, conversation)


def _grow(live: list[Msg], more: list[Msg]) -> list[Msg]:
    """``more``'s turns after ``live``, with a bridge turn if two roles would collide."""
    extra = [m for m in more if m["role"] != "system" and not is_summary_message(m)]
    if live and extra and live[-1]["role"] == extra[0]["role"] and extra[0]["role"] in (
            "user", "assistant"):
        bridge = "assistant" if extra[0]["role"] == "user" else "user"
        extra.insert(0, {"role": bridge, "content": "continue"})
    return extra


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(first=conversations(), rounds=st.lists(conversations(), min_size=1, max_size=3),
       context_length=st.sampled_from([600, 1_500, 4_000]),
       protect_first_n=st.integers(0, 3))
def test_repeated_compaction_in_a_real_store_loses_nothing(
        first: list[Msg], rounds: list[list[Msg]], context_length: int,
        protect_first_n: int) -> None:
    with tempfile.TemporaryDirectory() as folder, \
            SessionStore(Path(folder) / "state.db") as store:
        engine = LosslessContextEngine(context_length=context_length, sessions=store,
                                       protect_first_n=protect_first_n)
        has_system = bool(first) and first[0]["role"] == "system"
        driver = Driver(engine, store, first[0] if has_system else None)
        driver.say(*first[1:] if has_system else first)
        driver.compact()
        for more in rounds:
            extra = _grow(driver.live, more)
            if c12_violations([driver.system, *driver.live, *extra],
                              [driver.system, *driver.live, *extra]):
                continue
            driver.say(*extra)
            driver.compact()
        for before, out in driver.outputs:
            assert not c12_violations(out, before)
        assert unrecoverable(driver) == []
