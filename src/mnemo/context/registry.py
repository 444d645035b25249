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

import hashlib
import importlib.util
import inspect
import logging
import sys
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from mnemo.config import MnemoConfig
from mnemo.context.engine import ContextEngine, Summarizer
from mnemo.errors import ConfigError
from mnemo.home import Home

__all__ = [
    "DEFAULT_CONTEXT_LENGTH",
    "DEFAULT_ENGINE",
    "ENTRY_POINT_GROUP",
    "PLUGIN_FOLDER",
    "EngineInfo",
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

# The built-in engine, so that a source checkout without package metadata still works.
_BUILTIN = {"compressor": "mnemo.context.compressor:ContextCompressor"}
_KEY = "context.engine"


@dataclass(frozen=True)
class EngineInfo:
    """Where an engine comes from: ``source`` is "entry point" or "plugin folder"."""

    name: str
    source: str
    target: str  # "module:attribute" or the plugin folder


def available_engines(home: Home | None = None) -> dict[str, EngineInfo]:
    """Every engine that can be selected, by name, without importing any of them.

    An entry point wins over a plugin folder of the same name (a folder cannot shadow an
    installed engine; it is logged and ignored).
    """
    found: dict[str, EngineInfo] = {
        name: EngineInfo(name, "entry point", target) for name, target in _BUILTIN.items()
    }
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found[ep.name] = EngineInfo(ep.name, "entry point", ep.value)
    for folder in _plugin_folders(home or Home()):
        if folder.name in found:
            log.warning("context engine plugin folder %s is ignored: an installed engine "
                        "is already called %r", folder, folder.name)
            continue
        found[folder.name] = EngineInfo(folder.name, "plugin folder", str(folder))
    return dict(sorted(found.items()))


def load_engine_class(name: str, *, home: Home | None = None) -> type[ContextEngine]:
    """Import the engine called ``name``; ``ConfigError`` if unknown or broken."""
    engines = available_engines(home)
    info = engines.get(name)
    if info is None:
        raise ConfigError(
            f"unknown context engine {name!r}; available: {', '.join(engines)} "
            f"(set {_KEY} to one of them, or add $MNEMO_HOME/plugins/{PLUGIN_FOLDER}/"
            f"{name}/__init__.py)", key=_KEY)
    if info.source == "plugin folder":
        return _load_folder_plugin(info)
    return _load_entry_point(info)


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


def _plugin_folders(home: Home) -> list[Path]:
    root = home.plugins_dir / PLUGIN_FOLDER
    try:
        children = sorted(root.iterdir())
    except OSError:  # no plugin folder is the normal case
        return []
    return [c for c in children
            if c.is_dir() and (c / "__init__.py").is_file() and not c.name.startswith((".", "_"))]


def _load_entry_point(info: EngineInfo) -> type[ContextEngine]:
    module_name, _, attribute = info.target.partition(":")
    try:
        module = importlib.import_module(module_name)
        loaded = module
        for part in attribute.split(".") if attribute else []:
            loaded = getattr(loaded, part)
    except Exception as exc:
        raise ConfigError(
            f"context engine {info.name!r} could not be loaded from {info.target} "
            f"({type(exc).__name__}: {exc}); reinstall the package that provides it or "
            f"choose another engine in {_KEY}", key=_KEY) from exc
    return _engine_class(info, loaded)


def _load_folder_plugin(info: EngineInfo) -> type[ContextEngine]:
    folder = Path(info.target)
    # One module name per folder path, so two homes with the same plugin name never clash.
    digest = hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:10]
    module_name = f"mnemo_plugin_context_engine_{info.name.replace('-', '_')}_{digest}"
    module = sys.modules.get(module_name)
    if module is None:
        module = _exec_plugin(info, folder, module_name)
    candidate = getattr(module, "ENGINE", None)
    if candidate is None:
        own = [obj for obj in vars(module).values()
               if inspect.isclass(obj) and issubclass(obj, ContextEngine)
               and obj.__module__ == module_name and not inspect.isabstract(obj)]
        if len(own) != 1:
            raise ConfigError(
                f"context engine plugin {info.name!r} ({folder}/__init__.py) defines "
                f"{len(own)} ContextEngine classes; set ENGINE = YourEngine in it", key=_KEY)
        candidate = own[0]
    return _engine_class(info, candidate)


def _exec_plugin(info: EngineInfo, folder: Path, module_name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        module_name, folder / "__init__.py", submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        raise ConfigError(f"context engine plugin {info.name!r}: {folder}/__init__.py "
                          "cannot be imported", key=_KEY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # so the plugin's relative imports find it
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise ConfigError(
            f"context engine plugin {info.name!r} failed to import ({folder}/__init__.py: "
            f"{type(exc).__name__}: {exc}); fix the plugin or choose another engine in "
            f"{_KEY}", key=_KEY) from exc
    return module


def _engine_class(info: EngineInfo, candidate: object) -> type[ContextEngine]:
    if not (inspect.isclass(candidate) and issubclass(candidate, ContextEngine)):
        raise ConfigError(
            f"context engine {info.name!r} ({info.target}) is not a ContextEngine subclass; "
            "fix the plugin or choose another engine", key=_KEY)
    if inspect.isabstract(candidate):
        missing = ", ".join(sorted(getattr(candidate, "__abstractmethods__", ())))
        raise ConfigError(f"context engine {info.name!r} ({info.target}) does not implement "
                          f"{missing}", key=_KEY)
    return candidate
