"""Search work is bounded by the tuning, not by the archive size: counted, never timed.

``coverage_boost`` is the rescoring step both backends share; the number of candidates it
is handed is the work that grows with the archive if ranking is not bounded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mnemo.sessions import SearchTuning, SessionStore, pg_search, search
from mnemo.sessions.pg_plan import MARGIN, ReadPlan


def _record_rescored(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []
    original = search.coverage_boost

    def counting(parsed: Any, scores: Mapping[int, float], *rest: Any) -> dict[int, float]:
        seen.append(len(scores))
        return original(parsed, scores, *rest)

    monkeypatch.setattr(search, "coverage_boost", counting)
    monkeypatch.setattr(pg_search, "coverage_boost", counting)
    return seen


def test_rescored_candidates_stay_bounded_as_the_archive_grows(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.search_tuning = SearchTuning(rank_budget=30, term_budget=30, pool=10, context_pool=10)
    seen = _record_rescored(monkeypatch)
    rescored: list[int] = []
    for _ in range(4):  # 60, 120, 180, 240 matching messages
        sid = store.create_session()
        store.append_messages(sid, [{"role": "user", "content": f"walrus sighting {i} by the "
                                     "harbour"} for i in range(60)])
        seen.clear()
        assert len(store.search("walrus harbour", limit=5)) == 5
        rescored.append(sum(seen))
    # The OR ranking and the AND ranking each hand over at most ``pool`` candidates.
    assert all(0 < n <= 2 * 10 for n in rescored)
    assert rescored[-1] == rescored[0]  # four times the matches, the same work


def test_pg_plan_reads_a_common_term_from_the_newest_ids_only() -> None:
    plan = ReadPlan(ranked=[], present=[], saturated=True, or_matches=0.0, and_matches=0.0,
                 top_id=1_000_000, budget=2_000)
    assert plan.window(1_500) == 0  # under the budget: every match is read
    low = plan.window(50_000)  # 5% of the archive: about MARGIN budgets of its rows
    assert 0 < low < 1_000_000
    assert (1_000_000 - low) * 50_000 / 1_000_000 == pytest.approx(MARGIN * 2_000, rel=0.01)
    assert plan.window(400_000) == -1  # dense: walked newest first, no index read
    assert plan.window(1_000_000) == -1
