"""``MemoryManager``: the built-in provider plus at most one external one (SPEC P2).

The manager is what the agent talks to. It keeps providers from breaking a turn (every
hook call is isolated: a provider that raises is logged and skipped), from polluting the
prompt (tool schemas are merged and clashing names refused), and from fighting each other
(a second external provider is rejected, naming both).

``sync_all`` and ``queue_prefetch_all`` run on one background worker thread, in the order
they were called, so turn N is synced before turn N+1. Text a provider prepares in
``queue_prefetch(query)`` is kept under that exact query and used only by a later
``prefetch_all`` for the same query — never a stale result from another turn.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from mnemo.memory.builtin import WRITE_ACTIONS
from mnemo.memory.fencing import clean_provider_text, clean_tool_result
from mnemo.memory.provider import MemoryProvider
from mnemo.messages import Message

__all__ = ["MemoryManager"]

log = logging.getLogger("mnemo.memory")

_STOP = object()


class MemoryManager:
    """Holds the providers of one agent and calls their hooks safely."""

    def __init__(self, *, prefetch_wait: float = 2.0) -> None:
        self._providers: list[MemoryProvider] = []
        self._tool_owner: dict[str, MemoryProvider] = {}
        self._prefetched: dict[tuple[str, str], str] = {}
        self._pending: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._worker: threading.Thread | None = None
        self._closed = False
        self._prefetch_wait = prefetch_wait

    # -- registration -------------------------------------------------------------------

    @property
    def providers(self) -> list[MemoryProvider]:
        return list(self._providers)

    @property
    def external(self) -> MemoryProvider | None:
        return next((p for p in self._providers if not p.builtin), None)

    def add_provider(self, provider: MemoryProvider) -> bool:
        """Register ``provider``; False (with a warning) if it is a second external one."""
        existing = self.external
        if not provider.builtin and existing is not None:
            log.warning(
                "Rejected memory provider '%s': external provider '%s' is already registered "
                "and only one external memory provider is allowed at a time.",
                provider.name, existing.name,
            )
            return False
        self._providers.append(provider)
        return True

    # -- isolation ------------------------------------------------------------------------

    def _call(self, provider: MemoryProvider, hook: str, *args: Any) -> Any:
        try:
            return getattr(provider, hook)(*args)
        except Exception as exc:
            log.warning("memory provider '%s' failed in %s: %s: %s (skipped; the turn "
                        "goes on)", provider.name, hook, type(exc).__name__, exc)
            return None

    def _each(self, hook: str, *args: Any) -> list[tuple[MemoryProvider, Any]]:
        return [(p, self._call(p, hook, *args)) for p in self._providers]

    # -- session lifecycle --------------------------------------------------------------------

    def initialize_all(
        self,
        session_id: str,
        *,
        settings_for: Callable[[MemoryProvider], dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> None:
        """Initialise every provider; an external one that fails to start is removed and
        logged (the built-in one's failure is a real error and propagates).

        ``settings_for(provider)`` supplies each provider's own ``settings`` keyword.
        """
        for provider in list(self._providers):
            extra = {"settings": settings_for(provider)} if settings_for else {}
            try:
                provider.initialize(session_id, **kwargs, **extra)
            except Exception as exc:
                if provider.builtin:
                    raise
                log.warning("memory provider '%s' failed to initialise (%s: %s); it is "
                            "disabled for this session", provider.name, type(exc).__name__, exc)
                self._providers.remove(provider)

    def external_prompt_blocks(self) -> list[str]:
        """System-prompt blocks of the external providers (the built-in one renders itself).

        Each block is provider text like any other (SPEC S3): fence tags and HTML comments
        removed, lines with a threat finding dropped and logged.
        """
        blocks: list[str] = []
        for provider, text in self._each("system_prompt_block"):
            if provider.builtin or not isinstance(text, str) or not text.strip():
                continue
            clean = clean_provider_text(text, f"system_prompt_block of '{provider.name}'")
            if clean.strip():
                blocks.append(clean)
        return blocks

    def prefetch_all(self, query: str) -> str:
        """Recalled text for this turn's ``query`` from every provider, joined."""
        event = self._pending.get(query)
        if event is not None:
            event.wait(self._prefetch_wait)  # a queued prefetch for this very query
        with self._lock:
            ready = {name: text for (name, q), text in self._prefetched.items() if q == query}
            self._prefetched.clear()  # anything else was for another query: stale
        texts: list[str] = []
        for provider in self._providers:
            text = ready.get(provider.name)
            if text is None:
                text = self._call(provider, "prefetch", query)
            if isinstance(text, str) and text.strip():
                clean = clean_provider_text(text, f"prefetch of '{provider.name}'").strip()
                if clean:
                    texts.append(clean)
        return "\n\n".join(texts)

    def queue_prefetch_all(self, query: str) -> None:
        """Let providers prepare recall for ``query`` on the background worker."""
        event = threading.Event()
        self._pending[query] = event

        def job() -> None:
            try:
                for provider in self._providers:
                    text = self._call(provider, "queue_prefetch", query)
                    if isinstance(text, str):
                        with self._lock:
                            self._prefetched[(provider.name, query)] = text
            finally:
                event.set()
                if self._pending.get(query) is event:
                    del self._pending[query]

        self._submit(job)

    def sync_all(self, user: str, assistant: str) -> None:
        """Record a finished turn with every provider, on the background worker, in order."""
        self._submit(lambda: self._each("sync_turn", user, assistant))

    def on_turn_start(self, turn: int, message: str) -> None:
        self._each("on_turn_start", turn, message)

    def on_pre_compress(self, messages: Sequence[Message]) -> str:
        """Extra text providers want the summariser to keep, joined."""
        texts = [clean_provider_text(t, f"on_pre_compress of '{p.name}'")
                 for p, t in self._each("on_pre_compress", list(messages))
                 if isinstance(t, str) and t.strip()]
        return "\n\n".join(t.strip() for t in texts if t.strip())

    def on_memory_write(self, action: str, target: str, content: str) -> None:
        for provider in self._providers:
            if not provider.builtin:
                self._call(provider, "on_memory_write", action, target, content)

    def on_delegation(self, task: str, result: str) -> None:
        self._each("on_delegation", task, result)

    def on_session_end(self, messages: Sequence[Message]) -> None:
        self._each("on_session_end", list(messages))

    # -- tools ------------------------------------------------------------------------------

    def tool_schemas(self, reserved: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Every provider's tool schemas; names that clash with ``reserved`` (core and
        engine tools) or with an earlier schema are refused with a warning."""
        owners: dict[str, str] = dict.fromkeys(reserved, "a core tool")
        schemas: list[dict[str, Any]] = []
        self._tool_owner = {}
        for provider in self._providers:
            for schema in self._call(provider, "get_tool_schemas") or []:
                name = schema.get("name") if isinstance(schema, dict) else None
                if not isinstance(name, str) or not name:
                    log.warning("memory provider '%s' offered a tool schema without a name; "
                                "ignored", provider.name)
                    continue
                if name in owners:
                    log.warning("tool '%s' of memory provider '%s' clashes with %s; refused",
                                name, provider.name, owners[name])
                    continue
                owners[name] = f"the tool of provider '{provider.name}'"
                self._tool_owner[name] = provider
                schemas.append(schema)
        return schemas

    def handles(self, name: str) -> bool:
        return name in self._tool_owner

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        """Run a provider tool; errors come back as a JSON result the model can read."""
        provider = self._tool_owner.get(name)
        if provider is None:
            return json.dumps({"success": False, "error": f"No memory provider offers the "
                               f"tool {name!r}."}, ensure_ascii=False)
        try:
            result = provider.handle_tool_call(name, args)
        except Exception as exc:
            log.warning("memory provider '%s' failed in tool %s: %s: %s", provider.name, name,
                        type(exc).__name__, exc)
            return json.dumps({"success": False, "error": f"The {name} tool failed "
                               f"({type(exc).__name__}: {exc}); answer without it."},
                              ensure_ascii=False)
        if provider.builtin and name == "memory":
            self._notify_memory_write(args, result)
            return result
        # An external provider's result goes to the model like recalled text (SPEC S3).
        return clean_tool_result(result, f"tool {name} of '{provider.name}'")

    def _notify_memory_write(self, args: dict[str, Any], result: str) -> None:
        action = args.get("action")
        if action not in WRITE_ACTIONS:
            return
        try:
            ok = json.loads(result).get("success") is True
        except (ValueError, AttributeError):
            ok = False
        if not ok:
            return
        target = str(args.get("target", "memory"))
        if action == "batch":
            for op in args.get("operations") or []:
                if isinstance(op, dict):
                    self.on_memory_write(str(op.get("action", "")), target,
                                         str(op.get("content") or op.get("old_text") or ""))
        else:
            content = args.get("content") if action != "remove" else args.get("old_text")
            self.on_memory_write(str(action), target, str(content or ""))

    # -- the background worker ----------------------------------------------------------------

    def _submit(self, job: Callable[[], Any]) -> None:
        if self._closed:
            log.warning("memory manager is shut down; background job dropped")
            return
        if self._worker is None:
            self._worker = threading.Thread(target=self._run, name="mnemo-memory-sync",
                                            daemon=True)
            self._worker.start()
        self._jobs.put(job)

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is _STOP:
                    return
                job()
            except Exception:  # a job's own hooks are isolated; this is a last resort
                log.exception("memory background job failed")
            finally:
                self._jobs.task_done()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued background job ran; False if ``timeout`` passed first."""
        done = threading.Event()
        if self._worker is None or self._closed:
            return True
        self._jobs.put(done.set)
        return done.wait(timeout)

    def shutdown_all(self, timeout: float = 5.0) -> bool:
        """Drain the worker (at most ``timeout`` seconds), then shut every provider down.

        Returns False if jobs were still running when the time ran out (they are
        abandoned: the worker is a daemon thread and never blocks interpreter exit).
        """
        if self._closed:
            return True
        drained = True
        if self._worker is not None:
            self._jobs.put(_STOP)
            self._worker.join(timeout)
            drained = not self._worker.is_alive()
            if not drained:
                log.warning("memory background worker did not drain within %.1f s; %d job(s) "
                            "abandoned", timeout, self._jobs.qsize())
        self._closed = True
        self._each("shutdown")
        return drained
