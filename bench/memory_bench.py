"""Memory store throughput under concurrency, and the cost of loading a full store.

    python bench/memory_bench.py [--ops 100]

For 1, 2, 4 and 8 processes writing to one store at once: adds/s and replaces/s over all
processes (every write takes the lock, re-reads, fsyncs and renames). Then the latency of
``load_from_disk()`` + rendering both snapshot blocks for full stores (p50/p95 over 500
loads). Figures depend on the disk's fsync cost; compare rows of one run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from mnemo.memory import MemoryStore

WORKER = textwrap.dedent("""
    import sys
    from mnemo.memory import MemoryStore
    memory_dir, worker, ops = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = MemoryStore(memory_dir, memory_char_limit=10_000_000)
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(ops):
        store.add("memory", f"worker {worker} fact {i}: the build runs with make -j4")
    print("added", flush=True)
    sys.stdin.readline()
    for i in range(ops):
        store.replace("memory", f"worker {worker} fact {i}:", f"worker {worker} fact {i} v2")
    print("replaced", flush=True)
""")


def _phase(procs: list[subprocess.Popen[str]], expect: str) -> float:
    start = time.perf_counter()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line == expect, f"worker said {line!r}"
    return time.perf_counter() - start


def throughput(processes: int, ops: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        procs = [subprocess.Popen([sys.executable, "-c", WORKER, tmp, str(w), str(ops)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                 for w in range(processes)]
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        add_time = _phase(procs, "added")
        replace_time = _phase(procs, "replaced")
        for proc in procs:
            proc.wait()
        store = MemoryStore(tmp, memory_char_limit=10_000_000)
        assert len(store.read("memory")["entries"]) == processes * ops, "lost writes!"
    total = processes * ops
    return total / add_time, total / replace_time


def load_latency(samples: int = 500) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(tmp)
        i = 0
        while store.add("memory", f"Fact {i}: the staging database lives on db{i}.internal "
                                  "and is reset nightly at 02:00 UTC")["success"]:
            i += 1
        j = 0
        while store.add("user", f"Preference {j}: answers in short paragraphs, metric "
                                "units, code in Python")["success"]:
            j += 1
        times = []
        for _ in range(samples):
            fresh = MemoryStore(Path(tmp))
            start = time.perf_counter()
            fresh.load_from_disk()
            fresh.format_for_system_prompt("memory")
            fresh.format_for_system_prompt("user")
            times.append(time.perf_counter() - start)
        times.sort()
        return (statistics.median(times) * 1000, times[int(len(times) * 0.95)] * 1000,
                i + j)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", type=int, default=100, help="operations per process and phase")
    args = parser.parse_args()
    print(f"{'processes':>9}  {'adds/s':>8}  {'replaces/s':>10}   ({args.ops} ops per process)")
    for processes in (1, 2, 4, 8):
        adds, replaces = throughput(processes, args.ops)
        print(f"{processes:>9}  {adds:>8.0f}  {replaces:>10.0f}")
    p50, p95, entries = load_latency()
    print(f"\nload_from_disk + render, full stores ({entries} entries): "
          f"p50 {p50:.3f} ms, p95 {p95:.3f} ms")


if __name__ == "__main__":
    main()
