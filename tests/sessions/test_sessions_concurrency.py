"""Real processes writing to one state.db at the same time lose nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mnemo.sessions import SessionStore

WRITER = """
import sys
from mnemo.sessions import SessionStore

path, sid, tag, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
store = SessionStore(path)
print("ready", flush=True)
sys.stdin.readline()  # start together
for i in range(count):
    if i % 10 == 0:
        store.append_messages(sid, [{"role": "user", "content": f"{tag} batch {i} {j}"}
                                    for j in range(3)])
    store.append_message(sid, {"role": "assistant", "content": f"{tag} message {i}"})
    store.add_token_usage(sid, 1, 1)
store.close()
print("done", flush=True)
"""


def _run_writers(path: Path, jobs: list[tuple[str, str]], count: int) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), sid, tag, str(count)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
        for sid, tag in jobs
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()


def _expected(tag: str, count: int) -> list[str]:
    out = []
    for i in range(count):
        if i % 10 == 0:
            out += [f"{tag} batch {i} {j}" for j in range(3)]
        out.append(f"{tag} message {i}")
    return out


@pytest.mark.sqlite_only
@pytest.mark.slow
def test_two_processes_append_to_different_sessions(store: SessionStore) -> None:
    count = 150
    a, b = store.create_session(), store.create_session()
    _run_writers(store.path, [(a, "A"), (b, "B")], count)
    for sid, tag in ((a, "A"), (b, "B")):
        assert [m.text for m in store.load_messages(sid)] == _expected(tag, count)
        info = store.get_session(sid)
        assert info is not None and info.prompt_tokens == count
        assert len(store.search(f"{tag} message", session_id=sid, limit=1000)) >= count
    assert store.journal_mode() == "wal"


@pytest.mark.sqlite_only
@pytest.mark.slow
def test_two_processes_append_to_the_same_session(store: SessionStore) -> None:
    count = 100
    sid = store.create_session()
    _run_writers(store.path, [(sid, "A"), (sid, "B")], count)
    stored = store.load_messages(sid)
    texts = [m.text for m in stored]
    assert sorted(texts) == sorted(_expected("A", count) + _expected("B", count))
    # each writer's own messages keep their order, and positions never collide
    assert [t for t in texts if t.startswith("A ")] == _expected("A", count)
    assert len({m.position for m in stored}) == len(stored)
