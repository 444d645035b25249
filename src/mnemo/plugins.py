"""Finding and loading plugins: entry-point groups and folders in ``$MNEMO_HOME/plugins``.

A plugin kind (memory providers, context engines) has an entry-point group and a folder.
Built-in implementations register through mnemo's own entry points, so they are found
exactly like third-party ones. A folder plugin is a directory
``$MNEMO_HOME/plugins/<kind>/<name>/`` with an ``__init__.py`` that defines the class to
use as ``PLUGIN`` (or exactly one subclass of the expected base class).

Discovery only lists names; nothing is imported until a plugin is loaded, so one broken
plugin cannot break listing or the use of another. Loading errors are ``UsageError``s
that name the plugin and say what to fix. A folder plugin of the same name as an
entry-point plugin wins: it is the user's own override.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from mnemo.errors import UsageError

__all__ = ["PluginSpec", "discover_plugins", "load_plugin_class"]

@dataclass(frozen=True)
class PluginSpec:
    """One installed plugin: its name, where it comes from, and how to import it."""

    name: str
    source: str  # "entry point (<distribution>)" or "folder <path>"
    loader: Callable[[], Any]


def discover_plugins(group: str, folder: Path | None) -> dict[str, PluginSpec]:
    """Every plugin of ``group`` and of ``folder`` (if it exists), by name, sorted."""
    found: dict[str, PluginSpec] = {}
    for ep in entry_points(group=group):
        dist = getattr(ep, "dist", None)
        origin = f"entry point ({dist.name})" if dist is not None else "entry point"
        found[ep.name] = PluginSpec(ep.name, origin, ep.load)
    if folder is not None and folder.is_dir():
        for child in sorted(folder.iterdir()):
            if (child / "__init__.py").is_file():
                found[child.name] = PluginSpec(child.name, f"folder {child}",
                                               partial(_import_folder, child, group))
    return dict(sorted(found.items()))


def _import_folder(path: Path, group: str) -> ModuleType:
    module_name = f"mnemo_plugin_{group.replace('.', '_')}_{path.name}"
    spec = importlib.util.spec_from_file_location(
        module_name, path / "__init__.py", submodule_search_locations=[str(path)])
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # lets the plugin import its own submodules
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def load_plugin_class(spec: PluginSpec, base: type, kind: str) -> type[Any]:
    """Import ``spec`` and return its class, a subclass of ``base``.

    An entry point may name the class itself or a module; a module (and a folder plugin)
    provides ``PLUGIN`` or exactly one subclass of ``base``.
    """
    try:
        loaded = spec.loader()
    except Exception as exc:
        raise UsageError(f"{kind} '{spec.name}' ({spec.source}) failed to import: "
                         f"{type(exc).__name__}: {exc}; fix or remove the plugin") from exc
    if isinstance(loaded, ModuleType):
        loaded = _class_in_module(loaded, base, kind, spec)
    if not (inspect.isclass(loaded) and issubclass(loaded, base)):
        raise UsageError(f"{kind} '{spec.name}' ({spec.source}) is not a subclass of "
                         f"{base.__name__}; point it at one")
    return loaded


def _class_in_module(module: ModuleType, base: type, kind: str, spec: PluginSpec) -> Any:
    if hasattr(module, "PLUGIN"):
        return module.PLUGIN
    candidates = [obj for obj in vars(module).values()
                  if inspect.isclass(obj) and issubclass(obj, base) and obj is not base
                  and not inspect.isabstract(obj) and obj.__module__ == module.__name__]
    if len(candidates) == 1:
        return candidates[0]
    what = "no" if not candidates else f"{len(candidates)}"
    raise UsageError(f"{kind} '{spec.name}' ({spec.source}) defines {what} {base.__name__} "
                     "subclasses; set PLUGIN = <the class> in its __init__.py")
