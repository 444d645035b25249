"""The agent log (SPEC A4): one rotating file, configured levels honoured."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from mnemo.cli.main import cli
from mnemo.config.schema import LoggingConfig
from mnemo.home import Home
from mnemo.logs import configure_file_logging


@pytest.fixture(autouse=True)
def _detach_handlers() -> Iterator[None]:
    logger = logging.getLogger("mnemo")
    before, level = list(logger.handlers), logger.level
    yield
    for handler in logger.handlers[:]:
        if handler not in before:
            logger.removeHandler(handler)
            handler.close()
    logger.setLevel(level)


def test_one_handler_per_file_and_config_applies_to_it(mnemo_home: Home) -> None:
    first = configure_file_logging(mnemo_home)
    second = configure_file_logging(mnemo_home, LoggingConfig(level="WARNING", max_bytes=20_000,
                                                              backup_count=1))
    assert first is second and first is not None
    assert first.level == logging.WARNING
    assert getattr(first, "maxBytes", None) == 20_000


@pytest.mark.parametrize(("level", "info_logged"), [("INFO", True), ("WARNING", False)])
def test_configured_level_is_honoured_by_commands(mnemo_home: Home, level: str,
                                                  info_logged: bool) -> None:
    mnemo_home.config_file.write_text(
        f"logging: {{level: {level}}}\nmemory: {{overflow: archive, memory_char_limit: 100}}\n",
        encoding="utf-8")
    for n in range(4):  # the third and fourth adds archive older entries (an INFO line)
        assert CliRunner().invoke(cli, ["memory", "add", f"fact {n} " + "x" * 30]).exit_code == 0
    mnemo_home.memories_dir.joinpath("MEMORY.md").write_text("x\n§\n\n§\ny  ", "utf-8")
    CliRunner().invoke(cli, ["memory", "add", "another fact"])  # logs a WARNING (backup)
    text = mnemo_home.log_file.read_text(encoding="utf-8")
    assert " WARNING mnemo.memory: MEMORY.md did not round-trip" in text
    assert ("INFO mnemo.memory: memory overflow" in text) is info_logged
