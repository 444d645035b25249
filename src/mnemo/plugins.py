"""Finding and loading plugins: entry-point groups and folders in ``$MNEMO_HOME/plugins``.

Memory providers and context engines are plugins of the same two kinds:

* an **entry point** in a group (``mnemo.memory_providers``, ``mnemo.context_engines``) —
  mnemo's own implementations register there too, so they are found exactly like a
  third-party package's;
* a **folder** ``$MNEMO_HOME/plugins/<kind>/<name>/`` with an ``__init__.py`` that names
  its class (``PLUGIN = MyClass``, or the kind's own name such as ``ENGINE``) or defines
  exactly one concrete subclass of the expected base class.

Discovery only lists names; nothing is imported until a plugin is loaded, so one broken
plugin cannot break listing or the use of another. An installed entry point wins over a
folder of the same name (a folder cannot shadow an installed implementation; it is
logged and ignored). Loading errors are ``UsageError``s that name the plugin and what to
fix; callers may re-raise them as a ``ConfigError`` with their config key.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import logging
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from mnemo.errors import UsageError

__all__ = ["PluginSpec", "discover_plugins", "load_plugin_class"]

log = logging.getLogger("mnemo.plugins")


@dataclass(frozen=True)
class PluginSpec:
    """One installed plugin: its name, where it comes from, and how to import it.

    ``source`` is "entry point" or "plugin folder"; ``target`` the "module:attribute" of
    an entry point or the folder's path.
    """

    name: str
    source: str
    target: str
    loader: Callable[[], Any]


def _import_target(target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    loaded: Any = importlib.import_module(module_name)
    for part in attribute.split(".") if attribute else []:
        loaded = getattr(loaded, part)
    return loaded


def discover_plugins(group: str, folder: Path | None, *,
                     builtin: Mapping[str, str] | None = None) -> dict[str, PluginSpec]:
    """Every plugin of entry-point ``group`` and of ``folder``, by name, sorted.

    ``builtin`` ("name" → "module:attribute") lists implementations that must be found
    even in a source checkout without package metadata.
    """
    found: dict[str, PluginSpec] = {
        name: PluginSpec(name, "entry point", target, partial(_import_target, target))
        for name, target in (builtin or {}).items()
    }
    for ep in entry_points(group=group):
        found[ep.name] = PluginSpec(ep.name, "entry point", ep.value, ep.load)
    for child in _plugin_folders(folder):
        if child.name in found:
            log.warning("plugin folder %s is ignored: an installed plugin is already called "
                        "%r", child, child.name)
            continue
        found[child.name] = PluginSpec(child.name, "plugin folder", str(child),
                                       partial(_import_folder, child))
    return dict(sorted(found.items()))


def _plugin_folders(folder: Path | None) -> list[Path]:
    if folder is None:
        return []
    try:
        children = sorted(folder.iterdir())
    except OSError:  # no plugin folder is the normal case
        return []
    return [c for c in children if c.is_dir() and (c / "__init__.py").is_file()
            and not c.name.startswith((".", "_"))]


def _import_folder(folder: Path) -> ModuleType:
    # One module name per folder path: two homes with a plugin of the same name never
    # clash, and loading the same folder twice reuses the module.
    digest = hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:10]
    module_name = f"mnemo_plugin_{folder.name.replace('-', '_')}_{digest}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(
        module_name, folder / "__init__.py", submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        raise ImportError(f"{folder}/__init__.py cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # lets the plugin import its own submodules
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def load_plugin_class(spec: PluginSpec, base: type, kind: str, *,
                      attribute: str = "PLUGIN") -> type[Any]:
    """Import ``spec`` and return its class: a concrete subclass of ``base``.

    An entry point may name the class or a module; a module (and a folder plugin) gives
    its class as ``PLUGIN``, as ``attribute`` (the kind's own name, e.g. ``ENGINE``), or
    by defining exactly one concrete subclass of ``base``.
    """
    where = f"{kind} {spec.name!r} ({spec.target})"
    try:
        loaded = spec.loader()
    except Exception as exc:
        raise UsageError(f"{where} could not be loaded ({type(exc).__name__}: {exc}); fix "
                         "or reinstall the plugin, or choose another") from exc
    if isinstance(loaded, ModuleType):
        loaded = _class_in_module(loaded, base, where, attribute)
    if not (inspect.isclass(loaded) and issubclass(loaded, base)):
        raise UsageError(f"{where} is not a {base.__name__} subclass; fix the plugin or "
                         "choose another")
    if inspect.isabstract(loaded):
        missing = ", ".join(sorted(getattr(loaded, "__abstractmethods__", ())))
        raise UsageError(f"{where} does not implement {missing}")
    return loaded


def _class_in_module(module: ModuleType, base: type, where: str, attribute: str) -> Any:
    for name in (attribute, "PLUGIN"):
        if hasattr(module, name):
            return getattr(module, name)
    own = [obj for obj in vars(module).values()
           if inspect.isclass(obj) and issubclass(obj, base) and obj is not base
           and obj.__module__ == module.__name__ and not inspect.isabstract(obj)]
    if len(own) == 1:
        return own[0]
    raise UsageError(f"{where} defines {len(own)} {base.__name__} classes; set "
                     f"{attribute} = YourClass in its __init__.py")
