"""Helpers of the prompt tests: a project folder, skills on disk, a clean skills cache."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mnemo.prompt import DEFAULT_CACHE

SkillWriter = Callable[..., Path]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder (not a git repository unless a test makes it one)."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def write_skill(root: Path, category: str | None, name: str, description: str = "",
                *, front_matter: str | None = None, body: str = "Do the steps.\n") -> Path:
    """Write ``root/<category>/<name>/SKILL.md``; ``front_matter`` replaces the default."""
    folder = root / category / name if category else root / name
    folder.mkdir(parents=True, exist_ok=True)
    if front_matter is None:
        front_matter = f"name: {name}\ndescription: {description}\n"
    path = folder / "SKILL.md"
    path.write_text(f"---\n{front_matter}---\n{body}", encoding="utf-8")
    return path


@pytest.fixture
def skill_writer() -> SkillWriter:
    return write_skill


@pytest.fixture(autouse=True)
def _clean_default_cache() -> Iterator[None]:
    DEFAULT_CACHE.clear()
    DEFAULT_CACHE.stats.reset()
    yield
    DEFAULT_CACHE.clear()
