"""``LocalChatClient``: the embedded model as a ``ChatClient``, started on first use.

Nothing happens when the client is made: the first ``complete`` (or ``start()``)
assembles the default GGUF if needed, starts the process-wide shared
``LocalModelServer`` and talks to it through the same ``OpenAIChatClient`` as any remote
endpoint — one code path for errors, retries and usage. If the server process has died
since, the next call starts a new one.

A new server first restores the saved prompt cache (``local_cache.PromptCache``), and a
reply that read many new tokens saves it again, so the next process skips re-reading the
system prompt. Time limits follow the measured pace (``LocalPace``); replies can stream
(``stream=``), with llama.cpp's prompt progress reported while the prompt is read.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mnemo.errors import ModelUnavailableError
from mnemo.home import Home
from mnemo.llm.local_cache import LocalPace, PromptCache, prompt_cache_dir
from mnemo.llm.local_model import (
    DEFAULT_MODEL,
    LOCAL_INSTALL_HINT,
    check_gguf,
    default_model_path,
    ensure_default_model,
    local_model_name,
    local_runtime_installed,
)
from mnemo.llm.local_server import LocalModelServer, LocalServerSettings, shared_server
from mnemo.llm.openai_client import OpenAIChatClient
from mnemo.llm.streaming import StreamHandlers
from mnemo.llm.types import ChatResponse
from mnemo.messages import Message
from mnemo.tokens import TokenCounter, estimate_messages_tokens_rough, estimate_tokens_rough

__all__ = ["DEFAULT_LOCAL_MAX_TOKENS", "DEFAULT_LOCAL_SAMPLING", "LocalChatClient"]

log = logging.getLogger("mnemo.llm")

# llama.cpp sampling options sent with every request. A mild repetition penalty keeps a
# small model out of the loops greedy decoding (temperature 0) falls into on long
# outputs such as summaries; it is deterministic, so output stays reproducible.
DEFAULT_LOCAL_SAMPLING: Mapping[str, Any] = {"repeat_penalty": 1.1}

# The reply length assumed for a time limit when the request sets none.
_ASSUMED_REPLY_TOKENS = 512

# The longest reply asked for when neither the call nor the config sets a limit: a small
# model that runs past this is almost always repeating itself, and on a CPU every token
# costs the user a wait (and the window a token).
DEFAULT_LOCAL_MAX_TOKENS = 1024

# Servers (by process id) whose slot was already offered the saved prompt cache: a second
# client of the same shared server must not overwrite the conversation in its slot.
_restored_pids: set[int] = set()


class LocalChatClient:
    """A ``ChatClient`` on the embedded llama.cpp server (``supports_grammar``: llama.cpp
    takes a GBNF grammar with a request, see ``GrammarChatClient``).

    ``model_path`` ``None`` means the default model (assembled into ``home``'s models
    folder). ``timeout`` bounds each request; the CPU is slow, so keep it generous.
    ``sampling`` holds llama.cpp request options (default ``DEFAULT_LOCAL_SAMPLING``).
    ``timeout`` is a floor: the limit of a request grows with its prompt and the measured
    speed (``pace``). ``prompt_cache`` saves and restores the server's prompt cache under
    ``home`` (``$MNEMO_HOME/cache/prompt``).
    """

    supports_grammar = True
    supports_streaming = True

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        home: Home | None = None,
        context_length: int = 8192,
        threads: int = 0,
        startup_timeout: float = 120.0,
        timeout: float = 120.0,
        max_tokens: int | None = None,
        temperature: float | None = None,
        sampling: Mapping[str, Any] | None = None,
        prompt_cache: bool = True,
    ) -> None:
        self.model_path = model_path
        self.home = home or Home()
        self._context_length = context_length
        self.threads = threads
        self.startup_timeout = startup_timeout
        self.timeout = timeout
        self.default_max_tokens = max_tokens if max_tokens is not None else (
            DEFAULT_LOCAL_MAX_TOKENS)
        self.default_temperature = temperature
        self.sampling = dict(DEFAULT_LOCAL_SAMPLING if sampling is None else sampling)
        self.prompt_cache = prompt_cache
        self.pace = LocalPace()
        self.cache: PromptCache | None = None
        self._server: LocalModelServer | None = None
        self._client: OpenAIChatClient | None = None
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return local_model_name(self.model_path)

    @property
    def context_length(self) -> int | None:
        return self._context_length

    def __repr__(self) -> str:
        where = self.model_path or f"default ({DEFAULT_MODEL.filename})"
        return f"LocalChatClient(model={self.model!r}, path={str(where)!r})"

    def resolved_model_path(self) -> Path:
        """The GGUF to serve, assembling and verifying the default one if needed."""
        if self.model_path is not None:
            return check_gguf(self.model_path)
        return ensure_default_model(self.home)

    @property
    def running(self) -> bool:
        """The server this client talks to is up (a ``start()`` would return at once)."""
        return self._server is not None and self._server.running

    def needs_assembly(self) -> bool:
        """True when starting will first assemble the default model file (a long step)."""
        return self.model_path is None and not default_model_path(self.home).is_file()

    @property
    def last_timings(self) -> dict[str, Any] | None:
        """llama.cpp's timings of the last reply (``prompt_n`` new prompt tokens read,
        ``cache_n`` taken from the cache, speeds), or None before any reply."""
        return self._client.last_timings if self._client is not None else None

    def start(self) -> LocalModelServer:
        """Start (or reuse) the server; returns it. Safe to call many times."""
        with self._lock:
            return self._ensure_client()[0]

    def _ensure_client(self) -> tuple[LocalModelServer, OpenAIChatClient]:
        if self._server is not None and self._client is not None and self._server.running:
            return self._server, self._client
        if not local_runtime_installed():
            raise ModelUnavailableError(
                f"the local model needs the local extra: {LOCAL_INSTALL_HINT}, or configure "
                "an OpenAI-compatible endpoint (model.base_url / model.name)"
            )
        model_path = self.resolved_model_path()
        slot_dir = prompt_cache_dir(self.home.root) if self.prompt_cache else None
        settings = LocalServerSettings(
            model_path=model_path,
            context_length=self._context_length,
            threads=self.threads,
            startup_timeout=self.startup_timeout,
            log_file=self.home.logs_dir / "local-model.log",
            slot_dir=slot_dir,
        )
        server = shared_server(settings)
        if slot_dir is not None:
            self.cache = PromptCache(slot_dir, model_path, self._context_length)
            if server.pid is not None and server.pid not in _restored_pids:
                _restored_pids.add(server.pid)
                self.cache.restore(server.address or "")
        if self._client is not None:
            self._client.close()
        self._server = server
        self._client = OpenAIChatClient(
            self.model,
            base_url=server.base_url,
            api_key=None,
            timeout=self.timeout,
            max_retries=1,  # a local server is not rate-limited; one retry covers a reset
            context_length=self._context_length,
            max_tokens=self.default_max_tokens,
            temperature=self.default_temperature,
            extra_body=self.sampling,
        )
        return server, self._client

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        grammar: str | None = None,
        stream: StreamHandlers | None = None,
    ) -> ChatResponse:
        """A chat completion; ``grammar`` (GBNF) constrains what the model may write;
        ``stream`` shows the reply as it is generated (and the prompt-reading progress)."""
        with self._lock:
            server, client = self._ensure_client()
        extra: dict[str, Any] = {"grammar": grammar} if grammar else {}
        if stream is not None:
            # Asked for even when nobody shows it: a reply stopped early (Ctrl-C, a loop
            # cut short) has no closing timings, and the progress tells what it read.
            extra["return_progress"] = True
            timeout = max(self.timeout, self.pace.between_chunks())
        else:
            prompt = estimate_messages_tokens_rough(messages) + sum(
                estimate_tokens_rough(str(tool)) for tool in tools or ())
            reply = max_tokens or self.default_max_tokens or _ASSUMED_REPLY_TOKENS
            timeout = max(self.timeout, self.pace.whole_request(prompt, reply))
        response = client.complete(messages, tools=tools, max_tokens=max_tokens,
                                   temperature=temperature, extra_body=extra or None,
                                   stream=stream, timeout=timeout)
        timings = client.last_timings
        if timings:
            # A reply stopped early has no closing timings: its count of generated
            # tokens is unknown, the prompt's part comes from the last progress report.
            written = (f"{int(timings.get('predicted_n', 0) or 0)} generated"
                       if "predicted_n" in timings else "stopped early")
            log.info("local model: %d prompt tokens read, %d from the cache, %s",
                     int(timings.get("prompt_n", 0) or 0), int(timings.get("cache_n", 0) or 0),
                     written)
        self.pace.observe(timings)
        # Not after a reply stopped early: a turn stops a background summary to go
        # first, and its request reaches the server with the save, which may write the
        # slot to disk in front of the turn — a state nobody asks for again. (By hand a
        # turn sent beside such a save went unanswered and timed out, three times; not
        # reproduced, so not shown to be the cause.)
        if self.cache is not None and server.address and (
                not timings or "predicted_n" in timings):
            self.cache.maybe_save(server.address, timings)
        return response

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the model's own tokenizer (starts the server if needed)."""
        with self._lock:
            server, _ = self._ensure_client()
        return server.count_tokens(text)

    def token_counter(self) -> TokenCounter:
        """The model's own tokenizer as a ``TokenCounter``, for the window guard (C19)."""
        return _ServerTokenCounter(self)

    def close(self) -> None:
        """Drop this client's connection; the shared server runs until exit (or
        ``stop_shared_servers()``), so other clients keep using it."""
        if self._client is not None:
            self._client.close()
            self._client = None
        self._server = None


class _ServerTokenCounter:
    """Counts through a ``LocalChatClient``'s server (``TokenCounter``)."""

    def __init__(self, client: LocalChatClient) -> None:
        self._client = client

    def count(self, text: str) -> int:
        return self._client.count_tokens(text)
