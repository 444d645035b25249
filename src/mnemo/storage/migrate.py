"""``mnemo storage migrate``: copy a home's ``state.db`` and memory files into PostgreSQL.

The source is opened read-only (SQLite ``mode=ro``; the memory files are only read), so
nothing in the home changes. Each session is copied in one PostgreSQL transaction
together with its row in ``mnemo_imports`` (source, session, message count): a copy
killed at any moment leaves whole sessions or nothing, and the next run skips what the
ledger shows as done — run it again and again, the result is the same. Message ids are
new in PostgreSQL, so each compaction summary's ``meta["replaces"]`` is rewritten to the
new ids of the messages it stands for (the lcm archive stays navigable).

A session that exists in PostgreSQL but not in the ledger (made there by another host)
is never overwritten; one that grew in the home after an earlier copy is copied again
only while PostgreSQL still holds exactly what was copied. Memory goes into the
namespace's stores only when they are empty (or already equal); ARCHIVE.md entries join
``mnemo_memory_archive`` once. The report ends with counts read back from both sides.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemo.errors import StoreError, UsageError
from mnemo.home import Home
from mnemo.memory.entries import FILENAMES, TARGETS, Target, parse_entries, serialize_entries
from mnemo.memory.store import ARCHIVE_FILENAME
from mnemo.sessions.migrations import MIGRATIONS, schema_version
from mnemo.sessions.pg_rows import insert_rows, split_nul
from mnemo.sessions.rows import Row
from mnemo.storage.pg import PgDatabase

if TYPE_CHECKING:
    import psycopg

__all__ = ["MigrationReport", "migrate_home"]

_BATCH = 500  # messages per insert


@dataclass
class MigrationReport:
    """What one run did, and the counts read back from both sides."""

    copied: int = 0
    skipped: int = 0  # already copied by an earlier run
    conflicts: list[str] = field(default_factory=list)  # left alone, with the reason
    memory: dict[str, str] = field(default_factory=dict)  # store -> what happened
    source_sessions: int = 0
    source_messages: int = 0
    target_sessions: int = 0  # of those, found in PostgreSQL
    target_messages: int = 0

    conflict_messages: int = 0

    @property
    def verified(self) -> bool:
        """Every session not left alone is in PostgreSQL with all its messages."""
        return (self.source_sessions - len(self.conflicts) == self.target_sessions
                and self.target_messages == self.source_messages - self.conflict_messages)


def _open_source(path: Path) -> sqlite3.Connection:
    if not path.exists():
        raise UsageError(f"{path} does not exist; there is no session archive to copy.")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    version = schema_version(conn)
    if version != MIGRATIONS[-1].version:
        conn.close()
        raise UsageError(f"{path} has schema version {version}, not {MIGRATIONS[-1].version}; "
                         "run any mnemo command on this home once (it upgrades the file), "
                         "then migrate.")
    return conn


def migrate_home(
    home: Home,
    db: PgDatabase,
    *,
    namespace: str = "default",
    progress: Callable[[str], None] | None = None,
) -> MigrationReport:
    """Copy ``home`` into the database behind ``db``; return what happened."""
    say = progress or (lambda _line: None)
    source = f"sqlite:{home.state_db.resolve()}"
    report = MigrationReport()
    if home.state_db.exists():
        with closing(_open_source(home.state_db)) as conn:
            sessions = conn.execute(
                "SELECT s.*, (SELECT count(*) FROM messages m WHERE m.session_id = s.id) "
                "AS n FROM sessions s ORDER BY s.started_at, s.id").fetchall()
            report.source_sessions = len(sessions)
            report.source_messages = sum(int(s["n"]) for s in sessions)
            for index, session in enumerate(sessions, start=1):
                outcome = db.run(functools.partial(_copy_session, src=conn, session=session,
                                                   source=source), what="session copy")
                if outcome == "copied":
                    report.copied += 1
                elif outcome == "done":
                    report.skipped += 1
                else:
                    report.conflicts.append(f"{session['id']}: {outcome}")
                    report.conflict_messages += int(session["n"])
                say(f"session {index}/{len(sessions)} {session['id']}: {outcome}")
            db.run(lambda pg: _link_parents(pg, sessions), what="session links")
        _count_target(db, source, report)
    for target in TARGETS:
        report.memory[target] = db.run(
            functools.partial(_copy_memory, home=home, namespace=namespace, target=target),
            what="memory copy")
        say(f"memory {FILENAMES[target]}: {report.memory[target]}")
    archived = db.run(lambda pg: _copy_archive(pg, home, namespace), what="archive copy")
    if archived:
        report.memory["archive"] = archived
        say(f"memory {ARCHIVE_FILENAME}: {archived}")
    return report


def _copy_session(pg: psycopg.Connection[Any], src: sqlite3.Connection, session: sqlite3.Row,
                  source: str) -> str:
    sid, count = str(session["id"]), int(session["n"])
    pg.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (sid,))  # two copies at once
    done = pg.execute("SELECT messages FROM mnemo_imports WHERE source = %s AND "
                      "session_id = %s", (source, sid)).fetchone()
    if done is not None and int(done["messages"]) == count:
        return "done"
    present: Any = pg.execute("SELECT (SELECT count(*) FROM mnemo_messages WHERE session_id = %s) "
                         "AS n, EXISTS (SELECT 1 FROM mnemo_sessions WHERE id = %s) AS e",
                         (sid, sid)).fetchone()
    if present["e"]:
        if done is None:
            return "exists in PostgreSQL and was not copied from this home; left alone"
        if int(present["n"]) != int(done["messages"]):
            return ("grew in both places since the last copy; left alone (delete it in "
                    "PostgreSQL to copy it again)")
        pg.execute("DELETE FROM mnemo_sessions WHERE id = %s", (sid,))  # ours, unchanged
    text, raw = split_nul({k: session[k] for k in ("source", "model", "system_prompt",
                                                   "title", "end_reason")})
    pg.execute(
        "INSERT INTO mnemo_sessions (id, source, model, system_prompt, title, started_at, "
        "updated_at, ended_at, end_reason, prompt_tokens, completion_tokens, meta, raw_fields) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (sid, text["source"], text["model"], text["system_prompt"], text["title"],
         session["started_at"], session["updated_at"], session["ended_at"], text["end_reason"],
         session["prompt_tokens"], session["completion_tokens"], session["meta"], raw))
    new_ids: dict[int, int] = {}
    batch: list[tuple[int, Row, float, tuple[int, int]]] = []

    def flush() -> None:
        ids = insert_rows(pg, sid, [b[1] for b in batch], [b[2] for b in batch],
                          flags=[b[3] for b in batch])
        new_ids.update(zip((b[0] for b in batch), ids, strict=True))
        batch.clear()

    for message in src.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY id",
                               (sid,)):
        if batch and (len(batch) >= _BATCH or _replaces(message["meta"])):
            flush()  # a summary names earlier messages: their new ids must be known
        batch.append((int(message["id"]), Row(
            role=message["role"], content=message["content"],
            content_kind=message["content_kind"], tool_calls=message["tool_calls"],
            tool_call_id=message["tool_call_id"], name=message["name"],
            timestamp=message["timestamp"], external_id=message["external_id"],
            meta=_remap(message["meta"], new_ids), extra=message["extra"],
            search_text=message["search_text"]),
            message["position"], (int(message["active"]), int(message["compacted"]))))
    if batch:
        flush()
    pg.execute("INSERT INTO mnemo_imports (source, session_id, messages, imported_at) "
               "VALUES (%s, %s, %s, %s) ON CONFLICT (source, session_id) DO UPDATE SET "
               "messages = excluded.messages, imported_at = excluded.imported_at",
               (source, sid, count, time.time()))
    return "copied"


def _replaces(meta: str | None) -> bool:
    return bool(meta) and '"replaces"' in str(meta)


def _remap(meta: str | None, new_ids: dict[int, int]) -> str | None:
    """``meta`` with its ``replaces`` ids turned into the PostgreSQL ids."""
    if not meta:
        return meta
    data = json.loads(meta)
    replaces = data.get("replaces")
    if isinstance(replaces, list):
        data["replaces"] = [new_ids.get(i, i) if isinstance(i, int) else i for i in replaces]
        return json.dumps(data, ensure_ascii=False)
    return meta


def _link_parents(pg: psycopg.Connection[Any], sessions: list[sqlite3.Row]) -> None:
    """Parents last: a child may have been copied before its parent."""
    for session in sessions:
        if session["parent_id"] is not None:
            pg.execute("UPDATE mnemo_sessions SET parent_id = %s WHERE id = %s AND parent_id "
                       "IS NULL AND EXISTS (SELECT 1 FROM mnemo_sessions WHERE id = %s)",
                       (session["parent_id"], session["id"], session["parent_id"]))


def _count_target(db: PgDatabase, source: str, report: MigrationReport) -> None:
    row: Any = db.run(lambda pg: pg.execute(
        "SELECT count(*) AS s, coalesce(sum((SELECT count(*) FROM mnemo_messages m "
        "WHERE m.session_id = i.session_id)), 0) AS m FROM mnemo_imports i "
        "WHERE i.source = %s", (source,)).fetchone())
    report.target_sessions, report.target_messages = int(row["s"]), int(row["m"])


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path} cannot be read ({exc}); fix it, then migrate again.") from exc


def _copy_memory(pg: psycopg.Connection[Any], home: Home, namespace: str,
                 target: Target) -> str:
    text = serialize_entries(parse_entries(_read(home.memories_dir / FILENAMES[target])))
    if not text:
        return "empty in the home; nothing to copy"
    pg.execute("INSERT INTO mnemo_memory (namespace, target, content, updated_at) VALUES "
               "(%s, %s, '', %s) ON CONFLICT DO NOTHING", (namespace, target, time.time()))
    row = pg.execute("SELECT content FROM mnemo_memory WHERE namespace = %s AND target = %s "
                     "FOR UPDATE", (namespace, target)).fetchone()
    current = str(row["content"]) if row else ""
    if current == text:
        return "already copied"
    if current:
        return (f"namespace {namespace!r} already holds different entries; left alone "
                "(use `mnemo memory import` to merge)")
    pg.execute("UPDATE mnemo_memory SET content = %s, updated_at = %s WHERE namespace = %s "
               "AND target = %s", (text, time.time(), namespace, target))
    return f"copied {len(parse_entries(text))} entries"


def _copy_archive(pg: psycopg.Connection[Any], home: Home, namespace: str) -> str:
    entries = parse_entries(_read(home.memories_dir / ARCHIVE_FILENAME))
    if not entries:
        return ""
    pg.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"archive:{namespace}",))
    have = {str(r["entry"]) for r in pg.execute(
        "SELECT entry FROM mnemo_memory_archive WHERE namespace = %s", (namespace,))}
    new = [e for e in entries if e not in have]
    with pg.cursor() as cur:
        cur.executemany("INSERT INTO mnemo_memory_archive (namespace, target, entry, "
                        "archived_at) VALUES (%s, 'memory', %s, %s)",
                        [(namespace, e, time.time()) for e in new])
    return f"copied {len(new)} archived entries" if new else "already copied"
