"""One PostgreSQL database behind mnemo's stores: a connection pool and safe transactions.

Both PostgreSQL stores (``sessions.pg_store`` and ``memory.pg_store``) go through
``PgDatabase.run``: it borrows a pooled connection, runs a function inside one
transaction and commits. A connection that breaks *before* the commit was sent (a
restarted server, a failover, an idle connection a proxy dropped) leaves nothing behind,
so the whole function runs once more on a fresh connection (when no connection comes at
all within ``connect_timeout``, on a fresh pool: after an outage the old pool's reconnect
back-off can outlast the outage); a second failure, or one during the commit itself
(when nobody can know whether it landed), becomes one ``StoreError`` line. Nothing is
acknowledged to a caller before PostgreSQL has committed it.

psycopg is an optional dependency (``mnemo[postgres]``): it is imported when a
``PgDatabase`` is made, never when this module is, so SQLite users need none of it.
This module is a leaf: it imports nothing of mnemo but ``errors``.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from mnemo.errors import ConfigError, StoreError, UsageError

if TYPE_CHECKING:
    import psycopg

__all__ = ["PgDatabase", "redact_url"]

log = logging.getLogger("mnemo.storage")

T = TypeVar("T")

_INSTALL_HINT = 'PostgreSQL storage needs psycopg: pip install "mnemo[postgres]"'
# SQLSTATE classes of a broken connection (08), a server shutting down (57P01-57P03) and
# a hot standby that cannot take writes after a failover (25006).
_RETRYABLE_STATES = ("08", "57P01", "57P02", "57P03", "25006")


def redact_url(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://…"
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return parts._replace(netloc=netloc).geturl()


def _where(url: str) -> str:
    """Host and database of ``url`` for an error message (never the password)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "the configured database"
    host = parts.hostname or "local socket"
    query_host = re.search(r"host=([^&]+)", parts.query or "")
    if query_host and not parts.hostname:
        host = query_host.group(1)
    return f"{host}/{(parts.path or '/').lstrip('/') or 'postgres'}"


class PgDatabase:
    """A pool of connections to one PostgreSQL URL, with ``run`` as the only way in."""

    def __init__(self, url: str, *, max_size: int = 4, connect_timeout: float = 5.0) -> None:
        try:
            import psycopg
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise ConfigError(f"{_INSTALL_HINT} ({exc.name} is missing).",
                              key="storage.url") from exc
        self.url = url
        self.where = _where(url)
        self._psycopg = psycopg
        self._closed = False
        self._lock = threading.Lock()
        self._timeout = connect_timeout

        def new_pool() -> ConnectionPool[Any]:
            return ConnectionPool(
                url,
                min_size=1,
                max_size=max_size,
                kwargs={"row_factory": dict_row, "autocommit": False,
                        "connect_timeout": max(1, int(connect_timeout))},
                # A pooled connection is checked before it is handed out, so one a
                # restart killed is replaced instead of failing the caller's statement.
                check=ConnectionPool.check_connection,
                open=False,
                name="mnemo",
                timeout=connect_timeout,
            )

        self._new_pool = new_pool
        self.pool = new_pool()
        try:
            self.pool.open(wait=True, timeout=connect_timeout)
        except Exception as exc:
            self.pool.close()
            raise StoreError(
                f"cannot reach PostgreSQL at {self.where} ({_first_line(exc)}); check "
                "storage.url / MNEMO_STORAGE_URL and that the server is running."
            ) from exc

    def _renew_pool(self) -> None:
        """Replace the pool: after an outage its reconnect back-off can outlast the outage."""
        with self._lock:
            old, self.pool = self.pool, self._new_pool()
            self.pool.open(wait=False)
        old.close(timeout=0)

    def __repr__(self) -> str:
        return f"PgDatabase({redact_url(self.url)!r})"

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.pool.close()

    def run(self, work: Callable[[psycopg.Connection[Any]], T], *, what: str = "query") -> T:
        """``work(conn)`` in one transaction, committed; retried once on a lost connection.

        ``work`` must do nothing outside the database (it may run twice). Errors leave as
        ``StoreError`` (the server) or ``UsageError`` (a value it cannot take).
        """
        if self._closed:
            raise StoreError("the PostgreSQL store is closed; open a new one.")
        psycopg = self._psycopg
        for attempt in (1, 2):
            committing = False
            try:
                with self.pool.connection() as conn:
                    try:
                        result = work(conn)
                        committing = True
                        conn.commit()
                        return result
                    except BaseException:
                        if not conn.closed and not committing:
                            with contextlib.suppress(psycopg.Error):
                                conn.rollback()
                        raise
            except psycopg.Error as exc:
                if type(exc).__name__ == "PoolTimeout":  # no connection within the timeout
                    if attempt == 1:
                        log.warning("no PostgreSQL connection for %s (%s); reconnecting once",
                                    what, _first_line(exc))
                        self._renew_pool()
                        continue
                    raise StoreError(
                        f"cannot reach PostgreSQL at {self.where} ({_first_line(exc)}); nothing "
                        f"of this {what} was saved. Check that the server is running, then try "
                        "again."
                    ) from exc
                if not _bad_value(exc):
                    lost = _connection_lost(exc)
                    if lost and attempt == 1 and not committing:
                        log.warning("PostgreSQL connection lost during %s (%s); retrying once",
                                    what, _first_line(exc))
                        self.pool.check()
                        continue
                    if committing and lost:
                        raise StoreError(
                            f"PostgreSQL at {self.where} went away while committing a {what}; "
                            "it may or may not have been saved. Check the server, then look "
                            "before repeating it."
                        ) from exc
                    raise StoreError(_message(self.where, what, exc, lost)) from exc
                raise _cannot_take(exc) from exc
            except UnicodeEncodeError as exc:
                # Text with a lone surrogate (``os.fsdecode`` of a bad argument) cannot be
                # sent at all: psycopg raises this before the query leaves.
                raise _cannot_take(exc) from exc
        raise AssertionError("unreachable")  # pragma: no cover


def _cannot_take(exc: Exception) -> UsageError:
    return UsageError(
        f"the database was given a value it cannot store or look up ({_first_line(exc)}); "
        "pass ids and text as strings and numbers below 2**63.")


# Values of the wrong type or out of range: the caller's mistake, not the server's.
_BAD_VALUE_STATES = ("22", "42804", "42883")


def _bad_value(exc: Exception) -> bool:
    state = getattr(exc, "sqlstate", None) or ""
    if state:
        return state.startswith(_BAD_VALUE_STATES)
    # Raised by psycopg itself before sending: "cannot adapt type 'dict'".
    return type(exc).__name__ in ("ProgrammingError", "DataError")


def _connection_lost(exc: Exception) -> bool:
    state = getattr(exc, "sqlstate", None) or ""
    if state.startswith(_RETRYABLE_STATES):
        return True
    # psycopg raises OperationalError without a SQLSTATE when the socket itself breaks.
    return type(exc).__name__ in ("OperationalError", "InterfaceError") and not state


def _message(where: str, what: str, exc: Exception, lost: bool) -> str:
    if lost:
        return (f"lost the connection to PostgreSQL at {where} during a {what} and could not "
                f"reconnect ({_first_line(exc)}); nothing of it was saved. Check that the "
                "server is running, then try again.")
    return (f"PostgreSQL at {where} refused a {what} ({_first_line(exc)}); run "
            "`mnemo storage status` or `mnemo doctor`.")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
