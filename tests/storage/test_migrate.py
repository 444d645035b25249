"""``mnemo storage migrate``: a home copied into PostgreSQL, killed mid-way, run again."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from mnemo.home import Home
from mnemo.memory import MemoryStore
from mnemo.memory.pg_store import PgMemoryStore
from mnemo.sessions import SessionStore
from mnemo.sessions.pg_store import PgSessionStore
from mnemo.storage.factory import open_pg
from mnemo.storage.migrate import migrate_home

SESSIONS = 12
_SRC = str(Path(__file__).resolve().parents[2] / "src")


def _fill(home: Home) -> list[str]:
    """A home with sessions (one compacted, one with a NUL), memory and an archive."""
    ids: list[str] = []
    with SessionStore(home.state_db) as store:
        for k in range(SESSIONS):
            sid = store.create_session(title=f"session {k}", started_at=1_700_000_000 + k)
            msgs = store.append_messages(sid, [
                {"role": "user", "content": f"question {k} about the otter enclosure"},
                {"role": "assistant", "content": f"answer {k}: feed them at noon"},
                {"role": "user", "content": f"follow-up {k} \x00 with a NUL"},
            ])
            if k == 3:
                store.archive_and_replace(sid, msgs[:2], [{"role": "user",
                                                           "content": "summary of otters"}])
            ids.append(sid)
    memory = MemoryStore(home.memories_dir)
    memory.add("memory", "The otters eat at noon")
    memory.add("user", "Name: Ana")
    return ids


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_migrate_copies_everything_and_a_second_run_changes_nothing(
    mnemo_home: Home, pg_url: str
) -> None:
    ids = _fill(mnemo_home)
    before = _digest(mnemo_home.state_db)
    db = open_pg(pg_url)
    try:
        first = migrate_home(mnemo_home, db)
        again = migrate_home(mnemo_home, db)
    finally:
        db.close()
    assert (first.copied, first.verified) == (SESSIONS, True)
    assert (again.copied, again.skipped, again.verified) == (0, SESSIONS, True)
    assert first.memory["memory"].startswith("copied")
    assert again.memory["memory"] == "already copied"
    assert _digest(mnemo_home.state_db) == before  # the source is untouched
    with SessionStore(mnemo_home.state_db) as src, PgSessionStore(open_pg(pg_url)) as dst:
        for sid in ids:
            a = src.load_messages(sid, active_only=False)
            b = dst.load_messages(sid, active_only=False)
            assert [m.to_message() for m in a] == [m.to_message() for m in b]
            assert [(m.active, m.compacted) for m in a] == [(m.active, m.compacted) for m in b]
        summary = dst.load_messages(ids[3])[0]
        assert [m.text for m in dst.originals_of(summary.id)] == [
            "question 3 about the otter enclosure", "answer 3: feed them at noon"]
        assert dst.search("otter enclosure", limit=50)
    memory = PgMemoryStore(open_pg(pg_url))
    try:
        assert memory.read("memory")["entries"] == ["The otters eat at noon"]
    finally:
        memory.close()


@pytest.mark.slow
def test_migrate_killed_mid_way_resumes_without_duplicates(mnemo_home: Home, pg_url: str) -> None:
    ids = _fill(mnemo_home)
    before = _digest(mnemo_home.state_db)
    # Make the schema, then hold session 6's copy lock so the run stops right there.
    open_pg(pg_url).close()
    holder = psycopg.connect(pg_url, autocommit=True)
    holder.execute("SELECT pg_advisory_lock(hashtext(%s))", (ids[6],))
    env = {**os.environ, "PYTHONPATH": _SRC, "MNEMO_HOME": str(mnemo_home.root)}
    command = [sys.executable, "-m", "mnemo", "storage", "migrate", "--to", pg_url]
    run = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert run.stdout is not None
        seen = [run.stdout.readline() for _ in range(6)]
        assert seen[-1].startswith(f"session 6/{SESSIONS} ")
        run.kill()  # mid-way: blocked inside the seventh session's transaction
        run.wait(timeout=60)
    finally:
        holder.close()
    with psycopg.connect(pg_url) as conn:
        partial = conn.execute("SELECT count(*) FROM mnemo_sessions").fetchone()
    assert partial is not None and partial[0] == 6
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"copied {SESSIONS - 6} sessions, 6 already there" in rerun.stdout
    assert "verified: home 12 sessions / 37 messages; PostgreSQL 12 / 37" in rerun.stdout
    with psycopg.connect(pg_url) as conn:
        counts = conn.execute(
            "SELECT count(*), count(DISTINCT id) FROM mnemo_sessions").fetchone()
        messages = conn.execute(
            "SELECT count(*), count(DISTINCT (session_id, position)) FROM mnemo_messages"
        ).fetchone()
    assert counts == (SESSIONS, SESSIONS)
    assert messages == (37, 37)
    assert _digest(mnemo_home.state_db) == before
