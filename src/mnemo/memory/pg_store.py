"""``PgMemoryStore``: MEMORY.md and USER.md kept in PostgreSQL, shared by a namespace.

Every host whose ``storage.namespace`` is the same shares the two stores. Everything a
file store does is inherited unchanged — the § entry format, the character limits, the
security scan, batches, the overflow archive, the loop breaker, the frozen snapshot per
session — because only *where the text lives* differs: the three storage hooks of
``MemoryStore`` (``_read_raw``, ``_write_raw``, ``_append_archive``) and the lock around
a write.

A write is one transaction: lock the store's row (``SELECT … FOR UPDATE``), re-read it,
apply the operation, check the limit, write, commit. Hosts writing the same store at once
queue on the row lock, so no write is lost and the limit holds across hosts; a lost
connection retries the whole transaction once (``PgDatabase.run``). Reads take no lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemo.errors import StoreError
from mnemo.memory.entries import FILENAMES, TARGETS, Target
from mnemo.memory.store import MemoryStore, Overflow, Result, _Refused
from mnemo.storage.pg import PgDatabase

if TYPE_CHECKING:
    import psycopg

__all__ = ["PgMemoryStore"]


class PgMemoryStore(MemoryStore):
    """The curated memory of ``namespace`` in the database behind ``db``."""

    def __init__(
        self,
        db: PgDatabase,
        *,
        namespace: str = "default",
        memory_char_limit: int = 2200,
        user_char_limit: int = 1375,
        overflow: Overflow = "reject",
        owns_db: bool = True,
    ) -> None:
        # memory_dir is only a label here: nothing is read from or written to files.
        super().__init__(Path("postgresql:") / db.where.strip("/") / namespace,
                         memory_char_limit=memory_char_limit, user_char_limit=user_char_limit,
                         overflow=overflow)
        self.db = db
        self.namespace = namespace
        self._owns_db = owns_db
        self._tx = threading.local()  # the connection of a write in progress, per thread

    def __repr__(self) -> str:
        return f"PgMemoryStore({self.db.where!r}, namespace={self.namespace!r})"

    def close(self) -> None:
        if self._owns_db:
            self.db.close()

    # -- storage hooks --------------------------------------------------------------------

    def _read_raw(self, target: Target) -> str:
        conn = getattr(self._tx, "conn", None)
        if conn is not None:  # inside a write: read what the row lock protects
            return _select(conn, self.namespace, target)
        return self.db.run(lambda c: _select(c, self.namespace, target), what="memory read")

    def _write_raw(self, target: Target, text: str) -> None:
        self._conn().execute(
            "UPDATE mnemo_memory SET content = %s, updated_at = %s "
            "WHERE namespace = %s AND target = %s",
            (text.replace("\x00", "\ufffd"), time.time(), self.namespace, target))

    def _append_archive(self, target: Target, tagged: list[str]) -> None:
        # Same transaction as the store's write: moved entries are never lost or doubled.
        with self._conn().cursor() as cur:
            cur.executemany(
                "INSERT INTO mnemo_memory_archive (namespace, target, entry, archived_at) "
                "VALUES (%s, %s, %s, %s)",
                [(self.namespace, target, entry, time.time()) for entry in tagged])

    def _conn(self) -> psycopg.Connection[Any]:
        conn: psycopg.Connection[Any] | None = getattr(self._tx, "conn", None)
        if conn is None:
            raise StoreError("a memory write ran outside its transaction; this is a bug in "
                             "mnemo, please report it.")
        return conn

    # -- the one write path ---------------------------------------------------------------

    def _mutate(
        self,
        target: Target,
        apply: Callable[[list[str]], tuple[list[str], str]],
        *,
        kind: str,
        strict_file: bool = True,
    ) -> Result:
        if target not in TARGETS:
            return {"success": False,
                    "error": f"Unknown target {target!r}; use one of: {', '.join(TARGETS)}."}

        def work(conn: psycopg.Connection[Any]) -> Result:
            self._tx.conn = conn
            try:
                conn.execute(
                    "INSERT INTO mnemo_memory (namespace, target, content, updated_at) "
                    "VALUES (%s, %s, '', %s) ON CONFLICT DO NOTHING",
                    (self.namespace, target, time.time()))
                conn.execute("SELECT 1 FROM mnemo_memory WHERE namespace = %s AND target = %s "
                             "FOR UPDATE", (self.namespace, target))
                return self._mutate_locked(target, self.path_for(target), apply, kind=kind,
                                           strict_file=strict_file)
            finally:
                self._tx.conn = None

        try:
            return self.db.run(work, what=f"{FILENAMES[target]} write")
        except _Refused as refused:
            return self._with_state(target, refused.result)
        except StoreError as exc:
            return self._with_state(target, {"success": False, "error": str(exc)})

    # -- whole-store access (export, import, migrate) --------------------------------------

    def archived_entries(self) -> list[tuple[str, str]]:
        """Every (target, entry) overflow moved out, oldest first."""
        rows = self.db.run(lambda c: c.execute(
            "SELECT target, entry FROM mnemo_memory_archive WHERE namespace = %s ORDER BY id",
            (self.namespace,)).fetchall())
        return [(str(r["target"]), str(r["entry"])) for r in rows]


def _select(conn: psycopg.Connection[Any], namespace: str, target: Target) -> str:
    row = conn.execute("SELECT content FROM mnemo_memory WHERE namespace = %s AND target = %s",
                       (namespace, target)).fetchone()
    return str(row["content"]) if row else ""
