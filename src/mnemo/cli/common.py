"""What every command group shares: the CLI context, JSON output and error reporting.

``CliState`` is created once per invocation by the root group; commands get it with
``@pass_state``. The config is loaded lazily on first use, so commands that do not need
it (``--help``) never touch the disk, and a broken config file fails only the commands
that read it — with the one-line ``ConfigError`` message.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

import click

from mnemo.config import MnemoConfig, load_config
from mnemo.home import Home
from mnemo.logs import configure_file_logging

__all__ = ["CliState", "echo_json", "fail", "pass_state"]


@dataclass
class CliState:
    home: Home
    debug: bool = False
    _config: MnemoConfig | None = field(default=None, repr=False)

    @property
    def config(self) -> MnemoConfig:
        if self._config is None:
            self._config = load_config(self.home)
            if self.home.root.exists():
                # The log file starts with defaults (the config may be broken); now the
                # configured level and rotation apply.
                configure_file_logging(self.home, self._config.logging)
        return self._config


pass_state = click.make_pass_decorator(CliState)


def echo_json(data: Any) -> None:
    """Print ``data`` as indented JSON (UTF-8, keys in insertion order)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def fail(message: str, code: int = 1) -> None:
    """Print one error line to stderr and exit with ``code``."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)
