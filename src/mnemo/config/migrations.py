"""One-time upgrades of old ``config.yaml`` layouts (SPEC P5).

Each step takes the raw mapping of one version and returns the mapping of the next; the
loader runs the steps it needs, validates the result and, if anything changed, saves it
(keeping the old file as a backup) so the upgrade happens once.

Version 1 is the layout of Hermes-era homes and of files without a ``version`` key. Its
external memory providers were configured by top-level blocks such as::

    honcho: {enabled: true, api_key: "...", workspace: "me"}

Version 2 keeps provider settings under ``memory.providers.<name>`` and selects the one
external provider with ``memory.provider``. As in the seed, a legacy block that is enabled
while ``memory.provider`` is unset becomes the provider.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

__all__ = ["LEGACY_PROVIDER_BLOCKS", "migrate"]

RawConfig = dict[str, Any]

# Top-level blocks that version 1 used for memory providers.
LEGACY_PROVIDER_BLOCKS = ("honcho", "mem0", "supermemory", "zep", "recall")


def _v1_to_v2(raw: RawConfig) -> tuple[RawConfig, list[str]]:
    notes: list[str] = []
    raw["version"] = 2
    memory = raw.setdefault("memory", {})
    if not isinstance(memory, dict):
        return raw, notes  # the validator reports the bad type with its key path
    providers = memory.setdefault("providers", {})
    for name in LEGACY_PROVIDER_BLOCKS:
        block = raw.get(name)
        if not isinstance(block, dict):
            continue
        del raw[name]
        settings = {k: v for k, v in block.items() if k != "enabled"}
        if isinstance(providers, dict):
            providers.setdefault(name, settings)
        notes.append(f"moved top-level '{name}' block to memory.providers.{name}")
        if block.get("enabled") and not memory.get("provider"):
            memory["provider"] = name
            notes.append(f"memory.provider set to '{name}' (it was enabled)")
    if not providers:
        del memory["providers"]
    if not memory:
        del raw["memory"]
    return raw, notes


_STEPS: dict[int, Callable[[RawConfig], tuple[RawConfig, list[str]]]] = {1: _v1_to_v2}


def migrate(raw: RawConfig, target: int) -> tuple[RawConfig, list[str]]:
    """Upgrade ``raw`` to version ``target``; return the new mapping and what changed.

    The input is never modified. An empty list of notes means nothing but the version
    number would change, and the caller need not rewrite the file.
    """
    current = copy.deepcopy(raw)
    version = current.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        return current, []  # the validator reports it
    notes: list[str] = []
    while version < target and version in _STEPS:
        current, step_notes = _STEPS[version](current)
        notes.extend(step_notes)
        version = current["version"]
    return current, notes
