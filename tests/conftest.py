"""Fixtures every test gets: its own MNEMO_HOME, no network beyond 127.0.0.1, and a
check that every request sent to a ``ScriptedChatClient`` was API-valid (C12).

The network guard refuses connections to anything but loopback from the test process,
so a test that would silently need the internet (or an API key) fails loudly instead.
The request check fails a test whose code sent an invalid request even where that code
caught the client's exception; a test that needs an invalid request builds its client
with ``strict=False``.
"""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemo.home import Home
from mnemo.llm.testing import take_violations
from support.fixtures import fake_openai  # a shared fixture: the fake OpenAI server
from support.pg import fresh_pg_url, pg_server, pg_url  # a real PostgreSQL server

__all__ = ["fake_openai", "fresh_pg_url", "pg_server", "pg_url"]

_real_connect = socket.socket.connect
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if self.family in (socket.AF_INET, socket.AF_INET6) and host not in _LOOPBACK:
        raise ConnectionRefusedError(f"tests may not reach the network (tried {address!r})")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)


@pytest.fixture(autouse=True)
def _every_scripted_request_is_valid() -> Iterator[None]:
    take_violations()  # whatever an earlier test left is its own business
    yield
    violations = take_violations()
    if violations:
        pytest.fail("invalid request(s) sent to a ScriptedChatClient:\n" + "\n".join(violations))


@pytest.fixture(autouse=True)
def _private_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scratch files (tempfile, $TMPDIR in subprocesses) go to the test's own folder."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))


@pytest.fixture(autouse=True)
def mnemo_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Home]:
    """A fresh, empty home folder for each test, exported as $MNEMO_HOME."""
    root = tmp_path / "mnemo-home"
    root.mkdir()
    monkeypatch.setenv("MNEMO_HOME", str(root))
    for var in ("MNEMO_STORAGE_URL", "MNEMO_API_KEY", "MNEMO_BASE_URL", "OPENAI_API_KEY",
                "OPENROUTER_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    yield Home(root)
