"""A damaged state.db, end to end (issue 14, class 8): real files, real subprocesses.

``mnemo chat`` (one-shot and interactive) keeps working without the archive and says so;
``mnemo sessions repair`` keeps the damaged file, salvages what reads and starts fresh;
``doctor`` calls the damage what it is; ``mnemo … | head`` ends quietly.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pexpect

from mnemo.home import Home
from mnemo.sessions import SessionStore
from mnemo.sessions.repair import integrity_problem, repair_database
from support.fake_openai import FakeOpenAIServer, chat_reply

MNEMO = str(Path(sys.executable).with_name("mnemo"))
PAGE = 4096


def _env(home: Home, server: FakeOpenAIServer | None = None) -> dict[str, str]:
    if server is not None:
        home.config_file.write_text(
            f"model:\n  name: fake-model\n  base_url: {server.base_url}\n"
            "  context_length: 16000\n", encoding="utf-8")
    return {**os.environ, "MNEMO_HOME": str(home.root), "MNEMO_API_KEY": "test-key"}


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MNEMO, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=60, check=False)


def _filled_archive(path: Path, sessions: int = 3, messages: int = 300) -> None:
    with SessionStore(path) as store:
        for s in range(sessions):
            store.create_session(title=f"s{s}", messages=[
                {"role": "user", "content": f"session {s} line {i} about the walrus"}
                for i in range(messages)])
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _damage(path: Path, pages: tuple[int, ...] = (20, 21, 30)) -> None:
    with open(path, "r+b") as handle:
        for page in pages:
            handle.seek(page * PAGE)
            handle.write(b"\xde\xad" * (PAGE // 2))


def test_chat_once_runs_without_a_damaged_archive_and_says_so(
        mnemo_home: Home, fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    env = _env(mnemo_home, fake_openai)
    mnemo_home.state_db.write_bytes(b"not a database at all " * 500)
    # Two more broken files the agent must survive: a non-UTF-8 MEMORY.md, a huge USER.md.
    mnemo_home.memories_dir.mkdir(parents=True)
    (mnemo_home.memories_dir / "MEMORY.md").write_bytes(b"caf\xe9 is open late")
    (mnemo_home.memories_dir / "USER.md").write_text("\n\u00a7\n".join(
        f"fact {i} " + "x" * 100 for i in range(100)), encoding="utf-8")
    fake_openai.queue(chat_reply("Hello without an archive."))
    done = _run(["chat", "--once", "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello without an archive."
    assert "damaged" in done.stderr and "mnemo sessions repair" in done.stderr
    assert "MEMORY.md is not valid UTF-8 (byte 3, line 1)" in done.stderr
    assert "USER.md holds 11,0" in done.stderr and "left out of the prompt" in done.stderr
    system = fake_openai.requests[0].body["messages"][0]["content"]
    assert "caf\ufffd is open late" in system and "fact 0 " in system
    assert "fact 99 " not in system
    assert mnemo_home.state_db.read_bytes().startswith(b"not a database")  # untouched


def test_interactive_chat_runs_without_a_damaged_archive(
        mnemo_home: Home, fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    env = _env(mnemo_home, fake_openai)
    _filled_archive(mnemo_home.state_db, sessions=1, messages=5)
    mnemo_home.state_db.write_bytes(b"\x00garbage" * 2000)
    fake_openai.queue(chat_reply("Still here."))
    child = pexpect.spawn(MNEMO, ["chat"], env=env, cwd=str(tmp_path), encoding="utf-8",
                          timeout=30)
    try:
        child.expect("mnemo sessions repair")
        child.expect("you> ")
        child.sendline("hi")
        child.expect("Still here.")
        child.expect("you> ")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_sessions_repair_keeps_the_file_salvages_rows_and_starts_fresh(
        mnemo_home: Home, tmp_path: Path) -> None:
    _filled_archive(mnemo_home.state_db)
    _damage(mnemo_home.state_db)
    damaged_bytes = mnemo_home.state_db.read_bytes()
    env = _env(mnemo_home)
    doctor = _run(["doctor", "--skip-model", "--json"], env, tmp_path)
    state = next(c for c in json.loads(doctor.stdout) if c["name"] == "state.db")
    assert state["verdict"] == "fail" and "damaged" in state["detail"]
    assert "mnemo sessions repair" in state["fix"] and "permission" not in state["fix"]
    done = _run(["sessions", "repair", "--json"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    kept = Path(report["moved_to"])
    assert kept.read_bytes() == damaged_bytes  # moved aside, byte for byte
    assert 0 < report["copied"]["messages"] < 900 and report["copied"]["sessions"] == 3
    assert integrity_problem(mnemo_home.state_db) is None
    with SessionStore(mnemo_home.state_db) as store:
        assert store.count_messages() == report["copied"]["messages"]
        assert store.search("walrus", limit=5)  # the index was rebuilt with the rows
    again = _run(["sessions", "repair"], env, tmp_path)
    assert "nothing was changed" in again.stdout


def test_repair_of_a_file_that_is_not_a_database_starts_fresh(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"hello" * 1000)
    report = repair_database(path)
    assert report.moved_to is not None and report.moved_to.read_bytes() == b"hello" * 1000
    assert not report.readable and "nothing in it could be read" in report.describe()
    with SessionStore(path) as store:
        assert store.count_messages() == 0


def test_output_into_a_closed_pipe_ends_quietly(mnemo_home: Home, tmp_path: Path) -> None:
    _filled_archive(mnemo_home.state_db, sessions=2, messages=400)
    env = _env(mnemo_home)
    with SessionStore(mnemo_home.state_db) as store:
        sid = store.list_sessions()[0].id
    for args in (["sessions", "show", sid], ["sessions", "search", "walrus", "-n", "800"]):
        line = f"set -o pipefail; '{MNEMO}' {' '.join(args)} | head -n 1"
        done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=60, check=False)
        assert done.stdout.count("\n") == 1
        assert done.stderr == "" and done.returncode == 0, done.stderr
