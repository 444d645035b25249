"""The agent log: ``$MNEMO_HOME/logs/agent.log``, rotating, one greppable line per event.

mnemo's modules log to loggers under ``mnemo`` and never configure logging themselves;
the CLI (and any application that wants the file) calls ``configure_file_logging`` once.
The debugging guide relies on these words appearing in the lines: ``compress`` /
``compaction``, ``summary``, ``cooldown``, ``BLOCKED``, ``provider``, ``prompt_tokens``.
"""

from __future__ import annotations

import logging
from logging.handlers import RotatingFileHandler

from mnemo.config.schema import LoggingConfig
from mnemo.home import Home

__all__ = ["LOG_FORMAT", "configure_file_logging"]

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_MARK = "_mnemo_file_handler"


def configure_file_logging(
    home: Home, config: LoggingConfig | None = None
) -> logging.Handler | None:
    """Send mnemo's log records to the home's rotating ``agent.log``.

    Idempotent: a second call for the same file does nothing. Returns the handler, or
    None when the log folder cannot be created (a read-only home still works, unlogged).
    """
    config = config or LoggingConfig()
    logger = logging.getLogger("mnemo")
    path = home.log_file
    for handler in logger.handlers:
        if getattr(handler, _MARK, None) == str(path):
            return handler
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(path, maxBytes=config.max_bytes,
                                      backupCount=config.backup_count, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.setLevel(config.level)
    setattr(handler, _MARK, str(path))
    logger.addHandler(handler)
    if logger.level == logging.NOTSET or logger.level > logging.getLevelName(config.level):
        logger.setLevel(config.level)
    return handler
