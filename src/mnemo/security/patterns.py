"""The threat patterns: what prompt injection and exfiltration look like in text.

Each pattern has an id (what findings, logs and the allow-list name), a one-line
description, the scopes it applies to, and a matcher. Matchers are built so that no input
can make them slow: regexes use bounded repeats only, and the patterns that the seed wrote
as ``a .* b .* c`` are *ordered keyword* matchers — each piece is searched once after the
end of the previous one on the same line, which is linear where a backtracking ``.*`` is
not.

Scopes: ``strict`` (memory writes and the memory snapshot) uses every pattern;
``context`` (context files, SOUL.md, recalled provider text, summaries) leaves out
``secret_material``, because a document may legitimately show what a key looks like,
while memory must never keep one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["INVISIBLE_CHARS", "PATTERNS", "PATTERN_IDS", "SCOPES", "ThreatPattern"]

SCOPES = ("strict", "context")

# Zero-width characters, the BOM, and the bidirectional overrides and isolates that can
# make text read differently from what it says.
INVISIBLE_CHARS: dict[str, str] = {
    "\u200b": "ZERO WIDTH SPACE",
    "\u200c": "ZERO WIDTH NON-JOINER",
    "\u200d": "ZERO WIDTH JOINER",
    "\u2060": "WORD JOINER",
    "\ufeff": "ZERO WIDTH NO-BREAK SPACE (BOM)",
    "\u202a": "LEFT-TO-RIGHT EMBEDDING",
    "\u202b": "RIGHT-TO-LEFT EMBEDDING",
    "\u202c": "POP DIRECTIONAL FORMATTING",
    "\u202d": "LEFT-TO-RIGHT OVERRIDE",
    "\u202e": "RIGHT-TO-LEFT OVERRIDE",
    "\u2066": "LEFT-TO-RIGHT ISOLATE",
    "\u2067": "RIGHT-TO-LEFT ISOLATE",
    "\u2068": "FIRST STRONG ISOLATE",
    "\u2069": "POP DIRECTIONAL ISOLATE",
}

# A matcher takes the whole (normalised) text and yields the offsets of its matches.
Matcher = Callable[[str], Iterator[int]]

_FLAGS = re.IGNORECASE


def _regex(pattern: str) -> Matcher:
    compiled = re.compile(pattern, _FLAGS)

    def match(text: str) -> Iterator[int]:
        for found in compiled.finditer(text):
            yield found.start()

    return match


def _ordered(*pieces: str) -> Matcher:
    """Pieces that must occur in this order on one line, anything in between."""
    compiled = [re.compile(p, _FLAGS) for p in pieces]
    first, rest = compiled[0], compiled[1:]

    def match(text: str) -> Iterator[int]:
        line_start = 0
        for line in text.split("\n"):
            start = first.search(line)
            if start is not None:
                pos = start.end()
                for piece in rest:
                    found = piece.search(line, pos)
                    if found is None:
                        break
                    pos = found.end()
                else:
                    yield line_start + start.start()
            line_start += len(line) + 1

    return match


_COMMENT_WORDS = re.compile(r"\b(?:ignore|override|system|secret|hidden)\b", _FLAGS)


def _html_comment(text: str) -> Iterator[int]:
    """HTML comments whose body names ignore/override/system/secret/hidden.

    Comments are paired the way HTML does it (a comment ends at the first ``-->``), in
    one left-to-right pass, so unclosed ``<!--`` runs cannot cause quadratic work.
    """
    pos = 0
    while True:
        start = text.find("<!--", pos)
        if start < 0:
            return
        end = text.find("-->", start + 4)
        if end < 0:
            return
        if _COMMENT_WORDS.search(text, start + 4, end):
            yield start
        pos = end + 3


_IMAGE_URL = re.compile(r"\]\(\s{0,5}https?://[^\s)]{0,500}", _FLAGS)
_TEMPLATED_PARAM = re.compile(r"[?&][^\s)=&?]{1,50}=(?:\{|\$|%7B|<)", _FLAGS)


def _markdown_image_exfil(text: str) -> Iterator[int]:
    """``![..](https://host/path?q={data})``: an image whose query is filled from context.

    The URL is matched greedily with nothing after it (no backtracking); the ``![`` before
    it and the templated parameter inside it are then checked on bounded slices.
    """
    for found in _IMAGE_URL.finditer(text):
        line_start = text.rfind("\n", max(0, found.start() - 200), found.start()) + 1
        opener = text.rfind("![", line_start, found.start())
        if opener >= 0 and _TEMPLATED_PARAM.search(found.group()):
            yield opener


@dataclass(frozen=True)
class ThreatPattern:
    id: str
    description: str
    matcher: Matcher
    scopes: tuple[str, ...] = SCOPES


_W = r"\s{1,10}"  # a run of whitespace between words, bounded

PATTERNS: tuple[ThreatPattern, ...] = (
    # The seed's ten.
    ThreatPattern(
        "prompt_injection",
        "tells the model to ignore its previous instructions",
        _regex(rf"\bignore{_W}(?:(?:all|any|the|of){_W}){{0,2}}"
               rf"(?:previous|above|prior|earlier|preceding|all|any|your){_W}"
               r"(?:instructions|directives|prompts?|rules)\b"),
    ),
    ThreatPattern(
        "deception_hide",
        "tells the model to keep something from the user",
        _regex(rf"\b(?:do{_W}not|don'?t){_W}(?:tell|inform){_W}the{_W}user\b"),
    ),
    ThreatPattern(
        "sys_prompt_override",
        "claims to override the system prompt",
        _regex(rf"\bsystem{_W}prompt{_W}override\b"),
    ),
    ThreatPattern(
        "disregard_rules",
        "tells the model to disregard its rules",
        _regex(rf"\bdisregard{_W}(?:your|all|any|the|previous|prior){_W}(?:\w{{1,20}}{_W})?"
               r"(?:instructions|rules|guidelines)\b"),
    ),
    ThreatPattern(
        "bypass_restrictions",
        "asks the model to act as if it had no restrictions",
        _regex(rf"\bact{_W}as{_W}(?:if|though){_W}you{_W}(?:have{_W}no|had{_W}no|don'?t"
               rf"{_W}have){_W}(?:restrictions|limits|rules|guidelines)\b"),
    ),
    ThreatPattern(
        "html_comment_injection",
        "hides instructions in an HTML comment",
        _html_comment,
    ),
    ThreatPattern(
        "hidden_div",
        "hides text in an invisible HTML element",
        _regex(r"<\s{0,5}(?:div|span|p)\s{1,10}style\s{0,5}=\s{0,5}[\"'][^\"'>]{0,300}"
               r"display\s{0,5}:\s{0,5}none"),
    ),
    ThreatPattern(
        "translate_execute",
        "asks to translate text and then execute it",
        _ordered(r"\btranslate\s", r"\sinto\s", r"\sand\s{1,10}(?:execute|run|eval)\b"),
    ),
    ThreatPattern(
        "exfil_curl",
        "sends a secret from the environment with curl or wget",
        _ordered(r"\b(?:curl|wget)\s",
                 r"\$\{?\w{0,40}(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)"),
    ),
    ThreatPattern(
        "read_secrets",
        "reads a credentials file",
        # .env.example and friends are documentation, not secrets.
        _ordered(r"\bcat\s", r"(?:\.env(?!\.(?:example|sample|template|dist)\b)\b"
                              r"|credentials|\.netrc|\.pgpass|id_rsa|\.aws/)"),
    ),
    # Beyond the seed.
    ThreatPattern(
        "role_hijack",
        "tries to give the model a new identity or fake a chat turn",
        _regex(rf"\byou{_W}are{_W}now{_W}(?:a|an|the|my|in|no{_W}longer|dan|jailbroken)\b"
               rf"|\bfrom{_W}now{_W}on,?{_W}you{_W}(?:are|will{_W}be){_W}"
               rf"(?:a|an|my|no{_W}longer|dan|jailbroken|unrestricted)\b"
               r"|\bnew\s{1,10}(?:system\s{1,10})?instructions?\s{0,10}:"
               r"|<\|im_start\|>|<\|(?:system|assistant)\|>|\[/?INST\]"),
    ),
    ThreatPattern(
        "sys_prompt_leak",
        "asks the model to reveal its system prompt or instructions",
        # "your": documentation says "print the system prompt"; an attack addresses the model.
        _regex(rf"\b(?:reveal|print|output|show|repeat|display|leak|dump|disclose)"
               rf"{_W}(?:me{_W})?your{_W}(?:\w{{1,15}}{_W})?"
               rf"(?:system{_W}prompt|(?:initial|hidden|original){_W}instructions)\b"
               rf"|\brepeat{_W}the{_W}words{_W}above\b"),
    ),
    ThreatPattern(
        "hidden_secret",
        "asks the model to act in secret from the user",
        _regex(rf"\bwithout{_W}(?:the{_W}user|them|anyone){_W}(?:knowing|noticing)\b"
               rf"|\bkeep{_W}(?:this|it|these{_W}instructions){_W}(?:a{_W})?(?:secret|hidden)"
               rf"{_W}from{_W}(?:the{_W}user|them)\b"
               rf"|\bsecretly{_W}(?:send|upload|post|forward|copy|run|execute|add|include)\b"),
    ),
    ThreatPattern(
        "exfil_url",
        "sends conversation data, files or secrets to a URL",
        _ordered(
            r"\b(?:send|post|upload|forward|exfiltrate|transmit|beacon|leak)\b",
            # What an agent holds that is worth stealing; "files" and "data" are left out
            # because API documentation posts them to URLs all the time.
            r"\b(?:conversation|chat|history|memor(?:y|ies)|secrets?|api[\s_-]?keys?"
            r"|tokens?|credentials?|passwords?|environment\s{1,10}variables|env\s{1,10}vars"
            r"|system\s{1,10}prompt)\b",
            r"https?://",
        ),
    ),
    ThreatPattern(
        "exfil_markdown_image",
        "builds an image URL that would carry data out when rendered",
        _markdown_image_exfil,
    ),
    ThreatPattern(
        "secret_material",
        "contains what looks like a credential (API key, token, private key)",
        _regex(r"-----BEGIN[A-Z ]{0,30}PRIVATE KEY-----"
               r"|\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,200}"
               r"|\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{36,100}"
               r"|\bxox[baprs]-[A-Za-z0-9-]{10,100}|\bAIza[0-9A-Za-z_\-]{35}\b"),
        scopes=("strict",),
    ),
)

# Ids a finding can carry: the patterns, plus the two that are not regexes.
PATTERN_IDS: tuple[str, ...] = (*(p.id for p in PATTERNS), "invisible_unicode", "scan_limit")
