"""The threat patterns: what prompt injection and exfiltration look like in text.

Each pattern has an id (what findings, logs and the allow-list name), a one-line
description, the scopes it applies to, and matchers. Every matcher runs on the skeleton
form of the text (``normalise.py``): lower case, accents and invisible characters gone,
look-alike letters mapped to ASCII, whitespace collapsed and lines joined, so "ignore"
written with a Cyrillic і, a soft hyphen or over two quoted lines is still "ignore".
English phrasings live here, other languages in ``multilingual.py``, exfiltration by
command or instruction in ``exfil.py``, by markdown image in ``images.py``.

The patterns encode the *imperative shape* of an attack ("ignore all previous
instructions", "send the chat history to https://…"), not its vocabulary: documentation
that mentions the system prompt, a note that says "ignore the flaky test", or a CI
script that calls an API with its token must pass.

Scopes: ``strict`` (memory writes and the memory snapshot) uses every pattern;
``context`` (context files, SOUL.md, recalled provider text, summaries) leaves out
``secret_material``, because a document may legitimately show what a key looks like,
while memory must never keep one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from mnemo.security import exfil, images, multilingual
from mnemo.security.matchers import Matcher, W, compile_pattern, finditer, regex, window
from mnemo.security.normalise import Form, build_form

__all__ = ["INVISIBLE_CHARS", "PATTERNS", "PATTERN_IDS", "SCOPES", "ThreatPattern"]

SCOPES = ("strict", "context")

# The invisible characters SPEC S1 names. ``normalise.hidden_text`` reports these and the
# other kinds S3 adds (tag characters, stray variation selectors, fillers, stacked marks),
# all as ``invisible_unicode``.
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


@dataclass(frozen=True)
class ThreatPattern:
    id: str
    description: str
    matchers: tuple[Matcher, ...]
    scopes: tuple[str, ...] = SCOPES

    def find(self, form: Form) -> Iterator[tuple[int, int]]:
        """``(start, end)`` offsets of every match in ``form``."""
        for matcher in self.matchers:
            yield from matcher(form)

    def matcher(self, text: str) -> Iterator[int]:
        """Start offsets of the matches in ``text`` (its skeleton form is built here)."""
        for start, _end in self.find(build_form(text.split("\n"))):
            yield start


_QUALIFIER = (r"(?:previous|prior|above|earlier|preceding|former|foregoing|original|initial"
              r"|old|existing|system|developer|safety|all|any|other|current|given)")
_RULES = (r"(?:instructions?|directives?|prompts?|rules|guidelines|guidance|constraints"
          r"|restrictions|polic(?:y|ies)|commands|orders|directions|programming|training)")
_LIMITS = (r"(?:restrictions|limits|limitations|rules|guidelines|filters?|polic(?:y|ies)"
           r"|censorship|constraints|boundaries|safeguards)")
_WORD = r"\w{1,15}" + W

_COMMENT = r"<!--(?:[^-]|-(?!->)){0,2000}-->"
_AI = (r"\b(?:ai|a\.i\.|assistants?|agents?|models?|llms?|chatbots?|bots?|claude|gpt\w{0,6}"
       r"|chatgpt|copilot|gemini|codex|language\W{1,3}models?)\b")
_DIRECTIVE = (r"\b(?:must|should|shall|always|never|do\W{1,3}not|don'?t|ignore|run|execute"
              r"|answer|reply|respond|tell|say|output|print|send|allow|approve|bypass|obey"
              r"|follow|pretend|include|instructions?)\b")
# Words that make a comment an instruction whoever it addresses.
_COMMAND = (rf"\b(?:obey|disregard|override|jailbreak|exfiltrate|ignore{W}(?:the|all|any|every"
            rf"|previous|prior|above|your|these|those)|(?:new|hidden|secret){W}instructions?"
            rf"|system{W}prompt|you{W}(?:are{W}now|must|will{W}now)|do{W}not{W}tell"
            rf"|don'?t{W}tell)\b")


def _html_comment(form: Form) -> Iterator[tuple[int, int]]:
    """An HTML comment (hidden when rendered) that commands, or addresses an AI with a directive.

    Comments are paired the way HTML does it (a comment ends at the first ``-->``), in
    one left-to-right pass. Other threats inside a comment are found by their own
    patterns; this one catches the note "to the AI reading this".
    """
    text = form.text
    ai, directive = compile_pattern(_AI), compile_pattern(_DIRECTIVE)
    command = compile_pattern(_COMMAND)
    pos = 0
    while True:
        start = text.find("<!--", pos)
        if start < 0:
            return
        end = text.find("-->", start + 4)
        if end < 0:
            return
        if command.search(text, start + 4, end) or (
                ai.search(text, start + 4, end) and directive.search(text, start + 4, end)):
            yield start, end + 3
        pos = end + 3


_ELEMENT = r"<\W{0,2}(?:div|span|p|section|font|small|td|li|a|label)\b[^<>]{0,300}>?"
_HIDING = (r"display\W{0,3}none|visibility\W{0,3}hidden|font-size\W{0,3}0(?![.\d])"
           r"|opacity\W{0,3}0(?![.\d])|[\s\"']hidden(?=[\s>/=])|(?:^|[\s;\"'])color\W{0,3}"
           r"(?:white|#fff\b|#ffffff|transparent)|(?:^|[\s;\"'])height\W{0,3}0(?![.\d])")


def _hidden_element(form: Form) -> Iterator[tuple[int, int]]:
    """An HTML element styled or marked to be invisible (its opening tag is read once)."""
    hiding = compile_pattern(_HIDING)
    for found in finditer(_ELEMENT, form.text):
        if hiding.search(found.group()):
            yield found.start(), found.end()


# An AI addressed as the reader of the text ("note to the AI agent reading this",
# "AI assistants processing this file"), and what no instruction file should ask of one:
# bypassing review, or reporting success whatever happened. AGENTS.md files address
# agents all the time; it is the action that makes the difference, and "never push
# directly to main" is a rule, not an attack.
_AI_READER = (r"\b(?:ai|llm|a\.i\.)\W{1,3}(?:coding\W{1,3})?(?:agents?|assistants?|models?"
              r"|bots?)\b|\b(?:agents?|assistants?|models?|llms?|bots?)\W{1,3}(?:reading"
              r"|processing|parsing|scanning|analy[sz]ing|working\W{1,3}on|that\W{1,3}reads?)\b")
_UNSAFE_ACTION = (r"\bskip\W{1,3}(?:the\W{1,3}|all\W{1,3})?(?:code\W{1,3})?reviews?\b"
                  r"|\bpush\W{1,3}(?:\w{1,10}\W{1,3})?directly\W{1,3}(?:in)?to\W{1,3}"
                  r"(?:the\W{1,3})?(?:main|master|production|prod)\b"
                  r"|\b(?:merge|commit|push|deploy)\W{1,3}(?:\w{1,10}\W{1,3}){0,2}?without"
                  r"\W{1,3}(?:any\W{1,3})?(?:code\W{1,3})?(?:review|approval|tests)\b"
                  r"|\b(?:tell|inform|assure|report\W{1,3}to)\W{1,3}the\W{1,3}(?:user|human"
                  r"|owner|reviewer)\W{1,3}(?:that\W{1,3})?(?:the\W{1,3}|all\W{1,3})?(?:tests?"
                  r"|build|ci|checks?|pipeline)\W{1,3}(?:pass(?:ed|es)?|succeeded|are\W{1,3}"
                  r"(?:green|passing)|went\W{1,3}well)\b")
_FORBIDDEN = r"\b(?:never|not|n't|no|nor|avoid|without|forbidden|prohibited)\b"
_addressed_action = window(_UNSAFE_ACTION, _AI_READER, span=160, either_order=True)


def _unsafe_agent_action(form: Form) -> Iterator[tuple[int, int]]:
    """An unsafe action asked of an AI reader, unless its clause forbids it ("never
    push directly to main or skip review")."""
    forbidden = compile_pattern(_FORBIDDEN)
    text = form.text
    for start, end in _addressed_action(form):
        clause = max(text.rfind(mark, max(0, start - 120), start) for mark in ".;:!?") + 1
        if not forbidden.search(text, max(clause, start - 120), start):
            yield start, end

PATTERNS: tuple[ThreatPattern, ...] = (
    # The seed's ten.
    ThreatPattern("prompt_injection", "tells the model to ignore its previous instructions", (
        regex(rf"\b(?:ignore|disregard|forget|bypass|discard|abandon|drop|skip|neglect"
              rf"|overlook){W}(?:(?:all|any|each|every|of|the|your|my|these|those|this){W})"
              rf"{{0,3}}{_QUALIFIER}{W}(?:{_WORD})?{_RULES}\b",
              rf"\b(?:ignore|disregard|forget|override){W}(?:(?:all|any|the|your|these){W})"
              rf"{{1,2}}(?:{_WORD})?{_RULES}{W}(?:(?:you\W{{1,3}}(?:were|have\W{{1,3}}been)"
              rf"\W{{1,3}})?given|above|before|so\W{{1,3}}far|earlier|previously)\b",
              rf"\b(?:ignore|disregard|forget){W}(?:the|all|everything){W}(?:(?:you{W}(?:were|"
              rf"have{W}been){W}told|said|written){W})?(?:above|before|previously|earlier"
              rf"|so{W}far)\b",
              rf"\bforget{W}(?:everything|all){W}(?:you|above|before|that|previous|prior|i)\b",
              rf"\b(?:ignore|disregard|forget){W}(?:all{W}(?:of{W})?)?your{W}(?:own{W})?"
              rf"(?:instructions|rules|guidelines|programming|directives|system{W}prompt)\b",
              rf"\b(?:ignore|disregard){W}(?:what|whatever|everything){W}the{W}user{W}"
              rf"(?:\w{{1,10}}{W})?(?:asked|said|wants|wanted|requested|wrote|typed|says)\b",
              rf"\b(?:previous|prior|earlier|above|all|original|old|earlier){W}(?:{_WORD})?"
              rf"(?:instructions|rules|guidelines|directives){W}(?:are|were|is|have{W}been)"
              rf"{W}(?:now{W})?(?:void|cancell?ed|revoked|obsolete|null|invalid|superseded"
              rf"|overridden|no{W}longer{W}(?:valid|apply|in{W}effect))\b",
              r"\b(?:the|this|you|any)\W{1,3}(?:ai|model|assistant|agent|llm|bot)s?\W{1,3}"
              r"(?:must|shall|should|will|has\W{1,3}to)\W{1,3}(?:now\W{1,3})?(?:obey"
              r"|comply\W{1,3}with)\b"),
        *multilingual.matchers("prompt_injection"),
    )),
    ThreatPattern("deception_hide", "tells the model to keep something from the user", (
        regex(rf"\b(?:do{W}not|don'?t|dont){W}(?:tell|inform|notify|alert|warn"
              rf"|mention{W}(?:this|it|anything){W}to|reveal{W}(?:this|it){W}to|let)"
              rf"{W}the{W}user\b(?!'s\b)",
              rf"\b(?:hide|conceal){W}(?:this|it|these|that|the{W}\w{{1,15}}){W}from{W}the"
              rf"{W}user\b"),
        *multilingual.matchers("deception_hide"),
    )),
    ThreatPattern("sys_prompt_override", "claims to override the system prompt", (
        regex(rf"\bsystem{W}(?:prompt{W})?override\b",
              rf"\boverride{W}(?:your|all){W}(?:{_WORD})?(?:instructions|rules|programming"
              rf"|guidelines|safety)\b"),
    )),
    ThreatPattern("disregard_rules", "tells the model to disregard its rules", (
        regex(rf"\b(?:disregard|forget|abandon|discard|drop|circumvent){W}(?:all{W})?"
              rf"(?:of{W})?(?:(?:your|the|any|these){W})?(?:{_WORD})?(?:rules|guidelines"
              rf"|instructions|restrictions|principles|programming|training|constraints"
              rf"|safety{W}(?:rules|guidelines))\b",
              rf"\bstop{W}(?:following|obeying|applying){W}(?:all{W})?(?:your|the|any){W}"
              rf"(?:{_WORD})?(?:rules|guidelines|instructions|programming|polic(?:y|ies)"
              rf"|restrictions)\b"),
        *multilingual.matchers("disregard_rules"),
    )),
    ThreatPattern("bypass_restrictions", "asks the model to act as if it had no restrictions", (
        regex(rf"\b(?:act|behave|respond|answer|pretend|imagine){W}(?:{_WORD}){{0,6}}?(?:no"
              rf"|without|free{W}of|zero|don'?t{W}have|do{W}not{W}have){W}(?:any{W})?(?:{_WORD})?"
              rf"{_LIMITS}\b",
              rf"\b(?:ai|assistant|model|chatbot|bot|llm|agent){W}(?:{_WORD})?(?:without"
              rf"|with{W}no|free{W}of|that{W}has{W}no|who{W}has{W}no){W}(?:any{W})?"
              rf"(?:{_WORD})?{_LIMITS}\b",
              rf"\b(?:developer|god|jailbreak|jailbroken|dan|unrestricted|unfiltered){W}mode{W}"
              rf"(?:is{W})?(?:now{W})?(?:enabled|activated|on|engaged|unlocked)\b",
              rf"\b(?:safety|content|ethical|moderation){W}(?:{_WORD})?(?:filters?|checks?"
              rf"|guidelines|polic(?:y|ies)|rules|restrictions|protocols){W}(?:are|is|have"
              rf"{W}been|were){W}(?:now{W})?(?:disabled|suspended|lifted|removed|off|turned"
              rf"{W}off|deactivated|void)\b",
              rf"\b(?:disable|turn{W}off|bypass|circumvent|ignore|deactivate|violate)"
              rf"{W}(?:(?:the|your|all|any|\w{{1,12}}'s){W})?(?:safety|content|usage|moderation)"
              rf"{W}(?:filters?|checks?|guidelines|polic(?:y|ies)|rules)\b",
              rf"\byou{W}(?:now{W})?have{W}no{W}(?:more{W})?{_LIMITS}\b"),
        *multilingual.matchers("bypass_restrictions"),
    )),
    ThreatPattern("unsafe_agent_action", "tells an AI agent reading the text to skip review, "
                  "push to main or tell the user the tests pass", (
        _unsafe_agent_action,
    )),
    ThreatPattern("html_comment_injection", "hides instructions in an HTML comment",
                  (_html_comment,)),
    ThreatPattern("hidden_div", "hides text in an invisible HTML element", (_hidden_element,)),
    ThreatPattern("translate_execute", "asks to translate or decode text and then execute it", (
        window(r"\b(?:translate|convert|decode|decrypt|deobfuscate)\b",
               r"\binto\W{1,4}(?:\w{1,12}\W{1,4}){0,2}(?:bash|shell|python|code|commands?"
               r"|powershell|sh|zsh|javascript|js|sql|ruby|perl|scripts?)\b",
               r"\b(?:and|then)\W{1,4}(?:\w{1,10}\W{1,4})?(?:execute|run|eval|evaluate)\b",
               span=200),
        window(r"\b(?:decode|decrypt|deobfuscate|unescape|base64\W{0,3}-d)\b",
               r"\b(?:and|then|\|)\W{1,4}(?:\w{1,10}\W{1,4})?(?:execute|eval|run\W{1,3}it"
               r"|sh|bash)\b", span=120),
    )),
    ThreatPattern("exfil_curl", "sends secrets, files or the environment out with a command",
                  (exfil.exfil_command,)),
    ThreatPattern("read_secrets", "reads a credentials file", (
        window(r"(?:^|(?<=[\s|;&(`$]))(?:cat|less|more|head|tail|bat|strings|xxd|base64|type"
               r"|get-content|gc|od|hexdump|tac)(?=\s)", exfil.SENSITIVE, span=160),
        window(r"\b(?:contents?|print|show|output|include|paste|display|reveal|dump)\b",
               exfil.SENSITIVE, span=60),
    )),
    # Beyond the seed.
    ThreatPattern("role_hijack", "tries to give the model a new identity or fake a chat turn", (
        regex(rf"\byou{W}are{W}(?:now{W}(?:in{W})?(?:(?:a|an|the){W})?(?:\w{{1,15}}{W})?"
              rf"(?:mode|dan|jailbroken|unrestricted|unfiltered|uncensored|\w{{0,10}}gpt"
              rf"|\w{{0,10}}bot)\b|now{W}(?:a|an){W}|no{W}longer{W}\w)",
              rf"\bfrom{W}(?:now{W}on|this{W}(?:point|message|moment|turn)(?:{W}(?:on|onwards"
              rf"|forward))?|here{W}on|now)"
              rf"{W}you{W}(?:are|will{W}be|'re|shall{W}be){W}(?:now{W})?(?:a|an|my|no{W}longer"
              rf"|dan|jailbroken|unrestricted|unfiltered|\W{{0,3}}\w{{0,10}}(?:gpt|bot)\b)",
              rf"\b(?:your|the){W}new{W}(?:task|instructions?|role|goal|objective|purpose"
              rf"|directive|identity)\W{{0,3}}(?:is\b|are\b|:)",
              rf"\bnew{W}(?:system{W})?instructions?\W{{0,3}}:",
              rf"\byour{W}(?:real|true|actual|new|updated){W}(?:instructions|orders|task"
              rf"|directives)\W{{1,3}}(?:are|follow|begin|start|below)\b",
              r"<\|im_start\|>|<\|im_end\|>|<\|(?:system|assistant|user|endoftext)\|>"
              r"|\[/?inst\]|<</?sys>>|<\W{0,2}/?\W{0,2}system\W{0,2}>",
              rf"\[\W{{0,2}}system{W}(?:override|message|note|prompt|instruction)s?\W{{0,2}}\]"),
        *multilingual.matchers("role_hijack"),
    )),
    ThreatPattern("sys_prompt_leak", "asks the model to reveal its system prompt or instructions", (
        regex(rf"\b(?:reveal|print|output|show|repeat|display|leak|dump|disclose|expose|share"
              rf"|recite|write{W}out|give{W}me|tell{W}me|send{W}me|what{W}(?:are|is|were))"
              rf"{W}(?:me{W})?(?:your|its){W}(?:{_WORD}){{0,2}}?(?:system{W}?prompt|system"
              rf"{W}(?:message|instructions)|instructions|initial{W}prompt|prompt|rules"
              rf"|guidelines|directives|configuration)\b",
              rf"\b(?:reveal|print|output|show|display|leak|dump|disclose|expose)"
              rf"{W}(?:the|this){W}(?:full|entire|complete|exact|original|initial|hidden"
              rf"|secret|whole|raw){W}(?:{_WORD})?(?:system{W}?prompt|instructions|prompt)\b",
              rf"\brepeat{W}(?:everything|all|the{W}(?:text|words|lines|instructions|content)"
              rf"|what{W}(?:is|was){W}written){W}(?:{_WORD}){{0,2}}?(?:above|before)\b"),
        *multilingual.matchers("sys_prompt_leak"),
    )),
    ThreatPattern("hidden_secret", "asks the model to act in secret from the user", (
        regex(rf"\bwithout{W}(?:the{W}user|them|anyone|the{W}(?:human|owner|operator))"
              rf"{W}(?:\w{{1,10}}{W})?(?:knowing|noticing|seeing|realizing|realising|being"
              rf"{W}(?:aware|told|informed))\b",
              rf"\bkeep{W}(?:this|it|these|the){W}(?:{_WORD})?(?:a{W})?(?:secret|hidden"
              rf"|confidential){W}from{W}(?:the{W}user|them|the{W}human|everyone)\b",
              rf"\b(?:secretly|silently|quietly|covertly|stealthily|discreetly|invisibly)"
              rf"{W}(?:\w{{1,10}}{W})?(?:send|upload|post|forward|copy|run|execute|add"
              rf"|include|push|email|exfiltrate|delete|remove|modify|install|append|transmit"
              rf"|share|leak)\b"),
    )),
    ThreatPattern("exfil_url", "sends conversation data, files or secrets to a URL", (
        exfil.exfil_instruction,
        *multilingual.matchers("exfil_url"),
    )),
    ThreatPattern("exfil_markdown_image", "builds an image URL that would carry data out when "
                  "rendered", (images.exfil_image,)),
    ThreatPattern("secret_material",
                  "contains what looks like a credential (API key, token, private key)", (
        regex(r"-----begin[a-z ]{0,30}private key-----"
              r"|\bsk-(?:proj-|ant-)?[a-z0-9_\-]{20,200}"
              r"|\bakia[0-9a-z]{16}\b|\bgh[pousr]_[a-z0-9]{36,100}"
              r"|\bxox[baprs]-[a-z0-9-]{10,100}|\baiza[0-9a-z_\-]{35}\b"),
    ), scopes=("strict",)),
)

# Ids a finding can carry: the patterns, plus the checks that are not patterns.
PATTERN_IDS: tuple[str, ...] = (*(p.id for p in PATTERNS), "invisible_unicode", "scan_limit")
