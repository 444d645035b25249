"""Skills (SPEC B5): finding ``SKILL.md`` folders, reading their front matter, the index.

A skill is a folder holding ``SKILL.md``; its front matter gives ``name``,
``description`` and optionally ``platforms`` (and ``requires_tools`` /
``requires_toolsets``). Local skills live in ``$MNEMO_HOME/skills/<category>/<name>/``;
``skills.external_dirs`` adds read-only trees laid out the same way. A category folder
may hold a ``DESCRIPTION.md`` whose text describes the category in the index.

This module is pure discovery and rendering: it walks a tree, parses files and renders
the index text. Caching (the in-process LRU and the disk snapshot) is in
``skills_cache.py``.

Rules chosen where the spec is silent (see docs/prompt.md):

* A broken front matter (invalid YAML, not a mapping, wrong types) is a ``SkillProblem``;
  the skill is left out of the index until it is fixed. Nothing else fails.
* A SKILL.md without front matter is still a skill: its folder name is its name and its
  first line of prose its description.
* ``platforms`` lists mnemo platforms (``cli``, ``telegram``…) and/or operating systems
  (``linux``, ``macos``, ``windows``); a skill that lists some is shown only where one
  matches. ``requires_tools`` / ``requires_toolsets`` hide a skill when the agent lacks
  them.
* Descriptions go into the system prompt, so they are screened like context files; a
  description with a finding is replaced and reported.
* Hidden folders (``.git``, ``.hub``…) are skipped, and the walk does not descend into a
  skill's own folder (its supporting files are not skills).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mnemo.prompt.front_matter import FrontMatterError, parse_front_matter, split_front_matter
from mnemo.security import scan

__all__ = [
    "DEFAULT_CATEGORY",
    "DESCRIPTION_FILE",
    "SKILL_FILE",
    "Catalog",
    "Skill",
    "SkillProblem",
    "TreeScan",
    "current_os",
    "merge_catalogs",
    "parse_tree",
    "render_skills_index",
    "visible_skills",
    "walk_skills_tree",
]

log = logging.getLogger("mnemo.prompt")

SKILL_FILE = "SKILL.md"
DESCRIPTION_FILE = "DESCRIPTION.md"
DEFAULT_CATEGORY = "general"
# One line per skill in the index; longer descriptions are cut (the full text is one
# skill_view away).
MAX_DESCRIPTION_CHARS = 200

_OS_NAMES = {"linux": "linux", "darwin": "macos", "win32": "windows", "cygwin": "windows"}
_OS_ALIASES = {"darwin": "macos", "osx": "macos", "mac": "macos", "win": "windows",
               "win32": "windows"}


@dataclass(frozen=True)
class Skill:
    """One skill as the index needs it. ``source`` is "local" or the external dir."""

    name: str
    description: str
    category: str
    path: str  # the SKILL.md file
    source: str = "local"
    platforms: tuple[str, ...] = ()
    requires_tools: tuple[str, ...] = ()
    requires_toolsets: tuple[str, ...] = ()

    @property
    def folder(self) -> Path:
        return Path(self.path).parent

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Skill:
        return cls(
            name=str(data["name"]), description=str(data["description"]),
            category=str(data["category"]), path=str(data["path"]),
            source=str(data.get("source", "local")),
            platforms=tuple(data.get("platforms", ())),
            requires_tools=tuple(data.get("requires_tools", ())),
            requires_toolsets=tuple(data.get("requires_toolsets", ())),
        )


@dataclass(frozen=True)
class SkillProblem:
    """A skill file that could not be used as it is, and why."""

    path: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Catalog:
    """Every skill of one or more trees, the category descriptions, and the problems."""

    skills: tuple[Skill, ...] = ()
    problems: tuple[SkillProblem, ...] = ()
    categories: dict[str, str] = field(default_factory=dict)

    def find(self, name: str) -> Skill | None:
        for skill in self.skills:
            if skill.name == name:
                return skill
        folded = name.casefold()
        for skill in self.skills:
            if skill.name.casefold() == folded:
                return skill
        return None


@dataclass(frozen=True)
class TreeScan:
    """What one walk of a skills tree found: the files and their (path, mtime, size)."""

    root: Path
    skill_files: tuple[Path, ...]
    description_files: tuple[Path, ...]
    # (path relative to root, mtime in ns, size): the snapshot's validity check.
    manifest: tuple[tuple[str, int, int], ...]


def current_os() -> str:
    return _OS_NAMES.get(sys.platform, sys.platform)


# -- walking ----------------------------------------------------------------------------


def walk_skills_tree(root: Path) -> TreeScan:
    """Find every SKILL.md and DESCRIPTION.md under ``root`` (missing root: nothing).

    Works on ``str`` paths with ``os`` calls: this walk runs on every cold start, also
    when the snapshot is valid, and pathlib objects would triple its cost.
    """
    if not root.is_dir():
        return TreeScan(root, (), (), ())
    top = str(root)
    prefix = len(top) + 1
    found: list[tuple[str, str]] = []  # (kind, absolute path)
    manifest: list[tuple[str, int, int]] = []
    visited: set[tuple[int, int]] = set()
    for dirpath, dirnames, filenames in os.walk(top, followlinks=True):
        info = os.stat(dirpath)  # noqa: PTH116 - see the docstring
        if (info.st_dev, info.st_ino) in visited:  # a symlink loop
            dirnames[:] = []
            continue
        visited.add((info.st_dev, info.st_ino))
        if SKILL_FILE in filenames:
            dirnames[:] = []  # a skill's own sub-folders hold its supporting files
            kind, path = SKILL_FILE, os.path.join(dirpath, SKILL_FILE)  # noqa: PTH118
        elif DESCRIPTION_FILE in filenames and dirpath != top:
            kind, path = DESCRIPTION_FILE, os.path.join(dirpath, DESCRIPTION_FILE)  # noqa: PTH118
        else:
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            continue
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        try:
            stat = os.stat(path)  # noqa: PTH116
        except OSError:
            continue
        found.append((kind, path))
        manifest.append((path[prefix:].replace(os.sep, "/"), stat.st_mtime_ns, stat.st_size))
    manifest.sort()
    skills = sorted(Path(p) for k, p in found if k == SKILL_FILE)
    descriptions = sorted(Path(p) for k, p in found if k == DESCRIPTION_FILE)
    return TreeScan(root, tuple(skills), tuple(descriptions), tuple(manifest))


# -- parsing ----------------------------------------------------------------------------


def _category_of(root: Path, skill_folder: Path) -> str:
    parent = skill_folder.parent
    if parent == root:
        return DEFAULT_CATEGORY
    return parent.relative_to(root).as_posix()


def _one_line(text: str, limit: int = MAX_DESCRIPTION_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _first_prose_line(body: str) -> str:
    for line in body.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "---", "```")):
            return stripped
    return ""


def _string_list(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FrontMatterError(f"'{key}' must be a name or a list of names")
    return tuple(v.strip() for v in value if v.strip())


def _text_field(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, (str, int, float)):
        raise FrontMatterError(f"'{key}' must be text, not {type(value).__name__}")
    return str(value)


def _parse_skill(path: Path, root: Path, source: str) -> Skill:
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    data, body = parse_front_matter(text)
    folder_name = path.parent.name
    if data is None:
        name, description = folder_name, _first_prose_line(body)
        platforms: tuple[str, ...] = ()
        tools: tuple[str, ...] = ()
        toolsets: tuple[str, ...] = ()
    else:
        name = _text_field(data, "name").strip() or folder_name
        description = _text_field(data, "description")
        platforms = tuple(_OS_ALIASES.get(p.lower(), p.lower())
                          for p in _string_list(data, "platforms"))
        tools = _string_list(data, "requires_tools")
        toolsets = _string_list(data, "requires_toolsets")
    if "\n" in name:
        raise FrontMatterError("'name' must be a single line")
    return Skill(name=name, description=_one_line(description),
                 category=_category_of(root, path.parent), path=str(path), source=source,
                 platforms=platforms, requires_tools=tools, requires_toolsets=toolsets)


def _screen_description(skill: Skill) -> tuple[Skill, SkillProblem | None]:
    ids = sorted({f.pattern_id for f in scan(f"{skill.name}: {skill.description}", "context")})
    if not ids:
        return skill, None
    log.warning("BLOCKED description of skill %s (%s): %s", skill.name, ", ".join(ids),
                skill.path)
    blocked = f"[description blocked: contained {', '.join(ids)}]"
    problem = SkillProblem(skill.path, f"description blocked ({', '.join(ids)}); "
                                       "rewrite it or remove the skill")
    return Skill(**{**asdict(skill), "description": blocked}), problem


def _category_description(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return ""
    try:
        data, body = parse_front_matter(text)
    except FrontMatterError:
        data, body = None, split_front_matter(text).body
    if data and isinstance(data.get("description"), str):
        return _one_line(data["description"])
    return _one_line(_first_prose_line(body))


def parse_tree(scan_result: TreeScan, source: str = "local") -> tuple[Catalog, int]:
    """Read every file a walk found into a ``Catalog``; also return how many were read."""
    root = scan_result.root
    skills: list[Skill] = []
    problems: list[SkillProblem] = []
    seen: dict[str, str] = {}
    for path in scan_result.skill_files:
        try:
            skill = _parse_skill(path, root, source)
        except FrontMatterError as exc:
            log.warning("skill %s left out: %s", path, exc)
            problems.append(SkillProblem(str(path), f"{exc}; fix the front matter"))
            continue
        except OSError as exc:
            problems.append(SkillProblem(str(path), f"cannot be read ({exc.strerror})"))
            continue
        if skill.name in seen:
            problems.append(SkillProblem(
                str(path), f"duplicate skill name {skill.name!r} (also {seen[skill.name]}); "
                "this one is ignored — rename one of them"))
            continue
        seen[skill.name] = skill.path
        skill, problem = _screen_description(skill)
        if problem is not None:
            problems.append(problem)
        skills.append(skill)
    categories: dict[str, str] = {}
    for path in scan_result.description_files:
        described = _category_description(path)
        if described:
            categories[path.parent.relative_to(root).as_posix()] = described
    count = len(scan_result.skill_files) + len(scan_result.description_files)
    return Catalog(tuple(skills), tuple(problems), categories), count


def merge_catalogs(catalogs: Iterable[Catalog]) -> Catalog:
    """Several catalogs in priority order: an earlier one's skill wins a name clash."""
    skills: dict[str, Skill] = {}
    problems: list[SkillProblem] = []
    categories: dict[str, str] = {}
    for catalog in catalogs:
        for skill in catalog.skills:
            skills.setdefault(skill.name, skill)
        problems.extend(catalog.problems)
        for name, text in catalog.categories.items():
            categories.setdefault(name, text)
    return Catalog(tuple(skills.values()), tuple(problems), categories)


# -- filtering and rendering --------------------------------------------------------------


def visible_skills(catalog: Catalog, *, platform: str, tools: Sequence[str] = (),
                   toolsets: Sequence[str] = ()) -> list[Skill]:
    """The skills to show on ``platform`` with these tools, sorted by category and name."""
    here = {platform.lower(), current_os()}
    have_tools, have_toolsets = set(tools), set(toolsets)
    shown = [
        s for s in catalog.skills
        if (not s.platforms or here & set(s.platforms))
        and set(s.requires_tools) <= have_tools
        and set(s.requires_toolsets) <= have_toolsets
    ]
    return sorted(shown, key=lambda s: (s.category, s.name))


_INDEX_HEADER = (
    "## Skills (mandatory)\n"
    "Before you reply, look through the skills below. If one clearly matches the task, "
    "load it with skill_view(name) and follow its instructions."
)


def render_skills_index(skills: Sequence[Skill], categories: dict[str, str]) -> str:
    """The skills part of the system prompt ("" when no skill is shown)."""
    if not skills:
        return ""
    lines = [_INDEX_HEADER, "", "<available_skills>"]
    current = None
    for skill in sorted(skills, key=lambda s: (s.category, s.name)):
        if skill.category != current:
            current = skill.category
            about = categories.get(current)
            lines.append(f"  {current}: {about}" if about else f"  {current}:")
        lines.append(f"    - {skill.name}: {skill.description}" if skill.description
                     else f"    - {skill.name}")
    lines.append("</available_skills>")
    return "\n".join(lines)
