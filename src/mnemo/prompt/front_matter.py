"""YAML front matter: the ``---`` block at the top of context files and SKILL.md files.

Context files drop it (B4: only the markdown body reaches the model); skills read their
``name``, ``description`` and ``platforms`` from it (B5). Both need the same split, and
context files also need to know how many lines it took, so findings in the body can be
reported with the line numbers of the file the user has open.

A front matter is a first line that is exactly ``---`` and a later line that is exactly
``---`` or ``...``. Without the closing line there is no front matter: the text is kept
as it is, because cutting an unclosed block could eat the whole file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

__all__ = ["FrontMatter", "FrontMatterError", "parse_front_matter", "split_front_matter"]

# libyaml's safe loader when PyYAML was built with it (about 10x faster, which matters
# for a thousand skills); the pure-Python one otherwise. Both build plain Python data.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_OPEN = "---"
_CLOSE = ("---", "...")


@dataclass(frozen=True)
class FrontMatter:
    """A text split at its front matter.

    ``raw`` is the YAML between the fences (None when the text has no closed front
    matter), ``body`` the rest, and ``body_line`` the 1-based line of the original text
    on which ``body`` starts.
    """

    raw: str | None
    body: str
    body_line: int


class FrontMatterError(ValueError):
    """A front matter that is not a YAML mapping; the message says what is wrong."""


def split_front_matter(text: str) -> FrontMatter:
    """Split ``text`` (newlines already ``\\n``) into its front matter and body."""
    if not text.startswith(_OPEN):
        return FrontMatter(None, text, 1)
    first_end = text.find("\n")
    if first_end < 0 or text[:first_end].rstrip() != _OPEN:
        return FrontMatter(None, text, 1)
    pos = first_end + 1
    line = 2
    while pos <= len(text):
        end = text.find("\n", pos)
        current = text[pos:] if end < 0 else text[pos:end]
        if current.rstrip() in _CLOSE:
            body = "" if end < 0 else text[end + 1:]
            return FrontMatter(text[first_end + 1:pos], body, line + 1)
        if end < 0:
            break
        pos = end + 1
        line += 1
    return FrontMatter(None, text, 1)


def parse_front_matter(text: str) -> tuple[dict[str, Any] | None, str]:
    """The front matter of ``text`` as a mapping (None if there is none) and the body.

    Raises ``FrontMatterError`` when the block is there but is not valid YAML or not a
    mapping, with the YAML line (counted in the file) where that is known.
    """
    split = split_front_matter(text)
    if split.raw is None:
        return None, text
    try:
        data = yaml.load(split.raw, Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise FrontMatterError(f"front matter is not valid YAML{where}: {problem}") from exc
    if data is None:
        return {}, split.body
    if not isinstance(data, dict):
        raise FrontMatterError(
            f"front matter must be a mapping of keys to values, not {type(data).__name__}"
        )
    return data, split.body
