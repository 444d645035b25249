"""A PostgreSQL server that goes away: one retry, one clear line, nothing acknowledged lost."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from mnemo.agent import build_agent
from mnemo.config import MnemoConfig
from mnemo.errors import StoreError
from mnemo.home import Home
from mnemo.llm.testing import ScriptedChatClient
from mnemo.memory.pg_store import PgMemoryStore
from mnemo.sessions.pg_store import PgSessionStore
from mnemo.storage.factory import open_pg
from support.pg import PgServer

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def _kill_other_connections(url: str) -> int:
    """Terminate every other backend (what a failover or a proxy restart does)."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE pid <> pg_backend_pid() AND datname = current_database()"
                            ).fetchall()
    return len(rows)


def test_a_dropped_connection_is_retried_once_without_the_caller_noticing(pg_url: str) -> None:
    store = PgSessionStore(open_pg(pg_url))
    try:
        sid = store.create_session()
        store.append_message(sid, {"role": "user", "content": "before"})
        assert _kill_other_connections(pg_url) >= 1
        store.append_message(sid, {"role": "user", "content": "after"})
        assert [m.text for m in store.load_messages(sid)] == ["before", "after"]
    finally:
        store.close()


def test_server_stopped_mid_session_gives_one_clear_error_and_resumes(
    pg_server: PgServer, pg_url: str
) -> None:
    # A short wait for a connection keeps the test quick (the default is 5 s).
    sessions = PgSessionStore(open_pg(pg_url, connect_timeout=2))
    memory = PgMemoryStore(open_pg(pg_url, connect_timeout=2), namespace="outage")
    try:
        sid = sessions.create_session()
        acknowledged = sessions.append_messages(sid, [
            {"role": "user", "content": "remember the blue door"},
            {"role": "assistant", "content": "Noted: the blue door."},
        ])
        assert memory.add("memory", "the door is blue")["success"]
        pg_server.stop()
        try:
            with pytest.raises(StoreError) as caught:
                sessions.append_message(sid, {"role": "user", "content": "lost in the outage"})
            message = str(caught.value)
            assert "\n" not in message and "PostgreSQL" in message
            assert "server is running" in message
            failed = memory.add("memory", "written during the outage")
            assert failed["success"] is False and "\n" not in failed["error"]
        finally:
            pg_server.start()
        # The same store objects carry on: their pools reconnect.
        sessions.append_message(sid, {"role": "user", "content": "back again"})
        stored = sessions.load_messages(sid)
        assert [m.id for m in stored][:2] == acknowledged
        assert [m.text for m in stored] == ["remember the blue door", "Noted: the blue door.",
                                            "back again"]
        assert memory.read("memory")["entries"] == ["the door is blue"]
        assert memory.add("memory", "after the restart")["success"]
    finally:
        sessions.close()
        memory.close()


def test_an_agent_session_survives_a_server_restart(
    pg_server: PgServer, pg_url: str, mnemo_home: Home, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MNEMO_STORAGE_URL", pg_url)
    client = ScriptedChatClient(default="Noted.")
    config = MnemoConfig.model_validate({"storage": {"namespace": "agent-outage"}})
    with build_agent(config, home=mnemo_home, cwd=tmp_path, client=client) as agent:
        agent.run_turn("the deploy key rotates on Mondays")
        sid = agent.session_id
        assert sid is not None
        pg_server.stop()
        try:
            with pytest.raises(StoreError) as caught:
                agent.run_turn("this one is lost")
            assert "\n" not in str(caught.value)
        finally:
            pg_server.start()
        agent.run_turn("and the staging key on Fridays")
    store = PgSessionStore(open_pg(pg_url))
    try:
        texts = [m.text for m in store.load_messages(sid)]
    finally:
        store.close()
    assert texts[:2] == ["the deploy key rotates on Mondays", "Noted."]
    assert texts[-2:] == ["and the staging key on Fridays", "Noted."]
    assert "this one is lost" not in texts
