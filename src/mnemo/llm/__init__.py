"""Talking to language models: one ``ChatClient`` protocol, several ways to reach a model.

* ``OpenAIChatClient`` — any OpenAI-compatible endpoint (OpenAI, OpenRouter, vLLM,
  Ollama, llama.cpp) through the official SDK, with bounded retries and errors mapped to
  ``mnemo.errors``;
* ``AnthropicChatClient`` — Claude through the ``mnemo[anthropic]`` extra, with a prompt
  cache breakpoint on the frozen system prompt;
* ``LocalChatClient`` / ``LocalModelServer`` — the embedded model (``mnemo[local]``):
  llama.cpp serving a GGUF on 127.0.0.1 in a child process;
* ``resolve_chat_client`` / ``resolve_model_choice`` — which of these the config asks
  for; ``make_summarizer`` — the compressor's LLM summariser;
* ``mnemo.llm.testing.ScriptedChatClient`` — a scripted test double.

SDKs are imported when a client is made, so importing this package is cheap.
"""

from mnemo.llm.anthropic_client import AnthropicChatClient
from mnemo.llm.local_client import LocalChatClient
from mnemo.llm.local_model import DEFAULT_MODEL, ModelFile, ensure_default_model
from mnemo.llm.local_server import (
    LocalModelServer,
    LocalServerSettings,
    shared_server,
    stop_shared_servers,
)
from mnemo.llm.openai_client import OpenAIChatClient
from mnemo.llm.resolve import (
    ModelChoice,
    client_for_choice,
    resolve_chat_client,
    resolve_model_choice,
)
from mnemo.llm.retry import RetryPolicy
from mnemo.llm.summarizer import Summarizer, make_summarizer
from mnemo.llm.types import ChatClient, ChatResponse, GrammarChatClient, Usage, wrap_tools

__all__ = [
    "DEFAULT_MODEL",
    "AnthropicChatClient",
    "ChatClient",
    "ChatResponse",
    "GrammarChatClient",
    "LocalChatClient",
    "LocalModelServer",
    "LocalServerSettings",
    "ModelChoice",
    "ModelFile",
    "OpenAIChatClient",
    "RetryPolicy",
    "Summarizer",
    "Usage",
    "client_for_choice",
    "ensure_default_model",
    "make_summarizer",
    "resolve_chat_client",
    "resolve_model_choice",
    "shared_server",
    "stop_shared_servers",
    "wrap_tools",
]
