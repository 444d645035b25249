"""``LocalModelServer``: run the embedded model in a child process and stop it cleanly.

The child (``mnemo.llm._serve``) hosts llama.cpp's OpenAI-compatible server on a free
127.0.0.1 port and reports its address on one stdout line. The parent keeps the child's
stdin open; closing it is the stop signal, and because the OS closes it when the parent
dies, the child can never outlive its owner. ``stop()`` closes the pipe, waits, then
terminates and finally kills; an ``atexit`` hook stops every server still running when
the interpreter exits.

``shared_server`` keeps one server per (model, settings) per process, so the main model
and the summariser share one copy of the weights in memory.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import selectors
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mnemo.errors import ModelUnavailableError, ProviderTimeoutError
from mnemo.llm.failures import one_line

__all__ = ["LocalModelServer", "LocalServerSettings", "shared_server", "stop_shared_servers"]

log = logging.getLogger("mnemo.llm")

_STOP_GRACE_SECONDS = 5.0


def default_threads() -> int:
    """One thread per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class LocalServerSettings:
    """What the child is started with; equal settings share one server."""

    model_path: Path
    context_length: int = 8192
    threads: int = 0  # 0 = one per core
    startup_timeout: float = 120.0
    log_file: Path | None = None
    # Where llama.cpp may save and restore its slot (the prompt cache); None = nowhere.
    slot_dir: Path | None = None


class LocalModelServer:
    """One llama.cpp server process serving ``settings.model_path`` on 127.0.0.1.

    Use as a context manager, or call ``start()``/``stop()``. ``base_url`` is the
    OpenAI-compatible root (``http://127.0.0.1:PORT/v1``) once started.
    """

    def __init__(
        self,
        settings: LocalServerSettings,
        *,
        python: str | None = None,
        module: str = "mnemo.llm._serve",
    ) -> None:
        self.settings = settings
        self._python = python or sys.executable
        # The child's module; tests substitute a stand-in that speaks the same protocol.
        self._module = module
        self._process: subprocess.Popen[bytes] | None = None
        self._log_handle: IO[bytes] | None = None
        self.address: str | None = None
        self.load_seconds: float | None = None
        self._lock = threading.Lock()

    # -- state ---------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def base_url(self) -> str:
        if not self.address:
            raise ModelUnavailableError("the local model server is not started; call start()")
        return self.address.rstrip("/") + "/v1"

    def __repr__(self) -> str:
        return (f"LocalModelServer(model={str(self.settings.model_path)!r}, "
                f"address={self.address!r}, pid={self.pid})")

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> LocalModelServer:
        """Start the child and return once it answers ``/health``; no-op if running."""
        with self._lock:
            if self.running:
                return self
            self._start_locked()
            return self

    def _start_locked(self) -> None:
        settings = self.settings
        threads = settings.threads or default_threads()
        command = [
            self._python, "-m", self._module,
            "--model", str(settings.model_path),
            "--ctx", str(settings.context_length),
            "--threads", str(threads),
            "--verbosity", "1",  # errors and warnings only, into the log file
        ]
        if settings.slot_dir is not None:
            settings.slot_dir.mkdir(parents=True, exist_ok=True)
            command += ["--slot-dir", str(settings.slot_dir)]
        stderr: int | IO[bytes] = subprocess.DEVNULL
        if settings.log_file is not None:
            settings.log_file.parent.mkdir(parents=True, exist_ok=True)
            self._log_handle = open(settings.log_file, "ab")  # noqa: SIM115 - closed in stop()
            stderr = self._log_handle
        started = time.monotonic()
        log.info("starting local model %s (%d threads, %d-token window)",
                 settings.model_path, threads, settings.context_length)
        # A session of its own: Ctrl-C in the user's terminal goes to the whole foreground
        # process group and killed the server with the answer it stopped, so the next
        # turn found no server. It still ends with us: its stdin closes when we do.
        self._process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
            close_fds=True, env=_child_environment(), start_new_session=True,
        )
        _register_for_exit(self)
        try:
            ready = self._read_ready_line(started + settings.startup_timeout)
            if "error" in ready:
                raise ModelUnavailableError(
                    f"the local model server could not load {settings.model_path} "
                    f"({one_line(ready['error'])}); check the file is a valid GGUF and see "
                    f"{settings.log_file or 'the log'}"
                )
            self.address = str(ready["address"])
            self.load_seconds = float(ready.get("load_seconds", 0.0))
            self._wait_healthy(started + settings.startup_timeout)
        except BaseException:
            self.stop()
            raise
        log.info("local model ready at %s in %.2f s (load %.2f s)", self.address,
                 time.monotonic() - started, self.load_seconds)

    def _read_ready_line(self, deadline: float) -> dict[str, Any]:
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        buffer = b""
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            while b"\n" not in buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ProviderTimeoutError(
                        f"the local model did not start within "
                        f"{self.settings.startup_timeout:g} s; raise local.startup_timeout "
                        "or use a smaller model"
                    )
                if not selector.select(timeout=remaining):
                    continue
                chunk = os.read(stdout.fileno(), 65536)
                if not chunk:
                    code = self._process.wait()
                    raise ModelUnavailableError(
                        f"the local model server exited (code {code}) before it was ready; "
                        f"see {self.settings.log_file or 'its log'} — is "
                        'mnemo[local] installed? (pip install "mnemo[local]")'
                    )
                buffer += chunk
        try:
            ready: dict[str, Any] = json.loads(buffer.split(b"\n", 1)[0])
        except json.JSONDecodeError as exc:
            raise ModelUnavailableError(
                f"the local model server said something unexpected "
                f"({one_line(buffer[:200].decode('utf-8', 'replace'))}); see its log"
            ) from exc
        return ready

    def _wait_healthy(self, deadline: float) -> None:
        """Poll ``/health`` until it says ok (the child reports ready after loading, so
        this normally succeeds at once; it guards against a listener that is not up)."""
        url = f"{self.address}/health"
        delay = 0.02
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2.0) as reply:
                    if reply.status == 200:
                        return
            except OSError as exc:
                last_error: object = exc
            else:
                last_error = "not ready"
            if not self.running:
                raise ModelUnavailableError(
                    "the local model server died while starting; see "
                    f"{self.settings.log_file or 'its log'}"
                )
            if time.monotonic() > deadline:
                raise ProviderTimeoutError(
                    f"the local model at {self.address} is not healthy ({last_error}); "
                    "raise local.startup_timeout or check the log"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def stop(self) -> None:
        """Stop the child: close its stdin, then terminate, then kill. Idempotent."""
        process, self._process = self._process, None
        if process is not None:
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
            try:
                process.wait(timeout=_STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                process.terminate()
                try:
                    process.wait(timeout=_STOP_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            if process.stdout is not None:
                process.stdout.close()
            log.info("local model server (pid %d) stopped", process.pid)
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None
        self.address = None
        _running.discard(self)

    def count_tokens(self, text: str, *, timeout: float = 30.0) -> int:
        """Tokens of ``text`` by the model's own tokenizer (llama.cpp's ``/tokenize``,
        without the special tokens a prompt starts with)."""
        if not self.address:
            raise ModelUnavailableError("the local model server is not started; call start()")
        body = json.dumps({"content": text, "add_special": False}).encode("utf-8")
        request = urllib.request.Request(f"{self.address}/tokenize", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return len(json.loads(reply.read())["tokens"])

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _child_environment() -> dict[str, str]:
    """Our environment, with mnemo's own folder first on the child's import path (so the
    child finds the same mnemo even when it is run from a source tree)."""
    import mnemo

    env = dict(os.environ)
    root = str(Path(mnemo.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


# -- process-wide bookkeeping ------------------------------------------------------------
_running: set[LocalModelServer] = set()
_shared: dict[LocalServerSettings, LocalModelServer] = {}
_shared_lock = threading.Lock()
_atexit_registered = False


def _register_for_exit(server: LocalModelServer) -> None:
    global _atexit_registered
    _running.add(server)
    if not _atexit_registered:
        atexit.register(_stop_all)
        _atexit_registered = True


def _stop_all() -> None:
    for server in list(_running):
        with contextlib.suppress(Exception):
            server.stop()


def shared_server(settings: LocalServerSettings) -> LocalModelServer:
    """The process's server for ``settings``, started if needed (one per settings)."""
    with _shared_lock:
        server = _shared.get(settings)
        if server is None:
            server = _shared[settings] = LocalModelServer(settings)
    return server.start()


def stop_shared_servers() -> None:
    """Stop every shared server (tests and long-lived hosts that want the memory back)."""
    with _shared_lock:
        servers = list(_shared.values())
        _shared.clear()
    for server in servers:
        server.stop()
