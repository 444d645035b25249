"""sync_live: the stored live context follows a compressed list, losslessly."""

from __future__ import annotations

from typing import Any

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
