"""The compaction archive (SPEC D3) in PostgreSQL: the twin of ``archive`` for ``PgSessionStore``.

The plan is the same code (``live.plan_sync``), the checks are the same, and each
operation is one transaction; only the SQL differs (``= ANY(%s)`` takes a whole id list,
so nothing is cut into chunks). The session's row is locked first, so two hosts
compacting the same session queue instead of interleaving.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mnemo.errors import UsageError
from mnemo.messages import Message
from mnemo.sessions.live import LiveSync, message_identity, message_key, plan_sync
from mnemo.sessions.pg_rows import insert_rows, lock_session, message_from_row, touch
from mnemo.sessions.records import StoredMessage
from mnemo.sessions.rows import MAX_SQL_INT, encode_rows, message_id_param, meta_json
from mnemo.storage.pg import PgDatabase

if TYPE_CHECKING:
    import psycopg

__all__ = ["archive_and_replace", "originals_of", "sync_live"]


def _archive(conn: psycopg.Connection[Any], ids: Sequence[int]) -> None:
    if ids:
        conn.execute("UPDATE mnemo_messages SET active = 0, compacted = 1 WHERE id = ANY(%s)",
                     (list(ids),))


def _message_ids(values: Sequence[Any]) -> list[int]:
    ids: set[int] = set()
    for value in values:
        try:
            if isinstance(value, bool):
                raise TypeError
            ids.add(operator.index(value))
        except TypeError:
            raise UsageError(f"message ids must be whole numbers, not {value!r}.") from None
    return sorted(ids)


def archive_and_replace(
    db: PgDatabase,
    session_id: str,
    archived_ids: Sequence[int],
    replacements: Sequence[Message | dict[str, Any]],
    *,
    meta: dict[str, Any] | None = None,
) -> list[int]:
    """Archive the listed messages and insert ``replacements`` after the last of them."""
    ids = _message_ids(archived_ids)
    if not ids:
        raise UsageError("archive_and_replace needs at least one message id to archive.")
    rows = encode_rows(replacements, None, None,
                       [{**(meta or {}), "replaces": ids}] * len(replacements))
    in_range = [i for i in ids if 0 < i <= MAX_SQL_INT]

    def work(conn: psycopg.Connection[Any]) -> list[int]:
        lock_session(conn, session_id)
        found = conn.execute(
            "SELECT id, position, active FROM mnemo_messages "
            "WHERE session_id = %s AND id = ANY(%s)", (session_id, in_range)).fetchall()
        missing = sorted(set(ids) - {int(r["id"]) for r in found})
        if missing:
            shown = ", ".join(str(i) for i in missing[:10]) + (" …" if len(missing) > 10 else "")
            raise UsageError(f"messages [{shown}] are not in session {session_id!r}; "
                             "archive only ids that load_messages returned for it.")
        stale = sorted(int(r["id"]) for r in found if not r["active"])
        if stale:
            raise UsageError(f"messages {stale[:10]} are already archived; reload the session "
                             "with load_messages and archive only active ids.")
        last = max(float(r["position"]) for r in found)
        following = conn.execute(
            "SELECT min(position) AS p FROM mnemo_messages WHERE session_id = %s "
            "AND position > %s", (session_id, last)).fetchone()
        nxt = following["p"] if following else None
        step = 1.0 if nxt is None else (float(nxt) - last) / (len(rows) + 1)
        _archive(conn, ids)
        new_ids = insert_rows(conn, session_id, rows,
                              [last + step * (i + 1) for i in range(len(rows))])
        touch(conn, session_id, rows)
        return new_ids

    return db.run(work, what="compaction")


def sync_live(
    db: PgDatabase,
    session_id: str,
    messages: Sequence[Message | dict[str, Any]],
    *,
    meta: dict[str, Any] | None = None,
) -> LiveSync:
    """Make the session's live context equal ``messages``, in one transaction."""
    rows = encode_rows(messages, None, None, None)
    meta_json(meta)  # refuse a bad meta before the transaction
    new_keys = [message_key(m) for m in messages]
    new_ids = [message_identity(m) for m in messages]

    def work(conn: psycopg.Connection[Any]) -> LiveSync:
        lock_session(conn, session_id)
        live = [message_from_row(r) for r in conn.execute(
            "SELECT * FROM mnemo_messages WHERE session_id = %s AND active = 1 "
            "ORDER BY position", (session_id,)).fetchall()]
        stored = [m.to_message() for m in live]
        kept, gaps = plan_sync(
            [message_key(m) for m in stored], new_keys,
            old_ids=[message_identity(m) for m in stored], new_ids=new_ids,
        )
        archived = [live[i].id for gap in gaps for i in gap.archived]
        _archive(conn, archived)
        inserted: list[int] = []
        for gap in gaps:
            if not gap.new:
                continue
            low = live[gap.after].position if gap.after is not None else None
            high = live[gap.before].position if gap.before is not None else None
            top = conn.execute(
                "SELECT max(position) AS p FROM mnemo_messages WHERE session_id = %s "
                "AND position > coalesce(%s::float8, '-infinity') "
                "AND position < coalesce(%s::float8, 'infinity')",
                (session_id, low, high)).fetchone()
            start = top["p"] if top else None
            if start is None:
                start = low if low is not None else (high - 1 if high is not None else 0.0)
            step = 1.0 if high is None else (high - start) / (len(gap.new) + 1)
            replaces = meta_json({**(meta or {}), "replaces": [live[i].id for i in gap.archived]})
            gap_rows = [rows[j]._replace(meta=replaces) for j in gap.new]
            positions = [start + step * (k + 1) for k in range(len(gap_rows))]
            inserted += insert_rows(conn, session_id, gap_rows, positions)
        if inserted:
            touch(conn, session_id, [rows[j] for gap in gaps for j in gap.new])
        return LiveSync(kept=len(kept), archived_ids=archived, inserted_ids=inserted)

    return db.run(work, what="context sync")


def originals_of(db: PgDatabase, message_id: int) -> list[StoredMessage]:
    """The archived messages a replacement (summary) stands for, in order."""
    key = message_id_param(message_id)

    def work(conn: psycopg.Connection[Any]) -> list[Any]:
        row = conn.execute("SELECT meta FROM mnemo_messages WHERE id = %s", (key,)).fetchone()
        if row is None:
            raise UsageError(f"no message {message_id}; use an id from search or "
                             "load_messages.")
        replaces = json.loads(row["meta"]).get("replaces", []) if row["meta"] else []
        ids = [i for i in replaces if isinstance(i, int) and not isinstance(i, bool)
               and 0 < i <= MAX_SQL_INT]
        if not ids:
            return []
        return conn.execute("SELECT * FROM mnemo_messages WHERE id = ANY(%s) "
                            "ORDER BY position", (ids,)).fetchall()

    return [message_from_row(r) for r in db.run(work)]
