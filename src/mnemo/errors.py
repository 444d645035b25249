"""Every exception mnemo raises, in one hierarchy.

User mistakes (a bad config value, a wrong argument) are kept apart from runtime faults
(a model that does not answer, a file that cannot be written), so callers can tell "fix
your input" from "try again later". Every message says what to do next; the CLI prints
it as one line and shows a traceback only with ``--debug``.

::

    MnemoError
    ├── UsageError                    you asked for something that cannot be done
    │   └── ConfigError               config.yaml is wrong (names file and key path)
    ├── StoreError                    a memory file or the session database failed
    │   └── DatabaseDamagedError      state.db is damaged (`mnemo sessions repair`)
    └── ProviderError                 a model call failed
        ├── ProviderAuthError         the key was refused (do not retry)
        ├── ProviderConnectionError   the endpoint could not be reached
        │   └── ProviderTimeoutError  it was reached but did not answer in time
        ├── RateLimitError            429 after the retries ran out
        ├── ContextLengthExceededError the request was longer than the model's window
        ├── CallStoppedError          stopped on purpose (a turn went first); tried again
        └── ModelUnavailableError     no model is configured or installed
"""

from __future__ import annotations

__all__ = [
    "CallStoppedError",
    "ConfigError",
    "ContextLengthExceededError",
    "DatabaseDamagedError",
    "MnemoError",
    "ModelUnavailableError",
    "ProviderAuthError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "StoreError",
    "UsageError",
]


class MnemoError(Exception):
    """The root of every error mnemo raises on purpose."""


class UsageError(MnemoError):
    """The caller asked for something that cannot be done as asked."""


class ConfigError(UsageError):
    """config.yaml (or a config value passed in code) is invalid.

    ``path`` is the file, ``key`` the dotted key path that is wrong (either may be empty);
    ``line`` and ``column`` (1-based) say where YAML that does not parse went wrong.
    """

    def __init__(self, message: str, *, path: str = "", key: str = "",
                 line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.key = key
        self.line = line
        self.column = column


class StoreError(MnemoError):
    """A durable store (memory files, the session database) could not be read or written."""


class DatabaseDamagedError(StoreError):
    """The session database file is damaged or is not a database at all."""


class ProviderError(MnemoError):
    """A call to a language model failed."""


class ProviderAuthError(ProviderError):
    """The model endpoint refused the credentials; retrying will not help."""


class ProviderConnectionError(ProviderError):
    """The model endpoint could not be reached (refused, reset, DNS)."""


class ProviderTimeoutError(ProviderConnectionError):
    """The model endpoint did not answer within the configured timeout."""


class RateLimitError(ProviderError):
    """The endpoint kept answering 429 after every retry."""


class ContextLengthExceededError(ProviderError):
    """The request was longer than the model's context window."""


class CallStoppedError(ProviderError):
    """A call was stopped on purpose before it finished (a background summary ended so
    that a turn's own call goes first); it is tried again later, not a failure."""


class ModelUnavailableError(ProviderError):
    """No model endpoint is configured and no local model is installed."""
