"""mnemo: memory that lasts across sessions and a context window that never overflows.

This module only re-exports the public API; each name lives in the package that owns it.
"""

import logging

from mnemo.config import MnemoConfig, load_config
from mnemo.errors import (
    ConfigError,
    ContextLengthExceededError,
    MnemoError,
    ModelUnavailableError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    StoreError,
    UsageError,
)
from mnemo.home import Home
from mnemo.memory import ENTRY_DELIMITER, MEMORY_SCHEMA, MemoryStore, memory_tool
from mnemo.security import Finding, scan

# A library logs but never decides where logs go: applications (and the CLI) do.
logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = [
    "ENTRY_DELIMITER",
    "MEMORY_SCHEMA",
    "ConfigError",
    "ContextLengthExceededError",
    "Finding",
    "Home",
    "MemoryStore",
    "MnemoConfig",
    "MnemoError",
    "ModelUnavailableError",
    "ProviderAuthError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "StoreError",
    "UsageError",
    "load_config",
    "memory_tool",
    "scan",
]
