"""Where a model's API key and base URL come from: config, then the environment.

The key itself never lives in ``config.yaml``; the config may only *name* the variable
that holds it (``model.api_key_env``). The search order is that variable, then
``MNEMO_API_KEY``, then the provider's usual variable: ``OPENROUTER_API_KEY`` for an
OpenRouter URL, ``ANTHROPIC_API_KEY`` for the Anthropic API, ``OPENAI_API_KEY`` for
OpenAI itself (no base URL, or ``api.openai.com``). A provider's key only goes to that
provider: any other endpoint (a self-hosted server, Together, DeepSeek …) gets only the
variable named in ``api_key_env`` or ``MNEMO_API_KEY`` — keys the user pointed there.
``MNEMO_BASE_URL`` replaces the configured base URL of the main model.

The environment is read when these functions are called, never at import.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = [
    "BASE_URL_ENV",
    "KEY_ENV",
    "ApiKey",
    "effective_base_url",
    "find_api_key",
    "key_candidates",
]

KEY_ENV = "MNEMO_API_KEY"
BASE_URL_ENV = "MNEMO_BASE_URL"


@dataclass(frozen=True)
class ApiKey:
    """A key and the variable it was read from (reported; the key never is)."""

    value: str
    source: str

    def __repr__(self) -> str:
        return f"ApiKey(source={self.source!r}, value='***')"


def _host(base_url: str) -> str:
    return (urlsplit(base_url.strip()).hostname or "").lower()


def _is_openrouter(base_url: str) -> bool:
    host = _host(base_url)
    return host == "openrouter.ai" or host.endswith(".openrouter.ai")


def _is_openai(base_url: str) -> bool:
    return not base_url.strip() or _host(base_url) == "api.openai.com"


def key_candidates(*, api_key_env: str = "", base_url: str = "", api: str = "openai") -> list[str]:
    """The environment variables searched for a key, in order."""
    names = [api_key_env.strip()] if api_key_env.strip() else []
    names.append(KEY_ENV)
    if api == "anthropic":
        if not base_url.strip() or _host(base_url) == "api.anthropic.com":
            names.append("ANTHROPIC_API_KEY")
    elif _is_openrouter(base_url):
        names.append("OPENROUTER_API_KEY")
    elif _is_openai(base_url):
        names.append("OPENAI_API_KEY")
    return list(dict.fromkeys(names))


def find_api_key(
    *,
    api_key_env: str = "",
    base_url: str = "",
    api: str = "openai",
    environ: Mapping[str, str] | None = None,
) -> ApiKey | None:
    """The first non-empty key in ``key_candidates`` order, or ``None``."""
    env = os.environ if environ is None else environ
    for name in key_candidates(api_key_env=api_key_env, base_url=base_url, api=api):
        value = env.get(name, "").strip()
        if value:
            return ApiKey(value, name)
    return None


def effective_base_url(configured: str, environ: Mapping[str, str] | None = None) -> str:
    """``$MNEMO_BASE_URL`` if set, else the configured base URL ("" = provider default)."""
    env = os.environ if environ is None else environ
    override = env.get(BASE_URL_ENV, "").strip()
    return (override or configured).strip()
