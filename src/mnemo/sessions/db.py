"""Connections to ``state.db``: one per thread, WAL mode, explicit write transactions.

SQLite connections must not be shared between threads, and the agent writes from its
main thread and from background workers, so each thread gets its own connection on
first use (a forked child gets fresh ones too). Connections run in autocommit mode;
every write goes through ``transaction()``, which takes the write lock up front
(``BEGIN IMMEDIATE``) so two writers queue on the busy timeout instead of deadlocking on
a lock upgrade. Every ``sqlite3.Error`` leaves this module as a ``StoreError`` that says
what to check, except a value SQLite cannot bind (the caller's bug), a ``UsageError``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

from mnemo.errors import DatabaseDamagedError, StoreError, UsageError
from mnemo.sessions.migrations import apply_migrations

__all__ = ["DEFAULT_BUSY_TIMEOUT", "Database", "store_errors"]

log = logging.getLogger("mnemo.sessions")

DEFAULT_BUSY_TIMEOUT = 30.0  # seconds a writer waits for another one to finish


# Result codes (``sqlite_errorname``) that mean the file itself is damaged or is not a
# database; any other error leaves a healthy file that must not be thrown away.
_DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB")


def _is_damaged(exc: sqlite3.DatabaseError) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name:
        return name.startswith(_DAMAGED)
    text = str(exc)
    return "malformed" in text or "not a database" in text


@contextlib.contextmanager
def store_errors(path: Path | str) -> Iterator[None]:
    """Turn ``sqlite3`` errors into one actionable ``MnemoError``.

    A value SQLite cannot take (a list as an id, an integer past 64 bits, text that is
    not UTF-8) is the caller's mistake: ``UsageError``. Only a damaged file is called
    unreadable; other failures say what to check.
    """
    try:
        yield
    except (sqlite3.ProgrammingError, sqlite3.InterfaceError, OverflowError,
            UnicodeEncodeError) as exc:
        raise UsageError(
            f"the session store was given a value it cannot store or look up ({exc}); "
            "pass ids and text as strings and numbers below 2**63."
        ) from exc
    except sqlite3.OperationalError as exc:
        text = str(exc)
        if "locked" in text or "busy" in text:
            raise StoreError(
                f"session database {path} is busy (another process kept it locked); "
                "try again in a moment."
            ) from exc
        raise StoreError(
            f"session database {path} failed: {text}; check disk space and permissions, "
            "or run `mnemo doctor`."
        ) from exc
    except sqlite3.DatabaseError as exc:
        if _is_damaged(exc):
            raise DatabaseDamagedError(
                f"session database {path} is damaged ({exc}); run `mnemo sessions repair` "
                "to keep what can be read and start a fresh archive."
            ) from exc
        raise StoreError(
            f"session database {path} refused the change ({exc}); try again, and run "
            "`mnemo doctor` if it keeps failing."
        ) from exc


class Database:
    """The SQLite file behind a ``SessionStore``: per-thread connections, migrated schema."""

    def __init__(self, path: Path, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder of {path} ({exc.strerror}); check "
                             "the path and its permissions.") from exc
        try:
            with store_errors(path):
                applied = apply_migrations(self.connection(), label=str(path))
        except BaseException:
            self.close()
            raise
        if applied:
            log.info("session database %s migrated: applied %s", path, applied)

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=self.busy_timeout,
            isolation_level=None,
            check_same_thread=False,  # only its own thread uses it; close() may be elsewhere
        )
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode = WAL")
        # NORMAL is durable across application crashes in WAL mode; only a power cut can
        # lose the last commits, never corrupt the file.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use)."""
        if self._closed:
            raise StoreError(f"session store {self.path} is closed; open a new SessionStore.")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            conn = self._open()
            self._local.conn = conn
            self._local.pid = os.getpid()
            with self._lock:
                self._all.append(conn)
        return conn

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction holding the write lock from its first statement.

        On any error it is rolled back — unless SQLite already did (a full disk or an
        I/O error ends the transaction by itself), so the error raised is the real one.
        """
        with store_errors(self.path):
            conn = self.connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                raise

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection for reads, with errors turned into ``StoreError``."""
        with store_errors(self.path):
            yield self.connection()

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """Several reads that see one consistent state of the database."""
        with store_errors(self.path):
            conn = self.connection()
            conn.execute("BEGIN")
            try:
                yield conn
            except BaseException:
                _rollback(conn)
                raise
            if conn.in_transaction:
                conn.execute("COMMIT")

    def journal_mode(self) -> str:
        with self.reading() as conn:
            return str(conn.execute("PRAGMA journal_mode").fetchone()[0])

    def close(self) -> None:
        """Close every connection this store opened, in any thread."""
        with self._lock:
            conns, self._all = self._all, []
            self._closed = True
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back after an error, unless SQLite has already ended the transaction.

    A failing ROLLBACK is only logged: the error that led here is the one to report.
    """
    if not conn.in_transaction:
        return
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        log.warning("rollback failed after an error: %s", exc)
