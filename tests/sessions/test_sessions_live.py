"""sync_live: the stored live context follows a compressed list, losslessly."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemo.sessions import SessionStore
from mnemo.sessions.live import plan_sync


def _msgs(*texts: str) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": t}
            for i, t in enumerate(texts)]


def test_plan_sync_finds_kept_archived_and_new() -> None:
    kept, gaps = plan_sync(["s", "a", "b", "c", "d", "e"], ["s", "a", "SUM", "d", "e'"])
    assert kept == {0: 0, 1: 1, 4: 3}
    assert [(g.after, g.before, g.new, g.archived) for g in gaps] == [
        (1, 4, [2], [2, 3]), (4, None, [4], [5])]


def test_compaction_keeps_head_and_tail_and_places_the_summary(store: SessionStore) -> None:
    sid = store.create_session()
    original = [{"role": "system", "content": "sys"}, *_msgs(*(f"turn {i}" for i in range(10)))]
    ids = store.append_messages(sid, original)
    compressed = [
        {"role": "system", "content": "sys\n\n[Note: compacted]"},  # changed
        original[1], original[2],  # head
        {"role": "user", "content": "[CONTEXT COMPACTION] summary of turns 2-6"},
        *original[8:],  # tail
    ]
    result = store.sync_live(sid, compressed)
    assert result.kept == 2 + 3
    assert result.archived_ids == [ids[0], *ids[3:8]]
    assert len(result.inserted_ids) == 2
    assert [m.to_message() for m in store.load_messages(sid)] == compressed
    summary = store.get_message(result.inserted_ids[1])
    assert summary is not None and summary.meta["replaces"] == ids[3:8]
    assert [m.id for m in store.originals_of(summary.id)] == ids[3:8]
    # the full history reads: originals, then what replaced them
    order = [m.id for m in store.load_messages(sid, active_only=False)]
    assert order.index(result.inserted_ids[0]) == order.index(ids[0]) + 1
    assert order.index(summary.id) == order.index(ids[7]) + 1
    # idempotent, and everything archived stays searchable
    assert not store.sync_live(sid, compressed).changed
    assert any(h.message_id == ids[5] and h.compacted for h in store.search("turn 4"))


def test_scattered_changes_stay_in_place(store: SessionStore) -> None:
    sid = store.create_session()
    original = _msgs("a", "big tool output " * 50, "b", "another big output " * 50, "c")
    ids = store.append_messages(sid, original)
    cleared = [original[0], {"role": "assistant", "content": "[cleared]"}, original[2],
               {"role": "assistant", "content": "[cleared 2]"}, original[4]]
    result = store.sync_live(sid, cleared)
    assert result.archived_ids == [ids[1], ids[3]]
    assert [m.to_message() for m in store.load_messages(sid)] == cleared
    after = store.append_message(sid, {"role": "user", "content": "next"})
    assert store.load_messages(sid)[-1].id == after


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    before=st.lists(st.sampled_from("abcdef"), max_size=12),
    after=st.lists(st.sampled_from("abcdefXYZ"), max_size=12),
)
def test_any_new_list_becomes_the_live_context(store: SessionStore, before: list[str],
                                               after: list[str]) -> None:
    sid = store.create_session()
    store.append_messages(sid, _msgs(*before))
    total = store.count_messages(sid)
    result = store.sync_live(sid, _msgs(*after))
    assert [m.to_message() for m in store.load_messages(sid)] == _msgs(*after)
    everything = store.load_messages(sid, active_only=False)
    assert len(everything) == total + len(result.inserted_ids)  # nothing deleted
    assert len({m.position for m in everything}) == len(everything)


def _replaced(store: SessionStore, sid: str) -> dict[int, list[int]]:
    """Inserted message id -> the ids its meta says it replaces."""
    return {m.id: m.meta["replaces"] for m in store.load_messages(sid, active_only=False)
            if "replaces" in m.meta}


def test_a_repeated_run_keeps_the_later_copies(store: SessionStore) -> None:
    """A run that repeats an earlier one: the compaction kept the real (later) tail, and
    the summary names every message that left."""
    sid = store.create_session()
    run = _msgs("fix the bug", "done", "run the tests", "green")
    ids = store.append_messages(sid, [*run, *run[:2]])  # A B C D A B
    summary = {"role": "user", "content": "[CONTEXT COMPACTION] summary"}
    result = store.sync_live(sid, [summary, *run[:2]])
    assert result.archived_ids == ids[:4]
    assert [m.id for m in store.load_messages(sid)] == [*result.inserted_ids, *ids[4:]]
    assert _replaced(store, sid) == {result.inserted_ids[0]: ids[:4]}


def test_a_repeated_run_with_a_cleared_tool_output_is_fully_named(store: SessionStore) -> None:
    sid = store.create_session()
    pairs = [m for i in range(4) for m in _msgs(f"ask {i % 2}", f"answer {i % 2}")]
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c9", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}
    output = {"role": "tool", "tool_call_id": "c9", "content": "a long listing " * 20}
    ids = store.append_messages(sid, [*pairs, call, output, *pairs[:4]])
    summary = {"role": "user", "content": "[CONTEXT COMPACTION] summary"}
    cleared = {**output, "content": "[output cleared]"}
    new = [summary, call, cleared, *pairs[:4]]
    result = store.sync_live(sid, new)
    assert [m.to_message() for m in store.load_messages(sid)] == new
    replaced = _replaced(store, sid)
    by_content = {store.get_message(i).content: r for i, r in replaced.items()}  # type: ignore[union-attr]
    assert by_content == {summary["content"]: ids[:8], "[output cleared]": [ids[9]]}
    assert sorted(result.archived_ids) == sorted({i for r in replaced.values() for i in r})
    assert [m.id for m in store.load_messages(sid)][1] == ids[8]  # the call itself kept


def test_a_cleared_tool_output_is_matched_to_its_original_by_id() -> None:
    old = ["u", "call", "out-1", "mid", "mid", "out-2", "end"]
    new = ["u", "call", "cleared-1", "SUMMARY", "cleared-2", "end"]
    ids_old = [None, None, "c1", None, None, "c2", None]
    ids_new = [None, None, "c1", None, "c2", None]
    kept, gaps = plan_sync(old, new, old_ids=ids_old, new_ids=ids_new)
    assert kept == {0: 0, 1: 1, 6: 5}
    assert [(g.archived, g.new) for g in gaps] == [([2], [2]), ([3, 4], [3]), ([5], [4])]


@settings(max_examples=150, deadline=None)
@given(
    head=st.lists(st.sampled_from("abc"), max_size=6),
    middle=st.lists(st.sampled_from("abcd"), min_size=1, max_size=8),
    tail=st.lists(st.sampled_from("abc"), max_size=6),
    cleared=st.sets(st.integers(0, 11), max_size=3),
)
def test_a_compaction_of_repeated_messages_names_everything_it_archived(
    head: list[str], middle: list[str], tail: list[str], cleared: set[int],
) -> None:
    """Kept head and tail (some tool outputs cleared), the middle replaced by a summary:
    whatever repeats, every run of archived messages has a replacement and vice versa."""
    old = [*head, *middle, *tail]
    ids_old: list[str | None] = [f"id{i}" for i in range(len(old))]
    kept_positions = [*range(len(head)), *range(len(head) + len(middle), len(old))]
    changed = {p for k, p in enumerate(kept_positions) if k in cleared}
    new = [f"cleared{p}" if p in changed else old[p] for p in kept_positions[:len(head)]]
    ids_new: list[str | None] = [ids_old[p] for p in kept_positions[:len(head)]]
    new.append("SUMMARY")
    ids_new.append(None)
    for p in kept_positions[len(head):]:
        new.append(f"cleared{p}" if p in changed else old[p])
        ids_new.append(ids_old[p])
    kept, gaps = plan_sync(old, new, old_ids=ids_old, new_ids=ids_new)
    assert all(g.archived and g.new for g in gaps)
    assert len(kept) == len(kept_positions) - len(changed)
    assert sorted(i for g in gaps for i in g.archived) == sorted(
        set(range(len(old))) - set(kept))


class _Counted(str):
    """A message key that counts how often the planner compares or hashes it."""

    ops = 0

    def __eq__(self, other: object) -> bool:
        _Counted.ops += 1
        return str.__eq__(self, other)

    def __hash__(self) -> int:
        _Counted.ops += 1
        return str.__hash__(self)


def _plan_cost(n: int) -> int:
    """Comparisons and hashes the planner spends on two repetitive contexts of size n."""
    _Counted.ops = 0
    same = [_Counted('{"role":"tool","content":"same"}')] * n
    kept, gaps = plan_sync(same, [_Counted("S"), *same[: n // 2]])
    assert kept == {i: i - (n // 2 - 1) for i in range(n // 2, n)}
    assert [(g.archived[-1], g.new) for g in gaps] == [(n // 2 - 1, [0])]
    alternating = [_Counted(f"u{i}" if i % 2 else '{"content":"ok"}') for i in range(n)]
    kept2, _ = plan_sync(alternating, [_Counted("S"), *alternating[n // 2:]])
    assert len(kept2) == n // 2
    return _Counted.ops


def test_long_repetitive_contexts_are_planned_in_linear_time() -> None:
    """difflib took 4 s for 8,000 identical messages: the plan's work must grow linearly.

    Work is counted (key comparisons and hashes), not timed; ``bench/live_sync_bench.py``
    measures the seconds.
    """
    small, large = _plan_cost(5_000), _plan_cost(20_000)
    assert large <= 4.5 * small  # 4x the messages, about 4x the work (quadratic: 16x)
    assert large <= 40 * 20_000


@pytest.mark.sqlite_only
def test_long_id_lists_stay_under_the_sqlite_parameter_limit(store: SessionStore) -> None:
    sid = store.create_session()
    ids = store.append_messages(sid, _msgs(*(f"turn {i}" for i in range(1200))))
    store._db.connection().setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
    result = store.sync_live(sid, [{"role": "user", "content": "summary"}, *_msgs("x")])
    assert len(result.archived_ids) == 1200
    (summary,) = [i for i in result.inserted_ids if store.get_message(i).content == "summary"]  # type: ignore[union-attr]
    assert [m.id for m in store.originals_of(summary)] == ids
    other = store.create_session()
    more = store.append_messages(other, _msgs(*(f"t{i}" for i in range(1100))))
    (new,) = store.archive_and_replace(other, more, [{"role": "user", "content": "sum"}])
    assert len(store.originals_of(new)) == 1100
