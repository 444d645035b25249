"""The schema of ``state.db``, as numbered migrations recorded in ``schema_migrations``.

Each migration runs once, in order, inside one ``BEGIN IMMEDIATE`` transaction together
with the row that records it, so two processes opening a fresh database at the same time
cannot both apply it, and a crash mid-migration leaves the previous version intact. A
database written by a newer mnemo (a version this code does not know) is refused rather
than guessed at.

Layout (see docs/sessions.md):

* ``sessions`` — one row per conversation: source, model, system prompt, parent,
  started/updated/ended times, title, token counters.
* ``messages`` — every message ever appended, never deleted by compaction: ``active`` is
  whether it is still in the live context, ``compacted`` whether compaction archived it.
  ``position`` orders a session (a real number, so a compaction summary can be placed
  where the messages it replaces were). ``search_text`` holds the indexed text when it
  differs from ``content`` (list content, tool calls, a speaker name); ``cjk`` is derived.
* ``messages_fts`` — FTS5 (porter-stemmed unicode61 words) over ``message_docs``, kept in
  sync by triggers; ``messages_trigram`` — FTS5 trigram index of the rows holding CJK
  text, which has no spaces between words for the word tokenizer to split on.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from mnemo.errors import StoreError
from mnemo.sessions.records import CJK_CLASS

__all__ = ["MIGRATIONS", "Migration", "apply_migrations", "schema_version"]


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


_CORE = """
CREATE TABLE sessions (
    id                TEXT PRIMARY KEY,
    source            TEXT NOT NULL DEFAULT 'cli',
    model             TEXT NOT NULL DEFAULT '',
    system_prompt     TEXT NOT NULL DEFAULT '',
    parent_id         TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    title             TEXT,
    started_at        REAL NOT NULL,
    updated_at        REAL NOT NULL,
    ended_at          REAL,
    end_reason        TEXT,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    meta              TEXT
);
CREATE INDEX sessions_started ON sessions(started_at);
CREATE INDEX sessions_updated ON sessions(updated_at);
CREATE INDEX sessions_parent ON sessions(parent_id);

CREATE TABLE messages (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position      REAL NOT NULL,
    role          TEXT NOT NULL,
    content       TEXT,
    content_kind  TEXT NOT NULL DEFAULT 'text'
                  CHECK (content_kind IN ('text', 'parts', 'null', 'absent')),
    tool_calls    TEXT,
    tool_call_id  TEXT,
    name          TEXT,
    timestamp     REAL NOT NULL,
    active        INTEGER NOT NULL DEFAULT 1,
    compacted     INTEGER NOT NULL DEFAULT 0,
    external_id   TEXT,
    meta          TEXT,
    extra         TEXT,
    search_text   TEXT,
    cjk           INTEGER GENERATED ALWAYS AS (
                      coalesce(search_text, content, '') GLOB '*[{cjk}]*'
                  ) STORED
);
CREATE UNIQUE INDEX messages_order ON messages(session_id, position);
CREATE INDEX messages_external ON messages(session_id, external_id)
    WHERE external_id IS NOT NULL;
CREATE INDEX messages_cjk ON messages(id) WHERE cjk = 1;
""".replace("{cjk}", CJK_CLASS)

_BODY_NEW = "coalesce(new.search_text, new.content, '')"
_BODY_OLD = "coalesce(old.search_text, old.content, '')"

_FTS = f"""
CREATE VIEW message_docs AS
    SELECT id, coalesce(search_text, content, '') AS body FROM messages;

CREATE VIRTUAL TABLE messages_fts USING fts5(
    body,
    content = 'message_docs',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, body) VALUES (new.id, {_BODY_NEW});
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, body) VALUES ('delete', old.id, {_BODY_OLD});
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, search_text ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, body) VALUES ('delete', old.id, {_BODY_OLD});
    INSERT INTO messages_fts(rowid, body) VALUES (new.id, {_BODY_NEW});
END;

INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
"""

_TRIGRAM = f"""
CREATE VIRTUAL TABLE messages_trigram USING fts5(
    body,
    content = 'message_docs',
    content_rowid = 'id',
    tokenize = 'trigram'
);

CREATE TRIGGER messages_trigram_insert AFTER INSERT ON messages WHEN new.cjk BEGIN
    INSERT INTO messages_trigram(rowid, body) VALUES (new.id, {_BODY_NEW});
END;
CREATE TRIGGER messages_trigram_delete AFTER DELETE ON messages WHEN old.cjk BEGIN
    INSERT INTO messages_trigram(messages_trigram, rowid, body)
        VALUES ('delete', old.id, {_BODY_OLD});
END;
CREATE TRIGGER messages_trigram_update AFTER UPDATE OF content, search_text ON messages
BEGIN
    INSERT INTO messages_trigram(messages_trigram, rowid, body)
        SELECT 'delete', old.id, {_BODY_OLD} WHERE old.cjk;
    INSERT INTO messages_trigram(rowid, body) SELECT new.id, {_BODY_NEW} WHERE new.cjk;
END;

INSERT INTO messages_trigram(rowid, body)
    SELECT id, coalesce(search_text, content, '') FROM messages WHERE cjk = 1;
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "sessions and messages", _CORE),
    Migration(2, "full-text index (FTS5, porter)", _FTS),
    Migration(3, "trigram index for CJK text", _TRIGRAM),
)

_LEDGER = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at REAL NOT NULL
)
"""


def _statements(script: str) -> list[str]:
    """Split a script into complete statements (trigger bodies hold semicolons)."""
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    if pending.strip():
        raise ValueError(f"incomplete SQL statement in migration: {pending.strip()[:60]}")
    return statements


def schema_version(conn: sqlite3.Connection) -> int:
    """The highest migration applied to the database (0 for a new file)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def apply_migrations(
    conn: sqlite3.Connection, *, target: int | None = None, label: str = "state.db"
) -> list[int]:
    """Bring the database up to ``target`` (default: the newest); return what was applied.

    ``conn`` must be in autocommit mode (``isolation_level=None``): each migration is its
    own explicit transaction.
    """
    newest = MIGRATIONS[-1].version
    target = newest if target is None else target
    current = schema_version(conn)
    if current > newest:
        raise StoreError(
            f"{label} has schema version {current}, newer than this mnemo knows "
            f"({newest}); upgrade mnemo to open it."
        )
    applied: list[int] = []
    if current >= target:  # the common case: no write lock taken just to open
        return applied
    for migration in MIGRATIONS:
        if migration.version > target:
            break
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(_LEDGER)
            current = schema_version(conn)
            if current > newest:
                raise StoreError(
                    f"{label} has schema version {current}, newer than this mnemo knows "
                    f"({newest}); upgrade mnemo to open it."
                )
            if current >= migration.version:
                conn.execute("COMMIT")
                continue
            for statement in _statements(migration.sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, time.time()),
            )
            conn.execute("COMMIT")
            applied.append(migration.version)
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return applied
