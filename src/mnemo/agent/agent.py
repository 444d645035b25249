"""``Agent``: one conversation with a model, with memory that lasts and a context that fits.

A turn follows the seed's order (SPEC A1):

1. providers prefetch recall for the user's message; it is fenced (P3);
2. the system prompt is built once per session (and once more after a compaction, C14);
3. if the context is at its threshold, it is compacted (C3) — after a memory flush turn;
4. the model is called; its usage feeds the context engine;
5. tool calls run (memory, session_search, skill_view, provider and engine tools) and the
   loop goes back to 3, up to ``agent.max_tool_iterations`` calls;
6. providers sync the turn and prefetch for the next one, on their background worker;
   ``on_turn_start`` opens the next turn (called as the next user message arrives, so the
   provider sees the turn number and message it is about).

Every message is persisted to the session store as it happens. Recall and memory nudges
are appended to the user's message in the request only, never stored, so the stored
conversation is what the user and the model actually said. A context-length error from
the API compacts the context and retries the call once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from mnemo.agent.nudges import FLUSH_PROMPT, NUDGE_TEXT, MemoryNudger
from mnemo.agent.replies import ModelCaller
from mnemo.agent.tools import (
    ToolHandler,
    ToolRegistry,
    ToolRun,
    session_tool_schemas,
    tool_result_message,
)
from mnemo.config import MnemoConfig
from mnemo.context import CompressionReport, ContextEngine, is_summary_message
from mnemo.errors import ContextLengthExceededError, UsageError
from mnemo.home import Home
from mnemo.llm import ChatClient, ChatResponse
from mnemo.llm.text_tool_calls import accept_text_tool_calls
from mnemo.memory import MemoryManager, MemoryStore, build_memory_context_block
from mnemo.memory.builtin import WRITE_ACTIONS
from mnemo.memory.plugins import create_memory_manager
from mnemo.messages import Message, content_text
from mnemo.prompt import SKILL_VIEW_SCHEMA, SystemPrompt, build_system_prompt, skill_view
from mnemo.prompt.small_window import compact_tool_schemas, is_small_window
from mnemo.sessions import SessionStore
from mnemo.sessions.store import new_session_id
from mnemo.sessions.tool import SESSION_SEARCH_SCHEMA, session_search

__all__ = ["Agent", "Compaction", "TurnResult"]

log = logging.getLogger("mnemo.agent")

_FLUSH_MAX_CALLS = 3


@dataclass(frozen=True)
class Compaction:
    """A compaction that happened: why, and what it saved."""

    reason: str  # "auto", "manual", "overflow"
    report: CompressionReport

    @property
    def saved_tokens(self) -> int:
        return self.report.tokens_before - self.report.tokens_after

    def describe(self) -> str:
        r = self.report
        if not r.changed:
            return f"nothing compacted ({r.skipped_reason or 'no change'})"
        how = "local summary" if r.summarizer == "local" else "model summary"
        if r.fallback:
            how = "local summary (the model summariser failed)"
        return (f"compacted {r.messages_before} → {r.messages_after} messages, "
                f"~{r.tokens_before:,} → ~{r.tokens_after:,} tokens ({how})")


@dataclass
class TurnResult:
    """What one turn produced."""

    text: str
    tool_runs: list[ToolRun] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_calls: int = 0
    memory_written: bool = False
    stopped_early: bool = False  # the tool-call limit was reached


class Agent:
    """A conversation with a model, persisted, with memory and context management.

    Build one with ``mnemo.agent.build_agent`` (everything from config) or pass the
    parts. The session starts on the first turn (or ``start()``) and ends with
    ``close()``; use the agent as a context manager to close it for sure.
    """

    def __init__(
        self,
        *,
        client: ChatClient,
        engine: ContextEngine,
        config: MnemoConfig,
        home: Home,
        memory: MemoryStore,
        sessions: SessionStore,
        cwd: Path | None = None,
        platform: str | None = None,
        clock: Callable[[], datetime] = datetime.now,
        resume_session_id: str | None = None,
        owns_sessions: bool = False,
    ) -> None:
        self.client = client
        self.engine = engine
        self.config = config
        self.home = home
        self.memory = memory
        self.sessions = sessions
        self.cwd = cwd or Path.cwd()
        self.platform = platform or config.platform
        self.clock = clock
        self.session_id: str | None = None
        self.messages: list[Message] = []  # the live conversation, without the system prompt
        self.system_prompt: SystemPrompt | None = None
        self.manager: MemoryManager | None = None
        self.tools = ToolRegistry()
        self.turn = 0
        self.nudger = MemoryNudger(config.memory.nudge_interval, config.memory.flush_min_turns)
        self._resume = resume_session_id
        self._owns_sessions = owns_sessions  # close the store with the agent
        # Progress for a face (the CLI): called with ("model_call" | "tool" | "compaction",
        # details). Nothing below the CLI prints; this is how long work becomes visible.
        self.on_event: Callable[[str, dict[str, Any]], None] | None = None
        # Model calls (streamed to a face that sets ``caller.on_text``; tool calls the
        # model wrote as text accepted when they validate).
        self.caller = ModelCaller(client)
        self._compacted = False
        self._fresh_compaction = False  # no response since the last compaction yet

    # -- session lifecycle ----------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self.session_id is not None

    def start(self) -> SystemPrompt:
        """Start (or resume) the session: providers, tools, the frozen system prompt."""
        if self.system_prompt is not None:
            return self.system_prompt
        session_id, resumed = self._resume_or_new_id()
        # Providers first: a provider that cannot start must not leave an empty session row.
        self.manager = create_memory_manager(
            self.config, store=self.memory, session_id=session_id, home=self.home,
            sessions=self.sessions, platform=self.platform)
        if not resumed:
            try:
                self.sessions.create_session(session_id=session_id, source=self.platform,
                                             model=self.client.model)
            except BaseException:
                self.manager.shutdown_all()
                raise
        self.session_id = session_id
        self.engine.pre_compress_hook = self.manager.on_pre_compress
        self.engine.on_session_start(self.session_id)
        self._register_tools()
        # A resumed session gets a new snapshot too: memory may have changed meanwhile.
        self.system_prompt = self._build_prompt(compacted=self._compacted)
        self.sessions.update_system_prompt(self.session_id, self.system_prompt.text)
        for finding in self.system_prompt.findings:
            if finding.blocked:
                log.warning("BLOCKED %s line %d (%s) at session start", finding.file,
                            finding.line, finding.pattern_id)
        return self.system_prompt

    def _resume_or_new_id(self) -> tuple[str, bool]:
        """The id of the session to run, and whether it is a stored one being resumed."""
        if not self._resume:
            return new_session_id(), False
        info = self.sessions.get_session(self._resume)
        if info is None:
            raise UsageError(f"no session {self._resume!r} to resume; see "
                             "`mnemo sessions list`")
        self.messages = [m.to_message() for m in self.sessions.load_messages(info.id)]
        self._compacted = any(is_summary_message(m) for m in self.messages)
        self.turn = sum(1 for m in self.messages
                        if m.get("role") == "user" and not is_summary_message(m))
        return info.id, True

    def close(self) -> None:
        """End the session (see ``_end_session``) and release the engine's resources."""
        try:
            self._end_session()
        finally:
            close_engine = getattr(self.engine, "close", None)  # engines holding a database
            if callable(close_engine):
                close_engine()
            if self._owns_sessions:
                self.sessions.close()

    def _end_session(self) -> None:
        """A last memory flush if due, provider hooks, the archive row."""
        if self.session_id is None:
            return
        try:
            if self.messages:
                self._flush_memories("the session is ending")
            if self.manager is not None:
                self.manager.flush()  # the last turn's sync lands before the session ends
                self.manager.on_session_end(list(self.messages))
                self.manager.shutdown_all()
            self.engine.on_session_end(self.session_id, list(self.messages))
            self.sessions.end_session(self.session_id)
        finally:
            self.session_id = None
            self.system_prompt = None
            self.manager = None

    def new_session(self, *, flush: bool = True) -> None:
        """End this session (``/new``; ``flush=False`` for ``/reset``) and start afresh."""
        if not flush:
            self.nudger.turns_since_write = 0
        self._end_session()
        self.messages = []
        self.turn = 0
        self._resume = None
        self._compacted = False
        self.nudger.turns_since_write = 0
        self.engine.on_session_reset()
        self.tools = ToolRegistry()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tools ----------------------------------------------------------------------------

    def _register_tools(self) -> None:
        assert self.manager is not None
        self.tools = ToolRegistry()
        handlers: dict[str, ToolHandler] = {
            SESSION_SEARCH_SCHEMA["name"]: self._session_search,
            SKILL_VIEW_SCHEMA["name"]: lambda args: skill_view(
                str(args.get("name", "")), file_path=args.get("file_path"), home=self.home,
                config=self.config),
        }
        for schema, owner in session_tool_schemas(self.manager, self.engine):
            name = schema["name"]
            handler: ToolHandler
            if owner == "memory":
                handler = partial(self.manager.handle_tool_call, name)
            elif owner == "engine":
                handler = partial(self.engine.handle_tool_call, name)
            else:
                handler = handlers[name]
            self.tools.add(schema, handler)

    def _session_search(self, args: dict[str, Any]) -> str:
        return session_search(
            args.get("query"), mode=str(args.get("mode") or "search"),
            session_id=args.get("session_id"), message_id=args.get("message_id"),
            limit=args.get("limit"), offset=args.get("offset"),
            store=self.sessions, current_session_id=self.session_id)

    # -- the system prompt ----------------------------------------------------------------

    def _build_prompt(self, *, compacted: bool) -> SystemPrompt:
        assert self.manager is not None
        return build_system_prompt(
            config=self.config, memory=self.memory, cwd=self.cwd, platform=self.platform,
            model=self.client.model, tool_names=self.tools.names,
            provider_blocks=self.manager.external_prompt_blocks(), home=self.home,
            now=self.clock(), compacted=compacted,
            small_window=is_small_window(self.engine.context_length))

    def _offered_tools(self, only: set[str] | None = None) -> list[dict[str, Any]]:
        """The tool schemas sent with a request: short ones for a small window (and no
        skill_view when no skill is installed), where every token of the prefix counts."""
        schemas = self.tools.schemas(only)
        if not is_small_window(self.engine.context_length):
            return schemas
        if self.system_prompt is not None and not self.system_prompt.skills_count:
            schemas = [s for s in schemas if s.get("name") != SKILL_VIEW_SCHEMA["name"]]
        return compact_tool_schemas(schemas)

    def _system_message(self) -> Message:
        assert self.system_prompt is not None
        return {"role": "system", "content": self.system_prompt.text}

    # -- a turn ---------------------------------------------------------------------------

    def run_turn(self, text: str) -> TurnResult:
        """Send the user's ``text``; run the model and its tools until it answers."""
        self.start()
        assert self.manager is not None and self.session_id is not None
        self.turn += 1
        self.memory.failed_calls_this_turn = 0
        self.manager.on_turn_start(self.turn, text)
        if self.turn == 1 and not self.messages:
            self.sessions.set_title(self.session_id, _title_of(text))
        recall = build_memory_context_block(self.manager.prefetch_all(text))
        nudge = NUDGE_TEXT if self.nudger.start_turn() and "memory" in self.tools else ""
        extra = "\n\n".join(part for part in (recall, nudge) if part)
        self._append({"role": "user", "content": text})
        result = TurnResult(text="")
        try:
            self._loop(result, extra)
        except BaseException as exc:  # Ctrl-C or a failed call: the turn still ends well-formed
            self._close_unanswered(exc)
            raise
        if result.memory_written:
            self.nudger.wrote()
        self.manager.sync_all(text, result.text)
        self.manager.queue_prefetch_all(text)
        return result

    def _loop(self, result: TurnResult, extra: str) -> None:
        limit = self.config.agent.max_tool_iterations
        seen: set[str] = set()  # the calls made this turn (name and arguments)
        repeating = False
        while True:
            self._maybe_compact(result)
            # At the limit the model is called without tools, so it has to answer now;
            # so is a model that only repeats calls it already made (small models loop).
            result.stopped_early = result.model_calls >= limit
            tools = None if result.stopped_early or repeating else self._offered_tools()
            message = self._call(extra, tools, result).message
            calls = list(message.get("tool_calls") or [])
            self._append(message)
            if not calls:
                result.text = content_text(message)
                return
            signatures = {json.dumps(call.get("function"), sort_keys=True) for call in calls}
            repeating = signatures <= seen
            seen |= signatures
            for call in calls:
                run = self.tools.run(call) if tools is not None else _not_run(call)
                self._emit("tool", name=run.name, ok=run.ok, arguments=run.arguments)
                result.tool_runs.append(run)
                if (run.name == "memory" and run.ok
                        and run.arguments.get("action") in WRITE_ACTIONS):
                    result.memory_written = True
                self._append(tool_result_message(call, run))
            if tools is None:  # it called tools it was not offered; do not loop forever
                result.text = content_text(message)
                return

    def _close_unanswered(self, exc: BaseException) -> None:
        """After an interrupted or failed call, store what the user saw of the reply (or
        a note) as the assistant's turn, so the stored conversation keeps alternating
        and the next turn can run at once."""
        if self.session_id is None or not self.messages:
            return
        if self.messages[-1].get("role") not in ("user", "tool"):
            return
        why = ("interrupted by the user" if isinstance(exc, KeyboardInterrupt)
               else f"no answer: the model call failed ({type(exc).__name__})")
        shown = self.caller.partial_text.rstrip()
        self._append({"role": "assistant",
                      "content": f"{shown} [{why}]" if shown else f"[{why}]"})

    def _call(self, extra: str, tools: list[dict[str, Any]] | None,
              result: TurnResult) -> ChatResponse:
        self._emit("model_call", calls_so_far=result.model_calls)
        try:
            response = self.caller.complete(self._request(extra), tools)
        except ContextLengthExceededError:
            log.warning("context length exceeded by the API; compacting and retrying once")
            compaction = self.compact(reason="overflow")
            result.compactions.append(compaction)
            if not compaction.report.changed:
                raise
            response = self.caller.complete(self._request(extra), tools)
        self._record_usage(response, result)
        return response

    def _record_usage(self, response: ChatResponse, result: TurnResult) -> None:
        usage = response.usage
        self.engine.update_from_response(usage.as_dict())
        self._fresh_compaction = False
        result.model_calls += 1
        result.prompt_tokens += usage.prompt_tokens
        result.completion_tokens += usage.completion_tokens
        assert self.session_id is not None
        self.sessions.add_token_usage(self.session_id, usage.prompt_tokens,
                                      usage.completion_tokens)
        log.info("model call: prompt_tokens=%d completion_tokens=%d threshold=%d",
                 usage.prompt_tokens, usage.completion_tokens, self.engine.threshold_tokens)

    def _request(self, extra: str) -> list[Message]:
        """System prompt + conversation, with ``extra`` appended to the latest user message."""
        request: list[Message] = [self._system_message(), *self.messages]
        if extra:
            for index in range(len(request) - 1, 0, -1):
                if request[index].get("role") == "user":
                    request[index] = _with_extra(request[index], extra)
                    break
        return request

    def _append(self, message: Message) -> None:
        assert self.session_id is not None
        self.sessions.append_message(self.session_id, message)
        self.messages.append(message)

    # -- compaction -----------------------------------------------------------------------

    def _maybe_compact(self, result: TurnResult) -> None:
        if not self.config.compression.enabled:
            return
        due_by_usage = not self._fresh_compaction and self.engine.should_compress()
        if due_by_usage or self.engine.should_compress_preflight(self._request("")):
            result.compactions.append(self.compact(reason="auto"))

    def compact(self, focus: str | None = None, *, reason: str = "manual") -> Compaction:
        """Compact the conversation now (``/compact [focus]`` or automatically)."""
        self.start()
        assert self.session_id is not None
        if reason != "overflow":  # a flush request would overflow the window just as well
            self._flush_memories("it is being compacted")
        before = [self._system_message(), *self.messages]
        output = self.engine.compress(before, self.engine.last_prompt_tokens or None,
                                      focus_topic=focus)
        report = self.engine.last_report or CompressionReport(
            len(before), len(output), 0, 0, skipped_reason="the engine reported nothing")
        compaction = Compaction(reason, report)
        if not report.changed:
            log.info("compaction (%s) made no change: %s", reason, report.skipped_reason)
            return compaction
        live = output[1:] if output and output[0].get("role") == "system" else output
        self.sessions.sync_live(self.session_id, live)
        self.messages = list(live)
        self._compacted = True
        self._fresh_compaction = True
        # C14: the prompt is rebuilt once, with memory re-read from disk, then frozen again.
        self.memory.load_from_disk()
        self.system_prompt = self._build_prompt(compacted=True)
        self.sessions.update_system_prompt(self.session_id, self.system_prompt.text)
        log.info("compaction (%s): %s", reason, compaction.describe())
        self._emit("compaction", compaction=compaction)
        return compaction

    def _flush_memories(self, why: str) -> None:
        """The M8 flush turn: one chance, memory tool only, to save what lasts."""
        if "memory" not in self.tools or not self.nudger.flush_due():
            return
        self.nudger.wrote()  # one flush per stretch of turns, whatever happens below
        request: list[Message] = [
            self._system_message(), *self.messages,
            {"role": "user", "content": FLUSH_PROMPT.format(reason=why)}]
        only_memory = self._offered_tools({"memory"})
        try:
            for _ in range(_FLUSH_MAX_CALLS):
                response = accept_text_tool_calls(
                    self.client.complete(request, tools=only_memory), only_memory)
                self.engine.update_from_response(response.usage.as_dict())
                calls = list(response.message.get("tool_calls") or [])
                if not calls:
                    break
                request.append(response.message)
                for call in calls:
                    function: Any = dict(call).get("function")  # models send odd shapes
                    name = str(function.get("name", "")) if isinstance(function, dict) else ""
                    run = self.tools.run(call) if name == "memory" else ToolRun(
                        name, {}, '{"success": false, "error": "Only the memory tool is '
                        'available now."}', ok=False)
                    request.append(tool_result_message(call, run))
        except Exception as exc:  # a failed flush must not block the compaction or exit
            log.warning("memory flush turn failed (%s: %s); continuing", type(exc).__name__, exc)
            return
        log.info("memory flush turn done before %s", why)

    def _emit(self, event: str, **details: Any) -> None:
        if self.on_event is not None:
            try:
                self.on_event(event, details)
            except Exception as exc:  # a display problem must not break the turn
                log.debug("event handler failed: %s", exc)

    # -- inspection ---------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """Numbers for the status line and ``/context``."""
        engine = self.engine.get_status()
        return {
            "session_id": self.session_id,
            "turn": self.turn,
            "messages": len(self.messages),
            "prompt_tokens": self.engine.last_prompt_tokens,
            "threshold_tokens": self.engine.threshold_tokens,
            "context_length": self.engine.context_length,
            "compactions": self.engine.compression_count,
            "paused": bool(engine.get("paused")),
            "paused_reason": engine.get("paused_reason"),
            "model": self.client.model,
        }

    def status_line(self) -> str:
        s = self.status()
        line = (f"tokens {s['prompt_tokens']:,}/{s['threshold_tokens']:,} · "
                f"compactions {s['compactions']}")
        if s["paused"]:
            line += " · auto-compaction paused"
        return line


def _with_extra(message: Message, extra: str) -> Message:
    copy: dict[str, Any] = dict(message)
    content = message.get("content")
    if isinstance(content, list):
        copy["content"] = [*content, {"type": "text", "text": extra}]
    else:
        copy["content"] = f"{content or ''}\n\n{extra}"
    return copy  # type: ignore[return-value]


def _title_of(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 60 else flat[:59] + "…"


def _not_run(call: Any) -> ToolRun:
    name = str((call.get("function") or {}).get("name", ""))
    return ToolRun(name, {}, '{"success": false, "error": "Not run: the tool-call limit of '
                   'this turn was reached."}', ok=False)
