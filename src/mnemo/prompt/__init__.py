"""The system prompt: what the model sees first, every turn (SPEC §B, S2).

``build_system_prompt`` assembles identity, platform hint, skills index, project context
files, the memory snapshot and guidance in a fixed order and returns the text with a
per-part breakdown. Context files and SOUL.md are screened for prompt injection before
they are loaded (``context_files.py``, ``screening.py``); skills are indexed behind an
in-process LRU and a disk snapshot (``skills.py``, ``skills_cache.py``) and loaded by the
model with the ``skill_view`` tool (``skill_tool.py``).
"""

from mnemo.prompt.builder import PromptPart, SystemPrompt, build_system_prompt
from mnemo.prompt.context_files import (
    ContextFile,
    ContextFiles,
    build_context_files_prompt,
    find_context_files,
    load_context_files,
    truncate_content,
)
from mnemo.prompt.guidance import COMPACTION_NOTE
from mnemo.prompt.identity import DEFAULT_IDENTITY
from mnemo.prompt.platforms import PLATFORM_HINTS
from mnemo.prompt.screening import PromptFinding
from mnemo.prompt.skill_tool import SKILL_VIEW_SCHEMA, catalog_for, skill_view
from mnemo.prompt.skills import Catalog, Skill, SkillProblem
from mnemo.prompt.skills_cache import (
    DEFAULT_CACHE,
    CacheStats,
    SkillsIndex,
    SkillsIndexCache,
    build_skills_index,
)

__all__ = [
    "COMPACTION_NOTE",
    "DEFAULT_CACHE",
    "DEFAULT_IDENTITY",
    "PLATFORM_HINTS",
    "SKILL_VIEW_SCHEMA",
    "CacheStats",
    "Catalog",
    "ContextFile",
    "ContextFiles",
    "PromptFinding",
    "PromptPart",
    "Skill",
    "SkillProblem",
    "SkillsIndex",
    "SkillsIndexCache",
    "SystemPrompt",
    "build_context_files_prompt",
    "build_skills_index",
    "build_system_prompt",
    "catalog_for",
    "find_context_files",
    "load_context_files",
    "skill_view",
    "truncate_content",
]
