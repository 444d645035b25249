"""Large benchmark archives, built in bulk once and kept on disk between runs.

Growing a 1M-message archive through ``append_messages`` (one transaction per session,
each row through the FTS triggers or the GIN index as it arrives) took more than 30
minutes per backend on this machine. The data here is the same — ``search_bench.TextGen``
from the same seed, cut into sessions of 40-160 messages, each message checked and
encoded by ``rows.encode_rows`` exactly as the store does — but loaded the way a bulk
import would be:

* SQLite: the schema from ``SessionStore`` (its migrations), then ``executemany`` in
  transactions of 50,000 rows with the full-text triggers dropped, then the FTS5 and
  trigram indexes rebuilt from the table in one pass and the triggers put back (their
  text is read from ``sqlite_master``, so the schema stays the migrations' own);
* PostgreSQL: the schema from ``open_pg`` (its migrations), the GIN and trigram indexes
  dropped, the rows sent with ``COPY``, the indexes recreated from their saved
  definitions, then ``ANALYZE``.

Both archives get the same rows in the same order, so message ids match across backends.
One extra session without messages (``BENCH_AGENT``) plays the agent's live session.

A built archive lives under ``<cache>/<size>/`` (``state.db``, ``pgdata/`` for the
embedded PostgreSQL server) with a ``done-<backend>`` marker written last: an
interrupted build is redone, a finished one is reused. The cache is not committed
(``bench/.cache/`` is in ``.gitignore``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import search_bench
from mnemo.sessions import SessionStore
from mnemo.sessions.pg_rows import pg_text
from mnemo.sessions.records import has_cjk
from mnemo.sessions.rows import Row, encode_rows

__all__ = ["BENCH_AGENT", "DEFAULT_CACHE", "build_pg", "build_sqlite", "sessions"]

DEFAULT_CACHE = Path(__file__).resolve().parent / ".cache" / "storage"
BENCH_AGENT = "bench-agent-session"  # the agent's own (live) session in every archive
_BASE_TIME = 1_700_000_000.0  # fixed, so two builds are identical
_BATCH = 50_000


def sessions(size: int, seed: int = 7) -> Iterator[tuple[str, str, float, list[Row]]]:
    """(session id, title, start time, encoded rows) until ``size`` messages in all."""
    gen = search_bench.TextGen(seed)
    have, index = 0, 0
    while have < size:
        n = min(size - have, gen.rng.randint(40, 160))
        title = " ".join(gen.words(3))
        start = _BASE_TIME + 60.0 * have  # a minute per message: sessions follow each other
        messages = [gen.message(i) for i in range(n)]
        rows = encode_rows(messages, timestamps=[start + 60.0 * i for i in range(n)])
        yield f"bench-{index:07d}", title, start, rows
        have += n
        index += 1


def _done(folder: Path, backend: str) -> Path:
    return folder / f"done-{backend}"


def build_sqlite(folder: Path, size: int) -> tuple[Path, float | None]:
    """The SQLite archive of ``size`` messages: its path, and the load's seconds (None when
    it came from the cache)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "state.db"
    if _done(folder, "sqlite").exists():
        return path, None
    for stale in folder.glob("state.db*"):
        stale.unlink()
    started = time.perf_counter()
    SessionStore(path).close()  # the schema, by the store's own migrations
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA synchronous = OFF")
        triggers = [r[0] for r in conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages' "
            "AND (name LIKE 'messages_fts%' OR name LIKE 'messages_trigram%')")]
        for name in [r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages' "
                "AND (name LIKE 'messages_fts%' OR name LIKE 'messages_trigram%')")]:
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("BEGIN")
        conn.execute("INSERT INTO sessions (id, source, started_at, updated_at) "
                     "VALUES (?, 'bench-agent', ?, ?)", (BENCH_AGENT, _BASE_TIME, _BASE_TIME))
        pending: list[tuple[Any, ...]] = []
        for sid, title, start, rows in sessions(size):
            conn.execute("INSERT INTO sessions (id, source, title, started_at, updated_at) "
                         "VALUES (?, 'bench', ?, ?, ?)", (sid, title, start,
                                                         rows[-1].timestamp))
            pending.extend((sid, float(p + 1), *row) for p, row in enumerate(rows))
            if len(pending) >= _BATCH:
                _insert_sqlite(conn, pending)
                conn.execute("COMMIT")
                conn.execute("BEGIN")
                pending = []
        _insert_sqlite(conn, pending)
        conn.execute("COMMIT")
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
        conn.execute("INSERT INTO messages_trigram(rowid, body) "
                     "SELECT id, coalesce(search_text, content, '') FROM messages WHERE cjk = 1")
        for sql in triggers:
            conn.execute(sql)
        conn.execute("ANALYZE")
    seconds = time.perf_counter() - started
    _done(folder, "sqlite").write_text(f"{size} messages in {seconds:.0f} s\n")
    return path, seconds


def _insert_sqlite(conn: sqlite3.Connection, pending: list[tuple[Any, ...]]) -> None:
    conn.executemany(
        "INSERT INTO messages (session_id, position, role, content, content_kind, tool_calls, "
        "tool_call_id, name, timestamp, external_id, meta, extra, search_text) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", pending)


_PG_COLUMNS = ("session_id, position, role, content, content_kind, tool_calls, tool_call_id, "
               "name, timestamp, external_id, meta, extra, search_text, cjk")


def build_pg(folder: Path, size: int, url: str) -> float | None:
    """Load the same archive into the database at ``url`` (its schema made by ``open_pg``);
    the load's seconds, or None when ``folder`` says this database already holds it."""
    import psycopg

    from mnemo.storage.factory import open_pg

    if _done(folder, "postgresql").exists():
        return None
    started = time.perf_counter()
    open_pg(url).close()  # the schema, by the migrations
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE mnemo_messages, mnemo_sessions, mnemo_imports "
                     "RESTART IDENTITY CASCADE")
        conn.execute("SET maintenance_work_mem = '1GB'")
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'mnemo_messages' "
            "AND indexname IN ('mnemo_messages_tsv', 'mnemo_messages_trgm')").fetchall()
        for name, _ in indexes:
            conn.execute(f"DROP INDEX {name}")
        with conn.transaction(), conn.cursor() as cur:
            cur.execute("INSERT INTO mnemo_sessions (id, source, started_at, updated_at) "
                        "VALUES (%s, 'bench-agent', %s, %s)",
                        (BENCH_AGENT, _BASE_TIME, _BASE_TIME))
            with cur.copy("COPY mnemo_sessions (id, source, title, started_at, updated_at) "
                          "FROM STDIN") as sess_copy:
                batches: list[tuple[str, list[Row]]] = []
                for sid, title, start, rows in sessions(size):
                    sess_copy.write_row((sid, "bench", title, start, rows[-1].timestamp))
                    batches.append((sid, rows))
            with cur.copy(f"COPY mnemo_messages ({_PG_COLUMNS}) FROM STDIN") as copy:
                for sid, rows in batches:
                    for p, row in enumerate(rows):
                        body = pg_text(row.search_text) or pg_text(row.content) or ""
                        copy.write_row((sid, float(p + 1), row.role, pg_text(row.content),
                                        row.content_kind, row.tool_calls,
                                        pg_text(row.tool_call_id), pg_text(row.name),
                                        row.timestamp, row.external_id, row.meta, row.extra,
                                        pg_text(row.search_text), has_cjk(body)))
        for _, definition in indexes:
            conn.execute(definition)
        conn.execute("VACUUM ANALYZE mnemo_messages")
        conn.execute("ANALYZE mnemo_sessions")
    seconds = time.perf_counter() - started
    _done(folder, "postgresql").write_text(f"{size} messages in {seconds:.0f} s\n")
    return seconds
