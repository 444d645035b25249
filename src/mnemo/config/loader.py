"""Reading, validating, migrating and saving ``config.yaml``.

A missing file means defaults. Anything else that is wrong — YAML that does not parse
(named by line and column), an alias bomb or absurd nesting (``yaml_safe.py``), a wrong
type, an unknown key, a bad value — is a ``ConfigError`` whose one-line message names
the file, the key path and what is allowed. A bad value is quoted as a short excerpt and
never when it looks like a key (``secrets.py``). Nothing is read at import time.
"""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from mnemo.config.migrations import migrate
from mnemo.config.schema import CONFIG_VERSION, MnemoConfig
from mnemo.config.secrets import excerpt, looks_like_key, mask_urls_in
from mnemo.config.yaml_safe import YamlTooComplex, safe_load_bounded
from mnemo.errors import ConfigError
from mnemo.fileio import atomic_write_text
from mnemo.home import Home

__all__ = ["config_to_yaml", "load_config", "save_config"]

log = logging.getLogger("mnemo.config")


def load_config(home: Home | Path | str | None = None, *, path: Path | None = None) -> MnemoConfig:
    """Load the config of ``home`` (default ``$MNEMO_HOME``) or of an explicit ``path``.

    Old layouts are upgraded once: the upgraded file is saved, the original kept as
    ``config.yaml.bak.v<old version>``.
    """
    if path is None:
        path = (home if isinstance(home, Home) else Home(home)).config_file
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return MnemoConfig()
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: is not UTF-8 text (byte {exc.start}); save it as UTF-8",
                          path=str(path)) from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror}); check its permissions",
                          path=str(path)) from exc
    raw = _parse_yaml(text, path)
    version = raw.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > CONFIG_VERSION:
        raise ConfigError(f"{path}: version: {version} is newer than this mnemo understands "
                          f"({CONFIG_VERSION}); upgrade mnemo (pip install -U mnemo)",
                          path=str(path), key="version")
    upgraded, notes = migrate(raw, CONFIG_VERSION)
    config = _validate(upgraded, path)
    if notes:
        _save_migrated(path, raw, config, notes)
    return config


def _parse_yaml(text: str, path: Path) -> dict[str, Any]:
    try:
        data = safe_load_bounded(text)
    except YamlTooComplex as exc:
        raise ConfigError(f"{path}: refused: {exc}", path=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        column = mark.column + 1 if mark is not None else None
        where = f" at line {line}, column {column}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{path}: not valid YAML{where} ({problem}); fix the syntax there",
                          path=str(path), line=line, column=column) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: the top level must be a mapping of sections (got {type(data).__name__})",
            path=str(path),
        )
    return data


def _validate(raw: dict[str, Any], path: Path) -> MnemoConfig:
    try:
        return MnemoConfig.model_validate(raw)
    except ValidationError as exc:
        raise _config_error(exc, path) from None


def _config_error(exc: ValidationError, path: Path) -> ConfigError:
    errors = exc.errors()
    first = errors[0]
    # A mapping key can be a pasted key too: key-shaped parts of the path are hidden.
    loc = ["[hidden]" if looks_like_key(part) else _excerpt_key(str(part))
           for part in first["loc"]]
    key = ".".join(loc) or "(top level)"
    kind = first["type"]
    if kind == "extra_forbidden":
        allowed = _allowed_keys(loc[:-1])
        detail = "unknown key" + (f"; allowed keys here: {', '.join(allowed)}" if allowed else "")
    else:
        # A validator's own message may quote the value: keys and URLs in it are masked.
        detail = _masked(first["msg"].rstrip(".").replace("Value error, ", ""))
        if "input" in first and kind not in ("missing", "value_error"):
            detail += f" (got {excerpt(first['input'])})"
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return ConfigError(f"{path}: {key}: {detail}{more}", path=str(path), key=key)


def _masked(text: str) -> str:
    """``text`` with URLs masked, key-shaped words hidden and long quotes cut short."""
    words = [("[a value that looks like a key]" if looks_like_key(w.strip("'\",.;()"))
              else w) for w in mask_urls_in(text).split()]
    flat = _LONG_QUOTE.sub(lambda m: m.group(1) + "…" + m.group(3), " ".join(words))
    return flat if len(flat) <= 300 else flat[:299] + "…"


def _excerpt_key(part: str) -> str:
    """A key-path part, cut short (a pasted paragraph can become a mapping key)."""
    return part if len(part) <= 40 else part[:39] + "…"


# A quoted value of more than 40 characters inside a validator's message.
_LONG_QUOTE = re.compile(r"""(['"][^'"]{40})([^'"]+)(['"])""")


def _allowed_keys(loc: list[str]) -> list[str]:
    """The field names of the section at ``loc`` (for the unknown-key message)."""
    model: type[BaseModel] = MnemoConfig
    for part in loc:
        field = model.model_fields.get(part)
        annotation = getattr(field, "annotation", None) if field else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)


def config_to_yaml(config: MnemoConfig, *, only_changed: bool = True) -> str:
    """Render a config as YAML; by default only the values that differ from the defaults."""
    data = config.model_dump(mode="json", exclude_defaults=only_changed)
    data["version"] = config.version
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def save_config(config: MnemoConfig, home: Home | Path | str | None = None, *,
                path: Path | None = None) -> Path:
    """Write ``config`` atomically to ``path`` (default: the home's ``config.yaml``)."""
    if path is None:
        path = (home if isinstance(home, Home) else Home(home)).config_file
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, config_to_yaml(config))
    return path


def _save_migrated(path: Path, raw: dict[str, Any], config: MnemoConfig,
                   notes: list[str]) -> None:
    old_version = raw.get("version", 1)
    backup = path.with_name(f"{path.name}.bak.v{old_version}")
    try:
        if not backup.exists():
            shutil.copy2(path, backup)
        save_config(config, path=path)
    except OSError as exc:
        # A read-only home still works with the upgraded settings in memory.
        log.warning("config migration not saved to %s: %s", path, exc)
        return
    log.info("config migrated from v%s (%s); old file kept as %s",
             old_version, "; ".join(notes), backup)
