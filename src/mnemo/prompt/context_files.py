"""Project context files (SPEC B4): which file is loaded, and how it is made safe and small.

One kind of file is loaded per session, the first kind found wins:

1. ``.mnemo.md`` / ``MNEMO.md`` / ``.hermes.md`` / ``HERMES.md`` — from the working
   directory up to the git root (only the working directory outside a repository), so a
   sub-folder of a project still gets the project's file;
2. ``AGENTS.md`` / ``agents.md`` in the working directory;
3. ``CLAUDE.md`` / ``claude.md`` in the working directory;
4. ``.cursorrules`` and ``.cursor/rules/*.mdc`` in the working directory (all of them).

Each file is read as UTF-8 (a leading BOM is dropped, not treated as a threat), its YAML
front matter is stripped, it is capped at ``max_chars`` (the first 70% and the last 20%
of the cap are kept, with a marker that names the file and what was cut), and what is
kept is screened (``screening.py``): a file with a finding becomes one ``[BLOCKED: …]``
line.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mnemo.prompt.front_matter import split_front_matter
from mnemo.prompt.screening import (
    PromptFinding,
    allowed_ids_for,
    blocked_notice,
    screen_segments,
)

__all__ = [
    "AGENTS_NAMES",
    "CLAUDE_NAMES",
    "CONTEXT_FILE_MAX_CHARS",
    "CURSOR_RULES",
    "HEAD_RATIO",
    "MNEMO_NAMES",
    "TAIL_RATIO",
    "ContextFile",
    "ContextFiles",
    "build_context_files_prompt",
    "find_context_files",
    "find_git_root",
    "load_context_files",
    "load_prompt_file",
    "truncate_content",
]

log = logging.getLogger("mnemo.prompt")

CONTEXT_FILE_MAX_CHARS = 20_000
HEAD_RATIO = 0.7
TAIL_RATIO = 0.2

MNEMO_NAMES = (".mnemo.md", "MNEMO.md", ".hermes.md", "HERMES.md")
AGENTS_NAMES = ("AGENTS.md", "agents.md")
CLAUDE_NAMES = ("CLAUDE.md", "claude.md")
CURSOR_RULES = ".cursorrules"
CURSOR_RULES_DIR = Path(".cursor") / "rules"

_HEADER = (
    "# Project context\n"
    "The following files come from the project you are working in. Follow their "
    "conventions where they apply to the task."
)


@dataclass(frozen=True)
class ContextFile:
    """One loaded file: the name shown to the model, its path, and what it contributes.

    ``text`` is what the prompt shows for it (the possibly truncated body, or the
    BLOCKED line); ``original_chars`` is the body's size before the cap.
    """

    name: str
    path: Path
    text: str
    original_chars: int
    truncated: bool
    blocked: bool
    findings: tuple[PromptFinding, ...]


@dataclass(frozen=True)
class ContextFiles:
    """The context-files part of the prompt: its text, the files and their findings."""

    kind: str  # "mnemo", "agents", "claude", "cursor" or "" when none was found
    files: tuple[ContextFile, ...]
    text: str

    @property
    def findings(self) -> tuple[PromptFinding, ...]:
        return tuple(f for file in self.files for f in file.findings)


# -- discovery --------------------------------------------------------------------------


def find_git_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (a folder or a file)."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def _first_file(directory: Path, names: Sequence[str]) -> Path | None:
    for name in names:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


def find_context_files(cwd: Path) -> tuple[str, list[Path]]:
    """The kind of context file that wins for ``cwd`` and its files (``("", [])`` if none)."""
    cwd = cwd.absolute()
    stop_at = find_git_root(cwd)
    for directory in (cwd, *cwd.parents):
        found = _first_file(directory, MNEMO_NAMES)
        if found is not None:
            return "mnemo", [found]
        if stop_at is None or directory == stop_at:
            break
    for kind, names in (("agents", AGENTS_NAMES), ("claude", CLAUDE_NAMES)):
        found = _first_file(cwd, names)
        if found is not None:
            return kind, [found]
    cursor: list[Path] = []
    if (cwd / CURSOR_RULES).is_file():
        cursor.append(cwd / CURSOR_RULES)
    rules_dir = cwd / CURSOR_RULES_DIR
    if rules_dir.is_dir():
        cursor.extend(p for p in sorted(rules_dir.glob("*.mdc")) if p.is_file())
    return ("cursor", cursor) if cursor else ("", [])


def _display_name(path: Path, cwd: Path) -> str:
    """How a file is named in the prompt: relative to cwd when inside it, else its name."""
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return path.name


# -- truncation -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cut:
    head: str
    tail: str
    tail_start: int  # offset of ``tail`` in the uncut text
    marker: str


def _cut(text: str, filename: str, max_chars: int) -> _Cut | None:
    if len(text) <= max_chars:
        return None
    head_chars = int(max_chars * HEAD_RATIO)
    tail_chars = int(max_chars * TAIL_RATIO)
    tail_start = len(text) - tail_chars
    removed = tail_start - head_chars
    marker = (
        f"\n\n[… {filename}: {removed:,} of {len(text):,} characters cut here to save "
        f"context; kept the first {head_chars:,} and the last {tail_chars:,}. Read the "
        "file itself if you need the rest. …]\n\n"
    )
    return _Cut(text[:head_chars], text[tail_start:], tail_start, marker)


def truncate_content(text: str, filename: str, max_chars: int = CONTEXT_FILE_MAX_CHARS) -> str:
    """``text`` capped at ``max_chars``: its first 70% and last 20% around a marker."""
    cut = _cut(text, filename, max_chars)
    return text if cut is None else cut.head + cut.marker + cut.tail


# -- loading ----------------------------------------------------------------------------


def load_prompt_file(
    path: Path,
    name: str,
    *,
    max_chars: int = CONTEXT_FILE_MAX_CHARS,
    allow_patterns: Mapping[str, Sequence[str]] | None = None,
    strip_front_matter: bool = True,
) -> ContextFile:
    """Read one file for the prompt: strip, cap, screen; block it on a finding.

    An unreadable file is logged and contributes nothing (its ``text`` is empty).
    """
    try:
        raw = path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        log.warning("cannot read %s (%s); it is left out of the prompt", path, exc.strerror)
        return ContextFile(name, path, "", 0, False, False, ())
    if strip_front_matter:
        split = split_front_matter(raw)
        body, first_line = split.body, split.body_line
    else:
        body, first_line = raw, 1
    leading = len(body) - len(body.lstrip())
    first_line += body.count("\n", 0, leading)
    body = body.strip()

    cut = _cut(body, name, max_chars)
    if cut is None:
        segments = [(body, first_line)]
        shown = body
    else:
        tail_line = first_line + body.count("\n", 0, cut.tail_start)
        segments = [(cut.head, first_line), (cut.tail, tail_line)]
        shown = cut.head + cut.marker + cut.tail
        log.info("%s is %d chars; truncated to the first %d and last %d", name, len(body),
                 len(cut.head), len(cut.tail))

    allowed = allowed_ids_for(allow_patterns, path, name)
    findings = tuple(screen_segments(segments, file=name, path=path, allowed_ids=allowed))
    blocking = list(dict.fromkeys(f.pattern_id for f in findings if f.blocked))
    if blocking:
        shown = blocked_notice(name, blocking)
    return ContextFile(name, path, shown, len(body), cut is not None, bool(blocking), findings)


def load_context_files(
    cwd: Path,
    *,
    max_chars: int = CONTEXT_FILE_MAX_CHARS,
    allow_patterns: Mapping[str, Sequence[str]] | None = None,
) -> ContextFiles:
    """Find, load and screen the context files for ``cwd``; the text is "" if none."""
    cwd = cwd.absolute()
    kind, paths = find_context_files(cwd)
    files = tuple(
        load_prompt_file(path, _display_name(path, cwd), max_chars=max_chars,
                         allow_patterns=allow_patterns)
        for path in paths
    )
    sections = [f"## {file.name}\n\n{file.text}" for file in files if file.text]
    text = "\n\n".join([_HEADER, *sections]) if sections else ""
    return ContextFiles(kind, files, text)


def build_context_files_prompt(
    cwd: Path,
    *,
    max_chars: int = CONTEXT_FILE_MAX_CHARS,
    allow_patterns: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The context-files part of the system prompt for ``cwd`` ("" when there is none)."""
    return load_context_files(cwd, max_chars=max_chars, allow_patterns=allow_patterns).text
