"""Tool output read a block at a time (``summary/blockscan.py``): the same error lines
as a whole-text scan, and a block already read is not scanned again (counted in
characters, not seconds)."""

from __future__ import annotations

from convgen import sample_log

from mnemo.context.failures import error_lines, is_logged_error
from mnemo.context.prompt import truncate_for_summary
from mnemo.context.summary.blockscan import BLOCK, BLOCKS, error_lines_by_block


def test_the_same_lines_as_a_whole_text_scan() -> None:
    BLOCKS.clear()
    for seed in range(15):
        text = sample_log(seed, lines=50 + seed * 40)
        for window in (text, truncate_for_summary(text), text[: BLOCK + 7]):
            expected = error_lines(window)
            assert error_lines_by_block(window) == expected
            assert error_lines_by_block(window, logged_only=True) == [
                line for line in expected if is_logged_error(line)]
    # A traceback whose exception line is in a later block is still followed.
    text = "x\n" + "ok\n" * BLOCK + "Traceback (most recent call last):\n" + (
        "  frame\n" * 150) + "QuotaExceeded: over the limit\n"
    assert error_lines_by_block(text) == error_lines(text) == ["QuotaExceeded: over the limit"]


def test_near_copies_are_scanned_once() -> None:
    """The same output behind another first line (a call id, a timestamp) — and cut to
    the summariser's window — costs only its first line the second time."""
    BLOCKS.clear()
    body = sample_log(7, lines=600)
    first = truncate_for_summary(f"# call_1\n{body}")
    assert len(first) > 2 * BLOCK
    found = error_lines_by_block(first)
    # All of it read once; the first line (shorter than a block worth keeping) is read
    # each time instead.
    assert found and BLOCKS.chars == len(first) - len("# call_1\n")
    again = truncate_for_summary(f"# call_123_4\n{body}")
    assert error_lines_by_block(again) == error_lines(again)
    # The head's last block ends at the cut, which moved with the first line: that block
    # and the first line are new; the rest of the head and the whole tail are not.
    assert BLOCKS.chars - len(first) <= len("# call_123_4\n") + 2 * BLOCK + 200
    chars = BLOCKS.chars
    assert error_lines_by_block(again) == error_lines(again)
    assert BLOCKS.chars == chars  # read again: no block scanned again
