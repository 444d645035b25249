"""The two caches in front of the skills index (SPEC B5), and the index builder.

Scanning a thousand skill folders and parsing their front matter is the slowest part of
building a prompt, so:

* an **in-process LRU** of ``LRU_SIZE`` (8) rendered indexes, keyed by (skills dir,
  external dirs, tools, toolsets, platform). A hit touches no file at all. It lives for
  the process; ``SkillsIndexCache.clear()`` drops it (e.g. after installing a skill).
* a **disk snapshot** ``.skills_prompt_snapshot.json`` of the parsed *local* skills,
  valid only while the manifest of (path, mtime, size) of every SKILL.md and
  DESCRIPTION.md still matches the tree. Checking it costs one walk with ``stat`` calls
  but no file reads. It is written atomically; any change to a skill file — or a
  snapshot that does not parse — means a fresh scan and a new snapshot.

External dirs (``skills.external_dirs``) are read on every cold build and never
snapshotted or written to: they may be shared or read-only, and their owners change them
without telling us. A local skill wins over an external one with the same name.

``stats`` counts walks, parses, snapshot and LRU hits, so tests and the benchmark can
show that a warm build does no filesystem work.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemo.fileio import atomic_write_text
from mnemo.prompt.skills import (
    Catalog,
    Skill,
    SkillProblem,
    TreeScan,
    merge_catalogs,
    parse_tree,
    render_skills_index,
    visible_skills,
    walk_skills_tree,
)

__all__ = [
    "DEFAULT_CACHE",
    "LRU_SIZE",
    "SNAPSHOT_VERSION",
    "CacheStats",
    "SkillsIndex",
    "SkillsIndexCache",
    "build_skills_index",
    "load_catalog",
    "resolve_external_dirs",
]

log = logging.getLogger("mnemo.prompt")

LRU_SIZE = 8
SNAPSHOT_VERSION = 1

CacheKey = tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...], str]


@dataclass
class CacheStats:
    """Counters of the work the skills caches did (or saved)."""

    lru_hits: int = 0
    lru_misses: int = 0
    snapshot_hits: int = 0
    snapshot_writes: int = 0
    tree_walks: int = 0  # walks of a skills tree (local or external)
    files_parsed: int = 0  # SKILL.md / DESCRIPTION.md files read and parsed

    def reset(self) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, 0)


@dataclass(frozen=True)
class SkillsIndex:
    """A rendered skills index: the prompt text, how many skills it shows, the problems."""

    text: str
    count: int
    problems: tuple[SkillProblem, ...] = ()


@dataclass
class SkillsIndexCache:
    """An LRU of rendered indexes plus the counters; one per process by default.

    A lock guards the order bookkeeping, so sessions on several threads (a gateway) can
    share it.
    """

    max_entries: int = LRU_SIZE
    stats: CacheStats = field(default_factory=CacheStats)
    _entries: OrderedDict[CacheKey, SkillsIndex] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def get(self, key: CacheKey) -> SkillsIndex | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                self.stats.lru_misses += 1
                return None
            self._entries.move_to_end(key)
            self.stats.lru_hits += 1
            return found

    def put(self, key: CacheKey, value: SkillsIndex) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def cached_keys(self) -> list[CacheKey]:
        """Keys from least to most recently used."""
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        """Forget every rendered index (call after installing or editing a skill)."""
        with self._lock:
            self._entries.clear()


DEFAULT_CACHE = SkillsIndexCache()


# -- the disk snapshot ------------------------------------------------------------------


def _manifest_json(scan: TreeScan) -> list[list[Any]]:
    return [list(item) for item in scan.manifest]


def _read_snapshot(path: Path, scan: TreeScan) -> Catalog | None:
    """The snapshot's catalog if it describes exactly this tree, else None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.info("skills snapshot %s is unreadable (%s); rebuilding it", path, exc)
        return None
    try:
        if (data.get("version") != SNAPSHOT_VERSION
                or data.get("skills_dir") != str(scan.root)
                or data.get("manifest") != _manifest_json(scan)):
            return None
        return Catalog(
            skills=tuple(Skill.from_dict(s) for s in data["skills"]),
            problems=tuple(SkillProblem(str(p["path"]), str(p["message"]))
                           for p in data["problems"]),
            categories={str(k): str(v) for k, v in data["categories"].items()},
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        log.info("skills snapshot %s has an unexpected shape (%s); rebuilding it", path, exc)
        return None


def _write_snapshot(path: Path, scan: TreeScan, catalog: Catalog) -> bool:
    data = {
        "version": SNAPSHOT_VERSION,
        "skills_dir": str(scan.root),
        "manifest": _manifest_json(scan),
        "skills": [s.to_dict() for s in catalog.skills],
        "problems": [p.to_dict() for p in catalog.problems],
        "categories": catalog.categories,
    }
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        atomic_write_text(path, text + "\n")
    except OSError as exc:
        log.info("cannot write skills snapshot %s (%s); the next start scans again",
                 path, exc.strerror)
        return False
    return True


# -- loading ----------------------------------------------------------------------------


def resolve_external_dirs(dirs: Sequence[str], base: Path) -> list[Path]:
    """``skills.external_dirs`` as paths: ``~`` and ``$VARS`` expanded, relative to ``base``.

    ``base`` is the home folder, where config.yaml lives; duplicates are dropped.
    """
    resolved: list[Path] = []
    for raw in dirs:
        path = Path(os.path.expandvars(raw.strip())).expanduser()
        path = path if path.is_absolute() else base / path
        if raw.strip() and path not in resolved:
            resolved.append(path)
    return resolved


def _local_catalog(skills_dir: Path, snapshot_path: Path | None, stats: CacheStats) -> Catalog:
    scan = walk_skills_tree(skills_dir)
    stats.tree_walks += 1
    if snapshot_path is not None and scan.manifest:
        cached = _read_snapshot(snapshot_path, scan)
        if cached is not None:
            stats.snapshot_hits += 1
            return cached
    catalog, parsed = parse_tree(scan, "local")
    stats.files_parsed += parsed
    if snapshot_path is not None and scan.manifest and snapshot_path.parent.is_dir() \
            and _write_snapshot(snapshot_path, scan, catalog):
        stats.snapshot_writes += 1
    return catalog


def _external_catalog(directory: Path, stats: CacheStats) -> Catalog:
    if not directory.is_dir():
        return Catalog(problems=(SkillProblem(
            str(directory), "external skills dir not found; fix skills.external_dirs"),))
    scan = walk_skills_tree(directory)
    stats.tree_walks += 1
    catalog, parsed = parse_tree(scan, str(directory))
    stats.files_parsed += parsed
    return catalog


def load_catalog(
    skills_dir: Path,
    *,
    external_dirs: Sequence[Path] = (),
    snapshot_path: Path | None = None,
    stats: CacheStats | None = None,
) -> Catalog:
    """All skills: local ones (through the snapshot when it is valid), then external ones."""
    stats = stats if stats is not None else DEFAULT_CACHE.stats
    local = _local_catalog(skills_dir, snapshot_path, stats)
    externals = [_external_catalog(d, stats) for d in external_dirs]
    return merge_catalogs([local, *externals])


def build_skills_index(
    skills_dir: Path,
    *,
    external_dirs: Sequence[Path] = (),
    tools: Sequence[str] = (),
    toolsets: Sequence[str] = (),
    platform: str = "cli",
    snapshot_path: Path | None = None,
    cache: SkillsIndexCache | None = None,
) -> SkillsIndex:
    """The skills index for these inputs, from the LRU, the snapshot or a fresh scan."""
    cache = cache if cache is not None else DEFAULT_CACHE
    key: CacheKey = (str(skills_dir), tuple(str(d) for d in external_dirs),
                     tuple(sorted(set(tools))), tuple(sorted(set(toolsets))), platform)
    found = cache.get(key)
    if found is not None:
        return found
    catalog = load_catalog(skills_dir, external_dirs=external_dirs,
                           snapshot_path=snapshot_path, stats=cache.stats)
    shown = visible_skills(catalog, platform=platform, tools=tools, toolsets=toolsets)
    index = SkillsIndex(render_skills_index(shown, catalog.categories), len(shown),
                        catalog.problems)
    cache.put(key, index)
    return index
