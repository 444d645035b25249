"""``SessionStore``: every conversation and every message, in ``$MNEMO_HOME/state.db``.

The agent creates a session, appends each message as it happens, and on compaction calls
``archive_and_replace``: the compacted messages are flagged (``active=0, compacted=1``),
never deleted, and the summary that replaces them is inserted where they were, in the same
transaction. ``load_messages`` gives back the live context; ``search``, ``read_session``
and ``messages_around`` reach everything, archived or not (SPEC D1–D3). The compaction
methods are thin: their work lives in ``archive``; row encoding in ``rows``, ranking in
``search``.

Safe to use from several threads (one SQLite connection per thread) and several
processes (WAL; writers queue on the busy timeout). Methods return new objects and never
keep or change the dicts a caller passes in.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from mnemo.errors import UsageError
from mnemo.home import Home
from mnemo.messages import Message
from mnemo.sessions import archive
from mnemo.sessions.db import DEFAULT_BUSY_TIMEOUT, Database
from mnemo.sessions.live import LiveSync
from mnemo.sessions.records import SearchHit, SessionInfo, StoredMessage, clean_optional, clean_text
from mnemo.sessions.rows import (
    encode_rows,
    insert_rows,
    message_id_param,
    meta_json,
    no_session,
    require_session,
    sql_count,
    touch,
)
from mnemo.sessions.search import SearchFilters, SearchTuning, run_search

__all__ = ["MAX_SEARCH_LIMIT", "SessionStore", "new_session_id"]

MAX_SEARCH_LIMIT = 1000

_SESSION_COLUMNS = """
    s.*,
    (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS message_count,
    (SELECT count(*) FROM messages m WHERE m.session_id = s.id AND m.compacted = 1)
        AS archived_count,
    (SELECT substr(coalesce(m.search_text, m.content, ''), 1, 200) FROM messages m
        WHERE m.session_id = s.id AND m.role = 'user' ORDER BY m.position LIMIT 1) AS preview
"""


def new_session_id(now: float | None = None) -> str:
    """A sortable, readable id: ``20250131_142501_9f3a1c``."""
    stamp = datetime.fromtimestamp(time.time() if now is None else now).strftime("%Y%m%d_%H%M%S")
    return f"{stamp}_{secrets.token_hex(3)}"


class SessionStore:
    """Sessions and their messages in one SQLite file (``None`` = ``$MNEMO_HOME/state.db``)."""

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        search_tuning: SearchTuning | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else Home().state_db
        self.location = str(self.path)  # where the archive lives, for people to read
        self.search_tuning = search_tuning or SearchTuning()
        self._db = Database(self.path, busy_timeout=busy_timeout)

    def __repr__(self) -> str:
        return f"SessionStore({str(self.path)!r})"

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections of every thread; the store cannot be used afterwards."""
        self._db.close()

    def journal_mode(self) -> str:
        """SQLite's journal mode for this file (``"wal"``)."""
        return self._db.journal_mode()

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
        """Start a session and return its id (a new one unless ``session_id`` is given).

        ``messages``, if given, are stored in the same transaction (an import is then
        all or nothing: no empty session is left behind by a bad message).
        """
        now = time.time() if started_at is None else started_at
        sid = session_id or new_session_id(now)
        session_meta = meta_json(meta)
        rows = encode_rows(messages) if messages else []
        with self._db.transaction() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone():
                raise UsageError(f"session {sid!r} already exists; pick another id or omit it.")
            if parent_id is not None and not conn.execute(
                "SELECT 1 FROM sessions WHERE id = ?", (parent_id,)
            ).fetchone():
                raise UsageError(f"parent session {parent_id!r} does not exist.")
            conn.execute(
                "INSERT INTO sessions (id, source, model, system_prompt, parent_id, title, "
                "started_at, updated_at, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (sid, clean_text(source), clean_text(model), clean_text(system_prompt),
                 parent_id, clean_optional(title), now, now, session_meta),
            )
            if rows:
                insert_rows(conn, sid, rows, [float(i + 1) for i in range(len(rows))])
                touch(conn, sid, rows)
        return sid

    def get_session(self, session_id: str) -> SessionInfo | None:
        """The session with this id, or ``None``."""
        with self._db.reading() as conn:
            row = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id = ?", (session_id,)
            ).fetchone()
        return SessionInfo.from_row(row) if row else None

    def _update_session(self, session_id: str, assignments: str, params: Sequence[Any]) -> None:
        with self._db.transaction() as conn:
            cursor = conn.execute(
                f"UPDATE sessions SET {assignments} WHERE id = ?", [*params, session_id]
            )
            if cursor.rowcount == 0:
                raise UsageError(no_session(session_id))

    def update_system_prompt(self, session_id: str, system_prompt: str) -> None:
        self._update_session(session_id, "system_prompt = ?", [clean_text(system_prompt)])

    def set_title(self, session_id: str, title: str | None) -> None:
        self._update_session(session_id, "title = ?", [clean_optional(title)])

    def set_model(self, session_id: str, model: str) -> None:
        """Record the model the session now talks to (after a switch mid-session)."""
        self._update_session(session_id, "model = ?", [clean_text(model)])

    def end_session(self, session_id: str, reason: str | None = None) -> None:
        """Record that the session ended (it can still be appended to when resumed)."""
        now = time.time()
        self._update_session(
            session_id, "ended_at = ?, end_reason = ?, updated_at = ?",
            [now, clean_optional(reason), now]
        )

    def add_token_usage(self, session_id: str, prompt_tokens: int, completion_tokens: int) -> None:
        """Add one model call's usage to the session's counters."""
        self._update_session(
            session_id,
            "prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?",
            [int(prompt_tokens), int(completion_tokens)],
        )

    def list_sessions(
        self, limit: int = 20, offset: int = 0, *, source: str | None = None
    ) -> list[SessionInfo]:
        """Sessions, newest first (by start time)."""
        where, params = ("WHERE s.source = ?", [source]) if source else ("", [])
        with self._db.reading() as conn:
            rows = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions s {where} "
                f"ORDER BY s.started_at DESC, s.id DESC LIMIT ? OFFSET ?",
                [*params, sql_count(limit, "limit"), sql_count(offset, "offset")],
            ).fetchall()
        return [SessionInfo.from_row(r) for r in rows]

    def recent_sessions(
        self, limit: int = 5, *, exclude_session_id: str | None = None
    ) -> list[SessionInfo]:
        """Sessions with the latest activity first (last message, end or start)."""
        with self._db.reading() as conn:
            rows = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id IS NOT ? "
                f"ORDER BY s.updated_at DESC, s.id DESC LIMIT ?",
                [exclude_session_id, sql_count(limit, "limit")],
            ).fetchall()
        return [SessionInfo.from_row(r) for r in rows]

    def delete_session(self, session_id: str) -> int:
        """Delete a session and all its messages (a user's choice, never compaction's)."""
        with self._db.transaction() as conn:
            count = conn.execute(
                "SELECT count(*) FROM messages WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            if conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount == 0:
                raise UsageError(no_session(session_id))
        return int(count)

    # -- messages ------------------------------------------------------------------------

    def append_message(
        self,
        session_id: str,
        message: Message | dict[str, Any],
        *,
        timestamp: float | None = None,
        external_id: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> int:
        """Store one message at the end of the session; return its id."""
        return self.append_messages(
            session_id, [message],
            timestamps=None if timestamp is None else [timestamp],
            external_ids=[external_id], metas=[meta],
        )[0]

    def append_messages(
        self,
        session_id: str,
        messages: Sequence[Message | dict[str, Any]],
        *,
        timestamps: Sequence[float] | None = None,
        external_ids: Sequence[str | None] | None = None,
        metas: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[int]:
        """Store messages at the end of the session in one transaction (all or none)."""
        rows = encode_rows(messages, timestamps, external_ids, metas)
        with self._db.transaction() as conn:
            require_session(conn, session_id)
            top = conn.execute(
                "SELECT max(position) FROM messages WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            start = int(top) + 1 if top is not None else 1
            ids = insert_rows(conn, session_id, rows, [start + i for i in range(len(rows))])
            touch(conn, session_id, rows)
        return ids

    def load_messages(self, session_id: str, *, active_only: bool = True,
                      role: str | None = None) -> list[StoredMessage]:
        """The session's messages in order; by default only the live (non-archived)
        ones; ``role``: only that role's (the archive holds every pruned tool output,
        which a reader of what the user said need not load)."""
        where = ("AND active = 1 " if active_only else "") + ("AND role = ?" if role else "")
        with self._db.reading() as conn:
            rows = conn.execute(
                f"SELECT * FROM messages WHERE session_id = ? {where} ORDER BY position",
                (session_id, *((role,) if role else ())),
            ).fetchall()
        return [StoredMessage.from_row(r) for r in rows]

    def get_message(self, message_id: int) -> StoredMessage | None:
        with self._db.reading() as conn:
            row = conn.execute("SELECT * FROM messages WHERE id = ?",
                               (message_id_param(message_id),)).fetchone()
        return StoredMessage.from_row(row) if row else None

    def archive_and_replace(
        self,
        session_id: str,
        archived_ids: Sequence[int],
        replacements: Sequence[Message | dict[str, Any]],
        *,
        meta: dict[str, Any] | None = None,
    ) -> list[int]:
        """Archive messages out of the live context and insert what replaces them, atomically.

        The archived messages get ``active=0, compacted=1`` and stay searchable. The
        replacements (a compaction summary, usually) are placed right after the last
        archived message, so ``load_messages`` returns head, summary, tail in order; each
        records the ids it replaces in ``meta["replaces"]`` (see ``originals_of``).
        """
        return archive.archive_and_replace(self._db, session_id, archived_ids, replacements,
                                           meta=meta)

    def sync_live(
        self,
        session_id: str,
        messages: Sequence[Message | dict[str, Any]],
        *,
        meta: dict[str, Any] | None = None,
    ) -> LiveSync:
        """Make the session's live context equal ``messages``, in one transaction.

        For a context engine's output: stored messages that are still in the list (equal
        dicts, in order) are kept; the others are archived (``compacted``, never
        deleted); messages that are new or changed are inserted where they stand in the
        list, each after the archived messages it replaces, with their ids in
        ``meta["replaces"]``. Calling it again with the same list changes nothing.
        """
        return archive.sync_live(self._db, session_id, messages, meta=meta)

    def originals_of(self, message_id: int) -> list[StoredMessage]:
        """The archived messages a replacement (summary) stands for, in order."""
        return archive.originals_of(self._db, message_id)

    def count_messages(self, session_id: str | None = None) -> int:
        with self._db.reading() as conn:
            if session_id is None:
                return int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
            return int(conn.execute(
                "SELECT count(*) FROM messages WHERE session_id = ?", (session_id,)
            ).fetchone()[0])

    # -- reading and search --------------------------------------------------------------

    def read_session(
        self,
        session_id: str,
        offset: int = 0,
        limit: int | None = 50,
        *,
        include_archived: bool = True,
    ) -> list[StoredMessage]:
        """A page of the session in order (``limit=None``: to the end), archived included."""
        where = "" if include_archived else "AND active = 1"
        with self._db.reading() as conn:
            rows = conn.execute(
                f"SELECT * FROM messages WHERE session_id = ? {where} "
                f"ORDER BY position LIMIT ? OFFSET ?",
                (session_id, -1 if limit is None else sql_count(limit, "limit"),
                 sql_count(offset, "offset")),
            ).fetchall()
        return [StoredMessage.from_row(r) for r in rows]

    def messages_around(
        self, message_id: int, before: int = 3, after: int = 3
    ) -> list[StoredMessage]:
        """The message and its neighbours in its session (archived ones included)."""
        with self._db.snapshot() as conn:
            row = conn.execute(
                "SELECT session_id, position FROM messages WHERE id = ?",
                (message_id_param(message_id),),
            ).fetchone()
            if row is None:
                raise UsageError(f"no message {message_id}; use an id from a search result.")
            sid, pos = row["session_id"], row["position"]
            earlier = conn.execute(
                "SELECT * FROM messages WHERE session_id = ? AND position < ? "
                "ORDER BY position DESC LIMIT ?", (sid, pos, sql_count(before, "before")),
            ).fetchall()
            rest = conn.execute(
                "SELECT * FROM messages WHERE session_id = ? AND position >= ? "
                "ORDER BY position LIMIT ?", (sid, pos, min(sql_count(after, "after"), 10**9) + 1),
            ).fetchall()
        return [StoredMessage.from_row(r) for r in [*reversed(earlier), *rest]]

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
        """The messages that best match ``query``, best first; any text is a valid query.

        ``exclude_session_id`` leaves a whole session out; ``exclude_active_of`` leaves out
        only that session's live messages (what the model already sees) but keeps what
        compaction archived. ``role`` limits to one role or several.
        """
        if not isinstance(query, str):
            raise UsageError(f"a search query must be text, not {type(query).__name__}.")
        roles = (role,) if isinstance(role, str) else tuple(role or ())
        filters = SearchFilters(
            session_id=session_id,
            exclude_session_id=exclude_session_id,
            exclude_active_of=exclude_active_of,
            roles=roles,
            include_archived=include_archived,
        )
        with self._db.snapshot() as conn:
            return run_search(
                conn, query, limit=min(sql_count(limit, "limit"), MAX_SEARCH_LIMIT),
                filters=filters,
                tuning=self.search_tuning,
            )

