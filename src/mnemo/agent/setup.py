"""Building an ``Agent`` from the config: which model, which summariser, which engine.

The summariser rule (SPEC §K and C15 read together): an explicitly configured auxiliary
model (``auxiliary.*`` or ``context.summary_model_override``) always summarises; with no
auxiliary model, a configured remote main model summarises; when the main model is the
embedded local one, the deterministic local summariser is used at the threshold — it is
faster on a CPU and keeps exact values a 0.5B model tends to lose — while the embedded
model prepares summaries between turns in the background (C17, ``compression.background``),
where its speed costs the user nothing; its answers are capped short, and the local
summariser fills the rest of each prepared summary's budget with its own lines.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from mnemo.agent.agent import Agent
from mnemo.agent.tools import session_tool_schemas
from mnemo.config import MnemoConfig
from mnemo.context import TEMPLATE_SECTIONS, create_engine
from mnemo.context.engine import Summarizer
from mnemo.context.registry import DEFAULT_CONTEXT_LENGTH
from mnemo.errors import MnemoError
from mnemo.home import Home
from mnemo.llm import (
    ChatClient,
    LocalChatClient,
    client_for_choice,
    make_summarizer,
    resolve_chat_client,
    resolve_model_choice,
)
from mnemo.memory.plugins import create_memory_manager
from mnemo.prompt import SystemPrompt, build_system_prompt
from mnemo.prompt.small_window import is_small_window
from mnemo.storage.factory import open_memory_store, open_session_store_or_scratch

__all__ = ["build_agent", "context_window", "preview_system_prompt", "summarizer_for"]

# The embedded model's background summaries answer in at most this many tokens (about
# 15 s at 35 tok/s); one still running when a turn begins is stopped.
_LOCAL_SUMMARY_MAX_TOKENS = 512


def summarizer_for(config: MnemoConfig, home: Home,
                   main: ChatClient | None = None) -> Summarizer | None:
    """The LLM summariser the config asks for, or None for the local summariser.

    The model is resolved on the first summary, not now: a summariser that cannot be had
    (a missing key) then fails like any other, and the compressor falls back to the local
    summary with its notice (C13) instead of the whole command failing.
    """
    aux = config.auxiliary
    explicit = bool(aux.name or aux.base_url or config.context.summary_model_override)
    if not explicit and _main_kind(config, home) != "endpoint":
        return None
    made: list[Summarizer] = []

    def summarize(prompt: str) -> str:
        if not made:
            client = (main if main is not None and not explicit
                      else resolve_chat_client(config, home=home, role="auxiliary"))
            made.append(make_summarizer(client, sections=TEMPLATE_SECTIONS))
        return made[0](prompt)

    return summarize


def _main_kind(config: MnemoConfig, home: Home) -> str:
    """ "endpoint" or "local": what the main model resolves to (``$MNEMO_BASE_URL`` too)."""
    try:
        return resolve_model_choice(config, home=home).kind
    except MnemoError:
        return "none"


def context_window(config: MnemoConfig, home: Home, client: ChatClient | None = None) -> int:
    """The main model's window: what the client knows, else ``model.context_length``, else
    the local model's window for the embedded model and 128,000 for an endpoint."""
    if client is not None and client.context_length:
        return client.context_length
    if config.model.context_length:
        return config.model.context_length
    if _main_kind(config, home) == "endpoint":
        return DEFAULT_CONTEXT_LENGTH
    return config.local.context_length


def build_agent(
    config: MnemoConfig,
    *,
    home: Home | None = None,
    cwd: Path | None = None,
    client: ChatClient | None = None,
    summarizer: Summarizer | None = None,
    platform: str | None = None,
    resume_session_id: str | None = None,
    clock: Callable[[], datetime] = datetime.now,
) -> Agent:
    """An agent with every part made from ``config`` (any part can be passed instead).

    ``client=None`` resolves the configured model (or the embedded local model); a
    ``summarizer`` passed in wins over the configured one.
    """
    home = home or Home()
    home.ensure()
    if client is None:
        choice = resolve_model_choice(config, home=home)
        client = client_for_choice(choice, home=home)
    # The embedded model, whether resolved here or passed in: its memory writes are held
    # to the strict check (M9).
    local = isinstance(client, LocalChatClient)
    if summarizer is None:
        summarizer = summarizer_for(config, home, client)
    engine = create_engine(config, home=home, summarizer=summarizer,
                           context_length=context_window(config, home, client),
                           model=client.model)
    # A damaged archive must not stop a conversation: run on a scratch store and say so.
    sessions, warning = open_session_store_or_scratch(config, home)
    agent = Agent(client=client, engine=engine, config=config, home=home,
                  memory=open_memory_store(config, home), sessions=sessions,
                  cwd=cwd, platform=platform, clock=clock,
                  resume_session_id=resume_session_id, owns_sessions=True,
                  grounding=config.memory.grounding or ("strict" if local else "lenient"))
    if warning:
        agent.notices.append(warning)
    if summarizer is not None:
        agent.enable_background(summarizer)
    elif (capped := _local_model_summarizer(config, home, client,
                                            stop=lambda: agent.gate.busy)) is not None:
        # Its answers are capped short (``_LOCAL_SUMMARY_MAX_TOKENS``): the local
        # summariser fills the rest of the budget (``completed_summary.py``). One running
        # when a turn begins is stopped: the server has one slot, and the turn goes first.
        agent.enable_background(capped, complete=True)
    return agent


def _local_model_summarizer(config: MnemoConfig, home: Home, client: ChatClient,
                            stop: Callable[[], bool] | None = None) -> Summarizer | None:
    """With the embedded model as the main model, its summaries are prepared in the
    background (C17), section grammar on: too slow to wait for at the threshold, not
    between turns. The local summariser stays the fallback at the swap."""
    if not getattr(client, "supports_grammar", False) or _main_kind(config, home) != "local":
        return None
    return make_summarizer(client, max_tokens=_LOCAL_SUMMARY_MAX_TOKENS, sections=TEMPLATE_SECTIONS,
                           stop=stop)


def preview_system_prompt(
    config: MnemoConfig,
    *,
    home: Home | None = None,
    cwd: Path | None = None,
    platform: str | None = None,
    model: str | None = None,
) -> SystemPrompt:
    """The system prompt a new session would start with, built as ``Agent.start`` builds
    it — same tools, same provider blocks — without creating a session or calling a model.

    ``model=None`` is the model the config resolves to (its name picks model guidance).
    """
    home = home or Home()
    if model is None:
        try:
            model = resolve_model_choice(config, home=home).model
        except MnemoError:
            model = config.model.name
    store = open_memory_store(config, home)
    manager = create_memory_manager(config, store=store, session_id="preview", home=home,
                                    platform=platform or config.platform)
    engine = create_engine(config, home=home, context_length=context_window(config, home),
                           model=model)
    try:
        names = [schema["name"] for schema, _ in session_tool_schemas(manager, engine)]
        return build_system_prompt(
            config=config, memory=store, cwd=cwd, platform=platform, model=model,
            tool_names=names, provider_blocks=manager.external_prompt_blocks(), home=home,
            small_window=is_small_window(context_window(config, home)))
    finally:
        manager.shutdown_all()
        close_engine = getattr(engine, "close", None)
        if callable(close_engine):
            close_engine()
