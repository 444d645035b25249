"""The local client's streaming, prompt cache and time limits, against a stand-in server.

The stand-in (``support.fake_llama_serve``) keeps a llama.cpp-like slot and reports how
many prompt words it read anew and how many came from its cache, so the tests count work
instead of timing it.
"""

from __future__ import annotations

import itertools
import json
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemo.errors import CallStoppedError
from mnemo.home import Home
from mnemo.llm import local_cache as local_cache_module
from mnemo.llm import local_client as local_client_module
from mnemo.llm.local_cache import LocalPace, PromptCache
from mnemo.llm.local_client import LocalChatClient
from mnemo.llm.local_server import LocalModelServer, LocalServerSettings
from mnemo.llm.streaming import StreamHandlers
from mnemo.llm.summarizer import make_summarizer
from mnemo.messages import Message

TESTS_DIR = Path(__file__).resolve().parents[1]
FAKE = "support.fake_llama_serve"
SYSTEM = " ".join(f"rule{n}" for n in range(400))  # a long, unchanging system prompt


@pytest.fixture(autouse=True)
def _child_finds_support(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(TESTS_DIR))


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[LocalModelServer]]:
    """Every client gets a new stand-in server process (as a new ``mnemo`` process would)."""
    started: list[LocalModelServer] = []

    def fake_shared(settings: LocalServerSettings) -> LocalModelServer:
        if not started or not started[-1].running:
            started.append(LocalModelServer(settings, module=FAKE))
        return started[-1].start()

    monkeypatch.setattr(local_client_module, "shared_server", fake_shared)
    monkeypatch.setattr(local_client_module, "local_runtime_installed", lambda: True)
    yield started
    for server in started:
        server.stop()


def make_client(tmp_path: Path, home: Home) -> LocalChatClient:
    gguf = tmp_path / "tiny.gguf"
    if not gguf.exists():  # a rewritten model file would (rightly) not match the cache
        gguf.write_bytes(b"GGUF" + b"\0" * 16)
    return LocalChatClient(gguf, home=home, context_length=4096, threads=1)


def request(text: str) -> list[Message]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


def test_a_streamed_reply_arrives_in_pieces_with_prompt_progress(
        tmp_path: Path, mnemo_home: Home, servers: list[LocalModelServer]) -> None:
    client = make_client(tmp_path, mnemo_home)
    pieces: list[str] = []
    progress: list[tuple[int, int]] = []
    response = client.complete(request("hello there"), stream=StreamHandlers(
        on_text=pieces.append, on_progress=lambda done, total: progress.append((done, total))))
    assert pieces == ["echo:", " hello", " there"]
    assert response.text == "echo: hello there"
    assert response.usage.prompt_tokens == 402
    assert progress == [(402, 402)]  # nothing cached yet: every prompt word is read


def test_a_new_process_restores_the_prompt_cache(
        tmp_path: Path, mnemo_home: Home, servers: list[LocalModelServer]) -> None:
    first = make_client(tmp_path, mnemo_home)
    first.complete(request("first question"))
    assert first.last_timings is not None and first.last_timings["prompt_n"] == 402
    assert first.cache is not None and first.cache.path.is_file()  # saved: many new words
    servers[-1].stop()  # the process ends; the next one starts its own server

    second = make_client(tmp_path, mnemo_home)
    second.complete(request("another question"))
    assert len(servers) == 2
    timings = second.last_timings
    assert timings is not None
    assert timings["cache_n"] == 400  # the system prompt came from the saved slot
    assert timings["prompt_n"] == 2
    assert second.cache is not None and second.cache.saves == 0  # nothing new worth saving


def test_without_the_prompt_cache_every_process_reads_the_prompt_again(
        tmp_path: Path, mnemo_home: Home, servers: list[LocalModelServer]) -> None:
    for _ in range(2):
        client = make_client(tmp_path, mnemo_home)
        client.prompt_cache = False
        client.complete(request("a question"))
        assert client.last_timings is not None and client.last_timings["cache_n"] == 0
        servers[-1].stop()
    assert not (mnemo_home.root / "cache" / "prompt").exists()


def test_a_refused_cache_file_is_removed(tmp_path: Path) -> None:
    cache = PromptCache(tmp_path, tmp_path / "m.gguf", 4096)
    cache.path.write_bytes(b"junk")
    assert cache.restore("http://127.0.0.1:9") == 0  # nothing listens there
    assert not cache.path.exists()


def test_two_saves_at_once_in_one_process_both_land(
        tmp_path: Path, mnemo_home: Home, servers: list[LocalModelServer],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Seen by hand: the turn's reply and a background summary saved the slot at the same
    # moment, under one temporary name; the second rename found the file moved.
    client = make_client(tmp_path, mnemo_home)
    client.complete(request("a question"))
    cache = client.cache
    assert cache is not None
    both_written = threading.Barrier(2, timeout=30)
    slot_action = local_cache_module._slot_action

    def save_then_wait(address: str, action: str, filename: str) -> dict[str, Any]:
        reply = slot_action(address, action, filename)
        both_written.wait()  # neither renames before both wrote: the race, every time
        return reply

    monkeypatch.setattr(local_cache_module, "_slot_action", save_then_wait)
    saved: list[bool] = []
    threads = [threading.Thread(target=lambda: saved.append(
        cache.maybe_save(servers[-1].address, {"prompt_n": 10_000}))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert saved == [True, True]
    assert [p.name for p in cache.folder.iterdir()] == [cache.filename]  # no .tmp left


def test_an_interrupted_stream_stops_the_generation_and_the_next_call_runs(
        tmp_path: Path, mnemo_home: Home, servers: list[LocalModelServer]) -> None:
    client = make_client(tmp_path, mnemo_home)
    words: list[str] = []

    def interrupt_after_five(text: str) -> None:
        words.append(text)
        if len(words) == 5:
            raise KeyboardInterrupt  # what Ctrl-C raises in the reading thread

    with pytest.raises(KeyboardInterrupt):
        client.complete(request("endless story"),
                        stream=StreamHandlers(on_text=interrupt_after_five))
    assert client.complete(request("are you there")).text == "echo: are you there"
    assert endless_done(servers[-1]) == 1  # the server saw the client leave and stopped


def endless_done(server: LocalModelServer) -> int:
    """How many endless replies the stand-in stopped because their client went away."""
    with urllib.request.urlopen(f"{server.address}/stats", timeout=10) as reply:
        return int(json.loads(reply.read())["endless_done"])


def test_time_limits_follow_the_measured_pace() -> None:
    pace = LocalPace(prompt_per_second=20.0, predicted_per_second=4.0, slack_seconds=30.0)
    assert pace.whole_request(2000, 100) == 2 * (100 + 25) + 30
    pace.observe({"prompt_n": 1000, "prompt_per_second": 200.0,
                  "predicted_n": 50, "predicted_per_second": 20.0})
    assert pace.whole_request(2000, 100) == 2 * (10 + 5) + 30
    assert pace.between_chunks() == 2 * 512 / 200 + 30
    pace.observe({"prompt_n": 3, "prompt_per_second": 1.0})  # too little to measure
    assert pace.prompt_per_second == 200.0


def test_a_stream_the_caller_stops_ends_the_generation_and_returns_what_arrived(
        tmp_path: Path, mnemo_home: Home, servers: list[LocalModelServer]) -> None:
    client = make_client(tmp_path, mnemo_home)
    pieces: list[str] = []

    def shown(text: str) -> None:
        pieces.append(text)
        assert len(pieces) < 50, "the stream was not stopped"  # else it never ends

    response = client.complete(request("endless story"), stream=StreamHandlers(
        on_text=shown, stop=lambda: len(pieces) == 5))  # a loop found (loops.py)
    assert response.text == "".join(pieces) and len(pieces) == 5
    # The stand-in serves one request at a time: this one waits for the endless one.
    assert client.complete(request("are you there")).text == "echo: are you there"
    assert endless_done(servers[-1]) == 1  # the server saw the client leave and stopped


def test_a_stopped_stream_still_tells_what_its_prompt_cost(
        tmp_path: Path, mnemo_home: Home, servers: list[LocalModelServer]) -> None:
    # No closing chunk (timings, usage) arrives for a stream the caller stops; the prompt's
    # progress report does, and the cache's use after an interruption is read from it.
    client = make_client(tmp_path, mnemo_home)
    pieces: list[str] = []
    response = client.complete(request("endless story"), stream=StreamHandlers(
        on_text=pieces.append, stop=lambda: len(pieces) == 3))
    assert response.usage.prompt_tokens == 402  # counted by the server, not estimated
    assert client.last_timings is not None
    assert (client.last_timings["prompt_n"], client.last_timings["cache_n"]) == (402, 0)
    assert "predicted_n" not in client.last_timings  # unknown: not made up
    # Nor is the slot saved after it: the stop was for a turn, whose request comes now.
    assert client.cache is not None and client.cache.saves == 0

    pieces.clear()
    client.complete(request("endless again"), stream=StreamHandlers(
        on_text=pieces.append, stop=lambda: len(pieces) == 3))
    assert client.last_timings is not None
    # The system prompt and "endless" came from the cache; "again" was read.
    assert (client.last_timings["prompt_n"], client.last_timings["cache_n"]) == (1, 401)


# Asked before the call, at the prompt's progress, then after each piece: the turn
# "begins" at the fifth ask, three pieces into the answer — and either is still under
# way when the call returns, or has answered by then and ``stop`` says False again (by
# hand the call waited for the server the turn held): stopped either way, for a summary
# cut short is no summary.
@pytest.mark.parametrize("still_under_way", [True, False], ids=["turn on", "turn over"])
def test_a_background_summary_stopped_for_a_turn_frees_the_server(
        tmp_path: Path, mnemo_home: Home, servers: list[LocalModelServer],
        still_under_way: bool) -> None:
    client = make_client(tmp_path, mnemo_home)
    asked = itertools.count()

    def turn_began() -> bool:
        n = next(asked)
        assert n < 50, "the summary was not stopped"  # else it never ends
        return n >= 5 if still_under_way else n == 5

    summarize = make_summarizer(client, stop=turn_began)
    with pytest.raises(CallStoppedError):
        summarize("an endless summary")
    # The stand-in serves one request at a time: the turn's call waits for nothing.
    assert client.complete(request("are you there")).text == "echo: are you there"
    assert endless_done(servers[-1]) == 1  # the server saw the summary leave and stopped
    assert make_summarizer(client, stop=lambda: False)("a short one") == "echo: a short one"
