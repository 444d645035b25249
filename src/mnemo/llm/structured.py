"""Grammar-constrained output for the local model: a summary that always has its sections.

A 0.5B model follows a ten-section template most of the time, not always: it drops the
last section, or loops on one sentence. llama.cpp can constrain sampling with a GBNF
grammar, so for a client that supports it (``supports_grammar``) the summariser sends a
grammar that *forces* every ``## Section`` heading, in order, each followed by one to
``lines`` non-empty lines. Line length is capped so the ten sections fit the token cap
of the call and the answer is not cut before the last heading. Remote models get the
plain prompt: they follow templates well and most endpoints do not take grammars.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

__all__ = ["CHARS_PER_TOKEN_ESTIMATE", "sections_grammar"]

# Characters per generated token used to size lines (English prose runs ~4).
CHARS_PER_TOKEN_ESTIMATE = 4
_MIN_LINE = 40
_MAX_LINE = 240


def _literal(text: str) -> str:
    """A GBNF string literal (JSON escaping is a subset GBNF reads the same way)."""
    return json.dumps(text, ensure_ascii=False)


def sections_grammar(
    sections: Sequence[str],
    *,
    max_tokens: int | None = None,
    lines: int = 3,
) -> str:
    """A GBNF grammar: each ``## <section>`` in order, each with 1..``lines`` lines.

    A line either starts with a character other than ``#``, space or newline, or is a
    ``### `` sub-heading (``### Done`` under Progress), so the model can neither leave a
    section empty nor invent headings of its own level.
    """
    if not sections:
        raise ValueError("sections_grammar needs at least one section name")
    line_cap = _MAX_LINE
    if max_tokens:
        budget_chars = max_tokens * CHARS_PER_TOKEN_ESTIMATE
        per_section = budget_chars // len(sections) - 8  # the heading's own share
        line_cap = max(_MIN_LINE, min(_MAX_LINE, per_section // max(1, lines)))
    names = [f"s{i}" for i in range(len(sections))]
    rules = [f"root ::= {' '.join(names)}"]
    rules += [f"{name} ::= {_literal(f'## {title}' + chr(10))} body"
              for name, title in zip(names, sections, strict=True)]
    optional = " line?" * (max(1, lines) - 1)
    rules.append(f'body ::= line{optional} "\\n"?')
    rules.append('line ::= text "\\n" | "### " [^\\n]{1,60} "\\n"')
    rules.append(f"text ::= [^#\\n \\t] [^\\n]{{0,{line_cap - 1}}}")
    return "\n".join(rules) + "\n"
