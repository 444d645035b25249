"""``MemoryStore``: the two curated stores (MEMORY.md, USER.md) and their operations.

Two states are kept apart on purpose (SPEC M3):

* the **live** entries (``memory_entries``, ``user_entries``), which every operation
  re-reads from disk under the lock and writes back at once;
* the **frozen snapshot**, rendered by ``load_from_disk()`` and used for the system
  prompt until the next load, so the prompt stays byte-identical for a whole session.

Every mutation follows the same path (``_mutate``): lock ``<file>.lock``, clear temp files
a killed writer left, re-read the file, check it was not hand-edited into a shape a
rewrite would change, apply the one operation to a copy, check the limit, write
atomically, update the live list. Operations return JSON-ready dicts; the model reads
them, so every error says what to do next.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from mnemo.config import MnemoConfig
from mnemo.errors import StoreError
from mnemo.fileio import atomic_write_text, exclusive_lock, is_read_only, remove_stale_temps
from mnemo.home import Home
from mnemo.memory.entries import (
    FILENAMES,
    TARGETS,
    Target,
    blocked_placeholder,
    canonical,
    delimiter_problem,
    format_usage,
    near_delimiter_problem,
    parse_entries,
    render_block,
    round_trips,
    serialize_entries,
    usage_of,
)
from mnemo.memory.files import fit_entries, left_out_notice, read_memory_file, write_path
from mnemo.security import scan

__all__ = ["ARCHIVE_FILENAME", "MemoryStore", "Result"]

log = logging.getLogger("mnemo.memory")

Result = dict[str, Any]
Overflow = Literal["reject", "archive"]
ARCHIVE_FILENAME = "ARCHIVE.md"
_PREVIEW_CHARS = 80


class _Refused(Exception):
    """An operation cannot be applied; carries the error result for the caller."""

    def __init__(self, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.result: Result = {"success": False, "error": error, **extra}


def _preview(entry: str) -> str:
    flat = " ".join(entry.split())
    return flat if len(flat) <= _PREVIEW_CHARS else flat[: _PREVIEW_CHARS - 1] + "…"


class MemoryStore:
    """The agent's notes (``memory`` → MEMORY.md) and the user profile (``user`` → USER.md).

    ``memory_dir=None`` means ``$MNEMO_HOME/memories`` (resolved now, created on the
    first write). ``overflow="archive"`` makes an add that would pass the limit move the
    oldest entries to ``ARCHIVE.md`` instead of failing.
    """

    def __init__(
        self,
        memory_dir: Path | str | None = None,
        *,
        memory_char_limit: int = 2200,
        user_char_limit: int = 1375,
        overflow: Overflow = "reject",
    ) -> None:
        if overflow not in ("reject", "archive"):
            raise ValueError(f"overflow must be 'reject' or 'archive', not {overflow!r}")
        self.memory_dir = Path(memory_dir) if memory_dir is not None else Home().memories_dir
        self.limits: dict[Target, int] = {"memory": memory_char_limit, "user": user_char_limit}
        self.overflow: Overflow = overflow
        self.memory_entries: list[str] = []
        self.user_entries: list[str] = []
        self._snapshot: dict[Target, str] | None = None
        # Why a file cannot be written (not UTF-8), by target; set on every read.
        self._encoding_problems: dict[Target, str | None] = {}
        # Warnings for the user from the last ``load_from_disk`` (see ``files.py``).
        self.notices: list[str] = []
        # Failed tool calls in the current turn, for the loop breaker (see tool.py).
        self.failed_calls_this_turn = 0

    @classmethod
    def from_config(cls, config: MnemoConfig, home: Home | None = None) -> MemoryStore:
        """The store of ``home`` (default ``$MNEMO_HOME``) with the limits of ``config``."""
        cfg = config.memory
        return cls((home or Home()).memories_dir, memory_char_limit=cfg.memory_char_limit,
                   user_char_limit=cfg.user_char_limit, overflow=cfg.overflow)

    # -- paths and live state ---------------------------------------------------------

    def path_for(self, target: Target) -> Path:
        return self.memory_dir / FILENAMES[target]

    def entries_for(self, target: Target) -> list[str]:
        """The live entries of ``target`` (the list itself; treat it as read-only)."""
        return self.memory_entries if target == "memory" else self.user_entries

    def _set_entries(self, target: Target, entries: list[str]) -> None:
        if target == "memory":
            self.memory_entries = entries
        else:
            self.user_entries = entries

    def usage(self, target: Target) -> str:
        return format_usage(usage_of(self.entries_for(target)), self.limits[target])

    def raw_text(self, target: Target) -> str:
        """The file of ``target`` exactly as it is on disk ("" when it does not exist)."""
        return self._read_raw(target)

    def _read_raw(self, target: Target) -> str:
        read = read_memory_file(self.path_for(target))
        self._encoding_problems[target] = read.encoding_problem
        return read.text

    # -- snapshot -----------------------------------------------------------------------

    def load_from_disk(self) -> None:
        """Read both files into the live lists and take a new frozen snapshot.

        A file that is not UTF-8 or is far over its limit still loads (see ``files.py``);
        what the user should know about it lands in ``notices``.
        """
        snapshot: dict[Target, str] = {}
        notices: list[str] = []
        for target in TARGETS:
            entries = parse_entries(self._read_raw(target))
            self._set_entries(target, entries)
            problem = self._encoding_problems.get(target)
            if problem:
                log.warning("memory file not UTF-8: %s", problem)
                notices.append(problem)
            snapshot[target] = self._render_snapshot(target, entries, notices)
        self._snapshot = snapshot
        self.notices = notices

    def _render_snapshot(self, target: Target, entries: list[str], notices: list[str]) -> str:
        limit = self.limits[target]
        kept, left = fit_entries(entries, limit) if usage_of(entries) > limit else (entries, [])
        shown: list[str] = []
        if left:
            notice = left_out_notice(target, usage_of(entries), left, limit)
            log.warning("memory file over its limit: %s", notice)
            notices.append(notice)
        for entry in kept:
            ids = sorted({f.pattern_id for f in scan(entry, "strict")})
            if ids:
                log.warning("BLOCKED %s entry from system prompt (threat patterns: %s): %s",
                            FILENAMES[target], ", ".join(ids), _preview(entry))
                shown.append(blocked_placeholder(target, ids))
            else:
                shown.append(entry)
        if left:
            shown.append(f"[{len(left)} more entr{'y' if len(left) == 1 else 'ies'} left out: "
                         f"{FILENAMES[target]} is over its limit]")
        return render_block(target, shown, usage_of(entries), limit)

    def format_for_system_prompt(self, target: Target) -> str | None:
        """The frozen snapshot block of ``target``, or None when that store is empty.

        The first call loads from disk if ``load_from_disk()`` was not called yet; after
        that, writes do not change what this returns until the next ``load_from_disk()``.
        """
        if self._snapshot is None:
            self.load_from_disk()
        assert self._snapshot is not None
        return self._snapshot[target] or None

    # -- operations ---------------------------------------------------------------------

    def read(self, target: Target) -> Result:
        """The live entries of ``target`` as on disk now (no lock: readers never wait)."""
        entries = parse_entries(self._read_raw(target))
        self._set_entries(target, entries)
        result: Result = {
            "success": True,
            "target": target,
            "entries": list(entries),
            "usage": self.usage(target),
            "entry_count": len(entries),
        }
        problem = self._encoding_problems.get(target)
        if problem:
            result["warning"] = problem
        return result

    def add(self, target: Target, content: str) -> Result:
        content = (content or "").strip()

        def apply(entries: list[str]) -> tuple[list[str], str]:
            _check_content(content, limit=self.limits[target], name=FILENAMES[target])
            if content in entries:
                return entries, "Entry already exists; nothing was written."
            return [*entries, content], "Entry added."

        return self._mutate(target, apply, kind="add", strict_file=False)

    def replace(self, target: Target, old_text: str, new_content: str) -> Result:
        old_text = (old_text or "").strip()
        new_content = (new_content or "").strip()

        def apply(entries: list[str]) -> tuple[list[str], str]:
            return _apply_replace(entries, old_text, new_content)

        return self._mutate(target, apply, kind="replace")

    def remove(self, target: Target, old_text: str) -> Result:
        old_text = (old_text or "").strip()

        def apply(entries: list[str]) -> tuple[list[str], str]:
            return _apply_remove(entries, old_text)

        return self._mutate(target, apply, kind="remove")

    def batch(self, target: Target, operations: Sequence[dict[str, Any]]) -> Result:
        """Apply add/replace/remove operations all-or-nothing under one lock.

        The limit is checked on the final state only, so a model can free room and add
        in one call. Operations are dicts: ``{"action": "add", "content": ...}``,
        ``{"action": "replace", "old_text": ..., "content": ...}``,
        ``{"action": "remove", "old_text": ...}``.
        """

        def apply(entries: list[str]) -> tuple[list[str], str]:
            ops: object = operations  # models send anything; check before trusting the type
            if not isinstance(ops, list | tuple):
                raise _Refused("operations must be a list of {action, content, old_text} objects")
            if not operations:
                raise _Refused("operations is empty; give at least one add/replace/remove")
            current = list(entries)
            done: list[str] = []
            for index, op in enumerate(operations, start=1):
                try:
                    current, note = _apply_batch_op(current, index, op,
                                                    (self.limits[target], FILENAMES[target]))
                except _Refused as refused:
                    if "current_entries" in refused.result:
                        refused.result["current_entries"] = list(entries)
                    raise
                done.append(note)
            return current, f"Batch of {len(operations)} applied: " + "; ".join(done)

        return self._mutate(target, apply, kind="batch")

    def rewrite(self, target: Target, text: str, *, expected: str | None = None) -> Result:
        """Replace the whole store with the entries of ``text`` (``mnemo memory edit``).

        Every entry is checked as an add would check it and the limit applies. With
        ``expected``, the file must still hold exactly that text (nobody wrote to it while
        the user was editing); otherwise nothing is written.
        """

        def apply(entries: list[str]) -> tuple[list[str], str]:
            if expected is not None and canonical(self._read_raw(target)) != canonical(expected):
                raise _Refused(f"{FILENAMES[target]} changed on disk while you were editing; "
                               "nothing was written. Run the edit again.")
            problem = near_delimiter_problem(text)
            if problem:
                raise _Refused(problem)
            new_entries = parse_entries(text)
            for number, entry in enumerate(new_entries, start=1):
                try:
                    _check_content(entry)
                except _Refused as refused:
                    raise _Refused(f"entry {number} ('{_preview(entry)}'): "
                                   f"{refused.result['error']}") from None
            if new_entries == entries:
                return entries, "No changes."
            return new_entries, f"{FILENAMES[target]} rewritten with {len(new_entries)} entries."

        return self._mutate(target, apply, kind="edit", strict_file=False)

    # -- the one write path ---------------------------------------------------------------

    def _mutate(
        self,
        target: Target,
        apply: Callable[[list[str]], tuple[list[str], str]],
        *,
        kind: str,
        strict_file: bool = True,
    ) -> Result:
        if target not in TARGETS:
            return {"success": False,
                    "error": f"Unknown target {target!r}; use one of: {', '.join(TARGETS)}."}
        try:
            self.path_for(target).parent.mkdir(parents=True, exist_ok=True)
            # A symlinked file is written at its target (locked there too), never replaced.
            path = write_path(self.path_for(target))
            with exclusive_lock(path):
                remove_stale_temps(path)
                return self._mutate_locked(target, path, apply, kind=kind,
                                           strict_file=strict_file)
        except _Refused as refused:
            return self._with_state(target, refused.result)
        except StoreError as exc:  # an unreadable file: the model gets the same advice
            return self._with_state(target, {"success": False, "error": str(exc)})
        except OSError as exc:
            return self._with_state(target, {
                "success": False,
                "error": f"Could not write {FILENAMES[target]} ({exc.strerror or exc}); "
                         "nothing was changed. Check the folder's permissions and free "
                         "disk space.",
            })

    def _mutate_locked(
        self,
        target: Target,
        path: Path,
        apply: Callable[[list[str]], tuple[list[str], str]],
        *,
        kind: str,
        strict_file: bool,
    ) -> Result:
        raw = self._read_raw(target)
        entries = parse_entries(raw)
        self._set_entries(target, entries)
        encoding_problem = self._encoding_problems.get(target)
        if encoding_problem and kind != "edit":
            raise _Refused(f"Nothing was written: {encoding_problem}")
        if is_read_only(path):
            raise _Refused(f"{path.name} is read-only, so memory cannot change it; "
                           f"run `chmod u+w {path}` to allow writes.")
        backup: Path | None = None
        if encoding_problem:  # an edit replaces bytes that could not be decoded: keep them
            backup = self._backup(path)
        elif raw and not round_trips(raw):
            backup = self._backup(path)
            if strict_file:
                raise _Refused(
                    f"{path.name} was edited outside mnemo into a shape that a rewrite would "
                    f"change, so nothing was done; it was copied to {backup.name}. Fix the "
                    f"file (entries separated by a line holding only §) or use "
                    f"`mnemo memory edit`, then retry.",
                    backup=str(backup),
                )
        new_entries, message = apply(list(entries))
        if new_entries == entries and canonical(raw) == serialize_entries(entries):
            return self._success(target, message)
        limit = self.limits[target]
        archived: list[str] = []
        new_usage, old_usage = usage_of(new_entries), usage_of(entries)
        if new_usage > limit and new_usage > old_usage:
            if kind == "add" and self.overflow == "archive":
                new_entries, archived = self._archive_oldest(target, new_entries)
            else:
                raise _Refused(self._over_limit_error(target, entries, new_entries, kind),
                               current_entries=list(entries))
        self._write_raw(target, serialize_entries(new_entries))
        self._set_entries(target, new_entries)
        if archived:
            message += (f" {len(archived)} oldest entr{'y' if len(archived) == 1 else 'ies'} "
                        f"moved to {ARCHIVE_FILENAME} to make room: "
                        + "; ".join(f"'{_preview(e)}'" for e in archived))
        if backup is not None:
            message += f" The hand-edited file was normalised; the original is in {backup.name}."
        return self._success(target, message)

    def _over_limit_error(self, target: Target, before: list[str], after: list[str],
                          kind: str) -> str:
        limit = self.limits[target]
        used, new_usage = usage_of(before), usage_of(after)
        what = {"add": "this entry", "replace": "this replacement",
                "batch": "this batch", "edit": "the edited text"}.get(kind, "this change")
        size = f" ({len(after[-1]):,} chars)" if kind == "add" else ""
        return (
            f"{FILENAMES[target]} would pass its limit: it uses {used:,}/{limit:,} chars and "
            f"{what}{size} would bring it to {new_usage:,}. Nothing was written. Make room "
            "first: merge related entries with replace, or remove outdated ones (a batch can "
            "do both and the add in one call)."
        )

    def _archive_oldest(self, target: Target, entries: list[str]) -> tuple[list[str], list[str]]:
        """Move the oldest entries to ARCHIVE.md until ``entries`` fit; return both parts."""
        limit = self.limits[target]
        keep = list(entries)
        moved: list[str] = []
        while len(keep) > 1 and usage_of(keep) > limit:
            moved.append(keep.pop(0))
        if usage_of(keep) > limit:
            raise _Refused(
                f"This entry alone is {len(keep[-1]):,} chars, more than the whole "
                f"{FILENAMES[target]} limit of {limit:,}; shorten it."
            )
        stamp = time.strftime("%Y-%m-%d")
        tagged = [f"[archived from {FILENAMES[target]} on {stamp}]\n{e}" for e in moved]
        # The archive is written before the store, so a crash in between duplicates an
        # entry (in both files) and never loses one.
        self._append_archive(target, tagged)
        log.info("memory overflow: %d entries of %s archived", len(moved), FILENAMES[target])
        return keep, moved

    # -- where the text is kept (a backend in another module overrides these three) ------

    def _write_raw(self, target: Target, text: str) -> None:
        """Store the whole text of ``target`` (called with the store's lock held); a
        symlinked file is written at its target, so the link stays a link."""
        atomic_write_text(write_path(self.path_for(target)), text)

    def _append_archive(self, target: Target, tagged: list[str]) -> None:
        """Add overflow entries to ARCHIVE.md (called with the store's lock held)."""
        archive = self.memory_dir / ARCHIVE_FILENAME
        with exclusive_lock(archive):
            existing = parse_entries(archive.read_text(encoding="utf-8")
                                     if archive.exists() else "")
            atomic_write_text(archive, serialize_entries(existing + tagged))

    def _backup(self, path: Path) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = path.with_name(f"{path.name}.bak.{stamp}")
        counter = 1
        while backup.exists():
            backup = path.with_name(f"{path.name}.bak.{stamp}.{counter}")
            counter += 1
        shutil.copy2(path, backup)
        log.warning("%s did not round-trip (edited by hand?); copied to %s", path.name, backup)
        return backup

    def _success(self, target: Target, message: str) -> Result:
        return {
            "success": True,
            "target": target,
            "usage": self.usage(target),
            "entry_count": len(self.entries_for(target)),
            "message": message,
        }

    def _with_state(self, target: Target, result: Result) -> Result:
        if target in TARGETS:
            result.setdefault("usage", self.usage(target))
        return result


# -- pure operation helpers (work on a copy of the entries, raise _Refused) ------------------


def _check_content(content: str, *, field: str = "content", limit: int | None = None,
                   name: str = "") -> None:
    if not content:
        raise _Refused(f"{field} is empty; give the text of the entry to save.")
    if limit is not None and len(content) > limit:
        # Checked before the scan for a new entry: one this long is a size problem
        # first, and the scan would only report that it stopped reading.
        raise _Refused(f"This entry alone is {len(content):,} chars, more than the whole "
                       f"{name} limit of {limit:,}; nothing was written. Save a short "
                       "summary of it instead.")
    problem = delimiter_problem(content)
    if problem:
        raise _Refused(f"{field} cannot be stored: {problem}.")
    findings = scan(content, "strict")
    if findings:
        ids = ", ".join(sorted({f.pattern_id for f in findings}))
        raise _Refused(
            f"{field} was refused by the security scan (threat pattern(s): {ids}). Memory is "
            "shown to the model in every session, so it must hold plain facts, not "
            "instructions, hidden characters or credentials; rephrase it and try again."
        )


def _find_one(entries: list[str], old_text: str) -> int:
    """Index of the single entry containing ``old_text`` (identical duplicates: the first)."""
    if not old_text:
        raise _Refused("old_text is empty; give a short unique part of the entry to change.",
                       current_entries=list(entries))
    matches = [i for i, entry in enumerate(entries) if old_text in entry]
    if not matches:
        raise _Refused(f"No entry matched '{old_text}'. Use a substring of one of the current "
                       "entries.", current_entries=list(entries))
    if len({entries[i] for i in matches}) > 1:
        raise _Refused(f"Multiple entries matched '{old_text}'. Be more specific.",
                       matches=[_preview(entries[i]) for i in matches])
    return matches[0]


def _apply_replace(entries: list[str], old_text: str, new_content: str) -> tuple[list[str], str]:
    index = _find_one(entries, old_text)
    if not new_content:
        raise _Refused("new content is empty; to delete an entry use action=remove.")
    _check_content(new_content)
    if entries[index] == new_content:
        return entries, "Entry already has that text; nothing was written."
    if new_content in entries:
        del entries[index]
        return entries, "Entry replaced (it now equals an existing entry, so the two merged)."
    entries[index] = new_content
    return entries, "Entry replaced."


def _apply_remove(entries: list[str], old_text: str) -> tuple[list[str], str]:
    index = _find_one(entries, old_text)
    del entries[index]
    return entries, "Entry removed."


def _apply_batch_op(entries: list[str], index: int, op: Any,
                    bound: tuple[int, str] | None = None) -> tuple[list[str], str]:
    if not isinstance(op, dict):
        raise _Refused(f"operation {index} is not an object; use "
                       "{\"action\": \"add\"|\"replace\"|\"remove\", ...}.")
    action = op.get("action")
    content = str(op.get("content") or op.get("new_content") or "").strip()
    old_text = str(op.get("old_text") or "").strip()
    try:
        if action == "add":
            limit, name = bound if bound else (None, "")
            _check_content(content, limit=limit, name=name)
            if content in entries:
                return entries, f"{index}: already exists"
            return [*entries, content], f"{index}: added"
        if action == "replace":
            entries, _ = _apply_replace(entries, old_text, content)
            return entries, f"{index}: replaced"
        if action == "remove":
            entries, _ = _apply_remove(entries, old_text)
            return entries, f"{index}: removed"
    except _Refused as refused:
        refused.result["error"] = (f"operation {index} ({action}): {refused.result['error']} "
                                   "No operation of the batch was applied.")
        raise
    raise _Refused(f"operation {index} has unknown action {action!r}; a batch takes "
                   "add, replace and remove. No operation of the batch was applied.")
