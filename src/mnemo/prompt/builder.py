"""``build_system_prompt``: the parts of the system prompt, assembled in SPEC B1's order.

identity → platform hint → skills index → context files → MEMORY → USER → external
provider blocks → guidance (memory, session search, skills, tool use, model-specific) →
subscription → date line (→ the compaction note after a compaction).

The result must be byte-identical for identical inputs, because the provider caches the
prompt prefix: every part is deterministic (sorted skills, the memory store's frozen
snapshot, the date without a time). Empty parts are skipped; parts are joined by one
blank line. ``SystemPrompt`` keeps the per-part breakdown (characters, estimated tokens)
so ``mnemo prompt`` can show where the tokens go, and the findings of the threat scan so
the user sees at session start which files were blocked and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mnemo.config import MnemoConfig
from mnemo.home import Home
from mnemo.memory import MemoryStore
from mnemo.prompt.context_files import load_context_files
from mnemo.prompt.guidance import (
    COMPACTION_NOTE,
    EXECUTION_GUIDANCE,
    MEMORY_GUIDANCE,
    SESSION_SEARCH_GUIDANCE,
    SKILLS_GUIDANCE,
    TOOL_USE_GUIDANCE,
    date_line,
    subscription_block,
    wants_execution_guidance,
)
from mnemo.prompt.identity import load_identity
from mnemo.prompt.platforms import platform_hint
from mnemo.prompt.screening import PromptFinding
from mnemo.prompt.skills import SkillProblem
from mnemo.prompt.skills_cache import (
    SkillsIndex,
    SkillsIndexCache,
    build_skills_index,
    resolve_external_dirs,
)
from mnemo.prompt.small_window import (
    SMALL_MEMORY_GUIDANCE,
    SMALL_SESSION_SEARCH_GUIDANCE,
    SMALL_TOOL_USE_GUIDANCE,
)
from mnemo.tokens import TokenCounter, estimate_tokens_rough

__all__ = ["PART_SEPARATOR", "PromptPart", "SystemPrompt", "build_system_prompt"]

PART_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class PromptPart:
    """One part of the system prompt and what it costs."""

    name: str
    text: str
    chars: int
    tokens: int


@dataclass(frozen=True)
class SystemPrompt:
    """The assembled prompt, its parts in order, and what screening and skills reported."""

    text: str
    parts: tuple[PromptPart, ...]
    findings: tuple[PromptFinding, ...] = ()
    skills_count: int = 0
    skill_problems: tuple[SkillProblem, ...] = ()
    tokens: int = 0  # estimated tokens of the whole text (separators included)

    @property
    def chars(self) -> int:
        return len(self.text)

    def part(self, name: str) -> PromptPart | None:
        return next((p for p in self.parts if p.name == name), None)

    @property
    def blocked(self) -> tuple[PromptFinding, ...]:
        return tuple(f for f in self.findings if f.blocked)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready breakdown (what ``mnemo prompt --json`` prints)."""
        return {
            "parts": [{"name": p.name, "chars": p.chars, "tokens": p.tokens}
                      for p in self.parts],
            "total": {"chars": self.chars, "tokens": self.tokens},
            "skills_count": self.skills_count,
            "findings": [f.to_dict() for f in self.findings],
            "skill_problems": [p.to_dict() for p in self.skill_problems],
            "text": self.text,
        }


def build_system_prompt(
    *,
    config: MnemoConfig,
    memory: MemoryStore | None = None,
    cwd: Path | None = None,
    platform: str | None = None,
    model: str = "",
    tool_names: Sequence[str] = (),
    toolsets: Sequence[str] = (),
    provider_blocks: Sequence[str] = (),
    home: Home | None = None,
    now: datetime | None = None,
    compacted: bool = False,
    skills_cache: SkillsIndexCache | None = None,
    token_counter: TokenCounter | None = None,
    small_window: bool = False,
) -> SystemPrompt:
    """Assemble the system prompt for one session.

    ``memory`` contributes its frozen snapshot (``format_for_system_prompt``), so writes
    during the session do not change the prompt; call ``memory.load_from_disk()`` and
    build again to take a new one (after a compaction). ``platform=None`` means
    ``config.platform``; ``cwd=None`` the current directory; ``now=None`` today.
    ``tool_names`` are the tools the agent has: guidance for memory, session_search and
    skills (and the skills index itself) appear only when their tool is there.
    ``small_window`` picks the short guidance of ``prompt.small_window`` (for windows of
    16k tokens or less).

    Raises ``UsageError`` for a platform that is neither built in nor in ``platforms``.
    """
    home = home if home is not None else Home()
    cwd = cwd if cwd is not None else Path.cwd()
    platform = platform or config.platform
    tools = set(tool_names)
    max_chars = config.context_file_max_chars
    allow = config.security.allow_patterns
    parts: list[tuple[str, str]] = []
    findings: list[PromptFinding] = []

    identity = load_identity(home.soul_file, max_chars=max_chars, allow_patterns=allow)
    findings.extend(identity.findings)
    parts.append(("identity", identity.text))
    parts.append(("platform", platform_hint(platform, config.platforms)))

    skills = SkillsIndex("", 0)
    if "skill_view" in tools:
        skills = build_skills_index(
            home.skills_dir,
            external_dirs=resolve_external_dirs(config.skills.external_dirs, home.root),
            tools=sorted(tools), toolsets=toolsets, platform=platform,
            snapshot_path=home.skills_snapshot, cache=skills_cache,
        )
    parts.append(("skills", skills.text))

    context = load_context_files(cwd, max_chars=max_chars, allow_patterns=allow)
    findings.extend(context.findings)
    parts.append(("context_files", context.text))

    if memory is not None:
        if config.memory.memory_enabled:
            parts.append(("memory", memory.format_for_system_prompt("memory") or ""))
        if config.memory.user_profile_enabled:
            parts.append(("user", memory.format_for_system_prompt("user") or ""))
    blocks = [b for b in provider_blocks if b and b.strip()]
    for number, block in enumerate(blocks, start=1):
        parts.append(("provider" if number == 1 else f"provider_{number}", block))

    if "memory" in tools:
        parts.append(("memory_guidance",
                      SMALL_MEMORY_GUIDANCE if small_window else MEMORY_GUIDANCE))
    if "session_search" in tools:
        parts.append(("session_search_guidance", SMALL_SESSION_SEARCH_GUIDANCE
                      if small_window else SESSION_SEARCH_GUIDANCE))
    if "skill_view" in tools and skills.count:  # no skills installed: nothing to guide
        parts.append(("skills_guidance", SKILLS_GUIDANCE))
    if tools:
        parts.append(("tool_use_guidance",
                      SMALL_TOOL_USE_GUIDANCE if small_window else TOOL_USE_GUIDANCE))
    if wants_execution_guidance(model, config.prompt.execution_guidance_models):
        parts.append(("model_guidance", EXECUTION_GUIDANCE))
    parts.append(("subscription", subscription_block(config.prompt.subscription)))
    parts.append(("date", date_line(now if now is not None else datetime.now())))
    if compacted:
        parts.append(("compaction_note", COMPACTION_NOTE))

    count = token_counter.count if token_counter is not None else estimate_tokens_rough
    built = tuple(
        PromptPart(name, body, len(body), count(body))
        for name, body in ((name, raw.strip()) for name, raw in parts)
        if body
    )
    text = PART_SEPARATOR.join(p.text for p in built)
    return SystemPrompt(
        text=text,
        parts=built,
        tokens=count(text),
        findings=tuple(findings),
        skills_count=skills.count,
        skill_problems=skills.problems,
    )
