"""Where mnemo keeps its files: the home folder and the paths inside it.

``$MNEMO_HOME`` (default ``~/.mnemo``) uses the same layout as a Hermes home, so a user
can point it at an existing one. The environment is read when a ``Home`` is made, never
at import time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Home", "mnemo_home"]

HOME_ENV = "MNEMO_HOME"


def mnemo_home() -> Path:
    """The home folder: ``$MNEMO_HOME`` if set, else ``~/.mnemo`` (not created here)."""
    raw = os.environ.get(HOME_ENV, "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".mnemo"


@dataclass(frozen=True)
class Home:
    """The paths of one home folder. ``Home()`` resolves ``$MNEMO_HOME`` now."""

    root: Path

    def __init__(self, root: Path | str | None = None) -> None:
        object.__setattr__(self, "root", Path(root).expanduser() if root else mnemo_home())

    @property
    def config_file(self) -> Path:
        return self.root / "config.yaml"

    @property
    def soul_file(self) -> Path:
        return self.root / "SOUL.md"

    @property
    def memories_dir(self) -> Path:
        return self.root / "memories"

    @property
    def skills_dir(self) -> Path:
        return self.root / "skills"

    @property
    def skills_snapshot(self) -> Path:
        return self.root / ".skills_prompt_snapshot.json"

    @property
    def state_db(self) -> Path:
        return self.root / "state.db"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def log_file(self) -> Path:
        return self.logs_dir / "agent.log"

    @property
    def plugins_dir(self) -> Path:
        return self.root / "plugins"

    @property
    def models_dir(self) -> Path:
        return self.root / "models"

    def ensure(self) -> Home:
        """Create the root and the memories folder if missing; return self."""
        self.memories_dir.mkdir(parents=True, exist_ok=True)
        return self
