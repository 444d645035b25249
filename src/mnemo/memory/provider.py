"""``MemoryProvider``: the interface a source of recalled memory implements (SPEC P1).

A provider answers four required questions — its name, whether it can run here, how to
start it for a session, and which tools it offers — and may hook into the turn lifecycle
through optional methods whose defaults do nothing. The ``MemoryManager`` calls every
hook in isolation, so a provider that raises never breaks a turn.

Lifecycle, in the order the agent uses it::

    initialize(session_id, home=..., config=..., settings=..., sessions=...)
    per turn:  on_turn_start(turn, message) → prefetch(query) → [model call, tools]
               → sync_turn(user, assistant) → queue_prefetch(query)
    (cyclic, as in the seed: the previous turn's sync and queued prefetch, then
    on_turn_start of the next one)
    when compressing: on_pre_compress(messages) -> extra text for the summariser
    at the end: on_session_end(messages), shutdown()
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from mnemo.messages import Message

__all__ = ["MemoryProvider"]


class MemoryProvider(ABC):
    """Base class of memory providers; subclass it and register it as a plugin."""

    #: True only for the built-in provider; every other provider counts as external.
    builtin: bool = False

    @property
    @abstractmethod
    def name(self) -> str:
        """Short unique name, used in config (``memory.provider``) and logs."""

    @abstractmethod
    def is_available(self) -> bool:
        """Whether the provider can run here (keys present, packages installed).

        Must be cheap and must not touch the network: ``mnemo memory providers`` calls it
        for every installed provider.
        """

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Start work for a session.

        Keyword arguments the agent passes: ``home`` (``Home``), ``config``
        (``MnemoConfig``), ``settings`` (this provider's ``memory.providers.<name>``
        mapping), ``sessions`` (the ``SessionStore``, or None), ``platform`` (str).
        Accept ``**kwargs`` so new arguments never break a provider.
        """

    @abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """OpenAI function schemas (``{"name", "description", "parameters"}``) it offers."""

    # -- optional hooks: the defaults do nothing ------------------------------------------

    def system_prompt_block(self) -> str:
        """Text for the system prompt (after MEMORY and USER); taken once per session."""
        return ""

    def prefetch(self, query: str) -> str:
        """Recalled text relevant to ``query`` (the user's message) for this turn."""
        return ""

    def queue_prefetch(self, query: str) -> str | None:
        """Prepare recall for ``query`` in the background; the text returned is kept and
        used only if the next ``prefetch`` is for exactly this query. None = nothing kept.
        """
        return None

    def sync_turn(self, user: str, assistant: str) -> None:
        """Record a finished turn (runs on the background worker, in turn order)."""

    def on_pre_compress(self, messages: Sequence[Message]) -> str:
        """Text the summariser should keep in mind when these messages are compacted."""
        return ""

    def on_memory_write(self, action: str, target: str, content: str) -> None:
        """The built-in memory store committed a write (add/replace/remove/batch)."""

    def on_delegation(self, task: str, result: str) -> None:
        """A sub-agent finished a delegated task."""

    def on_turn_start(self, turn: int, message: str) -> None:
        """Turn number ``turn`` (1-based) starts with the user's ``message``."""

    def on_session_end(self, messages: Sequence[Message]) -> None:
        """The session ended; ``messages`` is its final live transcript."""

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        """Run one of the provider's tools; return the result as text (usually JSON)."""
        raise NotImplementedError(f"provider {self.name!r} has no tool {name!r}")

    def shutdown(self) -> None:
        """Release resources; called once, after the background worker drained."""
