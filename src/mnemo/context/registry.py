"""Choosing a context engine by name (C2): entry points and plugin folders.

Engines come from two places:

* the entry-point group ``mnemo.context_engines`` — mnemo registers its own engines there
  (``compressor``, ``lcm``), and any installed package can add more;
* folders ``$MNEMO_HOME/plugins/context_engine/<name>/`` holding an ``__init__.py`` that
  defines ``ENGINE = SomeEngine`` (a ``ContextEngine`` subclass) or exactly one such
  subclass.

Listing engines imports nothing: names come from the package metadata and the folder
names. An engine's code is imported only when it is chosen, so a broken plugin fails
only when selected, with an error that names it. An unknown name is an error that lists
the engines there are — never a silent fall back to the default.
"""

from __future__ import annotations

import logging

from mnemo.config import MnemoConfig
from mnemo.context.engine import ContextEngine, Summarizer
from mnemo.errors import ConfigError, UsageError
from mnemo.home import Home
from mnemo.plugins import PluginSpec, discover_plugins, load_plugin_class

__all__ = [
    "DEFAULT_CONTEXT_LENGTH",
    "DEFAULT_ENGINE",
    "ENTRY_POINT_GROUP",
    "PLUGIN_FOLDER",
    "available_engines",
    "create_engine",
    "default_context_length",
    "load_engine_class",
]

log = logging.getLogger("mnemo.context")

ENTRY_POINT_GROUP = "mnemo.context_engines"
PLUGIN_FOLDER = "context_engine"  # under $MNEMO_HOME/plugins/
DEFAULT_ENGINE = "compressor"
# The window assumed for a named remote model whose context_length is not configured.
DEFAULT_CONTEXT_LENGTH = 128_000

# The built-in engines, so that a source checkout without package metadata still works.
_BUILTIN = {"compressor": "mnemo.context.compressor:ContextCompressor",
            "lcm": "mnemo.context.lcm:LosslessContextEngine"}
_KEY = "context.engine"


def available_engines(home: Home | None = None) -> dict[str, PluginSpec]:
    """Every engine that can be selected, by name, without importing any of them."""
    home = home or Home()
    return discover_plugins(ENTRY_POINT_GROUP, home.plugins_dir / PLUGIN_FOLDER,
                            builtin=_BUILTIN)


def load_engine_class(name: str, *, home: Home | None = None) -> type[ContextEngine]:
    """Import the engine called ``name``; ``ConfigError`` if unknown or broken."""
    engines = available_engines(home)
    spec = engines.get(name)
    if spec is None:
        raise ConfigError(
            f"unknown context engine {name!r}; available: {', '.join(engines)} "
            f"(set {_KEY} to one of them, or add $MNEMO_HOME/plugins/{PLUGIN_FOLDER}/"
            f"{name}/__init__.py)", key=_KEY)
    try:
        engine: type[ContextEngine] = load_plugin_class(spec, ContextEngine, "context engine",
                                                        attribute="ENGINE")
    except UsageError as exc:
        raise ConfigError(f"{exc} ({_KEY} in config.yaml)", key=_KEY) from exc
    return engine


def create_engine(
    config: MnemoConfig,
    *,
    home: Home | None = None,
    summarizer: Summarizer | None = None,
    context_length: int | None = None,
    model: str | None = None,
) -> ContextEngine:
    """The engine ``config.context.engine`` names, built with its ``from_config``.

    ``context_length`` and ``model`` default to the configured main model (see
    ``default_context_length``); an empty engine name means ``compressor``.
    """
    home = home or Home()
    name = config.context.engine.strip() or DEFAULT_ENGINE
    engine_class = load_engine_class(name, home=home)
    return engine_class.from_config(
        config,
        home=home,
        summarizer=summarizer,
        context_length=context_length or default_context_length(config),
        model=config.model.name if model is None else model,
    )


def default_context_length(config: MnemoConfig) -> int:
    """The main model's window: ``model.context_length`` if set; the embedded local
    model's window when no remote model is configured; else 128,000 tokens."""
    if config.model.context_length:
        return config.model.context_length
    if not config.model.name and not config.model.base_url:
        return config.local.context_length
    return DEFAULT_CONTEXT_LENGTH
