"""How ``mnemo chat`` shows a reply while it is generated.

``StreamView`` is plugged into the agent's model caller: answer text goes to stdout as it
arrives; while the local model is still reading a long prompt, a "reading the prompt…"
line on stderr shows how far it got (rewritten in place on a terminal, printed once
otherwise) and is cleared by the first word of the answer. Tool and compaction notices
call ``break_line`` first, so they never land in the middle of an answer's line.
"""

from __future__ import annotations

import sys
from typing import TextIO

import click

__all__ = ["MIN_PROGRESS_TOKENS", "StreamView"]

# Prompts with fewer new tokens than this are read in a blink: no progress line.
MIN_PROGRESS_TOKENS = 128


class StreamView:
    """Prints streamed text and prompt progress for one chat process."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self._out = out
        self._err = err
        self.printed = False  # some answer text of the current turn was shown
        self._line_open = False  # stdout's last line has no newline yet
        self._progress_shown = False

    # Resolved at each use, not at creation: the CLI's streams may be swapped (tests).
    @property
    def out(self) -> TextIO:
        return self._out or sys.stdout

    @property
    def err(self) -> TextIO:
        return self._err or sys.stderr

    @property
    def _live(self) -> bool:
        return bool(getattr(self.err, "isatty", lambda: False)())

    def start_turn(self) -> None:
        self.printed = False

    def text(self, delta: str) -> None:
        self._clear_progress()
        if not self.printed:
            delta = delta.lstrip("\n")
        if not delta:
            return
        self.out.write(delta)
        self.out.flush()
        self.printed = True
        self._line_open = not delta.endswith("\n")

    def progress(self, processed: int, total: int) -> None:
        """llama.cpp read ``processed`` of the ``total`` prompt tokens it had to read."""
        if total < MIN_PROGRESS_TOKENS or (processed >= total and not self._progress_shown):
            return
        if self._progress_shown and not self._live:
            return
        self.break_line()
        line = f"reading the prompt… {processed:,}/{total:,} tokens"
        if self._live:
            self.err.write("\r\x1b[2K" + click.style(line, dim=True))
        else:
            self.err.write(click.style("reading the prompt…", dim=True) + "\n")
        self.err.flush()
        self._progress_shown = True

    def break_line(self) -> None:
        """End an open answer line (before a notice on stderr)."""
        self._clear_progress()
        if self._line_open:
            self.out.write("\n")
            self.out.flush()
            self._line_open = False

    def end_turn(self) -> None:
        """The turn is over: close the answer's line."""
        self.break_line()

    def _clear_progress(self) -> None:
        if self._progress_shown and self._live:
            self.err.write("\r\x1b[2K")
            self.err.flush()
        self._progress_shown = False
