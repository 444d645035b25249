"""mnemo: memory that lasts across sessions and a context window that never overflows.

This module only re-exports the public API; each name lives in the package that owns it.
"""

import logging

from mnemo.agent import Agent, TurnResult, build_agent
from mnemo.config import MnemoConfig, load_config
from mnemo.context import (
    SUMMARY_PREFIX,
    CompressionReport,
    ContextCompressor,
    ContextEngine,
    create_engine,
    estimate_messages_tokens_rough,
    estimate_tokens_rough,
)
from mnemo.errors import (
    CallStoppedError,
    ConfigError,
    ContextLengthExceededError,
    DatabaseDamagedError,
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
from mnemo.llm import ChatClient, ChatResponse, make_summarizer, resolve_chat_client
from mnemo.memory import (
    ENTRY_DELIMITER,
    MEMORY_SCHEMA,
    MemoryManager,
    MemoryProvider,
    MemoryStore,
    build_memory_context_block,
    memory_tool,
    sanitize_context,
)
from mnemo.messages import Message
from mnemo.prompt import (
    SKILL_VIEW_SCHEMA,
    SystemPrompt,
    build_context_files_prompt,
    build_system_prompt,
    skill_view,
)
from mnemo.security import Finding, scan
from mnemo.sessions import SESSION_SEARCH_SCHEMA, SessionStore, session_search

# A library logs but never decides where logs go: applications (and the CLI) do.
logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = [
    "ENTRY_DELIMITER",
    "MEMORY_SCHEMA",
    "SESSION_SEARCH_SCHEMA",
    "SKILL_VIEW_SCHEMA",
    "SUMMARY_PREFIX",
    "Agent",
    "CallStoppedError",
    "ChatClient",
    "ChatResponse",
    "CompressionReport",
    "ConfigError",
    "ContextCompressor",
    "ContextEngine",
    "ContextLengthExceededError",
    "DatabaseDamagedError",
    "Finding",
    "Home",
    "MemoryManager",
    "MemoryProvider",
    "MemoryStore",
    "Message",
    "MnemoConfig",
    "MnemoError",
    "ModelUnavailableError",
    "ProviderAuthError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "SessionStore",
    "StoreError",
    "SystemPrompt",
    "TurnResult",
    "UsageError",
    "build_agent",
    "build_context_files_prompt",
    "build_memory_context_block",
    "build_system_prompt",
    "create_engine",
    "estimate_messages_tokens_rough",
    "estimate_tokens_rough",
    "load_config",
    "make_summarizer",
    "memory_tool",
    "resolve_chat_client",
    "sanitize_context",
    "scan",
    "session_search",
    "skill_view",
]
