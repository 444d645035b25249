"""Where a home's data lives and how it is doing: ``mnemo storage status`` and ``mnemo doctor``.

``storage_status`` describes whichever backend the configuration selects — the schema
version, how many sessions and messages are stored, how full each memory store is and,
for PostgreSQL, the round-trip time of a trivial query (the latency every store call
pays at least once). It opens nothing for writing: a home without ``state.db`` is
reported as empty, not created.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from contextlib import closing
from dataclasses import asdict, dataclass, field
from typing import Any

from mnemo.config import MnemoConfig
from mnemo.home import Home
from mnemo.memory.entries import TARGETS
from mnemo.memory.store import MemoryStore
from mnemo.sessions.migrations import schema_version
from mnemo.storage.factory import open_pg, storage_url
from mnemo.storage.pg import redact_url

__all__ = ["StorageStatus", "storage_status"]

_PINGS = 5


@dataclass
class StorageStatus:
    backend: str  # "sqlite" or "postgresql"
    location: str  # the file, or the URL without its password
    schema_version: int
    sessions: int
    messages: int
    memory: dict[str, str] = field(default_factory=dict)  # store -> usage line
    namespace: str | None = None
    latency_ms: float | None = None  # median of a few SELECT 1 round trips

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def storage_status(config: MnemoConfig, home: Home) -> StorageStatus:
    """Describe the configured storage (raises ``StoreError`` when it cannot be reached)."""
    url = storage_url(config)
    if not url:
        return _sqlite_status(config, home)
    return _pg_status(config, url)


def _sqlite_status(config: MnemoConfig, home: Home) -> StorageStatus:
    version = sessions = messages = 0
    if home.state_db.exists():
        with closing(sqlite3.connect(f"file:{home.state_db}?mode=ro", uri=True)) as conn:
            version = schema_version(conn)
            if version:
                sessions = int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])
                messages = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    store = MemoryStore.from_config(config, home)
    return StorageStatus(
        backend="sqlite", location=str(home.state_db), schema_version=version,
        sessions=sessions, messages=messages,
        memory={t: store.read(t)["usage"] for t in TARGETS},
    )


def _pg_status(config: MnemoConfig, url: str) -> StorageStatus:
    from mnemo.memory.pg_store import PgMemoryStore
    from mnemo.storage.pg_schema import pg_schema_version

    db = open_pg(url)
    try:
        rounds: list[float] = []
        for _ in range(_PINGS):
            start = time.perf_counter()
            db.run(lambda conn: conn.execute("SELECT 1").fetchone())
            rounds.append((time.perf_counter() - start) * 1000)
        row: Any = db.run(lambda conn: conn.execute(
            "SELECT (SELECT count(*) FROM mnemo_sessions) AS s, "
            "(SELECT count(*) FROM mnemo_messages) AS m").fetchone())
        version = db.run(pg_schema_version)
        store = PgMemoryStore(db, namespace=config.storage.namespace,
                              memory_char_limit=config.memory.memory_char_limit,
                              user_char_limit=config.memory.user_char_limit, owns_db=False)
        memory: dict[str, str] = {t: store.read(t)["usage"] for t in TARGETS}
    finally:
        db.close()
    return StorageStatus(
        backend="postgresql", location=redact_url(url), schema_version=version,
        sessions=int(row["s"]), messages=int(row["m"]), memory=memory,
        namespace=config.storage.namespace, latency_ms=round(statistics.median(rounds), 2),
    )
