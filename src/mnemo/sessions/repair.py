"""A damaged ``state.db``: run without it, and repair it without losing what can be read.

Two things live here because both start from the same fact — SQLite reported the file
as damaged (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``), which ``db.store_errors`` turns into a
``DatabaseDamagedError``:

* ``open_or_scratch`` gives the agent a session store whatever the state of the file: the
  real one when it opens, otherwise a scratch store in a temporary folder (deleted when
  the store is closed) plus a one-line warning, so ``mnemo chat`` keeps working without
  the archive instead of refusing to start.
* ``repair_database`` (``mnemo sessions repair``) moves the damaged file aside — it is
  kept, with its ``-wal`` and ``-shm`` companions, as ``state.db.damaged-<time>`` — creates
  a fresh archive at the old path, and copies into it every row of every table that can
  still be read, table by table and row range by row range, skipping only what fails.
  Nothing is deleted: the moved file stays for other recovery tools (``sqlite3 .recover``).
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from mnemo.errors import DatabaseDamagedError
from mnemo.sessions.store import SessionStore

__all__ = ["RepairReport", "integrity_problem", "open_or_scratch", "repair_database"]

log = logging.getLogger("mnemo.sessions")

_BATCH = 500  # rows read per query while salvaging
_SIDECARS = ("-wal", "-shm")


def open_or_scratch(path: Path) -> tuple[SessionStore, str | None]:
    """The store at ``path``, or a scratch store and a warning when the file is damaged.

    Any other failure (a full disk, a folder without permission) is raised as usual:
    only a damaged file is worked around, because only ``sessions repair`` can fix it.
    """
    try:
        return SessionStore(path), None
    except DatabaseDamagedError as exc:
        folder = Path(tempfile.mkdtemp(prefix="mnemo-scratch-"))
        store = SessionStore(folder / "state.db")
        weakref.finalize(store, shutil.rmtree, folder, ignore_errors=True)
        log.warning("session archive %s is damaged (%s); running without it", path, exc)
        return store, (f"the session archive {path} is damaged, so this conversation is not "
                       "saved and past sessions cannot be searched; run `mnemo sessions "
                       "repair` to keep what can be read and start a fresh archive")


@dataclass
class RepairReport:
    """What ``repair_database`` did: where the damaged file went and what was copied."""

    path: Path
    moved_to: Path | None = None
    copied: dict[str, int] = field(default_factory=dict)  # table -> rows copied
    lost: dict[str, int] = field(default_factory=dict)  # table -> rows unreadable
    readable: bool = True  # False when not even the table list could be read

    def describe(self) -> str:
        if self.moved_to is None:
            return f"{self.path} opens and reads fine; nothing was changed."
        rows = ", ".join(f"{n:,} {t}" for t, n in self.copied.items() if n) or "no rows"
        lost = sum(self.lost.values())
        tail = f"; {lost:,} unreadable row(s) were skipped" if lost else ""
        if not self.readable:
            tail = "; nothing in it could be read"
        return (f"moved the damaged archive to {self.moved_to} (kept); started a fresh "
                f"{self.path.name} with {rows} salvaged{tail}.")


def integrity_problem(path: Path) -> str | None:
    """What SQLite's ``quick_check`` finds wrong with ``path`` (None: nothing, or no file)."""
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = conn.execute("PRAGMA quick_check(3)").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    found = [str(r[0]) for r in rows if str(r[0]) != "ok"]
    return " ".join("; ".join(found).split())[:300] or None


def repair_database(path: Path, *, force: bool = False) -> RepairReport:
    """Move a damaged ``path`` aside, salvage its rows into a fresh archive at ``path``.

    A file that passes SQLite's ``quick_check`` is left alone unless ``force``.
    """
    report = RepairReport(path=path)
    if not force and integrity_problem(path) is None:
        return report
    stamp = time.strftime("%Y%m%d-%H%M%S")
    moved = path.with_name(f"{path.name}.damaged-{stamp}")
    counter = 1
    while moved.exists():
        moved = path.with_name(f"{path.name}.damaged-{stamp}.{counter}")
        counter += 1
    path.replace(moved)
    for suffix in _SIDECARS:
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.replace(moved.with_name(moved.name + suffix))
    report.moved_to = moved
    log.warning("session archive %s moved aside to %s for repair", path, moved)
    SessionStore(path).close()  # a fresh archive with the current schema and triggers
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        _salvage(moved, conn, report)
    finally:
        conn.close()
    log.info("session archive repaired: %s", report.describe())
    return report


def _salvage(source: Path, target: sqlite3.Connection, report: RepairReport) -> None:
    try:
        # A copy, so reading never changes the kept file (SQLite may roll its WAL in).
        scratch = Path(tempfile.mkdtemp(prefix="mnemo-salvage-"))
        copy = scratch / "damaged.db"
        shutil.copyfile(source, copy)
        for suffix in _SIDECARS:
            side = source.with_name(source.name + suffix)
            if side.exists():
                shutil.copyfile(side, copy.with_name(copy.name + suffix))
        old = sqlite3.connect(copy)
    except (OSError, sqlite3.Error):
        report.readable = False
        return
    try:
        try:
            names = {str(r[0]) for r in old.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError:
            report.readable = False
            return
        target.execute("PRAGMA foreign_keys = OFF")  # a session row may be the lost one
        try:
            for table in _plain_tables(target):
                if table in names and table != "schema_migrations":
                    _copy_table(old, target, table, report)
        finally:
            target.execute("PRAGMA foreign_keys = ON")
    finally:
        old.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _plain_tables(conn: sqlite3.Connection) -> list[str]:
    """The fresh archive's own tables, parents first (sessions before messages)."""
    rows = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " ORDER BY rowid").fetchall()
    # FTS5 tables and their shadow tables are rebuilt by the triggers on insert.
    virtual = {str(r[0]) for r in rows if "VIRTUAL TABLE" in str(r[1]).upper()}
    return [str(r[0]) for r in rows
            if str(r[0]) not in virtual and not any(str(r[0]).startswith(v + "_")
                                                    for v in virtual)]


def _copy_table(old: sqlite3.Connection, new: sqlite3.Connection, table: str,
                report: RepairReport) -> None:
    try:
        old_cols = {str(r[1]) for r in old.execute(f'PRAGMA table_info("{table}")')}
    except sqlite3.DatabaseError:
        report.lost[table] = report.lost.get(table, 0) + 1
        return
    # Generated columns (hidden 2 or 3) are computed again by the fresh table.
    columns = [str(r[1]) for r in new.execute(f'PRAGMA table_xinfo("{table}")')
               if int(r[6]) in (0, 1) and str(r[1]) in old_cols]
    if not columns:
        return
    names = ", ".join(f'"{c}"' for c in columns)
    insert = (f'INSERT OR IGNORE INTO "{table}" ({names}) '
              f'VALUES ({", ".join("?" for _ in columns)})')
    select = f'SELECT rowid, {names} FROM "{table}"'
    copied = 0
    last = -(2**63)
    while True:
        try:
            rows = old.execute(f"{select} WHERE rowid > ? ORDER BY rowid LIMIT ?",
                               (last, _BATCH)).fetchall()
        except sqlite3.DatabaseError:
            # A damaged page on the way: read the next rowids one at a time, so only
            # the rows stored on that page are lost.
            start = max(last + 1, 0) if last < 0 else last + 1
            rows = _rows_one_by_one(old, select, start, report, table)
            last = start + _BATCH - 1
            if not rows and not _has_rows_after(old, table, last):
                break
        else:
            if not rows:
                break
            last = int(rows[-1][0])
        new.execute("BEGIN")
        for row in rows:
            try:
                new.execute(insert, tuple(row[1:]))
                copied += 1
            except sqlite3.Error:  # a row the damage garbled into breaking a constraint
                report.lost[table] = report.lost.get(table, 0) + 1
        new.execute("COMMIT")
    report.copied[table] = copied


def _rows_one_by_one(old: sqlite3.Connection, select: str, start: int,
                     report: RepairReport, table: str) -> list[sqlite3.Row]:
    rows = []
    for rowid in range(start, start + _BATCH):
        try:
            rows.extend(old.execute(f"{select} WHERE rowid = ?", (rowid,)).fetchall())
        except sqlite3.DatabaseError:
            report.lost[table] = report.lost.get(table, 0) + 1
    return rows


def _has_rows_after(old: sqlite3.Connection, table: str, rowid: int) -> bool:
    try:
        high = old.execute(f'SELECT max(rowid) FROM "{table}"').fetchone()[0]
    except sqlite3.DatabaseError:
        return False
    return high is not None and int(high) > rowid
