"""Building an ``Agent`` from the config: which model, which summariser, which engine.

The summariser rule (SPEC §K and C15 read together): an explicitly configured auxiliary
model (``auxiliary.*`` or ``context.summary_model_override``) always summarises; with no
auxiliary model, a configured remote main model summarises; when the main model is the
embedded local one, the deterministic local summariser is used instead — it is faster on
a CPU and keeps exact values a 0.5B model tends to lose.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from mnemo.agent.agent import Agent
from mnemo.config import MnemoConfig
from mnemo.context import TEMPLATE_SECTIONS, create_engine, default_context_length
from mnemo.context.engine import Summarizer
from mnemo.home import Home
from mnemo.llm import ChatClient, make_summarizer, resolve_chat_client
from mnemo.memory import MemoryStore
from mnemo.sessions import SessionStore

__all__ = ["build_agent", "memory_store_for", "summarizer_for"]


def summarizer_for(config: MnemoConfig, home: Home,
                   main: ChatClient | None = None) -> Summarizer | None:
    """The LLM summariser the config asks for, or None for the local summariser.

    The model is resolved on the first summary, not now: a summariser that cannot be had
    (a missing key) then fails like any other, and the compressor falls back to the local
    summary with its notice (C13) instead of the whole command failing.
    """
    aux = config.auxiliary
    explicit = bool(aux.name or aux.base_url or config.context.summary_model_override)
    remote_main = bool(config.model.name or config.model.base_url)
    if not explicit and not remote_main:
        return None
    made: list[Summarizer] = []

    def summarize(prompt: str) -> str:
        if not made:
            client = (main if main is not None and not explicit
                      else resolve_chat_client(config, home=home, role="auxiliary"))
            made.append(make_summarizer(client, sections=TEMPLATE_SECTIONS))
        return made[0](prompt)

    return summarize


def memory_store_for(config: MnemoConfig, home: Home) -> MemoryStore:
    cfg = config.memory
    return MemoryStore(home.memories_dir, memory_char_limit=cfg.memory_char_limit,
                       user_char_limit=cfg.user_char_limit, overflow=cfg.overflow)


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
    client = client or resolve_chat_client(config, home=home)
    if summarizer is None:
        summarizer = summarizer_for(config, home, client)
    engine = create_engine(config, home=home, summarizer=summarizer,
                           context_length=client.context_length or default_context_length(config),
                           model=client.model)
    return Agent(client=client, engine=engine, config=config, home=home,
                 memory=memory_store_for(config, home), sessions=SessionStore(home.state_db),
                 cwd=cwd, platform=platform, clock=clock, resume_session_id=resume_session_id,
                 owns_sessions=True)
