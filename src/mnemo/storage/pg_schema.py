"""The PostgreSQL schema of mnemo, as numbered migrations recorded in ``mnemo_schema_migrations``.

The same idea as the SQLite migrations (``sessions.migrations``): each migration runs once,
in order, in one transaction with the row that records it; an advisory lock makes hosts
that open a fresh database at the same time queue instead of racing; a database written
by a newer mnemo is refused. Every table carries the ``mnemo_`` prefix so mnemo can share a
database (and its backups) with other applications.

Tables (docs/storage.md has the long form):

* ``mnemo_sessions`` / ``mnemo_messages`` — the columns of ``state.db``'s ``sessions`` and
  ``messages``; ``tsv`` is the full-text vector (stemmed English plus the ``simple``
  configuration, so names and words English stemming mangles still match) under a GIN
  index; ``cjk`` flags rows holding Chinese, Japanese or Korean text, which a partial
  ``pg_trgm`` index covers. PostgreSQL text cannot hold NUL characters: a text value
  holding one is stored with U+FFFD in its column (what the index sees) and exactly, as
  JSON, in ``raw_fields``, which reading puts back — the archive stays lossless.
* ``mnemo_memory`` — one row per (namespace, store): the MEMORY.md / USER.md text. A write
  locks that row (``SELECT … FOR UPDATE``), so hosts sharing a namespace queue.
* ``mnemo_memory_archive`` — entries ``memory.overflow: archive`` moved out of a store.
* ``mnemo_imports`` — which sessions ``mnemo storage migrate`` has copied, and from where.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from mnemo.errors import StoreError

if TYPE_CHECKING:
    import psycopg

__all__ = ["PG_MIGRATIONS", "apply_pg_migrations", "pg_schema_version"]

_BODY = "coalesce(search_text, content, '')"
# What the full-text index reads: punctuation made a space, so "config/prod_db.yaml" is the
# words config, prod, db, yaml (as SQLite's unicode61 tokenizer cuts it) instead of one
# file-path token of PostgreSQL's parser, which no word of a query would match.
_WORDS = f"regexp_replace({_BODY}, '[[:punct:]]+', ' ', 'g')"

_CORE = f"""
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE mnemo_sessions (
    id                TEXT PRIMARY KEY,
    source            TEXT NOT NULL DEFAULT 'cli',
    model             TEXT NOT NULL DEFAULT '',
    system_prompt     TEXT NOT NULL DEFAULT '',
    parent_id         TEXT REFERENCES mnemo_sessions(id) ON DELETE SET NULL,
    title             TEXT,
    started_at        DOUBLE PRECISION NOT NULL,
    updated_at        DOUBLE PRECISION NOT NULL,
    ended_at          DOUBLE PRECISION,
    end_reason        TEXT,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    meta              TEXT,
    raw_fields        TEXT
);
CREATE INDEX mnemo_sessions_started ON mnemo_sessions(started_at);
CREATE INDEX mnemo_sessions_updated ON mnemo_sessions(updated_at);
CREATE INDEX mnemo_sessions_parent ON mnemo_sessions(parent_id);

CREATE TABLE mnemo_messages (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES mnemo_sessions(id) ON DELETE CASCADE,
    position      DOUBLE PRECISION NOT NULL,
    role          TEXT NOT NULL,
    content       TEXT,
    content_kind  TEXT NOT NULL DEFAULT 'text'
                  CHECK (content_kind IN ('text', 'parts', 'null', 'absent')),
    tool_calls    TEXT,
    tool_call_id  TEXT,
    name          TEXT,
    timestamp     DOUBLE PRECISION NOT NULL,
    active        INTEGER NOT NULL DEFAULT 1,
    compacted     INTEGER NOT NULL DEFAULT 0,
    external_id   TEXT,
    meta          TEXT,
    extra         TEXT,
    search_text   TEXT,
    cjk           BOOLEAN NOT NULL DEFAULT false,
    raw_fields    TEXT,
    tsv           TSVECTOR GENERATED ALWAYS AS (
                      to_tsvector('english'::regconfig, {_WORDS})
                      || to_tsvector('simple'::regconfig, {_WORDS})
                  ) STORED
);
CREATE UNIQUE INDEX mnemo_messages_order ON mnemo_messages(session_id, position);
CREATE INDEX mnemo_messages_external ON mnemo_messages(session_id, external_id)
    WHERE external_id IS NOT NULL;
CREATE INDEX mnemo_messages_tsv ON mnemo_messages USING gin (tsv);
CREATE INDEX mnemo_messages_trgm ON mnemo_messages
    USING gin ({_BODY} gin_trgm_ops) WHERE cjk;
CREATE INDEX mnemo_messages_cjk ON mnemo_messages(id) WHERE cjk;
"""

_MEMORY = """
CREATE TABLE mnemo_memory (
    namespace   TEXT NOT NULL,
    target      TEXT NOT NULL CHECK (target IN ('memory', 'user')),
    content     TEXT NOT NULL DEFAULT '',
    updated_at  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (namespace, target)
);
CREATE TABLE mnemo_memory_archive (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace   TEXT NOT NULL,
    target      TEXT NOT NULL,
    entry       TEXT NOT NULL,
    archived_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX mnemo_memory_archive_ns ON mnemo_memory_archive(namespace, id);
"""

_IMPORTS = """
CREATE TABLE mnemo_imports (
    source      TEXT NOT NULL,
    session_id  TEXT NOT NULL REFERENCES mnemo_sessions(id) ON DELETE CASCADE,
    messages    INTEGER NOT NULL,
    imported_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (source, session_id)
);
"""

PG_MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "sessions and messages, full-text and trigram indexes", _CORE),
    (2, "curated memory stores", _MEMORY),
    (3, "migration ledger", _IMPORTS),
)

_LEDGER = """
CREATE TABLE IF NOT EXISTS mnemo_schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at DOUBLE PRECISION NOT NULL
)
"""
# Any constant: every mnemo host takes the same advisory lock around its migrations.
_LOCK_KEY = 0x6D6E656D6F


def pg_schema_version(conn: psycopg.Connection[Any]) -> int:
    """The highest migration applied (0 for a database mnemo never used)."""
    row = conn.execute("SELECT to_regclass('mnemo_schema_migrations') AS t").fetchone()
    if row is None or _get(row, "t") is None:
        return 0
    top = conn.execute("SELECT max(version) AS v FROM mnemo_schema_migrations").fetchone()
    return int(_get(top, "v") or 0) if top is not None else 0


def apply_pg_migrations(conn: psycopg.Connection[Any], *, label: str) -> list[int]:
    """Bring the schema to the newest version inside the caller's transaction."""
    newest = PG_MIGRATIONS[-1][0]
    current = pg_schema_version(conn)
    _refuse_newer(current, newest, label)
    if current >= newest:  # the common case: no lock taken just to open
        return []
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
    conn.execute(_LEDGER)
    current = pg_schema_version(conn)
    _refuse_newer(current, newest, label)
    applied: list[int] = []
    for version, name, sql in PG_MIGRATIONS:
        if version <= current:
            continue
        conn.execute(sql)
        conn.execute(
            "INSERT INTO mnemo_schema_migrations(version, name, applied_at) "
            "VALUES (%s, %s, %s)", (version, name, time.time()))
        applied.append(version)
    return applied


def _refuse_newer(current: int, newest: int, label: str) -> None:
    if current > newest:
        raise StoreError(f"{label} has mnemo schema version {current}, newer than this mnemo "
                         f"knows ({newest}); upgrade mnemo to use it.")


def _get(row: Any, key: str) -> Any:
    return row[key] if isinstance(row, dict) else row[0]
