"""Exfiltration: commands and instructions that send data out (SPEC S3); images: ``images.py``.

The line between "uses a token" and "sends a token elsewhere" is drawn per command:

* a command that carries the environment (``env``, ``printenv``, ``os.environ``), shell
  history, cookies or a credentials file (``~/.ssh/id_rsa``, ``.env``, ``~/.aws/…``,
  mnemo's own memory and archive) to the network is exfiltration wherever it goes;
* a command substitution (``$(…)``, backticks) in a request is exfiltration unless it is
  one of the harmless ones setup docs use (``$(uname -s)``, ``$(date)``, a make
  variable ``$(VERSION)``) or every host is a well-known service;
* a secret-named variable (``$OPENAI_API_KEY``, ``${{ secrets.X }}``) is fine in an
  authentication header or ``-u`` for a well-known host, or a generic one (``$TOKEN``)
  in such a header for any named host; it is exfiltration in a header to a host that is
  not its vendor's, and in data, a form, a query or a URL to a host that is not well
  known;
* uploading a file from the home folder, or anything at all to a known collection
  service (webhook.site, requestbin, …) or a bare IP address, is exfiltration.

A command is a logical line (continuations joined) cut at ``;``, ``&&`` and ``||``, so a
token used by the *next* command of a CI step is not counted against a download; for
Python and JavaScript calls the next lines are read too. Hosts are judged on the text
before the confusable mapping, so a look-alike domain is never taken for a known one.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from functools import cache

from mnemo.security.matchers import compile_pattern, count_anchors, finditer, may_match, window
from mnemo.security.normalise import Form
from mnemo.security.triggers import candidate_ranges, near

__all__ = ["SENSITIVE", "URL_HOST", "exfil_command", "exfil_instruction", "is_sink",
           "is_well_known"]

SENSITIVE = (
    r"(?:\.ssh(?:[\\/](?:id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?|[\w.-]{0,40}(?:key|\.pem))"
    r"(?![\w-]|\.\w)|(?=[\s'\"|)`;.,]|$))"
    r"|\bid_(?:rsa|dsa|ecdsa|ed25519)(?![\w-]|\.\w)"
    r"|\.aws[\\/](?:credentials|config)\b|\.netrc\b|\.pgpass\b|\.git-credentials\b"
    r"|\.docker[\\/]config\.json|\.kube[\\/]config\b|\.npmrc\b|\.pypirc\b"
    r"|\.config[\\/]gh[\\/]hosts\.yml|\.gnupg\b|\.password-store\b"
    r"|(?<![\w.-])\.env\b(?!\.(?:example|sample|template|dist|defaults?)\b)"
    r"|_history\b|(?<![\w.-])\.history\b|/etc/(?:passwd|shadow|sudoers)\b"
    r"|(?:~|\$home|\$\{home\}|\$mnemo_home)[\\/]\.mnemo\b|\.mnemo[\\/](?:memories|state\.db"
    r"|config\.yaml)|\bmemories[\\/](?:memory|user)\.md|\bstate\.db\b"
    r"|\bcookies\.sqlite\b|\blogin\Wdata\b|\bwallet\.dat\b|\bcredentials\.json\b"
    r"|\bsecrets?\.(?:ya?ml|json|txt|env)\b|\bservice[-_]account[\w.-]{0,40}\.json)"
)

# Hosts whose own APIs setup docs and CI scripts call with a token.
_WELL_KNOWN = (
    "github.com", "githubusercontent.com", "gitlab.com", "bitbucket.org", "shields.io",
    "codecov.io", "coveralls.io", "circleci.com", "travis-ci.com", "travis-ci.org",
    "readthedocs.org", "readthedocs.io", "pypi.org", "pythonhosted.org", "npmjs.org",
    "npmjs.com", "docker.com", "docker.io", "quay.io", "ghcr.io", "openai.com",
    "anthropic.com", "openrouter.ai", "mistral.ai", "googleapis.com", "google.com",
    "cohere.ai", "cohere.com", "huggingface.co", "stripe.com", "slack.com",
    "telegram.org", "sentry.io", "honeycomb.io", "datadoghq.com", "amazonaws.com",
    "azure.com", "microsoft.com", "cloudflare.com", "vercel.com", "netlify.com",
    "heroku.com", "fury.io", "sonarcloud.io", "snyk.io", "rustup.rs", "astral.sh",
    "python-poetry.org", "helm.sh", "nodesource.com", "deb.debian.org", "ubuntu.com",
    "localhost", "127.0.0.1", "::1", "atlassian.net", "twilio.com", "sendgrid.com",
    "pagerduty.com", "newrelic.com", "grafana.net", "digitalocean.com", "fly.io",
)
_WELL_KNOWN_SET = frozenset(_WELL_KNOWN)
_LOCAL_SUFFIXES = (".internal", ".local", ".localhost", ".lan", ".corp")
# Services made for catching requests: sending anything there is exfiltration.
_SINKS = ("webhook.site", "requestbin", "pipedream", "ngrok", "transfer.sh", "pastebin",
          "paste.", "burpcollaborator", "interact.sh", "oast.", "hookbin", "beeceptor",
          "requestcatcher", "canarytokens", "ptpb", "termbin", "0x0.st")

# Which vendor a secret's name belongs to, and the hosts that vendor answers on.
_VENDORS: dict[str, tuple[str, ...]] = {
    "openai": ("openai.com",), "anthropic": ("anthropic.com",), "claude": ("anthropic.com",),
    "github": ("github.com", "githubusercontent.com"), "gh": ("github.com",),
    "gitlab": ("gitlab.com",), "aws": ("amazonaws.com",), "stripe": ("stripe.com",),
    "slack": ("slack.com",), "telegram": ("telegram.org",), "hf": ("huggingface.co",),
    "huggingface": ("huggingface.co",), "npm": ("npmjs.org", "npmjs.com"),
    "pypi": ("pypi.org",), "docker": ("docker.io", "docker.com"),
    "openrouter": ("openrouter.ai",), "gemini": ("googleapis.com",),
    "google": ("googleapis.com", "google.com"), "sentry": ("sentry.io",),
    "honeycomb": ("honeycomb.io",), "codecov": ("codecov.io",), "datadog": ("datadoghq.com",),
    "mistral": ("mistral.ai",), "cohere": ("cohere.ai", "cohere.com"),
}

_SENDER = (r"(?<![\w./-])(?:curl|wget|nc|ncat|netcat|socat|telnet|scp|sftp|ftp|rsync"
           r"|invoke-webrequest|invoke-restmethod|iwr|irm|https?\s+(?:post|put|patch|get))\b"
           r"|/dev/(?:tcp|udp)/|\brequests\.(?:post|put|get|patch)\b|\bhttpx\.(?:post|put|get)\b"
           r"|\burlopen\s?\(|\bfetch\s?\(|\baxios\.|\bxmlhttprequest\b|\bsendbeacon\b"
           r"|\bgh\s+gist\s+create\b")
_CODE_SENDER = re.compile(r"requests\.|httpx\.|urlopen|fetch|axios|xmlhttprequest|sendbeacon")
URL_HOST = re.compile(r"\bhttps?://(?:[^\s/@'\"]{0,100}@)?([^\s/?#:'\"\\)]{1,253})")
_REMOTE = re.compile(r"(?:\b[\w.-]{1,64}@)?\b([a-z0-9][\w.-]{0,252}):(?:/|~|\s|$)")
_NC_HOST = re.compile(r"\b(?:nc|ncat|netcat|telnet)\s+(?:-\w+\s+){0,4}([\w.-]{1,253})\s+\d")
_DEV_TCP = re.compile(r"/dev/(?:tcp|udp)/([\w.-]{1,253})/")
_VAR = re.compile(r"\$\{\{\s{0,3}(?:secrets|env)\.(\w{1,80})|\$\{(\w{1,80})|\$(\w{1,80})"
                  r"|\$\(([\w.]{1,80})\)|os\.environ\[['\"](\w{1,80})|os\.getenv\(['\"](\w{1,80})"
                  r"|os\.environ\.get\(['\"](\w{1,80})|process\.env\.(\w{1,80})"
                  r"|\$env:(\w{1,80})")
_SECRET_NAME = re.compile(r"key|token|secret|pass(?:word|wd)?|pwd|cred|auth|session|cookie"
                          r"|private")
# Backticks count only inside an argument (``?d=`cat x```): in Markdown they mark code.
_SUBST = re.compile(r"\$\(([^()\n]{0,200})\)|(?<=[=/\"':])`([^`\n]{1,200})`")
_HARMLESS_SUBST = re.compile(
    r"\s{0,3}(?:uname|arch|date|lsb_release|dpkg\s+--print-architecture|nproc|go\s+env"
    r"|rustc\s+--version|git\s+(?:rev-parse|describe|tag|branch)|python3?\s+--version"
    r"|node\s+-v|cat\s+(?:\w{0,20}version\w{0,10}(?:\.txt)?|\.nvmrc|\.tool-versions)"
    r"|whoami\s*$|id\s+-u|pwd)\b")
_ENV_DUMP = re.compile(r"(?:^|[|;&(`]\s{0,3}|\$\(\s{0,3})(?:env|printenv|set|export\s+-p)\b"
                       r"(?!\s*[=:])|\bos\.environ\b(?!\s*[\[.])|\bprocess\.env\b(?!\s*[\[.])"
                       r"|\bget-childitem\s+env:|\bgci\s+env:|\bdocument\.cookie\b"
                       r"|\blocalstorage\b|(?:^|[|;&(]\s{0,3})history\b")
_AUTH_ARG = re.compile(r"(?:-h|--header)\s{0,3}['\"]?\s{0,3}(?:authorization|x-api-key|api-key"
                       r"|x-auth-token|private-token|job-token|[\w-]{0,30}-team|x-[\w-]{0,30}"
                       r"key)\s{0,3}:|\s(?:-u|--user)\s|headers\s{0,3}=|\bbearer\b|\btoken\s"
                       r"|-credential\b")
_HEADER_ARG = re.compile(r"(?:-h|--header)\s{0,3}['\"]?[\w-]{1,40}\s{0,3}:")
_UPLOAD = re.compile(r"(?:-f|--form)\s{0,3}['\"]?[\w.-]{0,40}=@\s{0,3}['\"]?([^\s'\";]{1,300})"
                     r"|(?:-d|--data(?:-binary|-raw|-urlencode)?)\s{0,3}['\"]?@([^\s'\";]{1,300})"
                     r"|(?:-t|--upload-file)\s{1,3}['\"]?([^\s'\";]{1,300})"
                     r"|--(?:post|body)-file[= ]\s{0,3}['\"]?([^\s'\";]{1,300})"
                     r"|-infile\s{1,3}['\"]?([^\s'\";]{1,300})")
_HOME = re.compile(r"^(?:~|\$home|\$\{home\}|%userprofile%|\$env:userprofile|/home/|/users/"
                   r"|/root\b|/etc/)")
_SPLIT = re.compile(r"\s(?:&&|\|\|)\s|;\s|\n")
_BARE_LOCAL = re.compile(r"(?<![\w./-])(localhost|127\.0\.0\.1)(?::\d{1,5})?\b")
_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")


@cache
def is_well_known(host: str) -> bool:
    """True for a service whose API people call with their own token (and local hosts)."""
    host = host.lower().rstrip(".")
    if not host.isascii():
        return False
    if host.endswith(_LOCAL_SUFFIXES):
        return True
    labels = host.split(".")  # the host and each parent domain, one set look-up each
    return any(".".join(labels[i:]) in _WELL_KNOWN_SET for i in range(len(labels)))


def is_sink(host: str) -> bool:
    host = host.lower()
    return (bool(_IP.match(host)) and not host.startswith("127.")) or any(
        s in host for s in _SINKS)


def _vendor_of(name: str) -> tuple[str, ...] | None:
    for part in name.lower().split("_"):
        if part in _VENDORS:
            return _VENDORS[part]
    return None


# Literals a match of a costly regex must hold: checked first with ``in`` (C speed).
_HOST_LITERALS = ((_NC_HOST, ("nc", "telnet")), (_DEV_TCP, ("/dev/",)),
                  (_BARE_LOCAL, ("localhost", "127.0.0.1")))
_ENV_LITERALS = ("env", "set", "export", "history", "cookie", "localstorage")


def _hosts(command: str, raw: str) -> list[str]:
    """Hosts the command talks to; ``raw`` is the same command before confusable mapping
    (a host with a look-alike letter is kept as written, so it is never "well known")."""
    hosts = [m.group(1) for m in URL_HOST.finditer(raw)]
    if not hosts:
        hosts = [m.group(1) for m in URL_HOST.finditer(command)]
    for pattern, literals in _HOST_LITERALS:
        if any(literal in command for literal in literals):  # C-speed guard
            hosts.extend(m.group(1) for m in pattern.finditer(command))
    if any(tool in command for tool in ("scp", "rsync", "sftp")) and re.search(
            r"\b(?:scp|rsync|sftp)\b", command):
        hosts.extend(m.group(1) for m in _REMOTE.finditer(command) if "." in m.group(1)
                     or "@" in m.group(0))
    return list(dict.fromkeys(hosts))  # each host judged once


def _command_is_exfil(command: str, raw: str) -> bool:
    hosts = _hosts(command, raw)
    known = bool(hosts) and all(is_well_known(h) for h in hosts)
    if any(is_sink(h) for h in hosts) and (
            re.search(r"\s-(?:d|f|t)\b|--data|--form|--upload|--post|-body|\$|@", command)):
        return True
    if next(finditer(SENSITIVE, command), None) is not None or (
            any(word in command for word in _ENV_LITERALS)
            and next(finditer(_ENV_DUMP.pattern, command), None) is not None):
        return not (hosts and all(h.startswith(("localhost", "127.")) for h in hosts))
    for match in _UPLOAD.finditer(command):
        path = next(g for g in match.groups() if g)
        if _HOME.match(path) and not known:
            return True
    for match in _SUBST.finditer(command) if "$(" in command or "`" in command else ():
        inner = match.group(1) if match.group(1) is not None else match.group(2)
        if re.fullmatch(r"[\w.]{1,80}", inner):
            continue  # a make or pipeline variable: $(VERSION), $(Build.SourceVersion)
        if not _HARMLESS_SUBST.match(inner) and not known:
            return True
    for match in _VAR.finditer(command):
        name = next(g for g in match.groups() if g)
        if not _SECRET_NAME.search(name):
            continue
        vendor = _vendor_of(name)
        line_start = command.rfind("\n", 0, match.start()) + 1
        before = command[max(line_start, match.start() - 80):match.start()]
        in_auth = bool(_AUTH_ARG.search(before))
        in_header = in_auth or bool(_HEADER_ARG.search(before))
        if vendor is not None and hosts:
            if not all(is_well_known(h) for h in hosts):
                return True
            continue
        if in_header and (in_auth or known):
            continue
        if hosts and not known:
            return True
    return False


_MAX_CONTINUED = 30  # lines one command may span
_CODE_LINES = 6  # lines after a code call (``requests.post(``) read as its arguments
_CONTEXT = 2000  # characters of a command read on either side of its sender

# Triggers: what a command must hold to be exfiltration (see ``_command_is_exfil``), each
# a superset found in one pass over the whole text (``triggers.py``).
_ENV_WORDS = re.compile(r"\b(?:env|printenv|set|export|history)\b|os\.environ|process\.env"
                        r"|document\.cookie|localstorage")
_SUBST_START = re.compile(r"\$\(|[=/\"':]`")
_SINK_OR_IP = re.compile("|".join(re.escape(s) for s in _SINKS)
                         + r"|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}")
_HOSTISH = re.compile(r"://|\b(?:nc|ncat|netcat|telnet|scp|sftp|rsync|localhost)\b"
                      r"|/dev/(?:tcp|udp)/|127\.0\.0\.1")


def _triggers(text: str) -> list[int]:
    """Offsets of everything that can make a command exfiltration; a command holding
    none of them is not analysed. A secret-like word counts only near a host."""
    found = [m.start() for m in finditer(SENSITIVE, text)]
    for pattern in (_ENV_WORDS, _SUBST_START, _SINK_OR_IP):  # one C pass each
        found.extend([m.start() for m in pattern.finditer(text)])
    found.extend(m.start() for m in _UPLOAD.finditer(text)
                 if _HOME.match(next(g for g in m.groups() if g)))
    # Every secret-named variable holds one of these words (and so does some prose).
    secret_vars = [m.start() for m in _SECRET_NAME.finditer(text)]
    if secret_vars:
        hosts = [m.start() for m in _HOSTISH.finditer(text)]
        found.extend(v for v in secret_vars if near(hosts, v, 3 * _CONTEXT, 3 * _CONTEXT))
    return sorted(found)


def _line_findings(line: str, plain: str, sender: re.Pattern[str],
                   verdicts: dict[tuple[str, str], bool]) -> list[tuple[int, int]]:
    """The findings of a line that is a whole command group by itself (not continued,
    no code call, shorter than ``_CONTEXT``): what ``exfil_command`` would find there,
    as offsets into the line. Computed once per distinct line."""
    found_here: list[tuple[int, int]] = []
    done_to = -1
    for found in sender.finditer(line):
        if found.start() < done_to:
            continue
        cut_before = max((m.end() for m in _SPLIT.finditer(line, 0, found.start())),
                         default=0)
        after = _SPLIT.search(line, found.end())
        done_to = cut_after = after.start() if after else len(line)
        key = (line[cut_before:cut_after], plain[:3 * _CONTEXT])
        if key not in verdicts:
            verdicts[key] = _command_is_exfil(*key)
        if verdicts[key]:
            found_here.append((found.start(), cut_after))
    return found_here


def exfil_command(form: Form) -> Iterator[tuple[int, int]]:
    """Commands (shell, PowerShell, Python, JavaScript) that send secrets or files out.

    Only the lines around a trigger are read for senders (``_triggers``); each command
    is analysed once and at most ``_CONTEXT`` characters either side of its sender; a
    command, or a line that is a command group by itself, repeated word for word is
    judged once. A 64 KiB file of ``curl`` lines, or one line of ``curl curl curl …``,
    costs a few passes of C regex code and a dictionary look-up per line.
    """
    text, starts = form.text, form.line_starts
    sender = compile_pattern(_SENDER)
    if not may_match(_SENDER, text):  # no sender's literal: str searches only
        return
    ranges = candidate_ranges(
        form, _triggers(text), lambda: [m.start() for m in finditer(_SENDER, text)],
        count_anchors(_SENDER, text), max_continued=_MAX_CONTINUED, code_lines=_CODE_LINES,
        reach=3 * _CONTEXT)
    has_code = _CODE_SENDER.search(text) is not None
    verdicts: dict[tuple[str, str], bool] = {}
    lines: dict[tuple[str, str], list[tuple[int, int]]] = {}
    located: list[re.Match[str]] | None = None
    located_starts: list[int] = []
    done_to = -1
    for low, high in ranges:
        for number in range(form.line_of(low), form.line_of(high) + 1):
            line_start = starts[number - 1]
            line_end = starts[number] - 1 if number < len(starts) else len(text)
            if (done_to <= line_start and line_end - line_start <= _CONTEXT
                    and not form.continued[number - 1]
                    and not (has_code and _CODE_SENDER.search(text, line_start, line_end))):
                # A command group of its own: judged as a whole line, once per text.
                key = (text[line_start:line_end], form.plain_lines[number - 1])
                if key not in lines:
                    lines[key] = _line_findings(*key, sender, verdicts)
                for rel_start, rel_end in lines[key]:
                    yield line_start + rel_start, line_start + rel_end
                done_to = line_end
                continue
            if located is None:  # every sender, found once from its literals
                located = list(finditer(_SENDER, text))
                located_starts = [m.start() for m in located]
            i = bisect_left(located_starts, max(line_start, done_to))
            while i < len(located) and located_starts[i] < line_end:
                found = located[i]
                done_to, exfil = _judge(form, found, verdicts)
                if exfil:
                    yield found.start(), done_to
                i = bisect_left(located_starts, done_to, i + 1)  # past this command


def _judge(form: Form, found: re.Match[str],
           verdicts: dict[tuple[str, str], bool]) -> tuple[int, bool]:
    """Where the command of sender ``found`` ends, and whether it is exfiltration."""
    text = form.text
    first = form.line_of(found.start())
    last = first
    while (last - first < _MAX_CONTINUED and last - 1 < len(form.continued)
           and form.continued[last - 1]):
        last += 1
    code = _CODE_SENDER.search(found.group()) is not None
    if code:  # a call's arguments, next lines
        last = min(len(form.line_starts), last + _CODE_LINES)
    start = max(form.line_starts[first - 1], found.start() - _CONTEXT)
    end = form.line_starts[last] - 1 if last < len(form.line_starts) else len(text)
    end = min(end, found.end() + _CONTEXT)
    logical = text[start:end].replace("\n", " ")  # continued lines: one command
    raw = "\n".join(form.plain_lines[first - 1:last])
    offset = found.start() - start
    # The command the sender belongs to: cut at ; && || on either side.
    cut_before = max((m.end() for m in _SPLIT.finditer(logical, 0, offset)), default=0)
    after = None if code else _SPLIT.search(logical, found.end() - start)
    cut_after = after.start() if after else len(logical)
    key = (logical[cut_before:cut_after], raw[:3 * _CONTEXT])
    if key not in verdicts:
        verdicts[key] = _command_is_exfil(*key)
    return start + cut_after, verdicts[key]


# Imperative verbs (not "sends", not ``-X POST`` or ``--upload-file`` of a command line).
_VERB = (r"(?<![-/.$])(?<!-x )(?<!--request )\b(?:send|post|upload|forward|email|e-mail|mail"
         r"|exfiltrate|transmit|beacon|leak|share|submit|paste|copy|pipe|include|put|attach"
         r"|append)\b")
# What an agent holds that is worth stealing; not a parameter name (``token=``, ``-token:``).
_OBJECT = (r"(?<![-$.])\b(?:conversations?|chat|transcripts?|dialog(?:ue)?|messages|history"
           r"|memor(?:y|ies)|secrets?|api\W{0,3}keys?|keys|tokens?|credentials?|passwords?"
           r"|passphrases?|environment(?:\W{1,3}variables)?|env\W{1,3}vars?|system\W{0,3}prompt"
           r"|ssh\W{1,3}keys?|private\W{1,3}keys?|cookies?|clipboard|user'?s\W{1,3}(?:data"
           r"|files|messages|input|documents))\b(?!\s{0,2}[=:$@{]|-)|" + SENSITIVE)
# Where it goes: a URL, an e-mail address (found by its "@domain"), a webhook, a query.
_DESTINATION = (r"https?://|@[\w-]{1,63}\.[a-z]{2,}|\bwebhook|\bendpoint\b|\bpastebin\b"
                r"|\bgist\b|\bdiscord\b|\?\w{1,20}=|\bparameter\b|\bquery\W{1,3}string\b"
                r"|\b(?:link|url|image)\b")
_NEGATED = r"\b(?:never|not|n't|no)\W{1,3}(?:\w{1,8}\W{1,3})?"

_send_object = window(_VERB, _OBJECT, _DESTINATION, span=260, unless_before=_NEGATED)
# "collect every token … and include them in a link to https://…"
_object_then_send = window(_OBJECT, _VERB + r"\W{1,3}(?:them|it|these|those|this|that|all)\b",
                           _DESTINATION, span=260)


def exfil_instruction(form: Form) -> Iterator[tuple[int, int]]:
    """Instructions, in prose, to send what the agent holds (history, keys, files) out."""
    yield from _send_object(form)
    yield from _object_then_send(form)
