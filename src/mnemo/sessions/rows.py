"""Messages as rows of the ``messages`` table, and the small steps every write shares.

``encode_rows`` checks a batch of messages (and their timestamps, external ids and meta)
before a transaction starts, so bad input is refused with nothing written;
``insert_rows`` / ``touch`` / ``require_session`` run inside one. ``id_chunks`` cuts a
long id list so an ``IN (...)`` stays far below SQLite's limit on bound parameters
(32,766 in standard builds, 999 in old ones). Used by ``store`` and ``archive``.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from mnemo.errors import UsageError
from mnemo.messages import Message
from mnemo.sessions.records import clean_optional, clean_text, encode_message

__all__ = [
    "ID_CHUNK",
    "MAX_SQL_INT",
    "Row",
    "encode_rows",
    "id_chunks",
    "insert_rows",
    "message_id_param",
    "meta_json",
    "no_session",
    "require_session",
    "sql_count",
    "touch",
]

ID_CHUNK = 500  # ids per IN (...) list
MAX_SQL_INT = 2**63 - 1  # SQLite integers are signed 64-bit

_INSERT_MESSAGE = """
    INSERT INTO messages (session_id, position, role, content, content_kind, tool_calls,
                          tool_call_id, name, timestamp, external_id, meta, extra, search_text)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""


class Row(NamedTuple):
    """The columns of one message insert, after the session id and position."""

    role: str
    content: str | None
    content_kind: str
    tool_calls: str | None
    tool_call_id: str | None
    name: str | None
    timestamp: float
    external_id: str | None
    meta: str | None
    extra: str | None
    search_text: str | None


def no_session(session_id: str) -> str:
    return (f"no session {session_id!r}; create it with create_session or list them with "
            "`mnemo sessions list`.")


def meta_json(meta: dict[str, Any] | None) -> str | None:
    """``meta`` as stored (None when empty); not JSON-serialisable is a ``UsageError``."""
    if not meta:
        return None
    if not isinstance(meta, dict):
        raise UsageError(f"meta must be a dict, not {type(meta).__name__}.")
    try:
        return clean_text(json.dumps(meta, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"meta must be JSON-serialisable ({exc}).") from exc


def message_id_param(message_id: Any) -> int:
    """A message id SQLite can bind; one out of range becomes -1, which matches nothing."""
    if isinstance(message_id, bool) or not isinstance(message_id, int):
        raise UsageError(f"a message id must be a whole number, not {message_id!r}.")
    return message_id if 0 < message_id <= MAX_SQL_INT else -1


def sql_count(value: Any, name: str) -> int:
    """A non-negative count or offset for SQL, capped at SQLite's largest integer."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} must be a whole number, not {value!r}.")
    return max(0, min(value, MAX_SQL_INT))


def encode_rows(
    messages: Sequence[Message | dict[str, Any]],
    timestamps: Sequence[float] | None = None,
    external_ids: Sequence[str | None] | None = None,
    metas: Sequence[dict[str, Any] | None] | None = None,
) -> list[Row]:
    """Check a batch and turn it into rows; any bad item is a ``UsageError``."""
    if isinstance(messages, dict):
        raise UsageError("append_messages takes a list of messages; use append_message "
                         "for one.")
    for label, extra in (("timestamps", timestamps), ("external_ids", external_ids),
                         ("metas", metas)):
        if extra is not None and len(extra) != len(messages):
            raise UsageError(f"{label} has {len(extra)} items for {len(messages)} "
                             "messages; give one per message.")
    now = time.time()
    rows: list[Row] = []
    for index, message in enumerate(messages):
        enc = encode_message(message, f"message {index}")
        external_id = external_ids[index] if external_ids is not None else None
        if external_id is not None and not isinstance(external_id, str):
            raise UsageError(f"external id of message {index} must be a string.")
        rows.append(Row(
            role=enc.role, content=enc.content, content_kind=enc.content_kind,
            tool_calls=enc.tool_calls, tool_call_id=enc.tool_call_id, name=enc.name,
            timestamp=_timestamp(timestamps[index], index) if timestamps is not None else now,
            external_id=clean_optional(external_id),
            meta=meta_json(metas[index]) if metas is not None else None,
            extra=enc.extra, search_text=enc.search_text,
        ))
    return rows


def _timestamp(value: Any, index: int) -> float:
    try:
        stamp = float(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise UsageError(f"timestamp of message {index} is not a number ({value!r}).") from exc
    if not math.isfinite(stamp):
        raise UsageError(f"timestamp of message {index} must be finite, not {value!r}.")
    return stamp


def require_session(conn: sqlite3.Connection, session_id: str) -> None:
    if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
        raise UsageError(no_session(session_id))


def insert_rows(
    conn: sqlite3.Connection, session_id: str, rows: Sequence[Row], positions: Sequence[float]
) -> list[int]:
    ids: list[int] = []
    for row, position in zip(rows, positions, strict=True):
        cursor = conn.execute(_INSERT_MESSAGE, (session_id, position, *row))
        ids.append(int(cursor.lastrowid or 0))
    return ids


def touch(conn: sqlite3.Connection, session_id: str, rows: Sequence[Row]) -> None:
    """Move the session's last activity to its newest message."""
    latest = max((r.timestamp for r in rows), default=time.time())
    conn.execute(
        "UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?",
        (latest, session_id),
    )


def id_chunks(ids: Sequence[int], size: int = ID_CHUNK) -> Iterator[tuple[list[int], str]]:
    """``ids`` in slices, each with its ``?, ?, …`` placeholder list."""
    for start in range(0, len(ids), size):
        part = list(ids[start:start + size])
        yield part, ", ".join("?" for _ in part)
