"""Opening the session store and the memory store the configuration asks for.

The one place that reads ``storage.url`` (with ``MNEMO_STORAGE_URL`` winning over it):
empty means the home's ``state.db`` and memory files, a ``postgresql://`` URL means
PostgreSQL. Agent setup, the CLI and the engines call these instead of constructing a
backend, so no caller ever branches on the backend (STYLE: one module per backend behind
the store interfaces). This module sits above ``sessions/`` and ``memory/``.
"""

from __future__ import annotations

import os

from mnemo.config import MnemoConfig
from mnemo.errors import ConfigError
from mnemo.home import Home
from mnemo.memory.store import MemoryStore
from mnemo.sessions.repair import open_or_scratch
from mnemo.sessions.store import SessionStore
from mnemo.storage.pg import PgDatabase

__all__ = ["STORAGE_URL_ENV", "open_memory_store", "open_pg", "open_session_store",
           "open_session_store_or_scratch", "storage_url"]

STORAGE_URL_ENV = "MNEMO_STORAGE_URL"


def storage_url(config: MnemoConfig | None = None) -> str:
    """The storage URL in force: ``$MNEMO_STORAGE_URL``, else ``storage.url`` ("" = files)."""
    url = os.environ.get(STORAGE_URL_ENV)
    if url is None:
        return config.storage.url if config is not None else ""
    url = url.strip()
    if url and not url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(f"{STORAGE_URL_ENV} must be empty or a postgresql:// URL, not "
                          f"{url.split(':', 1)[0]!r}…", key="storage.url")
    return url


def open_pg(url: str, *, connect_timeout: float = 5.0) -> PgDatabase:
    """A ``PgDatabase`` for ``url`` with the schema brought up to date.

    ``connect_timeout``: seconds to wait for a connection; a call that gets none tries a
    fresh pool once more, then fails with one line.
    """
    from mnemo.storage.pg_schema import apply_pg_migrations

    db = PgDatabase(url, connect_timeout=connect_timeout)
    try:
        db.run(lambda conn: apply_pg_migrations(conn, label=db.where), what="schema migration")
    except BaseException:
        db.close()
        raise
    return db


def open_session_store(config: MnemoConfig, home: Home | None = None) -> SessionStore:
    """The session archive of this configuration (caller closes it)."""
    url = storage_url(config)
    if not url:
        return SessionStore((home or Home()).state_db)
    from mnemo.sessions.pg_store import PgSessionStore

    return PgSessionStore(open_pg(url))


def open_session_store_or_scratch(config: MnemoConfig, home: Home | None = None
                                  ) -> tuple[SessionStore, str | None]:
    """Like ``open_session_store``, but a damaged ``state.db`` gives a scratch store and a
    warning instead of an error, so a conversation can still run (PostgreSQL has no
    file to be damaged: its errors are raised as usual)."""
    if storage_url(config):
        return open_session_store(config, home), None
    return open_or_scratch((home or Home()).state_db)


def open_memory_store(config: MnemoConfig, home: Home | None = None) -> MemoryStore:
    """The curated memory of this configuration (the home's files or the namespace)."""
    url = storage_url(config)
    if not url:
        return MemoryStore.from_config(config, home)
    from mnemo.memory.pg_store import PgMemoryStore

    cfg = config.memory
    return PgMemoryStore(open_pg(url), namespace=config.storage.namespace,
                         memory_char_limit=cfg.memory_char_limit,
                         user_char_limit=cfg.user_char_limit, overflow=cfg.overflow)
