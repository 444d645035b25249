"""Several hosts on one PostgreSQL database: shared memory without lost writes, one archive.

Each "host" is a separate process with its own ``MNEMO_HOME`` and the same
``MNEMO_STORAGE_URL`` — what a fleet of agents on several machines looks like to the
database.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mnemo.config import load_config
from mnemo.home import Home
from mnemo.memory.entries import parse_entries, usage_of
from mnemo.memory.pg_store import PgMemoryStore
from mnemo.sessions.tool import session_search
from mnemo.storage.factory import open_memory_store, open_session_store

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

_WRITER = """
import json, sys
from mnemo.config import load_config
from mnemo.home import Home
from mnemo.storage.factory import open_memory_store
name, count = sys.argv[1], int(sys.argv[2])
store = open_memory_store(load_config(Home()), Home())
log = []
for j in range(count):
    entry = f"{name} fact number {j} " + "x" * 20
    log.append(["add", entry, store.add("memory", entry)["success"]])
    if j % 3 == 2:  # rework an earlier entry of this host
        old = f"{name} fact number {j - 2} "
        new = f"{name} fact number {j - 2} reworded " + "y" * 10
        log.append(["replace", old, new, store.replace("memory", old, new)["success"]])
    if j % 4 == 3:
        old = f"{name} fact number {j - 1} "
        log.append(["remove", old, store.remove("memory", old)["success"]])
print(json.dumps(log))
"""


def _host(tmp_path: Path, name: str, url: str, limit: int = 2200) -> dict[str, str]:
    home = tmp_path / name
    home.mkdir()
    (home / "config.yaml").write_text(
        f"memory: {{memory_char_limit: {limit}}}\nstorage: {{namespace: fleet}}\n",
        encoding="utf-8")
    src = str(Path(__file__).resolve().parents[2] / "src")
    return {**os.environ, "MNEMO_HOME": str(home), "MNEMO_STORAGE_URL": url,
            "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _expected(logs: list[list[list[object]]]) -> set[str]:
    """What must be in the store: each host's acknowledged writes, applied in its order."""
    alive: set[str] = set()
    for log in logs:
        mine: list[str] = []
        for step in log:
            if step[0] == "add" and step[2]:
                mine.append(str(step[1]))
            elif step[0] == "replace" and step[3]:
                mine = [str(step[2]) if e.startswith(str(step[1])) and "reworded" not in e
                        else e for e in mine]
            elif step[0] == "remove" and step[2]:
                mine = [e for e in mine if not e.startswith(str(step[1]))]
        alive.update(mine)
    return alive


@pytest.mark.parametrize("limit", [2200, 900])
def test_hosts_writing_one_namespace_at_once_lose_nothing_and_hold_the_limit(
    tmp_path: Path, pg_url: str, limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    hosts = [f"host{i}" for i in range(4)]
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, name, "12"],
                              env=_host(tmp_path, name, pg_url, limit), stdout=subprocess.PIPE,
                              text=True) for name in hosts]
    logs = []
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0
        logs.append(json.loads(out))
    monkeypatch.setenv("MNEMO_STORAGE_URL", pg_url)
    home = Home(tmp_path / hosts[0])
    store = open_memory_store(load_config(home), home)
    assert isinstance(store, PgMemoryStore)
    try:
        entries = parse_entries(store.raw_text("memory"))
    finally:
        store.close()
    assert set(entries) == _expected(logs)
    assert len(entries) == len(set(entries))
    assert usage_of(entries) <= limit
    refused = sum(1 for log in logs for step in log if step[0] == "add" and not step[2])
    assert (refused > 0) == (limit == 900)  # the small limit really was reached


_SESSION_WRITER = """
import sys
from mnemo.config import load_config
from mnemo.home import Home
from mnemo.storage.factory import open_session_store
with open_session_store(load_config(Home()), Home()) as store:
    sid = store.create_session(source="ci", title="deploy notes")
    store.append_messages(sid, [
        {"role": "user", "content": "Which port does the staging gateway use?"},
        {"role": "assistant", "content": "The staging gateway listens on port 8443."},
    ])
    print(sid)
"""


def test_a_session_written_on_one_host_is_found_on_another_at_once(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = subprocess.run([sys.executable, "-c", _SESSION_WRITER],
                            env=_host(tmp_path, "builder", pg_url), capture_output=True,
                            text=True, timeout=120, check=True)
    sid = writer.stdout.strip()
    reader_home = tmp_path / "reader"
    reader_home.mkdir()
    monkeypatch.setenv("MNEMO_STORAGE_URL", pg_url)
    with open_session_store(load_config(Home(reader_home)), Home(reader_home)) as store:
        result = json.loads(session_search("staging gateway port", store=store))
    assert result["results"][0]["session_id"] == sid
    texts = json.dumps(result["results"][0])
    assert "8443" in texts
