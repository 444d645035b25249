"""``PgSessionStore``: the session archive in PostgreSQL, with the ``SessionStore`` API.

Chosen by ``storage.url`` through ``mnemo.storage.open_session_store``; callers never
know which backend they hold. It subclasses ``SessionStore`` so it can stand wherever one
is typed, and overrides every public method (none of the SQLite code runs; ``_db`` is
absent on purpose, so a method added to ``SessionStore`` without a PostgreSQL twin fails
loudly instead of touching a file). Messages are encoded by the same ``rows.encode_rows``,
compaction follows the same plan (``pg_archive``), and search applies the same rescoring
on top of PostgreSQL's full-text index (``pg_search``).

Every method is one transaction through ``PgDatabase.run`` (retried once on a lost
connection); many hosts can write at once, and the writers of one session queue on its
row lock.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mnemo.errors import UsageError
from mnemo.messages import Message
from mnemo.sessions import pg_archive
from mnemo.sessions.live import LiveSync
from mnemo.sessions.pg_rows import (
    insert_rows,
    lock_session,
    merge_raw,
    message_from_row,
    session_from_row,
    split_nul,
    touch,
)
from mnemo.sessions.pg_search import run_pg_search
from mnemo.sessions.records import SearchHit, SessionInfo, StoredMessage, clean_optional, clean_text
from mnemo.sessions.rows import encode_rows, message_id_param, meta_json, no_session, sql_count
from mnemo.sessions.search import SearchFilters, SearchTuning
from mnemo.sessions.store import MAX_SEARCH_LIMIT, SessionStore, new_session_id
from mnemo.storage.pg import PgDatabase, redact_url

if TYPE_CHECKING:
    import psycopg

__all__ = ["PgSessionStore"]

_SESSION_COLUMNS = """
    s.*,
    (SELECT count(*) FROM mnemo_messages m WHERE m.session_id = s.id) AS message_count,
    (SELECT count(*) FROM mnemo_messages m WHERE m.session_id = s.id AND m.compacted = 1)
        AS archived_count,
    (SELECT substr(coalesce(m.search_text, m.content, ''), 1, 200) FROM mnemo_messages m
        WHERE m.session_id = s.id AND m.role = 'user' ORDER BY m.position LIMIT 1) AS preview
"""

def _sid(value: Any) -> Any:
    """A session id as given, refused with SQLite's message when it is not text.

    PostgreSQL would quietly compare a list's text form; the SQLite store refuses it.
    """
    if value is not None and not isinstance(value, str):
        raise UsageError(f"the session store was given a value it cannot store or look up "
                         f"(a session id must be text, not {type(value).__name__}).")
    return value


class PgSessionStore(SessionStore):
    """Sessions and their messages in a PostgreSQL database (shared by many hosts)."""

    def __init__(self, db: PgDatabase, *, search_tuning: SearchTuning | None = None,
                 owns_db: bool = True) -> None:
        # SessionStore.__init__ is not called: it would open a SQLite file.
        self.db = db
        self.location = redact_url(db.url)
        self.search_tuning = search_tuning or SearchTuning()
        self._owns_db = owns_db

    def __repr__(self) -> str:
        return f"PgSessionStore({self.location!r})"

    def close(self) -> None:
        if self._owns_db:
            self.db.close()

    def journal_mode(self) -> str:
        return "postgresql"

    # -- sessions ------------------------------------------------------------------------

    def create_session(
        self,
        *,
        source: str = "cli",
        model: str = "",
        system_prompt: str = "",
        parent_id: str | None = None,
        title: str | None = None,
        session_id: str | None = None,
        started_at: float | None = None,
        meta: dict[str, Any] | None = None,
        messages: Sequence[Message | dict[str, Any]] = (),
    ) -> str:
        now = time.time() if started_at is None else started_at
        sid = session_id or new_session_id(now)
        session_meta = meta_json(meta)
        rows = encode_rows(messages) if messages else []

        def work(conn: psycopg.Connection[Any]) -> str:
            if parent_id is not None and conn.execute(
                "SELECT 1 FROM mnemo_sessions WHERE id = %s", (parent_id,)
            ).fetchone() is None:
                raise UsageError(f"parent session {parent_id!r} does not exist.")
            text, raw = split_nul({"source": clean_text(source), "model": clean_text(model),
                                   "system_prompt": clean_text(system_prompt),
                                   "title": clean_optional(title)})
            created = conn.execute(
                "INSERT INTO mnemo_sessions (id, source, model, system_prompt, parent_id, "
                "title, started_at, updated_at, meta, raw_fields) VALUES (%s, %s, %s, %s, %s, "
                "%s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING id",
                (sid, text["source"], text["model"], text["system_prompt"], parent_id,
                 text["title"], now, now, session_meta, raw),
            ).fetchone()
            if created is None:
                raise UsageError(f"session {sid!r} already exists; pick another id or omit it.")
            if rows:
                insert_rows(conn, sid, rows, [float(i + 1) for i in range(len(rows))])
                touch(conn, sid, rows)
            return sid

        return self.db.run(work, what="session create")

    def get_session(self, session_id: str) -> SessionInfo | None:
        _sid(session_id)
        row = self.db.run(lambda conn: conn.execute(
            f"SELECT {_SESSION_COLUMNS} FROM mnemo_sessions s WHERE s.id = %s", (session_id,)
        ).fetchone())
        return session_from_row(row) if row else None

    def _update_session(self, session_id: str, assignments: str, params: Sequence[Any]) -> None:
        def work(conn: psycopg.Connection[Any]) -> None:
            cursor = conn.execute(f"UPDATE mnemo_sessions SET {assignments} WHERE id = %s",
                                  [*params, session_id])
            if cursor.rowcount == 0:
                raise UsageError(no_session(session_id))

        self.db.run(work, what="session update")

    def _set_text(self, session_id: str, column: str, value: str | None,
                  more: str = "", params: Sequence[Any] = ()) -> None:
        """Set one text column, keeping its exact value in ``raw_fields`` if it holds NUL."""
        text, raw = split_nul({column: value})

        def work(conn: psycopg.Connection[Any]) -> None:
            row = conn.execute("SELECT raw_fields FROM mnemo_sessions WHERE id = %s FOR UPDATE",
                               (session_id,)).fetchone()
            if row is None:
                raise UsageError(no_session(session_id))
            conn.execute(f"UPDATE mnemo_sessions SET {column} = %s, raw_fields = %s{more} "
                         f"WHERE id = %s",
                         [text[column], merge_raw(row["raw_fields"], column, raw), *params,
                          session_id])

        self.db.run(work, what="session update")

    def update_system_prompt(self, session_id: str, system_prompt: str) -> None:
        self._set_text(session_id, "system_prompt", clean_text(system_prompt))

    def set_title(self, session_id: str, title: str | None) -> None:
        self._set_text(session_id, "title", clean_optional(title))

    def set_model(self, session_id: str, model: str) -> None:
        self._set_text(session_id, "model", clean_text(model))

    def end_session(self, session_id: str, reason: str | None = None) -> None:
        now = time.time()
        self._set_text(session_id, "end_reason", clean_optional(reason),
                       ", ended_at = %s, updated_at = %s", [now, now])

    def add_token_usage(self, session_id: str, prompt_tokens: int, completion_tokens: int) -> None:
        self._update_session(
            session_id,
            "prompt_tokens = prompt_tokens + %s, completion_tokens = completion_tokens + %s",
            [int(prompt_tokens), int(completion_tokens)],
        )

    def list_sessions(
        self, limit: int = 20, offset: int = 0, *, source: str | None = None
    ) -> list[SessionInfo]:
        where, params = ("WHERE s.source = %s", [source]) if source else ("", [])
        rows = self.db.run(lambda conn: conn.execute(
            f"SELECT {_SESSION_COLUMNS} FROM mnemo_sessions s {where} "
            f"ORDER BY s.started_at DESC, s.id DESC LIMIT %s OFFSET %s",
            [*params, sql_count(limit, "limit"), sql_count(offset, "offset")],
        ).fetchall())
        return [session_from_row(r) for r in rows]

    def recent_sessions(
        self, limit: int = 5, *, exclude_session_id: str | None = None
    ) -> list[SessionInfo]:
        rows = self.db.run(lambda conn: conn.execute(
            f"SELECT {_SESSION_COLUMNS} FROM mnemo_sessions s "
            f"WHERE s.id IS DISTINCT FROM %s ORDER BY s.updated_at DESC, s.id DESC LIMIT %s",
            [exclude_session_id, sql_count(limit, "limit")],
        ).fetchall())
        return [session_from_row(r) for r in rows]

    def delete_session(self, session_id: str) -> int:
        def work(conn: psycopg.Connection[Any]) -> int:
            count = conn.execute("SELECT count(*) AS n FROM mnemo_messages WHERE session_id = %s",
                                 (session_id,)).fetchone()
            if conn.execute("DELETE FROM mnemo_sessions WHERE id = %s",
                            (session_id,)).rowcount == 0:
                raise UsageError(no_session(session_id))
            return int(count["n"]) if count else 0

        return self.db.run(work, what="session delete")

    # -- messages ------------------------------------------------------------------------

    def append_messages(
        self,
        session_id: str,
        messages: Sequence[Message | dict[str, Any]],
        *,
        timestamps: Sequence[float] | None = None,
        external_ids: Sequence[str | None] | None = None,
        metas: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[int]:
        rows = encode_rows(messages, timestamps, external_ids, metas)
        _sid(session_id)

        def work(conn: psycopg.Connection[Any]) -> list[int]:
            lock_session(conn, session_id)
            top = conn.execute("SELECT max(position) AS p FROM mnemo_messages "
                               "WHERE session_id = %s", (session_id,)).fetchone()
            start = int(top["p"]) + 1 if top and top["p"] is not None else 1
            ids = insert_rows(conn, session_id, rows, [start + i for i in range(len(rows))])
            touch(conn, session_id, rows)
            return ids

        return self.db.run(work, what="message append")

    def load_messages(self, session_id: str, *, active_only: bool = True,
                      role: str | None = None) -> list[StoredMessage]:
        where = ("AND active = 1 " if active_only else "") + ("AND role = %s" if role else "")
        _sid(session_id)
        rows = self.db.run(lambda conn: conn.execute(
            f"SELECT * FROM mnemo_messages WHERE session_id = %s {where} ORDER BY position",
            (session_id, *((role,) if role else ())),
        ).fetchall())
        return [message_from_row(r) for r in rows]

    def get_message(self, message_id: int) -> StoredMessage | None:
        key = message_id_param(message_id)
        row = self.db.run(lambda conn: conn.execute(
            "SELECT * FROM mnemo_messages WHERE id = %s", (key,)).fetchone())
        return message_from_row(row) if row else None

    def archive_and_replace(
        self,
        session_id: str,
        archived_ids: Sequence[int],
        replacements: Sequence[Message | dict[str, Any]],
        *,
        meta: dict[str, Any] | None = None,
    ) -> list[int]:
        return pg_archive.archive_and_replace(self.db, session_id, archived_ids, replacements,
                                              meta=meta)

    def sync_live(
        self,
        session_id: str,
        messages: Sequence[Message | dict[str, Any]],
        *,
        meta: dict[str, Any] | None = None,
    ) -> LiveSync:
        return pg_archive.sync_live(self.db, session_id, messages, meta=meta)

    def originals_of(self, message_id: int) -> list[StoredMessage]:
        return pg_archive.originals_of(self.db, message_id)

    def count_messages(self, session_id: str | None = None) -> int:
        def work(conn: psycopg.Connection[Any]) -> int:
            if session_id is None:
                row = conn.execute("SELECT count(*) AS n FROM mnemo_messages").fetchone()
            else:
                row = conn.execute("SELECT count(*) AS n FROM mnemo_messages "
                                   "WHERE session_id = %s", (session_id,)).fetchone()
            return int(row["n"]) if row else 0

        return self.db.run(work)

    # -- reading and search --------------------------------------------------------------

    def read_session(
        self,
        session_id: str,
        offset: int = 0,
        limit: int | None = 50,
        *,
        include_archived: bool = True,
    ) -> list[StoredMessage]:
        where = "" if include_archived else "AND active = 1"
        _sid(session_id)
        rows = self.db.run(lambda conn: conn.execute(
            f"SELECT * FROM mnemo_messages WHERE session_id = %s {where} "
            f"ORDER BY position LIMIT %s OFFSET %s",
            (session_id, None if limit is None else sql_count(limit, "limit"),
             sql_count(offset, "offset")),
        ).fetchall())
        return [message_from_row(r) for r in rows]

    def messages_around(
        self, message_id: int, before: int = 3, after: int = 3
    ) -> list[StoredMessage]:
        key = message_id_param(message_id)
        n_before, n_after = sql_count(before, "before"), min(sql_count(after, "after"), 10**9)

        def work(conn: psycopg.Connection[Any]) -> list[Any]:
            row = conn.execute("SELECT session_id, position FROM mnemo_messages WHERE id = %s",
                               (key,)).fetchone()
            if row is None:
                raise UsageError(f"no message {message_id}; use an id from a search result.")
            sid, pos = row["session_id"], row["position"]
            earlier = conn.execute(
                "SELECT * FROM mnemo_messages WHERE session_id = %s AND position < %s "
                "ORDER BY position DESC LIMIT %s", (sid, pos, n_before)).fetchall()
            rest = conn.execute(
                "SELECT * FROM mnemo_messages WHERE session_id = %s AND position >= %s "
                "ORDER BY position LIMIT %s", (sid, pos, n_after + 1)).fetchall()
            return [*reversed(earlier), *rest]

        return [message_from_row(r) for r in self.db.run(work)]

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        session_id: str | None = None,
        exclude_session_id: str | None = None,
        exclude_active_of: str | None = None,
        role: str | Sequence[str] | None = None,
        include_archived: bool = True,
    ) -> list[SearchHit]:
        if not isinstance(query, str):
            raise UsageError(f"a search query must be text, not {type(query).__name__}.")
        roles = (role,) if isinstance(role, str) else tuple(role or ())
        for value in (session_id, exclude_session_id, exclude_active_of, *roles):
            _sid(value)
        filters = SearchFilters(
            session_id=session_id,
            exclude_session_id=exclude_session_id,
            exclude_active_of=exclude_active_of,
            roles=roles,
            include_archived=include_archived,
        )
        capped = min(sql_count(limit, "limit"), MAX_SEARCH_LIMIT)
        return self.db.run(lambda conn: run_pg_search(
            conn, query, limit=capped, filters=filters, tuning=self.search_tuning),
            what="search")
