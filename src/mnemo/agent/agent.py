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

Every request is made API-valid at the one place requests are built (``_request``): a
conversation can hold shapes an API rejects — a user message left without an answer by
a failed call, then the next user message; a tool call whose run was interrupted — and
the request repairs them (C12: same-role neighbours joined, missing results stubbed)
while the stored conversation stays as it happened. With ``agent.validate_requests``
each request is checked before that repair, and a violation is logged with the
request's shape (roles and tool-call ids, never content): a debugging aid that shows
which conversations needed the repair.

No request is longer than the window allows (C19): every call goes through the window
guard (``window.py``) as its last step, and messages too big for what is left are cut
(head and tail kept, the whole text archived) when compaction cannot help.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from mnemo.agent.answer_only import (
    ANSWER_COPIED,
    ANSWER_LANGUAGE,
    ANSWER_NOW,
    ANSWER_REPEATED,
    ANSWER_RESTATED,
    COPIED_NOTE,
    COPIED_SUMMARY,
    HINT_OPENINGS,
    RETRY_OPENING,
    answer_only_request,
    answer_only_system,
    copied_call_openings,
    with_extra,
    without_copied_note,
)
from mnemo.agent.memory_writes import MemoryWrites
from mnemo.agent.nudges import (
    FLUSH_PROMPT,
    NUDGE_TEXT,
    MemoryNudger,
    correction_reminder,
    reminder_clause,
    without_restated_reminder,
)
from mnemo.agent.replies import (
    ModelCaller,
    copied_reply,
    other_language,
    repeats_question,
    restates_earlier,
)
from mnemo.agent.tools import (
    ToolHandler,
    ToolRegistry,
    ToolRun,
    session_tool_schemas,
    tool_result_message,
)
from mnemo.agent.window import WindowGuard, counter_for
from mnemo.api_validity import request_shape, validate_c12
from mnemo.config import MnemoConfig
from mnemo.context import CompressionReport, ContextEngine, is_summary_message
from mnemo.context.engine import Summarizer
from mnemo.context.fit import Fit
from mnemo.context.markers import (
    ASK_AGAIN,
    CALL_FAILED,
    INTERRUPTED,
    own_text,
    without_agent_notices,
)
from mnemo.context.prepare import describe_status
from mnemo.context.prepare_worker import TurnGate
from mnemo.context.repair import repair_messages
from mnemo.context.window import RequestMeter
from mnemo.errors import ContextLengthExceededError, UsageError
from mnemo.home import Home
from mnemo.llm import ChatClient, ChatResponse
from mnemo.llm.text_tool_calls import (
    DROP,
    HOLD,
    SHOW,
    accept_text_tool_calls,
    call_attempt,
    echoes_results,
)
from mnemo.memory import (
    ENTRY_DELIMITER,
    MemoryManager,
    MemoryStore,
    build_memory_context_block,
)
from mnemo.memory.builtin import WRITE_ACTIONS
from mnemo.memory.entries import TARGETS
from mnemo.memory.grounding import GroundingMode
from mnemo.memory.plugins import create_memory_manager
from mnemo.messages import Message, content_text
from mnemo.prompt import SKILL_VIEW_SCHEMA, SystemPrompt, build_system_prompt, skill_view
from mnemo.prompt.small_window import (
    GUIDANCE_OPENINGS,
    compact_tool_schemas,
    copies_example,
    is_small_window,
    may_start_example,
    without_example_copy,
)
from mnemo.sessions import SessionStore
from mnemo.sessions.store import new_session_id
from mnemo.sessions.tool import SESSION_SEARCH_SCHEMA, session_search

__all__ = ["Agent", "Compaction", "TurnResult"]

log = logging.getLogger("mnemo.agent")

_FLUSH_MAX_CALLS = 3

@dataclass(frozen=True)
class Compaction:
    """A compaction that happened: why, and what it saved."""

    reason: str  # "auto", "manual", "overflow", "window" (the window guard, C19)
    report: CompressionReport
    fit: Fit | None = None  # oversized messages cut or old ones left out (C19)
    merged: bool = False  # the previous summary was folded into the new one

    @property
    def saved_tokens(self) -> int:
        return self.report.tokens_before - self.report.tokens_after

    @property
    def changed(self) -> bool:
        return self.report.changed or (self.fit is not None and self.fit.changed)

    def describe(self) -> str:
        """What happened, in words: summarised (and merged), cleared, truncated."""
        r = self.report
        parts = []
        if r.summary is not None:
            how = "local summary" if r.summarizer == "local" else "model summary"
            if r.fallback:
                how = "local summary (the model summariser failed)"
            merged = ", merged with the previous summary" if self.merged else ""
            parts.append(f"summarised: {r.messages_before} → {r.messages_after} messages, "
                         f"~{r.tokens_before:,} → ~{r.tokens_after:,} tokens ({how}{merged})")
        elif r.pruned:
            parts.append(f"cleared {len(r.pruned)} old tool output"
                         f"{'s' if len(r.pruned) != 1 else ''} (no summary: "
                         f"{r.skipped_reason or 'nothing to summarise'})")
        elif r.changed:  # only repaired for the API (a stub, a merge)
            parts.append(f"no summary ({r.skipped_reason or 'nothing to summarise'})")
        if self.fit is not None and self.fit.changed:
            parts.append(self.fit.describe())
        if not parts:
            return f"nothing compacted ({r.skipped_reason or 'no change'})"
        return "compacted — " + "; ".join(parts)


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
        grounding: GroundingMode | None = None,
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
        self._turn_text = ""  # the message of the turn under way (``_asked``)
        self._correction = ""  # the correction reminder of the turn under way (nudges.py)
        self.nudger = MemoryNudger(config.memory.nudge_interval, config.memory.flush_min_turns)
        self._resume = resume_session_id
        self._owns_sessions = owns_sessions  # close the store with the agent
        # Progress for a face (the CLI): called with ("model_call" | "tool" | "compaction",
        # details). Nothing below the CLI prints; this is how long work becomes visible.
        self.on_event: Callable[[str, dict[str, Any]], None] | None = None
        # Model calls (streamed to a face that sets ``caller.on_text``; tool calls the
        # model wrote as text accepted when they validate).
        self.caller = ModelCaller(client, withheld=self._withheld)
        self._compacted = False
        self._fresh_compaction = False  # no response since the last compaction yet
        # M9: the model's memory writes, grounded in what was said and routed.
        self.writes = MemoryWrites(memory, grounding or config.memory.grounding or "lenient")
        # (session, live contexts stored, its archived user messages): evidence for the
        # writes too.
        self._syncs = 0
        self._archived: tuple[str | None, int, list[Message]] = (None, -1, [])
        # Warnings for the user about how this agent was set up (a damaged archive…).
        self.notices: list[str] = []
        counter, exact = counter_for(client)
        self.window = WindowGuard(  # C19: the last step before every model call
            RequestMeter(counter, exact=exact), lambda: self.engine.context_length,
            max_tokens=config.model.max_tokens, reserve=config.context.reply_reserve_tokens)
        # The engine measures what it keeps as the guard counts it (C8 with C19).
        engine.count_with(self._message_tokens)
        self._last_sent: tuple[list[Message], list[dict[str, Any]] | None] = ([], None)
        self._truncations = 0  # live contexts cut to fit (counted with the compactions)
        # Closed while a turn runs: background summaries wait (C17).
        self.gate = TurnGate()

    def enable_background(self, summarizer: Summarizer, *, complete: bool = False) -> bool:
        """Prepare compaction summaries with ``summarizer`` between turns (C17), if the
        config allows it (``compression.background``) and the engine can; ``complete``:
        fill the room its capped answers leave with the local summariser's lines."""
        comp = self.config.compression
        if not (comp.enabled and comp.background):
            return False
        return self.engine.enable_background(summarizer, prepare_at=comp.prepare_at,
                                             max_wait_s=comp.max_wait_s, gate=self.gate,
                                             complete=complete)

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
        # Background work ends first: a summary still running would find its model server
        # stopped under it (by hand: a "model call failed" warning at every piped chat's
        # end).
        self.gate.end()
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
            # Shut meanwhile: a background summary of this session stops (C17).
            with self.gate.turn_call():
                if self.messages:
                    self._flush_memories("the session is ending")
                if self.manager is not None:
                    self.manager.flush()  # the last turn's sync lands before the end
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
        self._turn_text = ""
        self._resume = None
        self._compacted = False
        self.nudger.turns_since_write = 0
        self.engine.on_session_reset()
        self.window.meter.reset()
        self._truncations = 0
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
            if owner == "memory" and name == "memory":
                handler = self._memory_call
            elif owner == "memory":
                handler = partial(self.manager.handle_tool_call, name)
            elif owner == "engine":
                handler = partial(self.engine.handle_tool_call, name)
            else:
                handler = handlers[name]
            self.tools.add(schema, handler)

    def _memory_call(self, args: dict[str, Any]) -> str:
        """The model's memory call, with its writes grounded and routed first (M9)."""
        assert self.manager is not None
        answer, refused = self.writes.handle(args, self.messages, self.manager,
                                             earlier=self._archived_messages())
        if refused:
            self._emit("memory_refused")
        return answer

    def _archived_messages(self) -> list[Message]:
        """This session's user messages no longer live — compacted or cut, as the
        archive keeps them whole — read again only after the live context was stored
        anew (``_sync_live``: nothing else archives a message). Only the user's, read
        as such: the archive also holds every tool output pruning cleared, megabytes in
        a long work session."""
        if self.session_id is None:
            return []
        if self._archived[:2] != (self.session_id, self._syncs):
            self._archived = (self.session_id, self._syncs, [
                m.to_message() for m in self.sessions.load_messages(
                    self.session_id, active_only=False, role="user") if not m.active])
        return self._archived[2]

    def _sync_live(self, messages: list[Message]) -> None:
        """Store ``messages`` as the live context (what they replace is archived)."""
        assert self.session_id is not None
        self.sessions.sync_live(self.session_id, messages)
        self._syncs += 1

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

    def _tool_names(self) -> list[str]:
        return [str(schema.get("name")) for schema in self.tools.schemas(None)]

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
        """Send the user's ``text``; run the model and its tools until it answers.

        Raises ``UsageError`` for a blank ``text`` (an API may reject an empty message,
        and a model asked nothing makes something up), before anything is stored."""
        if not text.strip():
            raise UsageError("the message is empty; give the agent some text to answer")
        self.start()
        assert self.manager is not None and self.session_id is not None
        self.turn += 1
        self._turn_text = text
        self.memory.failed_calls_this_turn = 0
        self.manager.on_turn_start(self.turn, text)
        if self.turn == 1 and not self.messages:
            self.sessions.set_title(self.session_id, _title_of(text))
        recall = build_memory_context_block(self.manager.prefetch_all(text))
        due = self.nudger.start_turn()
        nudge = self._correction = ""
        if "memory" in self.tools:
            # A correction of a saved entry asks for its replace; the general reminder
            # would only say the same less precisely.
            self._correction = self._correction_of(text)
            nudge = self._correction or (NUDGE_TEXT if due else "")
        extra = "\n\n".join(part for part in (recall, nudge) if part)
        self._append({"role": "user", "content": text})
        self._revise_summary()
        result = TurnResult(text="")
        # Background summaries wait until the turn has answered (C17): one sent between
        # a tool round and the next call would make that call wait for it.
        with self.gate.turn_call():
            try:
                self._loop(result, extra)
            except BaseException as exc:  # Ctrl-C or a failed call: still well-formed
                self._close_unanswered(exc)
                raise
            # Still inside the turn: a job begun before this last look would work from
            # the turn as it stood before its answer, and what it prepared could be
            # thrown away as "the conversation changed" (a flaky test showed it).
            self._prepare()
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
            retry = "" if calls else self._retry_hint(message, tools)
            # An empty reply is no answer either: asked again like an echo, without tools.
            echo = not calls and (not content_text(message).strip() or echoes_results(
                content_text(message), self._recent_results()))
            repeated = not calls and repeats_question(content_text(message), self._asked())
            copied = None if calls or retry or echo or repeated else copied_reply(
                content_text(message), self._asked(), self._earlier_replies())
            restated = not (calls or retry or echo or repeated or copied) and restates_earlier(
                content_text(message), self._asked(), self._said_before())
            foreign = not (calls or retry or echo or repeated or copied or restated) and (
                other_language(content_text(message), self._language_of()))
            if retry or echo or repeated or copied or restated or foreign:
                # A small model may answer with nothing, with a tool call written as text
                # that cannot run, with its tools' answers copied out, with the user's
                # question, with a reply it gave to another message, or with earlier
                # messages about something else, or in another language than the
                # message: ask once more, saying why, before the user sees it — without
                # the reply it copied, which it would copy again.
                why = retry or (ANSWER_REPEATED if repeated else ANSWER_COPIED if copied
                                else ANSWER_RESTATED if restated
                                else ANSWER_LANGUAGE if foreign else ANSWER_NOW)
                if self.caller.partial_text.strip():
                    # Part of it reached the screen before it could be judged (a copy is
                    # told by its whole): a face says it is replaced, or the answer that
                    # follows runs on from it (seen by hand).
                    self._emit("retry", why=_retry_reason(
                        retry, echo, repeated, bool(copied), restated, foreign))
                echo = echo or repeated or bool(copied) or restated or foreign
                hint = "\n\n".join(part for part in (extra, why) if part)
                message = self._call(hint, None if echo else tools, result,
                                     hide=copied or "").message
                calls = list(message.get("tool_calls") or [])
                if not calls:
                    message = self._shown_instead_of_call(message, None if echo else tools,
                                                          result)
            if calls:
                # A small model writes the same call several times in one reply: it is
                # run, and kept in the conversation, once. Nor is a copy of earlier tool
                # results beside its calls kept: the next replies would imitate it, and
                # answer with made-up results instead of words (seen by hand).
                message, calls = _without_repeated_calls(message, calls)
                if echoes_results(content_text(message), self._recent_results()):
                    message = {**message, "content": None}
            self._append(message)
            if not calls:
                result.text = content_text(message)
                return
            signatures = {_signature(call) for call in calls}
            # Once a write is saved, a round of nothing but more memory calls is the last
            # with tools: small models go on re-adding, or "replacing" the tool's own
            # answer, until the loop breaker stops them, a model call each.
            repeating = signatures <= seen or (
                result.memory_written and all(_name_of(call) == "memory" for call in calls))
            seen |= signatures
            for call in calls:
                refused_before = self.writes.refused
                run = self.tools.run(call) if tools is not None else _not_run(call)
                # ``refused``: grounding refused the write, or the part of it nobody said
                # (a face tells that from a call that failed).
                self._emit("tool", name=run.name, ok=run.ok, arguments=run.arguments,
                           refused=self.writes.refused > refused_before)
                result.tool_runs.append(run)
                if (run.name == "memory" and run.ok
                        and run.arguments.get("action") in WRITE_ACTIONS):
                    result.memory_written = True
                self._append(tool_result_message(call, run))
                # A tool that says stop (the memory loop breaker) is not offered again.
                repeating = repeating or _terminal(run)
            self._prepare()
            if self._correction and result.memory_written:
                # Done, or done with the entry it named: the reminder would go on asking
                # for the replace of an entry that is gone. By hand (German) two entries
                # held the old budget, one in each language; the model replaced the one
                # named, the other stayed, and it answered the old budget from it.
                reminder = self._correction_of(self._turn_text)
                if reminder != self._correction:
                    extra = extra.replace(self._correction, reminder).strip()
                    self._correction = reminder
            if tools is None:  # it called tools it was not offered; do not loop forever
                result.text = content_text(message)
                return

    def _correction_of(self, text: str) -> str:
        """The reminder to replace the first saved entry the user's message ``text``
        takes back (``MemoryWrites.stale_entries``), or "" when none is left."""
        target, stale = next(iter(self.writes.stale_entries(text)), ("user", ""))
        return correction_reminder(
            stale, stale and self.writes.suggested_correction(text, stale), target)

    def _retry_hint(self, message: Message, tools: list[dict[str, Any]] | None) -> str:
        """What to tell the model when its reply is no answer, or "" when it is one: an
        empty reply or a call written as text when no tools were offered; a call written
        as text whose arguments do not fit when they were."""
        text = content_text(message).strip()
        if tools is None:
            no_answer = not text or call_attempt(text, self._offered_tools()) is not None
            return ANSWER_NOW if no_answer else ""
        attempt = call_attempt(text, tools)
        if attempt is None or attempt[1] is None:
            return ""
        name, problem = attempt
        return (f"{RETRY_OPENING}{name} call written as text, and it was not run: "
                f"{problem}. Call the tool with the parameters its schema lists, or answer "
                "the user in plain words.]")

    def _asked(self) -> str:
        """The text of the user's latest message (what a reply may only repeat): the
        turn's own, which a compaction in the middle of the turn may have summarised
        away (by hand, 3,072 tokens: the live list then ended on the summary, read as a
        message that asked nothing, and every answer made of earlier sentences was
        taken for a restatement about something else)."""
        if self._turn_text:
            return self._turn_text
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return own_text(message)  # not a summary merged before it
        return ""

    def _withheld(self, clause: str) -> str:
        """What the stream does with ``clause`` (``ClauseFilter``): a restatement of the
        memory reminder, or in a small window a copy of the memory guidance's worked
        example, is not shown — as it is not kept."""
        verdict = reminder_clause(clause)
        if verdict != SHOW or not is_small_window(self.engine.context_length):
            return verdict
        low = clause.lower()
        if ("tabs" in low or "sam" in low) and copies_example(clause, self._said()):
            return DROP
        return HOLD if may_start_example(clause) else SHOW

    def _said(self) -> str:
        """What the user said in the live conversation (and its summary), in one text."""
        return "\n".join(content_text(m) for m in self.messages if m.get("role") == "user")

    def _earlier_replies(self) -> list[tuple[str, str]]:
        """The live conversation's answers in words, each with the user's message it
        answered, newest first (at most ``_EARLIER_REPLIES``): what a reply may not copy
        (``replies.copied_reply``). The agent's own notices ("[The model …]") are none."""
        pairs: list[tuple[str, str]] = []
        asked = ""
        for message in self.messages:
            role = message.get("role")
            if role == "user":
                asked = own_text(message)
            elif role == "assistant" and not message.get("tool_calls"):
                text = content_text(message).strip()
                if text and not text.startswith("["):
                    pairs.append((asked, text))
        return pairs[::-1][:_EARLIER_REPLIES]

    def _said_before(self) -> list[str]:
        """In a small window, the texts of the live conversation before the user's latest
        message (its summary too), the user's and the answers, and the saved memory
        entries the model is shown: what a reply may not only restate when it is about
        something else (``replies.restates_earlier``). By hand (3,072 tokens) the
        embedded model answered "When do my parents land?" with a saved entry, "We
        planned a day trip to the Ardennes on Saturday.". A large model does not answer
        that way, and its conversations are long."""
        if not is_small_window(self.engine.context_length):
            return []
        last = max((i for i, m in enumerate(self.messages) if m.get("role") == "user"),
                   default=0)
        texts = (content_text(m) for m in self.messages[:last]
                 if m.get("role") in ("user", "assistant") and not m.get("tool_calls"))
        saved = [entry for target in TARGETS for entry in self.memory.entries_for(target)]
        return [text for text in (*texts, *saved)
                if text.strip() and not text.startswith("[The model")]

    def _language_of(self) -> str:
        """In a small window, the message whose language the reply must be in (the
        turn's own; ``replies.other_language``): a large model does not drift into the
        language of its last answer."""
        return self._asked() if is_small_window(self.engine.context_length) else ""

    def _recent_results(self) -> list[str]:
        """The tool results of the live conversation, newest first (at most
        ``_RECENT_RESULTS``): what a reply that only copies tool results out — or makes
        up more of the same shape — is recognised by (``echoes_results``)."""
        results: list[str] = []
        for message in reversed(self.messages):
            if message.get("role") == "tool":
                results.append(content_text(message))
                if len(results) >= _RECENT_RESULTS:
                    break
        return results

    def _shown_instead_of_call(self, message: Message, tools: list[dict[str, Any]] | None,
                               result: TurnResult) -> Message:
        """``message``, or a one-line notice when it is still only a tool call written as
        text, or the tools' answers copied out: the user sees that the model did not
        answer (and what it saved), not its JSON."""
        done = (" Memory was updated this turn (`mnemo memory show` lists it)."
                if result.memory_written else "")
        if echoes_results(content_text(message), self._recent_results()):
            return {"role": "assistant", "content": (
                f"[The model repeated its tools' results instead of answering.{done} "
                f"{ASK_AGAIN}]")}
        if copied_reply(content_text(message), self._asked(), self._earlier_replies()):
            log.warning("the model copied an earlier answer twice instead of answering: %.200r",
                        content_text(message))
            return {"role": "assistant", "content": (
                f"[The model repeated an earlier answer instead of answering this "
                f"message.{done} {ASK_AGAIN}]")}
        if restates_earlier(content_text(message), self._asked(), self._said_before()):
            log.warning("the model restated earlier messages twice instead of answering: "
                        "%.200r", content_text(message))
            return {"role": "assistant", "content": (
                f"[The model repeated earlier messages instead of answering this one.{done} "
                f"{ASK_AGAIN}]")}
        if repeats_question(content_text(message), self._asked()):
            log.warning("the model repeated the question twice instead of answering: %.200r",
                        content_text(message))
            return {"role": "assistant", "content": (
                f"[The model repeated your question instead of answering it.{done} "
                f"{ASK_AGAIN}]")}
        if not content_text(message).strip():
            # Asked again and still nothing (the embedded model can end its reply at the
            # first token): the user is told so rather than shown a blank answer.
            log.warning("the model gave an empty answer twice")
            return {"role": "assistant", "content": (
                f"[The model gave no answer.{done} {ASK_AGAIN}]")}
        attempt = call_attempt(content_text(message).strip(), tools or self._offered_tools())
        if attempt is None:
            return message
        log.warning("the model answered with a %s call written as text twice; not shown",
                    attempt[0])
        return {"role": "assistant", "content": (
            f"[The model replied with a {attempt[0]} call instead of an answer"
            f"{' (' + attempt[1] + ')' if attempt[1] else ''}. {ASK_AGAIN}]")}

    def _close_unanswered(self, exc: BaseException) -> None:
        """After an interrupted or failed call, store what the user saw of the reply (or
        a note) as the assistant's turn, so the stored conversation keeps alternating
        and the next turn can run at once."""
        if self.session_id is None or not self.messages:
            return
        if self.messages[-1].get("role") not in ("user", "tool"):
            return
        why = (INTERRUPTED if isinstance(exc, KeyboardInterrupt)
               else f"{CALL_FAILED} ({type(exc).__name__})")
        shown = self.caller.partial_text.rstrip()
        self._append({"role": "assistant",
                      "content": f"{shown} [{why}]" if shown else f"[{why}]"})

    def _call(self, extra: str, tools: list[dict[str, Any]] | None,
              result: TurnResult, hide: str = "") -> ChatResponse:
        """One model call for the turn; ``hide``: an earlier reply the request leaves out
        (one the model just copied)."""
        self._emit("model_call", calls_so_far=result.model_calls)
        self._fit_live(extra, tools, result)
        small = is_small_window(self.engine.context_length)
        answer_only = tools is None and small
        # Nor is a copy of the note an answer-only request ends with, of the small
        # prompt's guidance, of the turn's calls written out, or of the summary, shown
        # (``stop_at``) or kept: the next turn would copy it.
        # So is a copy of the memory block (its entries between "§" lines): by hand the
        # embedded model answered "My brother Ravi lives in Manchester." with all of
        # USER.md.
        # The agent's own hints are none of the model's words, whatever its size.
        stop_at = (*(COPIED_NOTE if answer_only else HINT_OPENINGS), *((
            *GUIDANCE_OPENINGS, *copied_call_openings(self._tool_names()), *COPIED_SUMMARY,
            ENTRY_DELIMITER.lstrip("\n")) if small else ()))
        try:
            response = self._send(self._request(extra, answer_only=answer_only, hide=hide),
                                  tools, stop_at=stop_at)
        except ContextLengthExceededError as exc:
            learned = self.window.observe_overflow(*self._last_sent, exc)
            log.warning("context length exceeded by the API (%s); compacting and retrying "
                        "once", "its count learnt" if learned else "no count given")
            compaction = self.compact(reason="overflow")
            result.compactions.append(compaction)
            cut = self._fit_live(extra, tools, result)
            if not (compaction.changed or learned or cut):
                raise
            response = self._send(self._request(extra, answer_only=answer_only, hide=hide),
                                  tools, stop_at=stop_at)
        self._record_usage(response, result)
        text = content_text(response.message)
        # A reply that is only a call written as text, or only this session's tool
        # results copied out, stays whole: the retry and the notice say what it was
        # (``_retry_hint``, ``_shown_instead_of_call``).
        if (stop_at and call_attempt(text.strip(), tools or self._offered_tools()) is None
                and not echoes_results(text, self._recent_results())):
            kept = without_copied_note(text, stop_at)
            if kept != text:
                response = replace(response, message={**response.message,
                                                      "content": kept or None})
        # Nor is a restatement of the memory reminder kept: the next answers would end
        # the same way (nudges.py).
        text = content_text(response.message)
        kept = without_restated_reminder(text)
        if small:
            kept = without_example_copy(kept, self._said())
        if kept != text:
            response = replace(response, message={**response.message, "content": kept})
        return response

    def _send(self, request: list[Message], tools: list[dict[str, Any]] | None, *,
              quiet: bool = False, stop_at: Sequence[str] = ()) -> ChatResponse:
        """The only way a request reaches the model: fitted to the window first (C19), the
        reply streamed to the face unless ``quiet`` (the flush turn) and shown up to the
        first of the ``stop_at`` strings, tool calls the model wrote as text made real,
        and the reported size fed back to the token meter."""
        tools = self._tools_that_fit(tools)
        fit = self.window.checked(self.window.fit(request, tools))
        if fit.changed:
            log.warning("window guard: %s", fit.describe())
        self._last_sent = (fit.messages, tools)
        with self.gate.turn_call():  # (nested in a turn's; alone for a call outside one)
            if quiet:
                response = accept_text_tool_calls(
                    self.client.complete(fit.messages, tools=tools), tools)
            else:
                response = self.caller.complete(fit.messages, tools,
                                                known=self._offered_tools(),
                                                results=self._recent_results(),
                                                stop_at=stop_at, asked=self._asked(),
                                                earlier=self._earlier_replies(),
                                                said_before=self._said_before(),
                                                language_of=self._language_of())
        self.window.observe(fit.messages, tools, response.usage.prompt_tokens)
        return response

    def _tools_that_fit(self, tools: list[dict[str, Any]] | None
                        ) -> list[dict[str, Any]] | None:
        """``tools``, unless with the system prompt they take over half of what a request
        may hold: in so small a window an answer without tools beats none."""
        if not tools:
            return tools
        if self.window.count([self._system_message()], tools) <= self.window.budget // 2:
            return tools
        log.info("the tool schemas do not fit in the %s-token window; calling the model "
                 "without tools", f"{self.window.window:,}")
        return None

    def _tools_tokens(self, tools: list[dict[str, Any]] | None) -> int:
        """What ``tools`` add to a request, as the window guard counts them."""
        if not tools:
            return 0
        system = [self._system_message()]
        return max(0, self.window.count(system, tools) - self.window.count(system))

    def _fit_live(self, extra: str, tools: list[dict[str, Any]] | None,
                  result: TurnResult) -> bool:
        """Make the live conversation fit the window with room for ``extra`` (C19): cut
        oversized messages, leave out old turns, the newest message last. The change is
        stored (the originals stay in the archive) and shown as a compaction notice."""
        meter = self.window.meter
        room = self.window.budget - (meter.corrected(meter.counter.count(extra)) + 2
                                     if extra else 0)
        tools = self._tools_that_fit(tools)
        compacted = False
        if (self.config.compression.enabled
                and self.window.count([self._system_message(), *self.messages], tools) > room):
            # Summarising comes before cutting, even while automatic compaction is paused:
            # the window is at stake.
            compaction = self.compact(reason="window")
            result.compactions.append(compaction)
            compacted = compaction.changed
        fit = self._shrink_live(room, tools, allow_drop=True, allow_newest=True)
        if fit is None:
            return compacted
        compaction = Compaction("window", CompressionReport(
            len(fit.messages), len(fit.messages), fit.tokens_before, fit.tokens), fit=fit)
        result.compactions.append(compaction)
        log.info("window guard: %s", fit.describe())
        self._emit("compaction", compaction=compaction)
        return True

    def _shrink_live(self, budget: int, tools: list[dict[str, Any]] | None, *,
                     allow_drop: bool, allow_newest: bool,
                     keep_summary: bool = False) -> Fit | None:
        """Fit ``[system, *messages]`` to ``budget`` and keep the result; None: no change."""
        assert self.session_id is not None
        live = [self._system_message(), *self.messages]
        if self.window.count(live, tools) <= budget:
            return None
        fit = self.window.fit(live, tools, budget=budget, allow_drop=allow_drop,
                              allow_newest=allow_newest, keep_summary=keep_summary)
        if not fit.changed:
            return None
        self.messages = list(fit.messages[1:])
        self._sync_live(self.messages)
        self._truncations += 1
        return fit

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

    def _request(self, extra: str = "", *, ask: str = "",
                 answer_only: bool = False, hide: str = "") -> list[Message]:
        """System prompt + conversation, API-valid (C12), with ``extra`` appended to the
        latest user message and ``ask`` (a request of the agent's own, like the flush
        prompt) at the end: joined to the last message when that is the user's, so two
        user messages never follow each other. ``answer_only``: the request a small
        model answers in words (``answer_only.py``); ``hide``: an assistant reply left
        out (its neighbours are joined where two of one role meet). The agent's notices
        ("[The model gave no answer. …]") are left out the same way: the model did not
        say them, and the embedded model wrote them out as its next answers (by hand);
        the message it did not answer is joined to the next one instead."""
        messages = [m for m in self.messages if not _left_out(m, hide)]
        if answer_only:
            assert self.system_prompt is not None
            return self._valid(answer_only_request(
                answer_only_system(self.system_prompt), messages, extra))
        request: list[Message] = [self._system_message(), *messages]
        if ask:
            if request[-1].get("role") == "user":
                request[-1] = with_extra(request[-1], ask)
            else:
                request.append({"role": "user", "content": ask})
        if extra:
            for index in range(len(request) - 1, 0, -1):
                if request[index].get("role") == "user":
                    request[index] = with_extra(request[index], extra)
                    break
        return self._valid(request)

    def _valid(self, request: list[Message]) -> list[Message]:
        """``request`` repaired where the conversation holds a shape an API rejects."""
        if self.config.agent.validate_requests:
            problems = validate_c12(request)
            if problems:
                log.warning("request needed repair (%s): %s", "; ".join(problems),
                            request_shape(request))
        repair = repair_messages(request)
        if repair.changed:
            log.info("request repaired before sending (%s): %s", repair.describe(),
                     request_shape(request))
        return repair.messages

    def _append(self, message: Message) -> None:
        assert self.session_id is not None
        self.sessions.append_message(self.session_id, message)
        self.messages.append(message)

    # -- compaction -----------------------------------------------------------------------

    def _message_tokens(self, message: Message) -> int:
        """One message's tokens as the window guard counts them (corrected)."""
        meter = self.window.meter
        return meter.corrected(meter.message_tokens(message))

    def _prepare(self) -> None:
        """Let the engine prepare the next summary from what is certain to go (C17). It
        only reads: the request stays byte-identical until the next compaction."""
        if self.config.compression.enabled:
            self.engine.prepare(self._request(""))

    def _revise_summary(self) -> None:
        """A correction in the message just sent applies to the summary at once, not at
        the next compaction (``ContextEngine.revise``): else the model answers from the
        summary's old line beside it (seen by hand)."""
        if not self.config.compression.enabled:
            return
        revised = self.engine.revise(self.messages)
        if revised is not None:
            self._sync_live(revised)
            self.messages = revised

    def _maybe_compact(self, result: TurnResult) -> None:
        if not self.config.compression.enabled:
            return
        due_by_usage = not self._fresh_compaction and self.engine.should_compress()
        # The window guard's meter counts better than the rough preflight estimate (logs
        # and JSON are 2-3x it), so it may call for a compaction the estimate misses.
        request = self._request("")  # built (and repaired) once for both checks
        due_by_count = self.engine.should_compress(
            self.window.count(request, self._tools_that_fit(self._offered_tools())))
        if due_by_usage or due_by_count or self.engine.should_compress_preflight(request):
            result.compactions.append(self.compact(reason="auto"))

    def compact(self, focus: str | None = None, *, reason: str = "manual") -> Compaction:
        """Compact the conversation now (``/compact [focus]`` or automatically)."""
        self.start()
        assert self.session_id is not None
        if reason != "overflow":  # a flush request would overflow the window just as well
            self._flush_memories("it is being compacted")
        before = [self._system_message(), *self.messages]
        tools = self._tools_that_fit(self._offered_tools() or None)
        self.engine.reserve(self._tools_tokens(tools))
        output = self.engine.compress(before, self.engine.last_prompt_tokens or None,
                                      focus_topic=focus)
        report = self.engine.last_report or CompressionReport(
            len(before), len(output), 0, 0, skipped_reason="the engine reported nothing")
        # A new summary always takes the previous one apart (C10), even when the turn
        # it was merged into stays.
        compaction = Compaction(reason, report, merged=report.summary is not None and any(
            is_summary_message(message) for message in before))
        if report.changed:
            live = output[1:] if output and output[0].get("role") == "system" else output
            self._sync_live(live)
            self.messages = list(live)
            self._compacted = True
            self._fresh_compaction = True
            # C14: the prompt is rebuilt once, with memory re-read from disk, then frozen.
            self.memory.load_from_disk()
            self.system_prompt = self._build_prompt(compacted=True)
            self.sessions.update_system_prompt(self.session_id, self.system_prompt.text)
        # C19: when summarising was not enough (or not possible: the middle is too small),
        # oversized messages are cut until the context is under the threshold. Before a
        # call the newest message is left to the window guard, which cuts it only if the
        # window itself needs it. The engine sized its tail with the guard's count
        # (``count_with``), so what it just kept is not cut again here.
        fit = self._shrink_live(self.engine.threshold_tokens, tools, allow_drop=False,
                                allow_newest=reason == "manual", keep_summary=True)
        if fit is not None:
            compaction = replace(compaction, fit=replace(
                fit, goal="get under the compaction threshold"))
            self._fresh_compaction = True
        if not compaction.changed:
            log.info("compaction (%s) made no change: %s", reason, report.skipped_reason)
            return compaction
        log.info("compaction (%s): %s", reason, compaction.describe())
        self._emit("compaction", compaction=compaction)
        return compaction

    def _flush_memories(self, why: str) -> None:
        """The M8 flush turn: one chance, memory tool only, to save what lasts."""
        if "memory" not in self.tools or not self.nudger.flush_due():
            return
        self.nudger.wrote()  # one flush per stretch of turns, whatever happens below
        # Before a compaction the conversation ends with the user's message: the flush
        # prompt joins it rather than following it as a second user message (C12 c).
        request = self._request(ask=FLUSH_PROMPT.format(reason=why))
        only_memory = self._offered_tools({"memory"})
        try:
            for _ in range(_FLUSH_MAX_CALLS):
                response = self._send(request, only_memory, quiet=True)
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
            "compactions": self.engine.compression_count + self._truncations,
            "paused": bool(engine.get("paused")),
            "paused_reason": engine.get("paused_reason"),
            "model": self.client.model,
            "preparation": engine.get("preparation"),
        }

    def status_line(self) -> str:
        s = self.status()
        line = (f"tokens {s['prompt_tokens']:,}/{s['threshold_tokens']:,} · "
                f"compactions {s['compactions']}")
        if s["paused"]:
            line += " · auto-compaction paused"
        if self.writes.refused:
            line += f" · memory writes refused {self.writes.refused}"
        if s["preparation"]:
            line += f" · {describe_status(s['preparation'])}"
        return line


def _retry_reason(call_as_text: str, echo: bool, repeated: bool, copied: bool,
                  restated: bool, foreign: bool) -> str:
    """Why a reply was no answer, in the words a face shows the user (the first that
    holds, in the order the agent judges them)."""
    reasons = ((call_as_text, "it wrote a tool call as text"),
               (echo, "it was empty or copied a tool's output"),
               (repeated, "it repeated your question"),
               (copied, "it copied an earlier answer"),
               (restated, "it retold earlier messages"),
               (foreign, "it was in another language"))
    return next((reason for holds, reason in reasons if holds), "it was no answer")


def _left_out(message: Message, hide: str) -> bool:
    """True for an assistant reply a request leaves out (``Agent._request``): ``hide``,
    or only the agent's notices."""
    if message.get("role") != "assistant" or message.get("tool_calls"):
        return False
    text = content_text(message).strip()
    return bool(text) and (text == hide or not without_agent_notices(text))


def _signature(call: Any) -> str:
    """What a call does (its name and arguments), whatever its id."""
    return json.dumps(call.get("function"), sort_keys=True)


# Tool results looked back on for copies (``Agent._recent_results``): enough to hold
# every kind of tool's answer, bounded so a long session does not parse them all.
_RECENT_RESULTS = 50
_EARLIER_REPLIES = 6  # the copies seen by hand were of the last few replies


def _without_repeated_calls(message: Message,
                            calls: list[Any]) -> tuple[Message, list[Any]]:
    """``message`` and ``calls`` with each call's repeats in the same reply left out."""
    first: dict[str, Any] = {}
    for call in calls:
        first.setdefault(_signature(call), call)
    distinct = list(first.values())
    if len(distinct) == len(calls):
        return message, calls
    log.info("the model repeated %d of its %d calls in one reply; each is run once",
             len(calls) - len(distinct), len(calls))
    return {**message, "tool_calls": distinct}, distinct


def _title_of(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 60 else flat[:59] + "…"


def _terminal(run: ToolRun) -> bool:
    """The tool's answer tells the model to stop calling it this turn."""
    if run.ok or '"terminal"' not in run.result:
        return False
    try:
        return bool(json.loads(run.result).get("terminal"))
    except (ValueError, AttributeError):
        return False


def _name_of(call: Any) -> str:
    return str((call.get("function") or {}).get("name", ""))


def _not_run(call: Any) -> ToolRun:
    return ToolRun(_name_of(call), {}, '{"success": false, "error": "Not run: the tool-call '
                   'limit of this turn was reached."}', ok=False)
