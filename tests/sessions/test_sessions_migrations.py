"""The schema is built by numbered migrations, tested against real database files."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from mnemo.errors import StoreError
from mnemo.home import Home
from mnemo.sessions import SessionStore
from mnemo.sessions.migrations import MIGRATIONS, apply_migrations, schema_version


def _versions(path: Path) -> list[int]:
    with closing(sqlite3.connect(path)) as conn, conn:
        return [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]


def test_default_path_is_the_home_state_db(mnemo_home: Home) -> None:
    with SessionStore() as store:
        assert store.path == mnemo_home.state_db
    assert mnemo_home.state_db.is_file()


def test_empty_file_gets_every_migration_in_order(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "state.db"
    with SessionStore(path):
        pass
    assert _versions(path) == [m.version for m in MIGRATIONS]
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))


def test_wal_mode_is_on_and_persists(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        assert store.journal_mode() == "wal"
    with closing(sqlite3.connect(path)) as conn, conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_reopening_applies_nothing_and_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        sid = store.create_session(title="first")
        store.append_message(sid, {"role": "user", "content": "remember the blue teapot"})
    with closing(sqlite3.connect(path, isolation_level=None)) as conn, conn:
        assert apply_migrations(conn) == []
    with SessionStore(path) as store:
        assert store.get_session(sid) is not None
        assert [h.session_id for h in store.search("teapot")] == [sid]
    assert _versions(path) == [m.version for m in MIGRATIONS]


def test_database_at_an_older_migration_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path, isolation_level=None)
    assert apply_migrations(conn, target=1) == [1]
    assert schema_version(conn) == 1
    # Rows written by a version-1 mnemo, before any full-text index existed.
    conn.execute("INSERT INTO sessions (id, started_at, updated_at) VALUES ('old', 1, 1)")
    conn.execute("INSERT INTO messages (session_id, position, role, content, timestamp) "
                 "VALUES ('old', 1, 'user', 'the quarterly invoice is overdue', 1)")
    conn.execute("INSERT INTO messages (session_id, position, role, content, timestamp) "
                 "VALUES ('old', 2, 'assistant', '发票已经逾期了', 2)")
    conn.close()

    with SessionStore(path) as store:
        assert _versions(path) == [m.version for m in MIGRATIONS]
        found = [(h.session_id, h.content) for h in store.search("invoices") if h.matched]
        assert found == [("old", "the quarterly invoice is overdue")]  # stemmed
        assert [h.content for h in store.search("发票已经")] == ["发票已经逾期了"]  # trigram
        new = store.append_message("old", {"role": "user", "content": "invoice paid"})
        assert {h.message_id for h in store.search("invoice")} >= {1, new}


def test_database_from_a_newer_mnemo_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path):
        pass
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', 0)")
    with pytest.raises(StoreError, match="newer than this mnemo"):
        SessionStore(path)


def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"state\.db"):
        SessionStore(path)


def test_failed_migration_leaves_the_previous_version(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from mnemo.sessions import migrations

    path = tmp_path / "state.db"
    broken = (*MIGRATIONS[:1], migrations.Migration(2, "broken", "CREATE TABLE x (a);\nNOPE;\n"))
    monkeypatch.setattr(migrations, "MIGRATIONS", broken)
    conn = sqlite3.connect(path, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError):
        migrations.apply_migrations(conn)
    assert schema_version(conn) == 1
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'x'").fetchone()
    conn.close()


def test_a_path_that_cannot_be_created_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot create the folder"):
        SessionStore(blocker / "sub" / "state.db")
