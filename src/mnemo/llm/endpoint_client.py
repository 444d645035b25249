"""What the SDK-backed clients share: settings, the bound SDK, and the ``ChatClient`` basics.

``OpenAIChatClient`` and ``AnthropicChatClient`` differ in their wire formats and error
types, not in how they hold a model, a window, defaults, a retry policy and an SDK
object: that part lives here once.
"""

from __future__ import annotations

from typing import Any

from mnemo.llm.failures import Endpoint
from mnemo.llm.retry import RetryPolicy

__all__ = ["EndpointClient"]


class EndpointClient:
    """The common state of a client for one model behind one HTTP endpoint."""

    def __init__(
        self,
        model: str,
        *,
        timeout: float,
        max_retries: int,
        context_length: int | None,
        max_tokens: int | None,
        temperature: float | None,
        retry: RetryPolicy | None,
    ) -> None:
        self._model = model
        self._context_length = context_length
        self.timeout = timeout
        self.default_max_tokens = max_tokens
        self.default_temperature = temperature
        self.retry = retry if retry is not None else RetryPolicy(max_retries=max_retries)
        self._sdk: Any = None
        self.base_url = ""
        self._endpoint = Endpoint("", model)

    def _bind(self, sdk: Any, *, key_source: str, api_key: str | None) -> None:
        """Use ``sdk`` (an SDK client made with retries off) for every call."""
        self._sdk = sdk
        self.base_url = str(sdk.base_url).rstrip("/")
        self._endpoint = Endpoint(self.base_url, self._model, key_source, api_key or "")

    @property
    def model(self) -> str:
        return self._model

    @property
    def context_length(self) -> int | None:
        return self._context_length

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self._model!r}, base_url={self.base_url!r})"

    def close(self) -> None:
        self._sdk.close()
