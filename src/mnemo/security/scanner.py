"""``scan(text, scope)``: the one threat scanner for memory, context files and recall.

Two passes over at most ``MAX_SCAN_CHARS`` characters:

1. **Hidden text** (``invisible_unicode``), on the raw lines: characters that hide
   something from a human reader (tag characters, stray variation selectors, bidi
   controls, zero-width runs, fillers, stacked combining marks) are a finding in
   themselves — the text a reviewer approved is not the text the model would read.
2. **Threat patterns** (``patterns.py``), on the skeleton form (``normalise.py``), where
   look-alikes, invisible splitters, whitespace tricks and line breaks no longer hide a
   phrase; the phrase patterns run again on that form with leetspeak spelled out
   (``leet.py``) when it holds any. Each finding carries the first and last line of its
   match, so a caller that drops flagged lines removes a threat spread over several
   lines whole.

If a text is longer than the limit, a ``scan_limit`` finding says so, so a caller that
blocks on findings never trusts text that was not read. Callers truncate what they load
before scanning it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from mnemo.security.leet import deleet
from mnemo.security.normalise import Form, build_form, hidden_text, mixed_script
from mnemo.security.patterns import PATTERNS, SCOPES

__all__ = ["MAX_SCAN_CHARS", "Finding", "Scope", "scan"]

Scope = Literal["strict", "context"]

MAX_SCAN_CHARS = 64 * 1024


@dataclass(frozen=True)
class Finding:
    """One threat found: which pattern, on which lines (1-based), and a short excerpt.

    ``end_line`` is the last line the match reaches (``line`` for a one-line match).
    """

    pattern_id: str
    line: int
    excerpt: str
    description: str
    end_line: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        if self.end_line < self.line:
            object.__setattr__(self, "end_line", self.line)


# Reported as hidden text: what a reader sees ("paypal") is not what is written.
_MIXED_SCRIPT = ("a word mixes Latin letters with Cyrillic or Greek look-alikes "
                 "(a disguised keyword)")

# Patterns whose phrase a document may quote as an example ("text like 'ignore previous
# instructions' is detected"): an instruction to the model is not written in quotes
# after "such as".
_QUOTABLE = frozenset({"prompt_injection", "disregard_rules", "role_hijack", "sys_prompt_leak",
                       "bypass_restrictions", "deception_hide", "sys_prompt_override",
                       "unsafe_agent_action"})
# Patterns also run on the text with leetspeak spelled out (``leet.py``): the phrases.
_LEET = _QUOTABLE | {"hidden_secret", "translate_execute"}
_QUOTES = "\"'`\u201c\u201d\u00ab\u00bb\u2018\u2019"
_EXAMPLE_CUE = re.compile(r"\b(?:like|such\W{1,3}as|e\.g\.|for\W{1,3}example|phrases?|strings?"
                          r"|text|words|detects?|blocks?|flags?|catches|matches|rejects?"
                          r"|refuses?|patterns?)\b\W{0,20}$")


def _quoted_example(form: Form, start: int, end: int) -> bool:
    """True when the match is a quoted example introduced as one ("text like '…'")."""
    text = form.text
    before = text[max(0, start - 3):start]
    after = text[end:end + 3]
    opening = [i for i, ch in enumerate(before) if ch in _QUOTES]
    if not opening or not any(ch in _QUOTES for ch in after):
        return False
    quote_at = max(0, start - 3) + opening[-1]
    return bool(_EXAMPLE_CUE.search(text, max(0, quote_at - 60), quote_at + 1))


def _excerpt(line_text: str, limit: int = 80) -> str:
    """The line as a reader should see it: hidden characters shown as ``<U+XXXX>``."""
    shown: list[str] = []
    for ch in line_text.strip():
        if ch.isprintable() or ch == "\t":
            shown.append(ch)
        else:
            shown.append(f"<U+{ord(ch):04X}>")
        if len(shown) > limit:
            break
    cleaned = "".join(shown)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def scan(text: str, scope: Scope = "context") -> list[Finding]:
    """Every threat in ``text`` for ``scope`` (``strict`` or ``context``), in line order.

    Each pattern is reported once per line it starts on; hidden text once per kind and
    line.
    """
    if scope not in SCOPES:
        raise ValueError(f"unknown scan scope {scope!r}; use one of {', '.join(SCOPES)}")
    findings: list[Finding] = []
    if len(text) > MAX_SCAN_CHARS:
        findings.append(Finding(
            "scan_limit", 1, f"{len(text):,} chars",
            f"text longer than {MAX_SCAN_CHARS:,} chars; only the start was scanned",
        ))
        text = text[:MAX_SCAN_CHARS]
    raw_lines = text.split("\n")

    for number, line_text in enumerate(raw_lines, start=1):
        for reason in hidden_text(line_text, first_line=number == 1):
            findings.append(Finding("invisible_unicode", number, _excerpt(line_text), reason))
        if mixed_script(line_text):
            findings.append(Finding("invisible_unicode", number, _excerpt(line_text),
                                    _MIXED_SCRIPT))

    form = build_form(raw_lines)
    spelled = deleet(form.text)
    # The same form with leetspeak spelled out (same offsets), for the phrase patterns.
    leet_form = replace(form, text=spelled) if spelled is not None else None
    for pattern in PATTERNS:
        if scope not in pattern.scopes:
            continue
        reported: set[int] = set()
        forms = [form]
        if leet_form is not None and pattern.id in _LEET:
            forms.append(leet_form)
        for each in forms:
            for start, end in pattern.find(each):
                number = each.line_of(start)
                if number in reported or (pattern.id in _QUOTABLE
                                           and _quoted_example(each, start, end)):
                    continue
                reported.add(number)
                last = each.line_of(max(start, end - 1))
                findings.append(Finding(pattern.id, number, _excerpt(raw_lines[number - 1]),
                                        pattern.description, last))
    findings.sort(key=lambda f: f.line)
    return findings


# Compile the patterns now rather than inside the first memory write: a write must stay
# short (a process killed mid-write must leave whole files), and nothing is read here.
# The text is long enough for the literal plans of ``matchers.finditer`` to be built too.
scan("warm up 1gn0re " * 40)
