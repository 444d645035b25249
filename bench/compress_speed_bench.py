"""The local summariser's ``compress()`` against the code before C18, in one run (issue 12).

    python bench/compress_speed_bench.py --old-src /path/to/worktree-of-7373083/src \
        [--messages 34000] [--repeat 3]

Make the old worktree once with ``git worktree add <dir> 7373083``. Both versions
compress the same transcript (``compress_bench.transcript``: 34,000 messages, about
4,000 agent turns, 186 MB of which tool output) with ``summarizer=None`` and a
200,000-token window, each in a fresh subprocess whose ``PYTHONPATH`` is that version's
``src``. Old and new runs alternate, so both see the same load on a shared machine.

Each subprocess times, in CPU seconds of the process (``time.process_time``):

* ``first``: the first ``compress()`` in the process — nothing read yet, no cache warm;
* ``again``: the same list compressed again by a new engine (a live session's next
  compaction of messages already read);
* ``grown``: a fresh process compresses the first 90% of the messages (not timed), then
  the whole list: the live-session case, where only the last 10% are new.

The best of ``--repeat`` runs of each is shown, and new / old. CPU time, not wall time:
the machine is shared, and what one core spent is what the code costs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

_BENCH = Path(__file__).resolve().parent
_NEW_SRC = _BENCH.parent / "src"


def _worker(mode: str, size: int) -> dict[str, float]:
    """Run in the subprocess: time the compressions of ``mode`` (see the docstring)."""
    sys.path.insert(0, str(_BENCH))
    from compress_bench import transcript  # the same transcript for both versions
    from mnemo.context import ContextCompressor

    messages = transcript(size)

    def timed(batch: list[dict[str, object]]) -> float:
        engine = ContextCompressor(context_length=200_000, summarizer=None)
        start = time.process_time()
        engine.compress(batch)  # type: ignore[arg-type]
        return time.process_time() - start

    if mode == "first":
        return {"first": timed(messages), "again": timed(messages)}
    cut = int(len(messages) * 0.9)
    while messages[cut - 1].get("role") == "assistant" and messages[cut - 1].get("tool_calls"):
        cut -= 1  # never end the prefix on calls without their results
    timed(messages[:cut])
    return {"grown": timed(messages)}


def _run(src: str, mode: str, size: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=src)
    done = subprocess.run([sys.executable, __file__, "--worker", mode, "--messages", str(size)],
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the {mode} run with PYTHONPATH={src} failed:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old-src", help="src/ of a worktree of the code before (7373083)")
    parser.add_argument("--new-src", default=str(_NEW_SRC))
    parser.add_argument("--messages", type=int, default=34_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--worker", choices=("first", "grown"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_worker(args.worker, args.messages)))
        return
    if not args.old_src or not Path(args.old_src, "mnemo").is_dir():
        raise SystemExit("--old-src must name the src/ directory of a worktree of the old "
                         "code: git worktree add /tmp/mnemo-old 7373083, then "
                         "--old-src /tmp/mnemo-old/src")
    best: dict[tuple[str, str], float] = {}
    runs: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.repeat):
        for mode in ("first", "grown"):
            for label, src in (("old", args.old_src), ("new", args.new_src)):
                for key, seconds in _run(src, mode, args.messages).items():
                    runs.setdefault((label, key), []).append(seconds)
                    best[label, key] = min(best.get((label, key), seconds), seconds)
    print(f"compress() of {args.messages:,} messages, local summariser, CPU s, best of "
          f"{args.repeat} (all runs in brackets)")
    print(f"{'case':>6} {'old':>7} {'new':>7} {'new/old':>8}")
    for key in ("first", "again", "grown"):
        old, new = best["old", key], best["new", key]
        shown = " ".join(f"{s:.2f}" for s in runs["new", key])
        print(f"{key:>6} {old:>7.3f} {new:>7.3f} {new / old:>8.2f}   "
              f"[old {' '.join(f'{s:.2f}' for s in runs['old', key])}; new {shown}]")


if __name__ == "__main__":
    main()
