"""Turning a failed model call into the right ``mnemo.errors`` class with a useful line.

Providers report the same few failures in many dialects: an HTTP status, an error
``code``/``type`` in the JSON body, or only a sentence ("prompt is too long"). The
functions here are pure — they see a status, a message and a code, never an SDK object —
so the OpenAI and Anthropic clients share them and tests can check every dialect without
a server. Each message is one line that says what failed and what to do next.
"""

from __future__ import annotations

import re

from mnemo.config.secrets import mask_url
from mnemo.errors import (
    ContextLengthExceededError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)

__all__ = [
    "CONTEXT_LENGTH_MARKERS",
    "Endpoint",
    "connection_error",
    "error_for_status",
    "is_context_length_error",
    "is_retryable_status",
    "one_line",
    "timeout_error",
]

# Lower-case fragments that mean "the prompt does not fit the window", as OpenAI, vLLM,
# OpenRouter, Anthropic, Ollama and llama.cpp's server phrase it (codes and sentences).
CONTEXT_LENGTH_MARKERS = (
    "context_length_exceeded",
    "exceed_context_size",
    "maximum context length",
    "context length",
    "context window",
    "too many tokens",
    "prompt is too long",
    "input is too long",
    "exceeds the available context size",
    "reduce the length of the messages",
)

_MAX_DETAIL = 240


class Endpoint:
    """Who was called, for error messages: the URL, the model and where the key came from.

    ``secret`` is the key itself, kept only to be blanked out of server text: a server
    that echoes the request's key in its error must not get it printed or logged.
    """

    __slots__ = ("key_source", "model", "secret", "url")

    def __init__(self, url: str, model: str, key_source: str = "", secret: str = "") -> None:
        self.url = mask_url(url)  # a key in the URL's userinfo or query is never shown
        self.model = model
        self.key_source = key_source
        self.secret = secret

    def __str__(self) -> str:
        return f"{self.url} (model {self.model!r})" if self.model else self.url

    def __repr__(self) -> str:
        return f"Endpoint(url={self.url!r}, model={self.model!r})"

    def redact(self, text: str) -> str:
        if len(self.secret) >= 6:
            text = text.replace(self.secret, "***")
        return text


def one_line(text: object, limit: int = _MAX_DETAIL) -> str:
    """``text`` on one line, whitespace collapsed, cut to ``limit`` characters."""
    flat = re.sub(r"\s+", " ", str(text)).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def is_context_length_error(status: int | None, message: str, code: str | None = None) -> bool:
    """True when a 400/413/422 reply says the request is longer than the model's window."""
    if status is not None and status not in (400, 413, 422, 500):
        return False
    haystack = f"{code or ''} {message}".lower()
    if status == 413:
        return True
    return any(marker in haystack for marker in CONTEXT_LENGTH_MARKERS)


def is_retryable_status(status: int) -> bool:
    """Worth another try: rate limits, timeouts at a proxy, and server-side faults."""
    return status in (408, 409, 429) or status >= 500


def error_for_status(
    status: int,
    message: str,
    endpoint: Endpoint,
    *,
    code: str | None = None,
    attempts: int = 1,
) -> ProviderError:
    """The mnemo error for an HTTP error reply (after retries, if any were made)."""
    detail = endpoint.redact(one_line(message)) or "no message"
    if is_context_length_error(status, message, code):
        return ContextLengthExceededError(
            f"the request is longer than the context window of {endpoint} ({detail}); "
            "compress the conversation (/compact) or set model.context_length to the "
            "model's real window"
        )
    if status in (401, 403):
        where = f"${endpoint.key_source}" if endpoint.key_source else "the API key variable"
        return ProviderAuthError(
            f"{endpoint.url} refused the credentials (HTTP {status}: {detail}); check the "
            f"key in {where}, or name the variable holding it in model.api_key_env"
        )
    if status == 429:
        return RateLimitError(
            f"{endpoint.url} kept answering HTTP 429 (rate limited) after {attempts} "
            f"attempt(s) ({detail}); wait and try again, or raise model.max_retries"
        )
    if status == 404:
        return ProviderError(
            f"{endpoint} answered HTTP 404 ({detail}); check model.name and that "
            "model.base_url ends with the API root (usually …/v1)"
        )
    if status >= 500:
        return ProviderError(
            f"{endpoint} failed with HTTP {status} after {attempts} attempt(s) ({detail}); "
            "the server is in trouble: try again later or use another endpoint"
        )
    return ProviderError(
        f"{endpoint} rejected the request (HTTP {status}: {detail}); check model.name and "
        "the request options (max_tokens, temperature, tools)"
    )


def timeout_error(endpoint: Endpoint, timeout: float | None) -> ProviderTimeoutError:
    limit = f"within {timeout:g} s" if timeout else "in time"
    return ProviderTimeoutError(
        f"{endpoint} did not answer {limit}; raise model.timeout (auxiliary.timeout for "
        "the summariser) or check that the server is not overloaded"
    )


def connection_error(endpoint: Endpoint, detail: str, attempts: int = 1) -> ProviderConnectionError:
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return ProviderConnectionError(
        f"cannot reach {endpoint.url}{tries} "
        f"({endpoint.redact(one_line(detail)) or 'connection failed'}); "
        "check model.base_url (or $MNEMO_BASE_URL) and that the server is running"
    )
