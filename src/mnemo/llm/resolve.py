"""Which model mnemo talks to, decided from the config and the environment (A2).

``resolve_model_choice`` decides without starting or contacting anything — ``mnemo
models`` and ``mnemo doctor`` show its answer — and ``resolve_chat_client`` turns the
choice into a client. The rules, in order, for the **main** model:

1. a base URL (``model.base_url`` or ``$MNEMO_BASE_URL``) → that OpenAI-compatible (or,
   with ``model.api: anthropic``, Anthropic) endpoint; a key is sent if one is found;
2. ``model.path`` → the embedded local model serving that GGUF file;
3. ``model.name`` → the provider's own API (OpenAI, or Anthropic), which needs a key;
4. the local extra installed → the embedded default model;
5. otherwise ``ModelUnavailableError`` naming the two ways to get a model.

The **auxiliary** model (the summariser) uses ``auxiliary.base_url`` if set; else a model
name from ``context.summary_model_override`` or ``auxiliary.name`` on the main model's
endpoint; else the main model itself. It always uses ``auxiliary.timeout``.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from mnemo.config import MnemoConfig
from mnemo.config.secrets import mask_url
from mnemo.errors import ModelUnavailableError
from mnemo.home import Home
from mnemo.llm.credentials import effective_base_url, find_api_key, key_candidates
from mnemo.llm.local_model import (
    LOCAL_INSTALL_HINT,
    default_model_path,
    local_model_name,
    local_runtime_installed,
    local_weights_installed,
)
from mnemo.llm.types import ChatClient

__all__ = [
    "ModelChoice",
    "Role",
    "client_for_choice",
    "resolve_chat_client",
    "resolve_model_choice",
]

Role = Literal["main", "auxiliary"]

_NO_MODEL = (
    "no model is available: configure an OpenAI-compatible endpoint (model.base_url "
    "and/or model.name in config.yaml, with its key in $OPENAI_API_KEY or $MNEMO_API_KEY), "
    f"or install the embedded local model with {LOCAL_INSTALL_HINT}"
)


@dataclass(frozen=True)
class ModelChoice:
    """The model a role will use and where it lives; never holds a key itself.

    ``kind`` is ``endpoint`` (a server reached over HTTP) or ``local`` (the embedded
    model). ``base_url`` empty means the provider's default URL. ``key_source`` names the
    variable the key will be read from ("" = none found). ``problem`` is set when the
    choice cannot work as configured (a missing key); ``resolve_chat_client`` raises it.
    """

    role: Role
    kind: Literal["endpoint", "local"]
    model: str
    api: Literal["openai", "anthropic"] = "openai"
    base_url: str = ""
    key_source: str = ""
    api_key_env: str = ""
    context_length: int | None = None
    timeout: float = 120.0
    max_retries: int = 3
    max_tokens: int | None = None
    temperature: float | None = None
    model_path: Path | None = None  # local: the GGUF (None before the default is set up)
    default_model: bool = False  # local: the packaged default model
    ready: bool = True  # local: the GGUF file exists now
    threads: int = 0
    startup_timeout: float = 120.0
    reason: str = ""  # why this model was chosen, for humans
    problem: str = ""

    @property
    def endpoint(self) -> str:
        """Where requests go, for display."""
        if self.kind == "local":
            return "embedded llama.cpp server on 127.0.0.1 (started on first use)"
        if self.base_url:
            return mask_url(self.base_url)  # a key in the URL is never displayed
        return ("https://api.anthropic.com (default)" if self.api == "anthropic"
                else "https://api.openai.com/v1 (default)")

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["model_path"] = str(self.model_path) if self.model_path else None
        data["endpoint"] = self.endpoint
        data["base_url"] = mask_url(self.base_url) if self.base_url else self.base_url
        return data


def _local_choice(config: MnemoConfig, home: Home, role: Role, reason: str) -> ModelChoice:
    custom = config.model.path.strip()
    path = Path(custom).expanduser() if custom else default_model_path(home)
    problem = ""
    if not local_runtime_installed():
        problem = f"the local model needs the local extra: {LOCAL_INSTALL_HINT}"
    elif not custom and not local_weights_installed() and not path.is_file():
        problem = f"the default model's files are not installed: {LOCAL_INSTALL_HINT}"
    elif custom and not path.is_file():
        problem = f"model.path {path} does not exist; fix it in config.yaml"
    return ModelChoice(
        role=role,
        kind="local",
        model=local_model_name(path if custom else None),
        context_length=config.local.context_length,
        timeout=config.model.timeout,
        max_retries=1,
        max_tokens=config.model.max_tokens,
        temperature=config.model.temperature,
        model_path=path,
        default_model=not custom,
        ready=path.is_file(),
        threads=config.local.threads,
        startup_timeout=config.local.startup_timeout,
        reason=reason,
        problem=problem,
    )


def _endpoint_choice(
    role: Role,
    *,
    model: str,
    api: Literal["openai", "anthropic"],
    base_url: str,
    api_key_env: str,
    environ: Mapping[str, str],
    reason: str,
    **settings: Any,
) -> ModelChoice:
    key = find_api_key(api_key_env=api_key_env, base_url=base_url, api=api, environ=environ)
    problem = ""
    # A server of one's own (a base URL) may need no key; a provider's default API does.
    if key is None and (not base_url or api == "anthropic"):
        where = " or $".join(key_candidates(api_key_env=api_key_env, base_url=base_url, api=api))
        problem = (f"no API key found for {model or 'the model'} (looked in ${where}); "
                   "export the key, or set model.base_url for a server that needs none")
    if api == "anthropic" and importlib.util.find_spec("anthropic") is None:
        problem = ('model.api is "anthropic" but its SDK is not installed; '
                   'pip install "mnemo[anthropic]"')
    return ModelChoice(
        role=role, kind="endpoint", model=model or "default", api=api, base_url=base_url,
        key_source=key.source if key else "", api_key_env=api_key_env, reason=reason,
        problem=problem, **settings,
    )


def _main_choice(config: MnemoConfig, home: Home, environ: Mapping[str, str]) -> ModelChoice:
    m = config.model
    base_url = effective_base_url(m.base_url, environ)
    settings = {"context_length": m.context_length, "timeout": m.timeout,
                "max_retries": m.max_retries, "max_tokens": m.max_tokens,
                "temperature": m.temperature}
    if base_url:
        from_env = bool(environ.get("MNEMO_BASE_URL", "").strip())
        source = "$MNEMO_BASE_URL" if from_env else "model.base_url"
        return _endpoint_choice("main", model=m.name, api=m.api, base_url=base_url,
                                api_key_env=m.api_key_env, environ=environ,
                                reason=f"{source} is set", **settings)
    if m.path.strip():
        return _local_choice(config, home, "main", "model.path is set")
    if m.name.strip():
        return _endpoint_choice("main", model=m.name, api=m.api, base_url="",
                                api_key_env=m.api_key_env, environ=environ,
                                reason="model.name is set", **settings)
    if local_runtime_installed() and (local_weights_installed()
                                      or default_model_path(home).is_file()):
        return _local_choice(config, home, "main",
                             "no endpoint configured; the local extra is installed")
    raise ModelUnavailableError(_NO_MODEL)


def _auxiliary_choice(config: MnemoConfig, home: Home, environ: Mapping[str, str]) -> ModelChoice:
    a = config.auxiliary
    name = config.context.summary_model_override.strip() or a.name.strip()
    settings = {"timeout": a.timeout, "max_retries": config.model.max_retries,
                "temperature": 0.0}
    if a.base_url.strip():
        return _endpoint_choice(
            "auxiliary", model=name or config.model.name, api="openai",
            base_url=a.base_url.strip(), api_key_env=a.api_key_env, environ=environ,
            reason="auxiliary.base_url is set", context_length=a.context_length, **settings)
    try:
        main: ModelChoice | None = _main_choice(config, home, environ)
    except ModelUnavailableError:
        if not name:
            raise
        main = None
    if name:
        field = ("context.summary_model_override"
                 if config.context.summary_model_override.strip() else "auxiliary.name")
        on_endpoint = main is not None and main.kind == "endpoint"
        return _endpoint_choice(
            "auxiliary", model=name,
            api=main.api if main is not None and on_endpoint else "openai",
            base_url=main.base_url if main is not None and on_endpoint else "",
            api_key_env=a.api_key_env or config.model.api_key_env, environ=environ,
            reason=f"{field} is set (on the main model's endpoint)",
            context_length=a.context_length, **settings)
    assert main is not None
    return replace(
        main, role="auxiliary", timeout=a.timeout, temperature=0.0,
        context_length=a.context_length or main.context_length,
        reason=f"same as the main model ({main.reason})",
    )


def resolve_model_choice(
    config: MnemoConfig,
    *,
    home: Home | None = None,
    role: Role = "main",
    environ: Mapping[str, str] | None = None,
) -> ModelChoice:
    """The model ``role`` will use, decided from config and environment; starts nothing.

    Raises ``ModelUnavailableError`` when no model can be had at all. A choice that is
    made but cannot work (a missing key) comes back with ``problem`` set.
    """
    env = os.environ if environ is None else environ
    home = home or Home()
    if role == "main":
        return _main_choice(config, home, env)
    if role == "auxiliary":
        return _auxiliary_choice(config, home, env)
    raise ValueError(f"unknown model role {role!r}; use 'main' or 'auxiliary'")


def client_for_choice(
    choice: ModelChoice,
    *,
    home: Home | None = None,
    environ: Mapping[str, str] | None = None,
) -> ChatClient:
    """A client for ``choice`` (a local model is started on its first call, not here)."""
    if choice.problem:
        raise ModelUnavailableError(choice.problem)
    if choice.kind == "local":
        from mnemo.llm.local_client import LocalChatClient

        return LocalChatClient(
            None if choice.default_model else choice.model_path,
            home=home or Home(),
            context_length=choice.context_length or 8192,
            threads=choice.threads,
            startup_timeout=choice.startup_timeout,
            timeout=choice.timeout,
            max_tokens=choice.max_tokens,
            temperature=choice.temperature,
        )
    key = find_api_key(api_key_env=choice.api_key_env, base_url=choice.base_url,
                       api=choice.api, environ=os.environ if environ is None else environ)
    common: dict[str, Any] = {
        "base_url": choice.base_url,
        "api_key": key.value if key else None,
        "key_source": key.source if key else "",
        "timeout": choice.timeout,
        "max_retries": choice.max_retries,
        "context_length": choice.context_length,
        "max_tokens": choice.max_tokens,
        "temperature": choice.temperature,
    }
    if choice.api == "anthropic":
        from mnemo.llm.anthropic_client import AnthropicChatClient

        return AnthropicChatClient(choice.model, **common)
    from mnemo.llm.openai_client import OpenAIChatClient

    return OpenAIChatClient(choice.model, **common)


def resolve_chat_client(
    config: MnemoConfig,
    *,
    home: Home | None = None,
    role: Role = "main",
    environ: Mapping[str, str] | None = None,
) -> ChatClient:
    """The chat client for ``role`` (see the module docstring for the rules).

    Raises ``ModelUnavailableError`` when no model is configured or installed, or the
    chosen one lacks its key.
    """
    choice = resolve_model_choice(config, home=home, role=role, environ=environ)
    return client_for_choice(choice, home=home, environ=environ)
