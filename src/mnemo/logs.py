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
from mnemo.config.secrets import mask_urls_in
from mnemo.home import Home

__all__ = ["LOG_FORMAT", "MaskingFormatter", "configure_file_logging"]

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_MARK = "_mnemo_file_handler"


class MaskingFormatter(logging.Formatter):
    """Formats as usual, then masks keys in URLs (``https://u:KEY@host``, ``?api_key=``)."""

    def format(self, record: logging.LogRecord) -> str:
        return mask_urls_in(super().format(record))


def configure_file_logging(
    home: Home, config: LoggingConfig | None = None
) -> logging.Handler | None:
    """Send mnemo's log records to the home's rotating ``agent.log``.

    Idempotent: a second call for the same file adds no handler but applies ``config``
    (level and rotation) to the existing one. Returns the handler, or None when the log
    folder cannot be created (a read-only home still works, unlogged).
    """
    config = config or LoggingConfig()
    logger = logging.getLogger("mnemo")
    path = home.log_file
    for existing in logger.handlers:
        if getattr(existing, _MARK, None) == str(path):
            if isinstance(existing, RotatingFileHandler):
                existing.maxBytes, existing.backupCount = config.max_bytes, config.backup_count
            existing.setLevel(config.level)
            logger.setLevel(config.level)
            return existing
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(path, maxBytes=config.max_bytes,
                                      backupCount=config.backup_count, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(MaskingFormatter(LOG_FORMAT))
    handler.setLevel(config.level)
    setattr(handler, _MARK, str(path))
    logger.addHandler(handler)
    logger.setLevel(config.level)
    return handler
