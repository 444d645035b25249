"""The skills caches (B5): the in-process LRU and the disk snapshot with its manifest."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import mnemo.prompt.skills as skills_module
import mnemo.prompt.skills_cache as cache_module
from mnemo.config import MnemoConfig
from mnemo.fileio import atomic_write_text
from mnemo.home import Home
from mnemo.prompt import SkillsIndexCache, build_skills_index, build_system_prompt
from mnemo.prompt.skills_cache import LRU_SIZE, SkillsIndex

SkillWriter = Callable[..., Path]


@pytest.fixture
def tree(tmp_path: Path, skill_writer: SkillWriter) -> Path:
    root = tmp_path / "skills"
    for category in ("dev", "ops"):
        for number in range(5):
            skill_writer(root, category, f"{category}-{number}", f"Skill {number} of {category}")
    (root / "ops" / "DESCRIPTION.md").write_text("Running services\n")
    return root


def _build(root: Path, cache: SkillsIndexCache, snapshot: Path, **kw: Any) -> SkillsIndex:
    return build_skills_index(root, snapshot_path=snapshot, cache=cache, **kw)


def _forbid(monkeypatch: pytest.MonkeyPatch, *targets: tuple[Any, str]) -> None:
    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("filesystem touched")

    for owner, name in targets:
        monkeypatch.setattr(owner, name, refuse)


def _bump_mtime(path: Path, seconds: int = 10) -> None:
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + seconds * 1_000_000_000))


# -- cold, snapshot, warm -------------------------------------------------------------------


def test_cold_build_scans_and_writes_the_snapshot(tree: Path, tmp_path: Path) -> None:
    snapshot = tmp_path / ".skills_prompt_snapshot.json"
    cache = SkillsIndexCache()
    index = _build(tree, cache, snapshot)
    assert index.count == 10
    stats = cache.stats
    assert (stats.tree_walks, stats.files_parsed, stats.snapshot_hits,
            stats.snapshot_writes) == (1, 11, 0, 1)
    data = json.loads(snapshot.read_text())
    assert data["skills_dir"] == str(tree)
    manifest = {entry[0]: entry[1:] for entry in data["manifest"]}
    assert len(manifest) == 11 and "ops/DESCRIPTION.md" in manifest
    info = (tree / "dev" / "dev-0" / "SKILL.md").stat()
    assert manifest["dev/dev-0/SKILL.md"] == [info.st_mtime_ns, info.st_size]
    assert len(data["skills"]) == 10


def test_snapshot_is_written_atomically(tree: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = tmp_path / ".skills_prompt_snapshot.json"
    calls: list[Path] = []
    real = atomic_write_text

    def spy(path: Path, text: str) -> None:
        calls.append(path)
        real(path, text)

    monkeypatch.setattr(cache_module, "atomic_write_text", spy)
    _build(tree, SkillsIndexCache(), snapshot)
    assert calls == [snapshot]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_cold_build_with_a_valid_snapshot_reads_no_skill_file(
        tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = tmp_path / ".skills_prompt_snapshot.json"
    first = _build(tree, SkillsIndexCache(), snapshot)
    _forbid(monkeypatch, (skills_module, "_parse_skill"),
            (skills_module, "_category_description"), (cache_module, "atomic_write_text"))
    fresh = SkillsIndexCache()  # a new process: empty LRU
    second = _build(tree, fresh, snapshot)
    assert second == first
    assert (fresh.stats.snapshot_hits, fresh.stats.files_parsed, fresh.stats.tree_walks) == (
        1, 0, 1)


def test_warm_build_does_no_filesystem_scan(tree: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = tmp_path / ".skills_prompt_snapshot.json"
    cache = SkillsIndexCache()
    first = _build(tree, cache, snapshot, tools=["skill_view"], platform="cli")
    walks = cache.stats.tree_walks
    _forbid(monkeypatch, (cache_module, "walk_skills_tree"), (os, "walk"), (os, "scandir"),
            (os, "stat"), (os, "listdir"), (Path, "read_text"), (Path, "stat"))
    second = _build(tree, cache, snapshot, tools=["skill_view"], platform="cli")
    assert second is first
    assert cache.stats.lru_hits == 1 and cache.stats.tree_walks == walks


def test_lru_key_ignores_tool_order_and_duplicates(tree: Path, tmp_path: Path) -> None:
    cache = SkillsIndexCache()
    snapshot = tmp_path / "snap.json"
    _build(tree, cache, snapshot, tools=["a", "b"])
    _build(tree, cache, snapshot, tools=["b", "a", "a"])
    assert cache.stats.lru_hits == 1


# -- invalidation ---------------------------------------------------------------------------


@pytest.mark.parametrize("change", ["touch", "edit", "add", "remove", "description"])
def test_any_skill_file_change_invalidates_the_snapshot(
        tree: Path, tmp_path: Path, skill_writer: SkillWriter, change: str) -> None:
    snapshot = tmp_path / ".skills_prompt_snapshot.json"
    _build(tree, SkillsIndexCache(), snapshot)
    target = tree / "dev" / "dev-0" / "SKILL.md"
    if change == "touch":
        _bump_mtime(target)
    elif change == "edit":
        target.write_text("---\nname: dev-0\ndescription: Rewritten\n---\nNew steps.\n")
        _bump_mtime(target)
    elif change == "add":
        skill_writer(tree, "dev", "dev-new", "Brand new")
    elif change == "remove":
        target.unlink()
        target.parent.rmdir()
    else:
        _bump_mtime(tree / "ops" / "DESCRIPTION.md")
    fresh = SkillsIndexCache()
    index = _build(tree, fresh, snapshot)
    assert fresh.stats.snapshot_hits == 0 and fresh.stats.files_parsed > 0
    assert fresh.stats.snapshot_writes == 1
    expected = {"touch": 10, "edit": 10, "add": 11, "remove": 9, "description": 10}[change]
    assert index.count == expected
    if change == "edit":
        assert "dev-0: Rewritten" in index.text
    # …and the rewritten snapshot is valid again.
    again = SkillsIndexCache()
    _build(tree, again, snapshot)
    assert again.stats.snapshot_hits == 1


@pytest.mark.parametrize("content", ["{not json", "[]", '{"version": 1}', ""])
def test_broken_snapshot_is_rebuilt(tree: Path, tmp_path: Path, content: str) -> None:
    snapshot = tmp_path / ".skills_prompt_snapshot.json"
    snapshot.write_text(content)
    cache = SkillsIndexCache()
    assert _build(tree, cache, snapshot).count == 10
    assert cache.stats.snapshot_writes == 1
    assert json.loads(snapshot.read_text())["version"] == 1


def test_snapshot_of_another_skills_dir_is_not_used(tree: Path, tmp_path: Path,
                                                    skill_writer: SkillWriter) -> None:
    snapshot = tmp_path / ".skills_prompt_snapshot.json"
    _build(tree, SkillsIndexCache(), snapshot)
    other = tmp_path / "other"
    skill_writer(other, "x", "lonely", "Alone")
    cache = SkillsIndexCache()
    assert _build(other, cache, snapshot).count == 1
    assert cache.stats.snapshot_hits == 0


def test_unwritable_snapshot_location_is_not_fatal(tree: Path, tmp_path: Path) -> None:
    snapshot = tmp_path / "no-such-dir" / ".skills_prompt_snapshot.json"
    cache = SkillsIndexCache()
    assert _build(tree, cache, snapshot).count == 10
    assert cache.stats.snapshot_writes == 0 and not snapshot.exists()


# -- external dirs ----------------------------------------------------------------------------


def _tree_state(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_mtime_ns, p.stat().st_size) for p in root.rglob("*")}


def test_external_dirs_are_read_every_time_and_never_written(
        tree: Path, tmp_path: Path, skill_writer: SkillWriter) -> None:
    external = tmp_path / "shared"
    skill_writer(external, "team", "release", "Cut a release")
    before = _tree_state(external)
    snapshot = tmp_path / ".skills_prompt_snapshot.json"

    first = _build(tree, SkillsIndexCache(), snapshot, external_dirs=[external])
    assert "release: Cut a release" in first.text
    assert _tree_state(external) == before
    data = json.loads(snapshot.read_text())
    assert all(str(external) not in s["path"] for s in data["skills"])
    assert all(not entry[0].startswith("team/") for entry in data["manifest"])

    # Change the external skill without touching the local tree: the local snapshot
    # stays valid, and the external change is still seen.
    (external / "team" / "release" / "SKILL.md").write_text(
        "---\nname: release\ndescription: Cut a release, the new way\n---\n")
    before = _tree_state(external)
    fresh = SkillsIndexCache()
    second = _build(tree, fresh, snapshot, external_dirs=[external])
    assert fresh.stats.snapshot_hits == 1
    assert "release: Cut a release, the new way" in second.text
    assert _tree_state(external) == before
    assert not list(external.rglob("*.json")) and not list(external.rglob("*.tmp"))


def test_only_external_skills_writes_no_snapshot(tmp_path: Path,
                                                 skill_writer: SkillWriter) -> None:
    external = tmp_path / "shared"
    skill_writer(external, "team", "release", "Cut a release")
    snapshot = tmp_path / ".skills_prompt_snapshot.json"
    index = _build(tmp_path / "no-local-skills", SkillsIndexCache(), snapshot,
                   external_dirs=[external])
    assert index.count == 1 and not snapshot.exists()


# -- the LRU ------------------------------------------------------------------------------------


def test_lru_holds_eight_keys_and_evicts_the_least_recently_used(tree: Path,
                                                                 tmp_path: Path) -> None:
    assert LRU_SIZE == 8
    cache = SkillsIndexCache()
    snapshot = tmp_path / "snap.json"
    platforms = [f"p{i}" for i in range(9)]
    for platform in platforms[:8]:
        _build(tree, cache, snapshot, platform=platform)
    assert len(cache.cached_keys()) == 8
    _build(tree, cache, snapshot, platform="p0")  # p0 is now the most recent
    assert cache.stats.lru_hits == 1
    _build(tree, cache, snapshot, platform="p8")  # a ninth key evicts p1, not p0
    assert len(cache.cached_keys()) == 8
    assert [k[-1] for k in cache.cached_keys()] == ["p2", "p3", "p4", "p5", "p6", "p7", "p0", "p8"]
    walks = cache.stats.tree_walks
    _build(tree, cache, snapshot, platform="p0")
    assert cache.stats.tree_walks == walks  # still cached
    _build(tree, cache, snapshot, platform="p1")
    assert cache.stats.tree_walks == walks + 1  # evicted: built again


def test_lru_key_covers_dirs_tools_toolsets_and_platform(tree: Path, tmp_path: Path) -> None:
    cache = SkillsIndexCache()
    snapshot = tmp_path / "snap.json"
    _build(tree, cache, snapshot)
    _build(tree, cache, snapshot, tools=["x"])
    _build(tree, cache, snapshot, toolsets=["y"])
    _build(tree, cache, snapshot, platform="sms")
    _build(tree, cache, snapshot, external_dirs=[tmp_path / "ext"])
    assert len(cache.cached_keys()) == 5 and cache.stats.lru_hits == 0


# -- through the builder ------------------------------------------------------------------------


def test_build_system_prompt_uses_the_home_snapshot(mnemo_home: Home, tmp_path: Path,
                                                    skill_writer: SkillWriter) -> None:
    skill_writer(mnemo_home.skills_dir, "dev", "deploy", "Ship it")
    cache = SkillsIndexCache()
    kwargs: dict[str, Any] = {"config": MnemoConfig(), "cwd": tmp_path, "home": mnemo_home,
                              "tool_names": ["skill_view"], "skills_cache": cache}
    first = build_system_prompt(**kwargs)
    assert mnemo_home.skills_snapshot.is_file()
    second = build_system_prompt(**kwargs)
    assert second.text == first.text and cache.stats.lru_hits == 1
    cache.clear()
    third = build_system_prompt(**kwargs)
    assert third.text == first.text and cache.stats.snapshot_hits == 1
