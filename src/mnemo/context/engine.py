"""The interface every context engine implements (C1), and what a compression reports.

The agent loop talks to one ``ContextEngine``: it feeds it the usage numbers of every
model response, asks it whether the conversation must be compressed, and hands it the
message list to compress. Four methods are abstract; the rest have defaults that suit an
engine without tools or per-session state. Engines are chosen by name (``registry.py``)
and built with ``from_config``, which an engine overrides when it has settings of its own.

``CompressionReport`` is what the last ``compress`` call did, in numbers the agent can act
on: which input messages left the live context (to mark them compacted in the session
archive, D3) and why nothing happened when nothing did.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

from mnemo.context.metered import MessageCounter
from mnemo.messages import Message
from mnemo.tokens import estimate_messages_tokens_rough

if TYPE_CHECKING:
    from mnemo.config import MnemoConfig
    from mnemo.context.prepare import Preparer, Runner
    from mnemo.context.prepare_worker import TurnGate
    from mnemo.home import Home

__all__ = ["CompressionReport", "ContextEngine", "PreCompressHook", "Summarizer", "usage_tokens"]

# Prompt text in, summary text out. It may raise: mnemo.errors.ProviderAuthError and
# ProviderConnectionError leave the conversation unchanged; anything else (a timeout,
# ProviderTimeoutError, included) falls back to the local summariser (C13).
Summarizer = Callable[[str], str]

# Called with the turns about to be summarised; returns extra text for the summariser.
PreCompressHook = Callable[[list[Message]], str]


@dataclass(frozen=True)
class CompressionReport:
    """What one ``compress`` call did. Indices refer to the list that was passed in."""

    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    # Input messages no longer in the output at all: the summarised middle (including an
    # earlier summary message) and tool results dropped because their call was gone.
    removed: list[int] = field(default_factory=list)
    # Input tool results still in the output, but as the "cleared" placeholder.
    pruned: list[int] = field(default_factory=list)
    # The summary that replaced the removed turns (without SUMMARY_PREFIX), if any.
    summary: str | None = None
    # True when the summariser failed and the local summariser wrote the summary.
    fallback: bool = False
    # Why the conversation was left (partly) as it was: an auth/network error, nothing to
    # compress, a summary that would not save space. None when a summary was inserted.
    skipped_reason: str | None = None
    focus_topic: str | None = None
    summarizer: str = "local"  # "local" or "model"
    summary_calls: int = 0  # calls made to the model summariser (more than 1 = chunked)
    stubs_added: int = 0  # tool results invented for calls whose result was compacted
    # Summarised messages whose summary was prepared in the background (C17) and swapped in.
    prepared_messages: int = 0

    @property
    def changed(self) -> bool:
        """True when the output differs from the input."""
        return bool(self.removed or self.pruned or self.stubs_added
                    or self.summary is not None)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def usage_tokens(usage: Any) -> tuple[int, int]:
    """``(prompt tokens, completion tokens)`` of an API usage record, dict or object.

    OpenAI reports ``prompt_tokens``/``completion_tokens``; Anthropic reports
    ``input_tokens``/``output_tokens`` and counts cached prompt tokens separately, so those
    are added back to get the size of the prompt.
    """
    if usage is None:
        return 0, 0

    def get(name: str) -> int:
        value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
        return int(value) if isinstance(value, int | float) else 0

    prompt = get("prompt_tokens")
    if not prompt:
        prompt = (get("input_tokens") + get("cache_read_input_tokens")
                  + get("cache_creation_input_tokens"))
    completion = get("completion_tokens") or get("output_tokens")
    return prompt, completion


class ContextEngine(ABC):
    """Decides when the conversation must shrink, and shrinks it.

    Subclasses implement ``name``, ``update_from_response``, ``should_compress`` and
    ``compress``, and keep the token attributes below current.
    """

    last_prompt_tokens: int = 0
    last_completion_tokens: int = 0
    threshold_tokens: int = 0
    context_length: int = 0
    compression_count: int = 0
    # Extra context for the summariser (memory providers' on_pre_compress text).
    pre_compress_hook: PreCompressHook | None = None
    last_report: CompressionReport | None = None

    @property
    @abstractmethod
    def name(self) -> str:
        """The name ``context.engine`` selects this engine by."""

    @abstractmethod
    def update_from_response(self, usage: Any) -> None:
        """Record the real token counts of a model response (an API usage record)."""

    @abstractmethod
    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """True when the conversation should be compressed before the next call."""

    @abstractmethod
    def compress(
        self,
        messages: Sequence[Message],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
    ) -> list[Message]:
        """A new, shorter message list; ``messages`` itself is never modified."""

    @classmethod
    def from_config(
        cls,
        config: MnemoConfig,
        *,
        home: Home,
        summarizer: Summarizer | None = None,
        context_length: int,
        model: str = "",
    ) -> Self:
        """Build the engine from the config; the default needs no settings at all."""
        engine = cls()
        engine.update_model(model, context_length)
        return engine

    # Optional hooks: the defaults suit an engine without state or tools.

    def on_session_start(self, session_id: str) -> None:
        """A session starts (or is resumed): load any per-session state."""

    def on_session_end(self, session_id: str, messages: Sequence[Message]) -> None:
        """A session ends: release what ``on_session_start`` took."""

    def on_session_reset(self) -> None:
        """``/new`` or ``/reset``: forget everything about the current conversation."""
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.compression_count = 0
        self.last_report = None

    def revise(self, messages: Sequence[Message]) -> list[Message] | None:
        """The user's newest message is in ``messages``: the list with what a summary in
        it says revised by the corrections made since ("moved to Wednesday, not
        Tuesday"), or None when nothing changes — as for an engine without summaries."""
        return None

    def should_compress_preflight(self, messages: Sequence[Message]) -> bool:
        """Before a call, by the rough estimate (C4): would this list reach the threshold?"""
        return estimate_messages_tokens_rough(messages) >= self.threshold_tokens > 0

    def enable_background(self, summarizer: Summarizer, *, prepare_at: float = 0.5,
                          max_wait_s: float = 0.0, gate: TurnGate | None = None,
                          runner: Callable[[Preparer], Runner] | None = None,
                          complete: bool = False) -> bool:
        """Prepare summaries in the background (C17); ``False``: this engine cannot."""
        return False

    def prepare(self, messages: Sequence[Message]) -> None:
        """The conversation grew; an engine that prepares summaries looks at it now."""

    def count_with(self, counter: MessageCounter | None) -> None:
        """Tokens of one message as the caller's window guard counts them (C19), for an
        engine that sizes what it keeps by them; others ignore it."""

    def reserve(self, tokens: int) -> None:
        """Tokens every request carries besides its messages (the tool schemas, as the
        caller's window guard counts them), for an engine that sizes what it keeps to the
        threshold; others ignore it."""

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Tools this engine offers the model (OpenAI function schemas)."""
        return []

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        """Run one of ``get_tool_schemas``'s tools; the result is the tool message text."""
        return json.dumps({"success": False,
                           "error": f"the {self.name} context engine has no tool {name!r}"},
                          ensure_ascii=False)

    def update_model(self, model: str, context_length: int) -> None:
        """The model (and so the window) changed."""
        self.context_length = context_length

    def get_status(self) -> dict[str, Any]:
        """Numbers for display and logs."""
        return {
            "engine": self.name,
            "context_length": self.context_length,
            "threshold_tokens": self.threshold_tokens,
            "last_prompt_tokens": self.last_prompt_tokens,
            "last_completion_tokens": self.last_completion_tokens,
            "compression_count": self.compression_count,
        }
