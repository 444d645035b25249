"""MnemoRuntime: the archive follows the framework's history; the snapshot stays frozen."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

import pytest

from mnemo.config import MnemoConfig
from mnemo.context.validity import validate_c12
from mnemo.errors import UsageError
from mnemo.integrations.runtime import MnemoRuntime
from mnemo.messages import Message


def _turns(n: int) -> list[Message]:
    out: list[Message] = []
    for i in range(n):
        out += [{"role": "user", "content": f"question {i} " + "detail " * 60},
                {"role": "assistant", "content": f"answer {i} " + "because " * 60}]
    return out


def _runtime(home: Any, **kwargs: Any) -> MnemoRuntime:
    return MnemoRuntime(config=MnemoConfig(), home=home.root, context_length=4_000, **kwargs)


def test_a_growing_history_is_appended_once(mnemo_home: Any) -> None:
    runtime = _runtime(mnemo_home)
    history = _turns(2)
    runtime.record(history)
    runtime.record(history)
    runtime.record([*history, *_turns(1)])
    assert runtime.sessions.count_messages(runtime.session_id) == 6
    runtime.close()


def test_a_history_that_changed_is_synced_and_nothing_is_lost(mnemo_home: Any) -> None:
    runtime = _runtime(mnemo_home)
    history = _turns(3)
    runtime.record(history)
    runtime.record(history[2:])  # the framework dropped the first turn
    store = runtime.sessions
    assert [m.to_message() for m in store.load_messages(runtime.session_id)] == history[2:]
    assert store.count_messages(runtime.session_id) == 6  # archived, not deleted
    runtime.close()


def test_compaction_is_valid_archived_and_refreshes_the_snapshot_once(mnemo_home: Any) -> None:
    runtime = _runtime(mnemo_home)
    before = runtime.instructions()
    runtime.memory_tool("add", "user", content="Prefers tea to coffee.")
    assert runtime.instructions() == before  # frozen: the write shows next session
    history = _turns(20)
    live = runtime.process(history, "Be brief.")
    assert live is not None and len(live) < len(history)
    assert validate_c12(live, history) == []
    assert "Prefers tea" in runtime.instructions()  # C14: rebuilt once after compaction
    found = runtime.session_search_tool("question 3 detail")
    assert '"question 3' in found  # compacted away, still found
    assert runtime.process(live, "Be brief.") is None  # under the threshold now
    runtime.close()


def test_a_session_resumes_with_its_live_context(mnemo_home: Any) -> None:
    runtime = _runtime(mnemo_home)
    runtime.record(_turns(2))
    runtime.close()
    resumed = _runtime(mnemo_home, session_id=runtime.session_id)
    assert resumed.live == _turns(2)
    resumed.close()
    with pytest.raises(UsageError, match="mnemo sessions list"):
        _runtime(mnemo_home, session_id="nope")


def test_compression_disabled_leaves_the_history_alone(mnemo_home: Any) -> None:
    config = MnemoConfig.model_validate({"compression": {"enabled": False}})
    runtime = MnemoRuntime(config=config, home=mnemo_home.root, context_length=4_000)
    assert runtime.process(_turns(20)) is None
    runtime.close()


def test_what_the_frameworks_requests_carry_is_left_free_by_a_compaction(
        mnemo_home: Any) -> None:
    """A framework's requests carry tool schemas and a chat template the runtime never
    sees: the reported prompt tokens count them. A compaction that filled the threshold
    with messages alone was due again at the next turn; the difference between what was
    reported and what the runtime sent is left free. Scripted loop, real runtime."""
    from mnemo.tokens import estimate_messages_tokens_rough

    tools = 1_200  # what the framework adds to every request
    def summarise(prompt: str) -> str:  # a model that writes to the budget it is given
        found = re.search(r"about (\d+) tokens", prompt)
        budget = int(found.group(1)) if found else 500
        line = "- Ana took the ferry to the harbour museum with her cousins.\n"
        return "## Critical Context\n" + line * (budget * 4 // len(line) - 1)

    runtime = MnemoRuntime(config=MnemoConfig(), home=mnemo_home.root, context_length=8_192,
                           summarizer=summarise)
    system = "You are a helpful assistant. Be brief."
    history: list[Message] = []
    compacted_at = []
    for turn in range(160):
        history.append({"role": "user", "content": f"Day {turn}: my friend Ana{turn} took "
                        f"the ferry to the harbour museum with {turn % 7 + 2} cousins."})
        live = runtime.process(history, system)
        if live is not None:
            compacted_at.append(turn)
            history = live
        sent = estimate_messages_tokens_rough(
            [{"role": "system", "content": system}, *history]) + tools
        assert sent < 8_192
        runtime.observe_usage({"input_tokens": sent, "output_tokens": 30})
        history.append({"role": "assistant", "content": "Noted: the harbour, the ferry and "
                        "the bakery are on your list for the week."})
    runtime.close()
    assert len(compacted_at) >= 3, compacted_at
    gaps = [b - a for a, b in pairwise(compacted_at)]
    assert min(gaps) >= 3, compacted_at
