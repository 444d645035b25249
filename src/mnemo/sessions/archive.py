"""The compaction archive (SPEC D3): messages leave the live context, never the database.

Two ways to record a compaction, each one transaction:

* ``archive_and_replace`` — the caller names the messages that leave and gives what
  replaces them (a summary);
* ``sync_live`` — the caller gives the whole new live context (a context engine's output)
  and ``live.plan_sync`` works out what left, what stayed and what is new.

Archived messages get ``active=0, compacted=1`` and stay searchable. Each replacement
records the ids it stands for in ``meta["replaces"]``; ``originals_of`` follows that link
back (``context_expand`` of the ``lcm`` engine). ``SessionStore`` exposes these as methods.
"""

from __future__ import annotations

import json
import operator
import sqlite3
from collections.abc import Sequence
from typing import Any

from mnemo.errors import UsageError
from mnemo.messages import Message
from mnemo.sessions.db import Database
from mnemo.sessions.live import LiveSync, message_identity, message_key, plan_sync
from mnemo.sessions.records import StoredMessage
from mnemo.sessions.rows import (
    MAX_SQL_INT,
    encode_rows,
    id_chunks,
    insert_rows,
    message_id_param,
    meta_json,
    require_session,
    touch,
)

__all__ = ["archive_and_replace", "originals_of", "sync_live"]


def _archive(conn: sqlite3.Connection, ids: Sequence[int]) -> None:
    for part, marks in id_chunks(ids):
        conn.execute(f"UPDATE messages SET active = 0, compacted = 1 WHERE id IN ({marks})",
                     part)


def _message_ids(values: Sequence[Any]) -> list[int]:
    """Distinct message ids in increasing order; anything else is a ``UsageError``."""
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
    db: Database,
    session_id: str,
    archived_ids: Sequence[int],
    replacements: Sequence[Message | dict[str, Any]],
    *,
    meta: dict[str, Any] | None = None,
) -> list[int]:
    """Archive the listed messages and insert ``replacements`` after the last of them.

    Ids must be active messages of that session (else ``UsageError``, nothing changed).
    """
    ids = _message_ids(archived_ids)
    if not ids:
        raise UsageError("archive_and_replace needs at least one message id to archive.")
    replacement_meta = {**(meta or {}), "replaces": ids}
    rows = encode_rows(replacements, None, None, [replacement_meta] * len(replacements))
    in_range = [i for i in ids if 0 < i <= MAX_SQL_INT]
    with db.transaction() as conn:
        require_session(conn, session_id)
        found: list[sqlite3.Row] = []
        for part, marks in id_chunks(in_range):
            found += conn.execute(
                f"SELECT id, position, active FROM messages "
                f"WHERE session_id = ? AND id IN ({marks})",
                [session_id, *part],
            ).fetchall()
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
            "SELECT min(position) FROM messages WHERE session_id = ? AND position > ?",
            (session_id, last),
        ).fetchone()[0]
        step = 1.0 if following is None else (float(following) - last) / (len(rows) + 1)
        _archive(conn, ids)
        new_ids = insert_rows(
            conn, session_id, rows, [last + step * (i + 1) for i in range(len(rows))]
        )
        touch(conn, session_id, rows)
    return new_ids


def sync_live(
    db: Database,
    session_id: str,
    messages: Sequence[Message | dict[str, Any]],
    *,
    meta: dict[str, Any] | None = None,
) -> LiveSync:
    """Make the session's live context equal ``messages``, in one transaction.

    Kept messages stay; the others are archived; new or changed messages are inserted
    where they stand, each after the archived messages it replaces and naming them in
    ``meta["replaces"]`` (see ``live`` for how the two lists are lined up).
    """
    rows = encode_rows(messages, None, None, None)
    meta_json(meta)  # refuse a bad meta before the transaction
    new_keys = [message_key(m) for m in messages]
    new_ids = [message_identity(m) for m in messages]
    with db.transaction() as conn:
        require_session(conn, session_id)
        live = [StoredMessage.from_row(r) for r in conn.execute(
            "SELECT * FROM messages WHERE session_id = ? AND active = 1 ORDER BY position",
            (session_id,),
        )]
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
            start = conn.execute(
                "SELECT max(position) FROM messages WHERE session_id = ? "
                "AND position > coalesce(?, -1e308) AND position < coalesce(?, 1e308)",
                (session_id, low, high),
            ).fetchone()[0]
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


def originals_of(db: Database, message_id: int) -> list[StoredMessage]:
    """The archived messages a replacement (summary) stands for, in order."""
    with db.snapshot() as conn:
        row = conn.execute("SELECT meta FROM messages WHERE id = ?",
                           (message_id_param(message_id),)).fetchone()
        if row is None:
            raise UsageError(f"no message {message_id}; use an id from search or "
                             "load_messages.")
        replaces = json.loads(row["meta"]).get("replaces", []) if row["meta"] else []
        ids = [i for i in replaces if isinstance(i, int) and not isinstance(i, bool)]
        found: list[sqlite3.Row] = []
        for part, marks in id_chunks([i for i in ids if 0 < i <= MAX_SQL_INT]):
            found += conn.execute(f"SELECT * FROM messages WHERE id IN ({marks})",
                                  part).fetchall()
    found.sort(key=lambda r: float(r["position"]))
    return [StoredMessage.from_row(r) for r in found]
