"""Durability with real processes (SPEC M5).

Concurrent writers lose nothing; SIGKILL in the middle of a write corrupts nothing.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mnemo.fileio import exclusive_lock, lock_path_for
from mnemo.memory import MemoryStore
from mnemo.memory.entries import parse_entries

pytestmark = pytest.mark.slow

WRITER = textwrap.dedent("""
    import sys
    from mnemo.memory import MemoryStore
    memory_dir, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = MemoryStore(memory_dir, memory_char_limit=1_000_000)
    sys.stdout.write("ready\\n"); sys.stdout.flush()
    sys.stdin.readline()  # start together
    for i in range(count):
        result = store.add("memory", f"worker {worker} entry {i}")
        assert result["success"], result
""")

SEQUENTIAL = textwrap.dedent("""
    import sys
    from mnemo.memory import MemoryStore
    store = MemoryStore(sys.argv[1], memory_char_limit=10_000_000)
    n = len(store.read("memory")["entries"])
    sys.stdout.write("ready\\n"); sys.stdout.flush()
    while True:
        store.add("memory", f"entry {n:06d} " + "x" * 200)
        n += 1
""")


def _spawn(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", script, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def test_eight_processes_adding_at_once_lose_nothing(tmp_path: Path) -> None:
    workers, per_worker = 8, 50
    procs = [_spawn(WRITER, str(tmp_path), str(w), str(per_worker)) for w in range(workers)]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    entries = parse_entries((tmp_path / "MEMORY.md").read_text(encoding="utf-8"))
    expected = {f"worker {w} entry {i}" for w in range(workers) for i in range(per_worker)}
    assert set(entries) == expected
    assert len(entries) == workers * per_worker
    # each worker's own entries stay in the order it wrote them
    for w in range(workers):
        mine = [e for e in entries if e.startswith(f"worker {w} ")]
        assert mine == [f"worker {w} entry {i}" for i in range(per_worker)]


def test_sigkill_mid_write_always_leaves_a_valid_prefix(tmp_path: Path) -> None:
    rng = random.Random(1234)
    path = tmp_path / "MEMORY.md"
    for _round in range(15):
        proc = _spawn(SEQUENTIAL, str(tmp_path))
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        # Let it write for a random while, then kill it wherever it is.
        try:
            proc.wait(timeout=rng.uniform(0.005, 0.08))
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        entries = parse_entries(path.read_text(encoding="utf-8")) if path.exists() else []
        assert entries == [f"entry {i:06d} " + "x" * 200 for i in range(len(entries))]
        store = MemoryStore(tmp_path)
        store.load_from_disk()  # a later load sees exactly the file, never a temp file
        assert store.memory_entries == entries
    assert path.exists() and parse_entries(path.read_text(encoding="utf-8"))
    # the next writer clears whatever temp files the killed ones left
    MemoryStore(tmp_path, memory_char_limit=10_000_000).add("memory", "after the crashes")
    assert list(tmp_path.glob(".mem_MEMORY.md.*.tmp")) == []


def test_a_lock_held_by_a_killed_process_never_blocks(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            from pathlib import Path
            from mnemo.fileio import exclusive_lock
            with exclusive_lock(Path({str(target)!r})):
                print("locked", flush=True)
                time.sleep(60)
        """)],
        stdout=subprocess.PIPE, text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    holder.kill()
    holder.wait()
    assert lock_path_for(target).exists()  # the stale lock file is still there
    with exclusive_lock(target):  # and yet it is free at once
        pass
    assert MemoryStore(tmp_path).add("memory", "written after the crash")["success"]
