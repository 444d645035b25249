"""Error classification (every dialect, one-line messages) and the retry policy."""

from __future__ import annotations

import random

import pytest

from mnemo.errors import (
    ContextLengthExceededError,
    ProviderAuthError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)
from mnemo.llm.failures import (
    Endpoint,
    error_for_status,
    is_context_length_error,
    one_line,
    timeout_error,
)
from mnemo.llm.retry import RetryableFailure, RetryPolicy
from mnemo.llm.sdk_errors import error_details, retry_after_seconds

ENDPOINT = Endpoint("http://127.0.0.1:1/v1", "m", "MY_KEY")


@pytest.mark.parametrize(("status", "message", "code"), [
    (400, "This model's maximum context length is 4096 tokens", "context_length_exceeded"),
    (400, "Invalid request", "context_length_exceeded"),
    (400, "prompt is too long: 210000 tokens > 200000 maximum", "invalid_request_error"),
    (400, "the request exceeds the available context size, try increasing it", None),
    (400, "Too many tokens in the input", None),
    (413, "Request too large", None),
    (400, "Input is too long for requested model.", None),
])
def test_context_length_dialects_are_recognised(status: int, message: str,
                                                code: str | None) -> None:
    assert is_context_length_error(status, message, code)
    assert isinstance(error_for_status(status, message, ENDPOINT, code=code),
                      ContextLengthExceededError)


@pytest.mark.parametrize(("status", "message"), [
    (400, "temperature must be between 0 and 2"),
    (401, "maximum context length is fine"),  # auth wins: wrong status for a window error
    (429, "too many requests"),
])
def test_other_errors_are_not_context_errors(status: int, message: str) -> None:
    assert not is_context_length_error(status, message)


@pytest.mark.parametrize(("status", "kind"), [
    (401, ProviderAuthError), (403, ProviderAuthError), (429, RateLimitError),
    (500, ProviderError), (404, ProviderError), (422, ProviderError),
])
def test_status_maps_to_the_right_class_with_one_actionable_line(status: int,
                                                                 kind: type) -> None:
    error = error_for_status(status, "something\nwent   wrong", ENDPOINT)
    assert type(error) is kind
    text = str(error)
    assert "\n" not in text and "something went wrong" in text
    assert ";" in text  # a what-happened part and a what-to-do part


def test_auth_message_names_the_key_variable() -> None:
    assert "$MY_KEY" in str(error_for_status(401, "bad key", ENDPOINT))


def test_timeout_error_is_a_connection_error_with_the_limit() -> None:
    error = timeout_error(ENDPOINT, 2.5)
    assert isinstance(error, ProviderTimeoutError) and "2.5 s" in str(error)


def test_one_line_collapses_and_truncates() -> None:
    assert one_line("a\n\n b\tc") == "a b c"
    assert len(one_line("x" * 1000, limit=50)) == 50


@pytest.mark.parametrize(("body", "expected"), [
    ({"message": "m1", "code": "c1"}, ("m1", "c1")),  # OpenAI SDK, unwrapped
    ({"type": "error", "error": {"type": "invalid_request_error", "message": "m2"}},
     ("m2", "invalid_request_error")),  # Anthropic
    ({"error": "model not found"}, ("model not found", None)),  # Ollama
    ("plain text", ("plain text", None)),
    (None, ("fallback", None)),
])
def test_error_details_reads_every_body_shape(body: object,
                                              expected: tuple[str, str | None]) -> None:
    assert error_details(body, fallback="fallback") == expected


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "1500"}) == 1.5
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_doubles_is_capped_and_jittered() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=0.5, rng=random.Random(1))
    for n, full in enumerate([1.0, 2.0, 4.0, 5.0, 5.0]):
        wait = policy.delay(n)
        assert full * 0.5 <= wait <= full
    assert RetryPolicy(max_delay=5.0).delay(0, retry_after=60) == 5.0


def test_run_retries_then_raises_the_final_error() -> None:
    waits: list[float] = []
    policy = RetryPolicy(max_retries=2, sleep=waits.append)
    calls: list[int] = []

    def attempt(number: int) -> str:
        calls.append(number)
        raise RetryableFailure(RateLimitError(f"429 on attempt {number}"))

    with pytest.raises(RateLimitError, match="attempt 3"):
        policy.run(attempt)
    assert calls == [1, 2, 3] and len(waits) == 2


def test_run_does_not_retry_final_errors() -> None:
    policy = RetryPolicy(max_retries=5, sleep=lambda s: None)
    calls: list[int] = []

    def attempt(number: int) -> str:
        calls.append(number)
        raise ProviderAuthError("no")

    with pytest.raises(ProviderAuthError):
        policy.run(attempt)
    assert calls == [1]
