"""Token counting (SPEC C4): the rough estimate and the pluggable real tokenizer."""

from __future__ import annotations

import pytest

from mnemo.messages import Message
from mnemo.tokens import (
    BpeTokenCounter,
    RoughTokenCounter,
    TokenCounter,
    estimate_message_tokens_rough,
    estimate_messages_tokens_rough,
    estimate_tokens_rough,
)


def test_rough_estimate_is_four_chars_per_token() -> None:
    assert estimate_tokens_rough("") == 0
    assert estimate_tokens_rough("abcdefgh") == 2
    assert estimate_tokens_rough("abcdefghi") == 2


def test_message_estimate_counts_content_tool_names_and_arguments() -> None:
    plain: Message = {"role": "user", "content": "x" * 40}
    assert estimate_message_tokens_rough(plain) == 10 + 10
    call: Message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "read_file", "arguments": '{"path": "src/app.py"}'}}]}
    text = 'read_file({"path": "src/app.py"})'
    assert estimate_message_tokens_rough(call) == len(text) // 4 + 10
    parts: Message = {"role": "user", "content": [{"type": "text", "text": "y" * 20},
                                                  {"type": "image_url",
                                                   "image_url": {"url": "data:x"}}]}
    assert estimate_message_tokens_rough(parts) == len("y" * 20 + "\n[image_url]") // 4 + 10
    assert estimate_messages_tokens_rough([plain, call]) == 20 + len(text) // 4 + 10


def test_counters_satisfy_the_protocol() -> None:
    assert isinstance(RoughTokenCounter(), TokenCounter)
    assert RoughTokenCounter().count("abcdefgh") == 2


def test_bpe_counter_counts_real_tokens() -> None:
    pytest.importorskip("bpe_openai", reason='needs pip install "mnemo[tokenizer]"')
    counter = BpeTokenCounter()
    assert isinstance(counter, TokenCounter)
    assert counter.count("hello world") == 2
    assert counter.count("") == 0


def test_the_shaped_estimate_counts_logs_closer_than_the_rough_one() -> None:
    from mnemo.tokens import estimate_tokens_rough, estimate_tokens_shaped

    log = "2026-11-30 15:23:37,123 INFO id=0x1a2b3c4d took 17 ms\n" * 50
    prose = "The quick brown fox jumps over the lazy dog near the river bank. " * 50
    # The embedded model's tokenizer (Qwen 2.5, measured): 2,100 and 701 tokens.
    assert estimate_tokens_shaped(log) >= 0.9 * 2100 > 2 * estimate_tokens_rough(log)
    assert 0.9 * 701 <= estimate_tokens_shaped(prose) <= 1.1 * 701
    assert estimate_tokens_shaped("") == 0


def test_cached_counter_counts_each_text_once() -> None:
    from mnemo.tokens import CachedTokenCounter, RoughTokenCounter

    cached = CachedTokenCounter(RoughTokenCounter(), max_entries=2)
    texts = ["a" * 100, "b" * 100, "c" * 100]
    assert [cached.count(t) for t in texts] == [25, 25, 25]
    assert cached.misses == 3
    cached.count(texts[2])
    assert cached.misses == 3
    cached.count(texts[0])  # evicted (only two kept), so counted again
    assert cached.misses == 4
