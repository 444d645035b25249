"""Property-based tests: every compressed output is valid for the API (C12) and honest.

Hypothesis generates valid conversations (system message or none, a resumed summary or
none, multimodal user turns, tool-call groups with parallel calls and results in any
order, duplicate outputs) and conversations with the defects C12 must repair (stray,
duplicate, missing and displaced tool results, same-role neighbours), and compressor
settings; each output is checked for C12 (a)–(e) and for what the report promises.
``bench/validity_bench.py`` runs 10,000 of them.
"""

from __future__ import annotations

from typing import Any

from convgen import (
    c12_violations,
    check_compression,
    conversations,
    messy_conversations,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemo.context import ContextCompressor, is_summary_message
from mnemo.context.prompt import MIN_SUMMARY_TOKENS

_SETTINGS = settings(max_examples=300, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _check(engine: ContextCompressor, conversation: list[dict[str, Any]]) -> list[Any]:
    output = check_compression(engine, conversation)
    report = engine.last_report
    assert report is not None
    if report.summary is not None:
        assert len(report.summary) // 4 <= max(MIN_SUMMARY_TOKENS, engine.max_summary_tokens)
    for i in report.pruned:
        assert conversation[i]["role"] == "tool" and i not in report.removed
    return output


@_SETTINGS
@given(conversation=conversations(),
       context_length=st.sampled_from([600, 1_500, 4_000, 20_000]),
       protect_first_n=st.integers(0, 4))
def test_every_output_is_valid_and_honest(conversation: list[dict[str, Any]],
                                          context_length: int, protect_first_n: int) -> None:
    engine = ContextCompressor(context_length=context_length, protect_first_n=protect_first_n)
    _check(engine, conversation)


@_SETTINGS
@given(conversation=messy_conversations(),
       context_length=st.sampled_from([600, 1_500, 4_000, 20_000]),
       protect_first_n=st.integers(0, 4))
def test_defects_in_the_input_are_repaired(conversation: list[dict[str, Any]],
                                           context_length: int, protect_first_n: int) -> None:
    engine = ContextCompressor(context_length=context_length, protect_first_n=protect_first_n)
    _check(engine, conversation)
    report = engine.last_report
    assert report is not None
    if c12_violations(conversation, conversation):
        assert report.changed, "a repaired list must be reported as changed"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversation=conversations(), more=conversations())
def test_a_second_compression_is_valid_and_never_nests(conversation: list[dict[str, Any]],
                                                       more: list[dict[str, Any]]) -> None:
    engine = ContextCompressor(context_length=1_500, protect_first_n=2)
    first = _check(engine, conversation)
    grown = first + [m for m in more if m["role"] != "system" and not is_summary_message(m)]
    if first and grown[len(first) - 1]["role"] == grown[min(len(first), len(grown) - 1)]["role"]:
        grown.insert(len(first), {"role": "assistant" if grown[len(first) - 1]["role"] == "user"
                                  else "user", "content": "continue"})
    if not c12_violations(grown, grown):
        _check(engine, grown)
