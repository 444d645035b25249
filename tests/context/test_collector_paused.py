"""The cycle collector is held off while ``compress()`` runs the local summariser
(``summary/cache.collector_paused``): counted in collections, not seconds."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

import pytest

from mnemo.context import ContextCompressor
from mnemo.context.extract import RESUMES
from mnemo.context.summary.cache import collector_paused
from mnemo.context.summary.reading import CACHE
from mnemo.messages import Message


@pytest.fixture
def eager_collector() -> Iterator[None]:
    """A collector that runs every few allocations, so any pass would trigger it."""
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(50, 1, 1)
    gc.enable()
    yield
    gc.set_threshold(*threshold)
    if not enabled:
        gc.disable()


def _turns(steps: int) -> list[Message]:
    out: list[Message] = [{"role": "system", "content": "You are a careful agent."}]
    for step in range(steps):
        out += [{"role": "user", "content": f"Step {step}: fix m{step}.py. Never touch the API."},
                {"role": "assistant", "content": f"Module m{step}.py now loads tenant {step}."}]
    return out


def _collections() -> int:
    return sum(s["collections"] for s in gc.get_stats())


def _compress_counting(turns: list[Message]) -> int:
    CACHE.clear()  # a first reading each time
    RESUMES.clear()
    engine = ContextCompressor(context_length=8_000, summarizer=None)
    before = _collections()
    out = engine.compress(turns)
    after = _collections()
    assert engine.last_report is not None and engine.last_report.summary
    assert len(out) < len(turns)
    return after - before


def test_no_collection_while_the_local_summariser_compresses(
        eager_collector: None, monkeypatch: pytest.MonkeyPatch) -> None:
    turns = _turns(300)
    # At most the one the first allocation after the pass starts (it is overdue then).
    assert _compress_counting(turns) <= 1
    assert gc.isenabled()  # as it was
    # Without the pause the same compression is interrupted many times.
    for module in ("mnemo.context.compressor", "mnemo.context.local_summary"):
        monkeypatch.setattr(f"{module}.collector_paused", contextlib.nullcontext)
    assert _compress_counting(turns) > 10


def test_the_state_it_found_is_restored() -> None:
    enabled = gc.isenabled()
    try:
        gc.disable()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off: it stays off
        gc.enable()
        with pytest.raises(ValueError), collector_paused():
            assert not gc.isenabled()
            raise ValueError("a failing pass")
        assert gc.isenabled()
    finally:
        (gc.enable if enabled else gc.disable)()
