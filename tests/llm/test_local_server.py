"""``LocalModelServer`` lifecycle with a stand-in child (no model): start, health, stop,
failures, and no orphan when the owner exits or is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mnemo.errors import ModelUnavailableError, ProviderTimeoutError
from mnemo.home import Home
from mnemo.llm import OpenAIChatClient
from mnemo.llm import local_client as local_client_module
from mnemo.llm.local_client import LocalChatClient
from mnemo.llm.local_server import LocalModelServer, LocalServerSettings

TESTS_DIR = Path(__file__).resolve().parents[1]
FAKE = "support.fake_llama_serve"


@pytest.fixture(autouse=True)
def _child_finds_support(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(TESTS_DIR))


def settings(tmp_path: Path, name: str = "model.gguf", **kwargs: object) -> LocalServerSettings:
    return LocalServerSettings(model_path=tmp_path / name, log_file=tmp_path / "server.log",
                               **kwargs)  # type: ignore[arg-type]


def gone(pid: int, looks: int = 200) -> bool:
    """True once ``pid`` has exited (a zombie counts: it runs nothing), looking at most
    ``looks`` times, a twentieth of a second apart: a bound on the wait, not a clock
    the test reads."""
    for _ in range(looks):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_start_serves_then_stop_ends_the_child(tmp_path: Path) -> None:
    server = LocalModelServer(settings(tmp_path, threads=3, context_length=2048), module=FAKE)
    with server:
        assert server.running and server.pid
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        assert server.load_seconds == 0.01
        reply = OpenAIChatClient("local", base_url=server.base_url).complete(
            [{"role": "user", "content": "ping"}])
        assert reply.text == "echo: ping"
        pid = server.pid
        assert server.start() is server and server.pid == pid  # idempotent
    assert not server.running and gone(pid)
    server.stop()  # idempotent


def test_load_error_is_reported_and_the_child_is_gone(tmp_path: Path) -> None:
    server = LocalModelServer(settings(tmp_path, "fail.gguf"), module=FAKE)
    with pytest.raises(ModelUnavailableError, match="could not load") as caught:
        server.start()
    assert "Failed to init server" in str(caught.value)
    assert not server.running


def test_child_dying_before_ready_is_reported(tmp_path: Path) -> None:
    server = LocalModelServer(settings(tmp_path, "crash.gguf"), module=FAKE)
    with pytest.raises(ModelUnavailableError, match=r"exited \(code 3\)"):
        server.start()


def test_startup_timeout_stops_the_child(tmp_path: Path) -> None:
    server = LocalModelServer(settings(tmp_path, "silent.gguf", startup_timeout=0.5),
                              module=FAKE)
    with pytest.raises(ProviderTimeoutError, match=r"local\.startup_timeout"):
        server.start()
    assert not server.running  # the silent child was stopped, not left behind


_OWNER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from mnemo.llm.local_server import LocalModelServer, LocalServerSettings
    server = LocalModelServer(LocalServerSettings(model_path=Path("m.gguf")),
                              module="support.fake_llama_serve")
    server.start()
    print(server.pid, flush=True)
    if sys.argv[1] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    # "exit": leave without stop(); the atexit hook must clean up
""")


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_no_orphan_when_the_owner_exits_or_is_killed(how: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(TESTS_DIR)}
    owner = subprocess.run([sys.executable, "-c", _OWNER, how], capture_output=True,
                           text=True, timeout=60, env=env, check=False)
    assert owner.stdout.strip(), owner.stderr
    child = int(owner.stdout.split()[0])
    if how == "kill":
        assert owner.returncode == -signal.SIGKILL
    else:
        assert owner.returncode == 0, owner.stderr
    assert gone(child), f"the model server {child} outlived its owner"


def test_local_chat_client_starts_on_first_use_and_reuses_the_server(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mnemo_home: Home) -> None:
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 16)
    started: list[LocalModelServer] = []

    def fake_shared(s: LocalServerSettings) -> LocalModelServer:
        if not started or not started[-1].running:
            started.append(LocalModelServer(s, module=FAKE))
        return started[-1].start()

    monkeypatch.setattr(local_client_module, "shared_server", fake_shared)
    monkeypatch.setattr(local_client_module, "local_runtime_installed", lambda: True)
    client = LocalChatClient(gguf, home=mnemo_home, context_length=2048, threads=1)
    assert client.model == "tiny" and client.context_length == 2048
    assert started == []  # nothing runs before the first call
    try:
        assert client.complete([{"role": "user", "content": "a"}]).text == "echo: a"
        assert client.complete([{"role": "user", "content": "b"}]).text == "echo: b"
        assert len(started) == 1
        assert started[0].settings.log_file == mnemo_home.logs_dir / "local-model.log"
        started[0].stop()  # the server died: the next call starts a new one
        assert client.complete([{"role": "user", "content": "c"}]).text == "echo: c"
        assert len(started) == 2
    finally:
        for server in started:
            server.stop()


def test_local_chat_client_refuses_a_file_that_is_not_gguf(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mnemo_home: Home) -> None:
    monkeypatch.setattr(local_client_module, "local_runtime_installed", lambda: True)
    bogus = tmp_path / "weights.bin"
    bogus.write_bytes(b"PK\x03\x04zip")
    with pytest.raises(ModelUnavailableError, match="not a GGUF file"):
        LocalChatClient(bogus, home=mnemo_home).complete([{"role": "user", "content": "x"}])
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        LocalChatClient(tmp_path / "nope.gguf", home=mnemo_home).start()


def test_local_chat_client_without_the_extra_says_how_to_install(
        monkeypatch: pytest.MonkeyPatch, mnemo_home: Home) -> None:
    monkeypatch.setattr(local_client_module, "local_runtime_installed", lambda: False)
    with pytest.raises(ModelUnavailableError, match=r'pip install "mnemo\[local\]"'):
        LocalChatClient(home=mnemo_home).start()


def test_the_server_runs_in_a_session_of_its_own(tmp_path: Path) -> None:
    # Ctrl-C in the user's terminal reaches the whole foreground process group; the
    # server must not be in it, or it dies with the interrupted answer.
    server = LocalModelServer(settings(tmp_path), module=FAKE)
    with server:
        assert server.pid
        assert os.getsid(server.pid) == server.pid != os.getsid(0)
