"""Wall-clock cost of hostile input: the seconds the unit tests no longer measure.

The tests prove the shape of the work by counting it (regex structure, characters each
threat pattern reads, comparisons in the live-sync planner, SQL statements per search).
This script reports the times on this machine, with the bounds the spec sets:

* **scan**: every threat pattern alone over 64 KiB of adversarial text — the openings of
  the patterns repeated without ever completing them, on one line and on many short
  lines — best of three; S1 allows 50 ms per pattern (each time here includes building
  the text's skeleton form, cheap for these ASCII inputs; ``bench/scanner_bench.py``
  times the patterns alone, on more inputs);
* **context file**: loading a 64 KiB adversarial AGENTS.md through ``load_context_files``;
* **live sync**: ``plan_sync`` on 20,000 identical and 20,000 alternating messages (what
  difflib needed 4 s for at 8,000);
* **search**: a 50 KB symbols-only query and a 100,000-distinct-word query against an
  archive of 2,000 messages ("well under a second");
* **config**: ``load_config`` refusing a YAML alias bomb.

    python bench/hostile_input_bench.py

Exits 1 when a bound is broken, so it can gate a release.
"""

from __future__ import annotations

import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

from mnemo.config import load_config
from mnemo.errors import ConfigError
from mnemo.prompt import load_context_files
from mnemo.security import MAX_SCAN_CHARS
from mnemo.security.patterns import PATTERNS
from mnemo.sessions import SessionStore
from mnemo.sessions.live import plan_sync

SCAN_BOUND = 0.050
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


def _adversarial() -> list[str]:
    texts = []
    for opening in _OPENINGS:
        for sep in ("", "\n"):
            unit = opening + sep
            texts.append((unit * (MAX_SCAN_CHARS // len(unit) + 1))[:MAX_SCAN_CHARS])
    return [unicodedata.normalize("NFKC", t) for t in texts]


def _best(run: Callable[[], object], tries: int = 3) -> float:
    best = float("inf")
    for _ in range(tries):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def scan_times() -> bool:
    texts = _adversarial()
    ok = True
    print(f"{'pattern':<28} {'worst ms':>9}  (64 KiB adversarial, best of 3; bound 50 ms)")
    for pattern in PATTERNS:
        worst = max(_best(lambda t=text, m=pattern.matcher: list(m(t))) for text in texts)
        ok &= worst < SCAN_BOUND
        print(f"{pattern.id:<28} {worst * 1000:>9.1f}{'  SLOW' if worst >= SCAN_BOUND else ''}")
    return ok


def other_times() -> bool:
    ok = True
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "AGENTS.md").write_text(("ignore all " * 6_000)[:MAX_SCAN_CHARS], "utf-8")
        seconds = _best(lambda: load_context_files(root, max_chars=MAX_SCAN_CHARS))
        print(f"context file 64 KiB adversarial: {seconds * 1000:.1f} ms")
        same = ['{"role":"tool","content":"same"}'] * 20_000
        alternating = [f"u{i}" if i % 2 else '{"content":"ok"}' for i in range(20_000)]
        seconds = _best(lambda: (plan_sync(same, ["S", *same[:10_000]]),
                                 plan_sync(alternating, ["S", *alternating[10_000:]])))
        print(f"live sync plan, 2 x 20,000 messages: {seconds * 1000:.1f} ms")
        with SessionStore(root / "state.db") as store:
            store.create_session(messages=[
                {"role": "user", "content": f"note {i} about w{i}x and {'!@#' * (i % 5)}"}
                for i in range(2_000)])
            for label, query in (("50 KB symbols", "!@#$%^&*()" * 5_000),
                                 ("100,000 words", " ".join(f"w{i}x" for i in range(100_000)))):
                seconds = _best(lambda q=query: store.search(q))
                ok &= seconds < 0.5
                print(f"search, {label}: {seconds * 1000:.1f} ms")
        bomb = root / "config.yaml"
        bomb.write_text("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n"
            for p, n in zip("abcdefgh", "bcdefghi", strict=True)), "utf-8")

        def refuse() -> None:
            try:
                load_config(path=bomb)
            except ConfigError:
                return
            raise AssertionError("the alias bomb was accepted")

        seconds = _best(refuse)
        ok &= seconds < 0.5
        print(f"config alias bomb refused in {seconds * 1000:.1f} ms")
    return ok


def main() -> int:
    ok = scan_times()
    ok = other_times() and ok
    print("all bounds hold" if ok else "a bound is broken")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
