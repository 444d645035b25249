"""Keeping keys out of what mnemo prints and logs: URL masking, key-shaped values, excerpts.

Config values reach messages in two ways: a bad value is quoted in a config error, and a
model's ``base_url`` is named in connection errors, log lines and ``mnemo doctor``. Users
put keys in both places — a key pasted into the wrong field, or an endpoint URL that
carries one (``https://user:KEY@host/v1``, ``https://host/v1?api_key=KEY``). So:

* ``mask_url`` / ``mask_urls_in`` hide the password of a URL's userinfo (and a user name
  that looks like a key) and the value of every query parameter whose name or value
  looks secret, keeping the rest readable;
* ``looks_like_key`` recognises a value shaped like a credential;
* ``excerpt`` is how a config error quotes a value: short, on one line, and never a
  key-shaped value.

This module imports nothing of mnemo's, so every layer (the config loader, the model
clients, the log handler, the CLI) can use it.
"""

from __future__ import annotations

import re
import reprlib
from urllib.parse import parse_qsl, urlsplit, urlunsplit

__all__ = ["MASK", "excerpt", "looks_like_key", "mask_url", "mask_urls_in"]

MASK = "***"
_EXCERPT_CHARS = 40
_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxlevel, _SHORT_REPR.maxlist, _SHORT_REPR.maxdict = 2, 4, 4
_SHORT_REPR.maxstring = _SHORT_REPR.maxother = _EXCERPT_CHARS + 20

# Prefixes of the keys people most often paste by mistake (OpenAI, Anthropic, GitHub,
# Slack, AWS, Google, Hugging Face, OpenRouter, generic bearer tokens).
_KEY_PREFIX = re.compile(
    r"^(sk-|sk_|rk_|pk_live|sk_live|ghp_|gho_|ghs_|github_pat_|xox[abposr]-|AKIA|ASIA|AIza|"
    r"hf_|or-|Bearer\s)", re.IGNORECASE)
# A long run of key characters with letters and digits mixed: how random tokens look.
_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.]{20,}")
_SECRET_NAME = re.compile(
    r"(key|token|secret|password|passwd|pwd|auth|sig|signature|credential)", re.IGNORECASE)
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'\"<>`]+")


def looks_like_key(value: object) -> bool:
    """True when ``value`` is text shaped like an API key or token."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    if _KEY_PREFIX.match(text) and len(text) >= 8:
        return True
    if not _TOKEN.fullmatch(text) or "://" in text:
        return False
    letters = sum(c.isalpha() for c in text)
    digits = sum(c.isdigit() for c in text)
    # A path or a sentence-like identifier has separators every few characters; a key
    # is a long unbroken mix of letters and digits.
    longest = max((len(p) for p in re.split(r"[/.\-]", text)), default=0)
    return letters >= 4 and digits >= 4 and longest >= 16


def mask_url(url: str) -> str:
    """``url`` with a userinfo password and secret-looking query values replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK if looks_like_key(url) else url
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user, has_password, _ = userinfo.partition(":")
        shown_user = MASK if looks_like_key(user) or (user and not has_password) else user
        netloc = f"{shown_user}{':' + MASK if has_password else ''}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if pairs:
            query = "&".join(
                f"{name}={MASK}" if _SECRET_NAME.search(name) or looks_like_key(value)
                else (f"{name}={value}" if value or "=" in query else name)
                for name, value in pairs)
        elif looks_like_key(query):
            query = MASK
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def mask_urls_in(text: str) -> str:
    """``text`` with every URL in it passed through ``mask_url``."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: mask_url(m.group(0)), text)


def excerpt(value: object) -> str:
    """How a config error quotes a value: a short one-line repr, never a key."""
    if looks_like_key(value):
        return "a value that looks like a secret key (not shown)"
    if isinstance(value, str) and "://" in value:
        value = mask_urls_in(value)
    # reprlib stops early: a value built by YAML aliases can be huge when written out.
    text = _SHORT_REPR.repr(value)
    if len(text) > _EXCERPT_CHARS or text.endswith(("...]", "...}")):
        kind = type(value).__name__
        size = f"{len(value):,} items" if isinstance(value, list | dict | tuple) else (
            f"{len(value):,} chars" if isinstance(value, str) else kind)
        text = f"{text[:_EXCERPT_CHARS].rstrip('.')}… ({size})"
    return " ".join(text.split())
