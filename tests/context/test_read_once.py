"""C18: a live session's next compaction reads only what it has not read before.

The local summariser caches what each message says by content (``summary/reading.py``).
These tests count the work that cache leaves — the characters and messages read — when
a grown agent session is compacted again: it must follow the new messages, not the
length of the session. (No clock: the amount of text read is what the time follows.)
"""

from __future__ import annotations

import json

from mnemo.context import ContextCompressor
from mnemo.context.prompt import CONTENT_MAX
from mnemo.context.summary.reading import CACHE
from mnemo.messages import Message, content_text


def _session(steps: int) -> list[Message]:
    """An agent session: each step a request, a call, 2-3 KB of its own output, a reply."""
    out: list[Message] = [{"role": "system", "content": "You are a careful coding agent."}]
    for step in range(steps):
        call = {"id": f"call_{step}", "type": "function", "function": {
            "name": "terminal", "arguments": json.dumps({"command": f"pytest -q t{step}.py"})}}
        log = "\n".join(f"tests/t{step}.py::test_case_{i} PASSED" for i in range(60 + step % 7))
        if step % 5 == 0:
            log += f"\nE   KeyError: 'tenant_{step}'\nFAILED tests/t{step}.py::test_x"
        out += [{"role": "user", "content": f"Step {step}: fix module m{step}.py so that "
                 f"the tenant {step} loads."},
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"call_{step}", "content": log},
                {"role": "assistant", "content": f"Module m{step}.py now loads tenant "
                 f"{step}; the test run shows what is left."}]
    return out  # type: ignore[return-value]


def _view(message: Message) -> int:
    """Characters of ``message`` the reader reads (the summariser's view of it)."""
    return min(len(content_text(message)), CONTENT_MAX)


def _compress(messages: list[Message]) -> tuple[int, int, int]:
    """Compress ``messages``; the characters and readings it took, and where its
    middle (the turns the summariser read) ended."""
    chars, misses = CACHE.chars, CACHE.misses
    engine = ContextCompressor(context_length=32_000, summarizer=None)
    engine.compress(messages)
    report = engine.last_report
    assert report is not None and report.removed, "the middle was summarised"
    return CACHE.chars - chars, CACHE.misses - misses, max(report.removed) + 1


def test_a_grown_session_is_read_only_where_it_is_new() -> None:
    CACHE.clear()
    session = _session(72)
    first = session[:241]  # 60 steps
    chars, _, middle_end = _compress(first)
    assert chars >= sum(_view(m) for m in first[1:middle_end]) * 0.9  # all of it read

    grown = session  # 12 more steps
    more_chars, more_misses, grown_end = _compress(grown)
    unseen = grown[middle_end:grown_end]  # in this middle, not in the last one
    assert unseen and len(unseen) < len(grown) // 4
    # Only the messages the last compaction's summariser never saw are read: their
    # characters at most, and at most one reading for each text and each note of it.
    assert 0 < more_chars <= sum(_view(m) for m in unseen)
    assert more_misses <= 3 * len(unseen)
    # Proportional to them, not to the session: the same characters per message.
    assert more_chars <= 1.2 * chars * len(unseen) / (middle_end - 1)

    # The same list again: nothing at all is read.
    again_chars, again_misses, _ = _compress(grown)
    assert (again_chars, again_misses) == (0, 0)
