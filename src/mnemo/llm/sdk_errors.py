"""Calling a provider SDK once and translating what it raises.

The ``openai`` and ``anthropic`` SDKs share one exception layout (``APITimeoutError`` ⊂
``APIConnectionError``, ``APIStatusError`` with ``status_code``, ``body`` and
``response``), so one function maps both: ``call_once`` runs a single attempt and raises
either a final ``mnemo.errors`` exception or a ``RetryableFailure`` for ``RetryPolicy``.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, TypeVar

from mnemo.errors import ProviderError
from mnemo.llm.failures import (
    Endpoint,
    connection_error,
    error_for_status,
    is_context_length_error,
    is_retryable_status,
    one_line,
    timeout_error,
)
from mnemo.llm.retry import RetryableFailure

__all__ = ["call_once", "error_details", "is_refused", "retry_after_seconds"]

T = TypeVar("T")


def call_once(
    sdk: ModuleType,
    call: Callable[[], T],
    endpoint: Endpoint,
    *,
    timeout: float | None,
    attempt: int,
) -> T:
    """Run ``call``; map the SDK's exceptions (``sdk`` is the ``openai``/``anthropic`` module)."""
    try:
        return call()
    except sdk.APITimeoutError as exc:
        raise timeout_error(endpoint, timeout) from exc
    except sdk.APIConnectionError as exc:
        unreachable = connection_error(endpoint, _root_cause(exc), attempt)
        if is_refused(exc):
            raise unreachable from exc
        unreachable.__cause__ = exc
        raise RetryableFailure(unreachable) from exc
    except sdk.APIStatusError as exc:
        status = int(exc.status_code)
        message, code = error_details(exc.body, fallback=str(getattr(exc, "message", exc)))
        error = error_for_status(status, message, endpoint, code=code, attempts=attempt)
        error.__cause__ = exc
        if is_retryable_status(status) and not is_context_length_error(status, message, code):
            raise RetryableFailure(error, retry_after_seconds(exc.response.headers)) from exc
        raise error from exc
    except sdk.APIError as exc:  # e.g. a reply that is not the expected JSON
        raise ProviderError(
            f"the call to {endpoint} failed ({endpoint.redact(one_line(exc))}); check that "
            "model.base_url "
            "points at the right kind of API, or run with --debug"
        ) from exc


def error_details(body: object, *, fallback: str = "") -> tuple[str, str | None]:
    """The server's own message and code from an error body, in any common shape.

    Handles ``{"message", "code"}`` (OpenAI SDK, already unwrapped), ``{"error":
    {"message", "type"}}`` (Anthropic, llama.cpp), ``{"error": "text"}`` (Ollama) and
    plain text.
    """
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping):
            body = inner
        elif isinstance(inner, str) and "message" not in body:
            return inner, None
        message = body.get("message") or fallback
        code = body.get("code") or body.get("type")
        return str(message), (str(code) if code is not None else None)
    if isinstance(body, str) and body.strip():
        return body, None
    return fallback, None


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def is_refused(exc: BaseException) -> bool:
    """Nothing listens there (or the host name does not resolve): retrying will not help."""
    return any(
        isinstance(cause, ConnectionRefusedError) or type(cause).__name__ == "ConnectError"
        for cause in _causes(exc)
    )


def _root_cause(exc: BaseException) -> str:
    root = _causes(exc)[-1]
    return str(root) or type(root).__name__


def retry_after_seconds(headers: Mapping[str, Any]) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (a number or an HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return float(raw_ms) / 1000
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(raw))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
