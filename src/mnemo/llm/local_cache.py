"""The embedded model's prompt cache on disk, and the pace it reads and writes at.

**Prompt cache.** Every session starts with the same long prefix (system prompt and tool
schemas); on a CPU, reading it is most of the first turn's wait. llama.cpp already keeps
the KV cache of the last request in its slot and reuses the common prefix within one
server process; ``PromptCache`` makes that outlive the process: the slot is saved to a
file under ``$MNEMO_HOME/cache/prompt/`` (llama.cpp's ``/slots/0?action=save``) after a
reply that had to read many new tokens, and restored when a server starts. The next
``mnemo chat --once`` then reads only the tokens after the shared prefix. The file is
named after the model file and window, so a different model never loads it; a file
llama.cpp refuses is deleted. It holds the KV state of a conversation, so it is as
private as ``state.db`` and lives beside it.

**Pace.** ``LocalPace`` keeps the prompt and generation speeds llama.cpp reported for
recent replies and turns them into time limits that follow the work: a long prompt on a
slow machine gets the time it needs, a stalled server is still noticed.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import os
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SAVE_MIN_NEW_TOKENS", "LocalPace", "PromptCache", "prompt_cache_dir"]

log = logging.getLogger("mnemo.llm")

# Save the slot when a reply read at least this many tokens that were not cached: below
# it the file would be rewritten every turn for a saving of a second or two.
SAVE_MIN_NEW_TOKENS = 256
_SLOT_TIMEOUT = 60.0


def prompt_cache_dir(home_root: Path) -> Path:
    """The folder for saved slots in a home folder (``$MNEMO_HOME/cache/prompt``)."""
    return home_root / "cache" / "prompt"


_SAVE_NUMBERS = itertools.count()  # each save of this process writes its own file


class PromptCache:
    """Save and restore slot 0 of one llama.cpp server to one file in ``folder``."""

    def __init__(self, folder: Path, model_path: Path, context_length: int) -> None:
        self.folder = folder
        self.filename = _cache_name(model_path, context_length)
        self.restored_tokens = 0
        self.saves = 0

    @property
    def path(self) -> Path:
        return self.folder / self.filename

    def restore(self, address: str) -> int:
        """Load the saved slot into the server; the number of tokens restored (0: none)."""
        if not self.path.is_file():
            return 0
        try:
            reply = _slot_action(address, "restore", self.filename)
        except OSError as exc:  # refused (another model, a damaged file): start afresh
            log.info("prompt cache %s not restored (%s); removing it", self.path, exc)
            with contextlib.suppress(OSError):
                self.path.unlink()
            return 0
        self.restored_tokens = int(reply.get("n_restored", 0) or 0)
        log.info("prompt cache restored: %d tokens from %s", self.restored_tokens, self.path)
        return self.restored_tokens

    def maybe_save(self, address: str, timings: Mapping[str, Any] | None) -> bool:
        """Save the slot when the last reply read many new tokens; True when saved.

        The file is written under a temporary name and renamed, so another process
        restoring at the same moment sees the old file or the new one, never half. The
        name is this save's own: the turn's reply and a background summary (C17) end
        close together in one process, and with one name for both, the second rename
        found its file already moved (seen by hand).
        """
        if not timings or int(timings.get("prompt_n", 0) or 0) < SAVE_MIN_NEW_TOKENS:
            return False
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = f"{self.filename}.{os.getpid()}.{next(_SAVE_NUMBERS)}.tmp"
        try:
            _slot_action(address, "save", temporary)
            (self.folder / temporary).replace(self.path)
        except OSError as exc:  # a cache that cannot be written costs time, nothing else
            log.info("prompt cache not saved (%s)", exc)
            with contextlib.suppress(OSError):
                (self.folder / temporary).unlink()
            return False
        self.saves += 1
        log.info("prompt cache saved to %s", self.path)
        return True


def _cache_name(model_path: Path, context_length: int) -> str:
    """A file name that changes with the model file (path, size, mtime) and the window;
    only letters, digits, dots, dashes and underscores (llama.cpp checks the name)."""
    try:
        stat = model_path.stat()
        identity = f"{model_path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{context_length}"
    except OSError:
        identity = f"{model_path}|{context_length}"
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in model_path.stem)[:60]
    return f"{stem}-{context_length}-{digest}.slot"


def _slot_action(address: str, action: str, filename: str) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{address.rstrip('/')}/slots/0?action={action}",
        data=json.dumps({"filename": filename}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=_SLOT_TIMEOUT) as reply:
        data = json.loads(reply.read().decode("utf-8") or "{}")
    return data if isinstance(data, dict) else {}


@dataclass
class LocalPace:
    """Measured speeds (tokens per second) of the local model, and limits derived from them.

    The defaults are a slow 2-core machine under load, so the first request of a process
    is not cut short before anything was measured.
    """

    prompt_per_second: float = 20.0
    predicted_per_second: float = 4.0
    batch_tokens: int = 512  # the server reports progress once per batch
    slack_seconds: float = 30.0

    def observe(self, timings: Mapping[str, Any] | None) -> None:
        """Take the speeds of a reply (ignored when it read or wrote too little to tell)."""
        if not timings:
            return
        if int(timings.get("prompt_n", 0) or 0) >= 64:
            self.prompt_per_second = _positive(timings.get("prompt_per_second"),
                                               self.prompt_per_second)
        if int(timings.get("predicted_n", 0) or 0) >= 16:
            self.predicted_per_second = _positive(timings.get("predicted_per_second"),
                                                  self.predicted_per_second)

    def whole_request(self, prompt_tokens: int, max_tokens: int) -> float:
        """Seconds to allow a non-streamed request: twice the expected work, plus slack."""
        work = prompt_tokens / self.prompt_per_second + max_tokens / self.predicted_per_second
        return 2 * work + self.slack_seconds

    def between_chunks(self) -> float:
        """Seconds to allow between two chunks of a stream: one prompt batch, twice over."""
        return 2 * self.batch_tokens / self.prompt_per_second + self.slack_seconds


def _positive(value: Any, fallback: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return fallback
    return number if number > 0 else fallback
