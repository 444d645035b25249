"""No threat pattern takes more than 50 ms on a 64 KiB adversarial input (S1, ReDoS).

Adversarial inputs repeat the openings of the patterns without ever completing them —
what makes a backtracking regex retry at every position — on one long line and on many
short ones. Each pattern is timed alone on the normalised text, as ``scan`` runs it.
"""

from __future__ import annotations

import time
import unicodedata
from pathlib import Path

import pytest

from mnemo.prompt import load_context_files
from mnemo.security import MAX_SCAN_CHARS
from mnemo.security.patterns import PATTERNS, ThreatPattern

LIMIT_SECONDS = 0.050

_OPENINGS = [
    "ignore ", "ignore all the ", "do not ", "don't tell ", "system ", "system prompt ",
    "override the ", "disregard your ", "act as if you ", "act as though you have ",
    "<!--", "<!-- ignore ", "<div style='", "< div style = \"display", "translate ",
    "translate x into y ", "curl ", "curl $", "wget ${", "cat ", "you are now ",
    "from now on ", "new system ", "<|", "[INST", "reveal ", "show me the ", "without ",
    "keep this ", "secretly ", "send ", "send the files ", "![", "](http://", "?a=",
    "](https://a.b/?q=", "sk-", "-----BEGIN ", "AKIA", "ghp_", "xoxb-", "AIza", "a",
    " ", "\t", "\u200b", "ｉｇｎｏｒｅ ",
]


def _inputs() -> list[str]:
    texts = []
    for opening in _OPENINGS:
        for sep in ("", "\n"):
            unit = opening + sep
            texts.append((unit * (MAX_SCAN_CHARS // len(unit) + 1))[:MAX_SCAN_CHARS])
    return [unicodedata.normalize("NFKC", t) for t in texts]


INPUTS = _inputs()


def _best_time(pattern: ThreatPattern, text: str) -> float:
    best = float("inf")
    for _ in range(3):  # best of three, to ignore a scheduler hiccup
        start = time.perf_counter()
        for _match in pattern.matcher(text):
            pass
        best = min(best, time.perf_counter() - start)
        if best < LIMIT_SECONDS:
            break
    return best


@pytest.mark.slow  # ~4 s in all: 16 patterns x 94 inputs of 64 KiB
@pytest.mark.parametrize("pattern", PATTERNS, ids=[p.id for p in PATTERNS])
def test_pattern_is_fast_on_adversarial_input(pattern: ThreatPattern) -> None:
    slowest = max((_best_time(pattern, text), repr(text[:30])) for text in INPUTS)
    assert slowest[0] < LIMIT_SECONDS, (
        f"{pattern.id} took {slowest[0] * 1000:.1f} ms on {slowest[1]}")


def test_loading_a_64k_adversarial_context_file_is_fast(project: Path) -> None:
    (project / "AGENTS.md").write_text(("ignore all " * 6_000)[:MAX_SCAN_CHARS], "utf-8")
    start = time.perf_counter()
    load_context_files(project, max_chars=MAX_SCAN_CHARS)
    assert time.perf_counter() - start < 1.0
