"""Messages as rows of ``mnemo_messages``: the PostgreSQL twin of ``rows``' write steps.

The batch is checked and encoded by ``rows.encode_rows`` exactly as for SQLite (one set of
rules for what a message may hold); this module only writes it, and turns rows back into
``StoredMessage`` / ``SessionInfo``. PostgreSQL text cannot hold NUL characters, which
SQLite stores: ``split_nul`` keeps each text value holding one twice — with U+FFFD in its
own column (searchable) and exactly, JSON-escaped, in ``raw_fields`` — and
``message_from_row`` / ``session_from_row`` put the exact value back, so the archive
stays lossless. (JSON columns never hold a raw NUL: ``json.dumps`` escapes it.)
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mnemo.errors import UsageError
from mnemo.sessions.records import SessionInfo, StoredMessage, has_cjk
from mnemo.sessions.rows import Row, no_session

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "insert_rows",
    "lock_session",
    "merge_raw",
    "message_from_row",
    "pg_text",
    "session_from_row",
    "split_nul",
    "touch",
]

_COLUMNS = ("session_id, position, role, content, content_kind, tool_calls, tool_call_id, "
            "name, timestamp, external_id, meta, extra, search_text, cjk, active, compacted, "
            "raw_fields")
_INSERT = (f"INSERT INTO mnemo_messages ({_COLUMNS}) VALUES "
           f"({', '.join(['%s'] * 17)}) RETURNING id")


def split_nul(fields: Mapping[str, str | None]) -> tuple[dict[str, str | None], str | None]:
    """``fields`` as storable text, and the exact values of those holding NUL as JSON."""
    raw = {k: v for k, v in fields.items() if v is not None and "\x00" in v}
    return {k: pg_text(v) for k, v in fields.items()}, (json.dumps(raw) if raw else None)


def merge_raw(old: str | None, column: str, new: str | None) -> str | None:
    """``raw_fields`` after one column changed (``new`` from ``split_nul``)."""
    fields = json.loads(old) if old else {}
    fields.pop(column, None)
    if new:
        fields.update(json.loads(new))
    return json.dumps(fields) if fields else None


def _restored(row: Mapping[str, Any]) -> dict[str, Any]:
    raw = row.get("raw_fields")
    return {**row, **json.loads(raw)} if raw else dict(row)


def message_from_row(row: Mapping[str, Any]) -> StoredMessage:
    return StoredMessage.from_row(_restored(row))  # type: ignore[arg-type]


def session_from_row(row: Mapping[str, Any]) -> SessionInfo:
    return SessionInfo.from_row(_restored(row))  # type: ignore[arg-type]


def pg_text(value: str | None) -> str | None:
    """``value`` as PostgreSQL can store it (each NUL replaced by U+FFFD)."""
    if value is None or "\x00" not in value:
        return value
    return value.replace("\x00", "\ufffd")


def lock_session(conn: psycopg.Connection[Any], session_id: str) -> None:
    """Check the session exists and hold its row until commit.

    Writers of one session (several hosts resuming it) then queue, so positions computed
    from ``max(position)`` never collide.
    """
    row = conn.execute("SELECT 1 FROM mnemo_sessions WHERE id = %s FOR UPDATE",
                       (session_id,)).fetchone()
    if row is None:
        raise UsageError(no_session(session_id))


def insert_rows(
    conn: psycopg.Connection[Any],
    session_id: str,
    rows: Sequence[Row],
    positions: Sequence[float],
    flags: Sequence[tuple[int, int]] | None = None,
) -> list[int]:
    """Insert ``rows`` at ``positions``; return their new ids in order.

    ``flags`` (``active``, ``compacted`` per row) is for copying an archive as it was;
    new messages are live.
    """
    if not rows:
        return []
    params = []
    for index, (row, position) in enumerate(zip(rows, positions, strict=True)):
        active, compacted = flags[index] if flags is not None else (1, 0)
        text, raw = split_nul({"content": row.content, "tool_call_id": row.tool_call_id,
                               "name": row.name, "external_id": row.external_id,
                               "search_text": row.search_text})
        params.append((
            session_id, position, row.role, text["content"], row.content_kind, row.tool_calls,
            text["tool_call_id"], text["name"], row.timestamp, text["external_id"], row.meta,
            row.extra, text["search_text"], has_cjk(text["search_text"] or text["content"] or ""),
            active, compacted, raw,
        ))
    ids: list[int] = []
    with conn.cursor() as cur:
        cur.executemany(_INSERT, params, returning=True)
        while True:
            found = cur.fetchone()
            if found is not None:
                ids.append(int(found["id"]))
            if not cur.nextset():
                break
    return ids


def touch(conn: psycopg.Connection[Any], session_id: str, rows: Sequence[Row]) -> None:
    """Move the session's last activity to its newest message."""
    latest = max((r.timestamp for r in rows), default=time.time())
    conn.execute("UPDATE mnemo_sessions SET updated_at = greatest(updated_at, %s) "
                 "WHERE id = %s", (latest, session_id))
