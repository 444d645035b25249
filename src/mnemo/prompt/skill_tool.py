"""The ``skill_view`` tool: the model loads a skill's full instructions by name.

The index in the system prompt only lists names and one-line descriptions; this tool
returns the whole ``SKILL.md`` (or, with ``file_path``, one supporting file inside the
skill's folder, such as ``references/api.md``). Results are JSON text like the memory
tool's: ``success`` plus the content, or ``success: false`` with an ``error`` that says
what to do next — for an unknown name, the closest names.

Skill text is shown to the model as a tool result, not as instructions, so a finding of
the threat scanner does not block it; it is returned as ``warnings`` for the model and
logged, so a poisoned external skill is visible.
"""

from __future__ import annotations

import difflib
import json
import logging
from pathlib import Path
from typing import Any

from mnemo.config import MnemoConfig, load_config
from mnemo.home import Home
from mnemo.prompt.context_files import truncate_content
from mnemo.prompt.skills import SKILL_FILE, Catalog, Skill
from mnemo.prompt.skills_cache import DEFAULT_CACHE, load_catalog, resolve_external_dirs
from mnemo.security import scan

__all__ = ["MAX_VIEW_CHARS", "SKILL_VIEW_SCHEMA", "catalog_for", "skill_view"]

log = logging.getLogger("mnemo.prompt")

MAX_VIEW_CHARS = 100_000
_MAX_LISTED_FILES = 50

SKILL_VIEW_SCHEMA: dict[str, Any] = {
    "name": "skill_view",
    "description": (
        "Load a skill: the full, step-by-step instructions behind a name in "
        "<available_skills>. Call it as soon as a listed skill matches the task, before "
        "you start, and follow what it says. The result also lists the skill's supporting "
        "files; pass one as file_path to read it."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "description": "The skill's name exactly as listed in <available_skills>.",
            },
            "file_path": {
                "type": "string",
                "description": "Optional: a supporting file of the skill, relative to its "
                               "folder (as listed in 'files'). Omit to get SKILL.md.",
            },
        },
        "required": ["name"],
    },
}


def catalog_for(home: Home, config: MnemoConfig) -> Catalog:
    """Every skill of ``home`` and the configured external dirs (snapshot-aware)."""
    return load_catalog(
        home.skills_dir,
        external_dirs=resolve_external_dirs(config.skills.external_dirs, home.root),
        snapshot_path=home.skills_snapshot,
        stats=DEFAULT_CACHE.stats,
    )


def _error(message: str, **extra: Any) -> str:
    return json.dumps({"success": False, "error": message, **extra}, ensure_ascii=False)


def _supporting_files(folder: Path) -> list[str]:
    files: list[str] = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_file() and path.name != SKILL_FILE \
                and not any(part.startswith(".") for part in relative.parts):
            files.append(relative.as_posix())
            if len(files) >= _MAX_LISTED_FILES:
                break
    return files


def _warnings(text: str, skill: Skill, shown: str) -> list[str]:
    warnings = []
    for finding in scan(text, "context"):
        warnings.append(f"line {finding.line}: {finding.pattern_id} — {finding.description}")
        log.warning("skill %s (%s) line %d: %s", skill.name, shown, finding.line,
                    finding.pattern_id)
    return warnings


def skill_view(
    name: str,
    *,
    file_path: str | None = None,
    home: Home | None = None,
    config: MnemoConfig | None = None,
) -> str:
    """The full text of skill ``name`` (or of one of its files) as a JSON result string."""
    home = home if home is not None else Home()
    config = config if config is not None else load_config(home)
    name = (name or "").strip()
    if not name:
        return _error("name is empty; pass a skill name from <available_skills>")
    catalog = catalog_for(home, config)
    skill = catalog.find(name)
    if skill is None:
        broken = [p for p in catalog.problems
                  if name.casefold() in p.path.replace("\\", "/").casefold().split("/")]
        if broken:
            return _error(f"skill {name!r} exists but could not be read "
                          f"({broken[0].message}); fix its SKILL.md ({broken[0].path})")
        names = [s.name for s in catalog.skills]
        close = difflib.get_close_matches(name, names, n=5, cutoff=0.5)
        if close:
            return _error(f"no skill named {name!r}; did you mean: {', '.join(close)}?",
                          close_matches=close)
        if not names:
            return _error("no skills are installed; carry on without one")
        return _error(f"no skill named {name!r}; use a name listed in <available_skills> "
                      f"({len(names)} installed)", close_matches=[])

    folder = skill.folder
    target = folder / SKILL_FILE
    if file_path:
        target = (folder / file_path).resolve()
        if not target.is_relative_to(folder.resolve()):
            return _error(f"file_path {file_path!r} is outside the skill's folder; use a "
                          "path from the skill's 'files' list")
        if not target.is_file():
            return _error(f"skill {skill.name!r} has no file {file_path!r}",
                          files=_supporting_files(folder))
    try:
        text = target.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        return _error(f"{file_path or SKILL_FILE} is not a text file; it cannot be shown")
    except OSError as exc:
        return _error(f"cannot read {target} ({exc.strerror}); ask the user to check it")
    shown = file_path or SKILL_FILE
    result: dict[str, Any] = {
        "success": True,
        "name": skill.name,
        "category": skill.category,
        "description": skill.description,
        "path": str(target),
        "source": skill.source,
    }
    if file_path:
        result["file"] = file_path
    else:
        result["files"] = _supporting_files(folder)
    warnings = _warnings(text, skill, shown)
    if warnings:
        result["warnings"] = warnings
    result["content"] = truncate_content(text, shown, MAX_VIEW_CHARS)
    return json.dumps(result, ensure_ascii=False)
