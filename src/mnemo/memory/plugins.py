"""Memory provider plugins (SPEC P4) and the setup of an agent's ``MemoryManager``.

Providers come from the entry-point group ``mnemo.memory_providers`` (the in-tree
``recall`` provider registers there too) and from ``$MNEMO_HOME/plugins/memory/<name>/``.
``memory.provider`` in config.yaml picks one by name; an unknown name is an error that
lists the installed ones.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from mnemo.config import MnemoConfig
from mnemo.errors import ConfigError, UsageError
from mnemo.home import Home
from mnemo.memory.builtin import BuiltinMemoryProvider
from mnemo.memory.entries import Target
from mnemo.memory.manager import MemoryManager
from mnemo.memory.provider import MemoryProvider
from mnemo.memory.store import MemoryStore
from mnemo.plugins import PluginSpec, discover_plugins, load_plugin_class

__all__ = [
    "PROVIDER_GROUP",
    "ProviderInfo",
    "create_memory_manager",
    "installed_providers",
    "list_providers",
    "load_provider",
]

PROVIDER_GROUP = "mnemo.memory_providers"

log = logging.getLogger("mnemo.memory")


def installed_providers(home: Home | None = None) -> dict[str, PluginSpec]:
    """Every installed provider by name (nothing is imported)."""
    home = home or Home()
    return discover_plugins(PROVIDER_GROUP, home.plugins_dir / "memory")


def load_provider(name: str, home: Home | None = None) -> MemoryProvider:
    """Create the provider called ``name``; an unknown name lists the installed ones."""
    found = installed_providers(home)
    spec = found.get(name)
    if spec is None:
        names = ", ".join(found) or "none"
        raise UsageError(f"unknown memory provider {name!r} (memory.provider in "
                         f"config.yaml); installed: {names}")
    cls = load_plugin_class(spec, MemoryProvider, "memory provider", attribute="PROVIDER")
    try:
        provider: MemoryProvider = cls()
        return provider
    except Exception as exc:
        raise UsageError(f"memory provider {name!r} could not be created: "
                         f"{type(exc).__name__}: {exc}") from exc


@dataclass(frozen=True)
class ProviderInfo:
    name: str
    source: str
    available: bool
    selected: bool
    problem: str = ""


def list_providers(config: MnemoConfig, home: Home | None = None) -> list[ProviderInfo]:
    """Installed providers with their availability, for ``mnemo memory providers``."""
    rows: list[ProviderInfo] = []
    for name, spec in installed_providers(home).items():
        problem = ""
        try:
            available = load_provider(name, home).is_available()
        except Exception as exc:  # a broken plugin is listed with its problem
            available, problem = False, str(exc)
        rows.append(ProviderInfo(name, spec.source, available,
                                 name == config.memory.provider, problem))
    return rows


def create_memory_manager(
    config: MnemoConfig,
    *,
    store: MemoryStore,
    session_id: str,
    home: Home | None = None,
    **init_kwargs: Any,
) -> MemoryManager:
    """A manager with the built-in provider and the configured external one, initialised.

    ``init_kwargs`` (e.g. ``sessions=``, ``platform=``) are passed to every provider's
    ``initialize`` along with ``home``, ``config`` and the provider's own ``settings``.
    """
    home = home or Home()
    manager = MemoryManager()
    enabled: dict[Target, bool] = {"memory": config.memory.memory_enabled,
                                   "user": config.memory.user_profile_enabled}
    targets = tuple(t for t, on in enabled.items() if on)
    if targets:
        manager.add_provider(BuiltinMemoryProvider(store, targets=targets))
    common = {"home": home, "config": config, **init_kwargs}
    manager.initialize_all(session_id, **common)  # the built-in provider
    name = config.memory.provider
    if not name:
        return manager
    provider = load_provider(name, home)  # an unknown name is a config mistake: raise
    if not provider.is_available():
        # A provider missing its key should not stop the agent; say so and go on.
        log.warning("memory provider '%s' is not available here (check its settings and "
                    "keys; see `mnemo memory providers`); continuing without it", name)
        return manager
    try:
        provider.initialize(session_id, settings=config.memory.providers.get(name, {}),
                            **common)
    except (ValueError, TypeError, KeyError) as exc:
        # Settings the user wrote: a typo must be an error, not a provider silently off.
        key = f"memory.providers.{name}"
        raise ConfigError(f"{key}: {exc} (config.yaml)", key=key) from exc
    except Exception as exc:  # anything else is the provider's fault: isolate it
        log.warning("memory provider '%s' failed to initialise (%s: %s); it is disabled for "
                    "this session", name, type(exc).__name__, exc)
        return manager
    manager.add_provider(provider)
    return manager
