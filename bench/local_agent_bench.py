"""The agent on the embedded model: how soon it answers, and whether it remembers.

    python bench/local_agent_bench.py [--part latency|memory|all] [--limit N] [--threads 2]

**latency** runs ``mnemo chat --once`` as a user would, in a fresh home whose config
points at the assembled default model: a first and a later ``--once`` with the prompt
cache (the second restores the slot the first saved), then the same pair with the cache
file deleted before each run. Time to first token is when the answer's first byte reaches
stdout (it streams); the turn is the whole process. ``read``/``cached`` are the prompt
tokens llama.cpp reports it read anew and took from its cache (from the agent log).

**memory** gives 20 memory-worthy first messages (names, preferences, project facts, in
several phrasings) and 4 that also ask something, each to a new session in its own home,
with one shared model server, and counts those that end with a memory write holding the
expected words (target ≥ 70%, over the 20), those that end with an answer in words
rather than a notice that the model gave none, and the answers that are clean: no
notice, no refusal ("I'm sorry, but I can't assist with that request."), no talk of its
tools, memory or instructions in place of an answer ("The user has already saved …",
"Tools are not available for this reply."), not the message repeated (``_flaw``: a
pattern check, so read the answers it prints too).

Requests over the window in a paste-heavy session are the window invariant's bench:
``bench/window_bench.py`` (50 turns against a model that counts with a real tokenizer and
refuses what does not fit) and ``bench/window_bench.py --embedded`` (the embedded model,
for real; fewer turns, as each takes tens of seconds on a CPU).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import time
from difflib import SequenceMatcher
from pathlib import Path

from mnemo.agent import build_agent
from mnemo.config import load_config
from mnemo.home import Home
from mnemo.llm import LocalChatClient, stop_shared_servers
from mnemo.llm.local_model import ensure_default_model
from mnemo.memory import TARGETS

FIRST = "Hi! I'm Ana and I like short answers. What can you do?"
LATER = "What is a Python list comprehension? One sentence."

# (message, words that a correct memory entry must contain, all of them, any case)
MEMORY_CASES: list[tuple[str, tuple[str, ...]]] = [
    ("Hi! I'm Ana and I like short answers. What can you do?", ("short",)),
    ("My name is Boris. Please remember that.", ("boris",)),
    ("Call me Kenji from now on.", ("kenji",)),
    ("I prefer tabs over spaces in all my code.", ("tab",)),
    ("Please always answer in French.", ("french",)),
    ("Remember: I don't like emojis in answers.", ("emoji",)),
    ("I'm a data engineer and I mostly write SQL.", ("sql",)),
    ("hey, Lucia here. I like detailed explanations with examples.", ("lucia",)),
    ("Our project uses PostgreSQL 16 for everything.", ("postgres",)),
    ("Note that the billing service lives in services/billing.", ("billing",)),
    ("We deploy with Kubernetes on Fridays only.", ("friday",)),
    ("The test suite is run with `make check`, not pytest directly.", ("make check",)),
    ("Our main branch is called trunk, not main.", ("trunk",)),
    ("I work in the Europe/Berlin timezone.", ("berlin",)),
    ("From now on use type hints in every Python example.", ("type hint",)),
    ("I'm Priya; I maintain the payments API.", ("priya",)),
    ("Keep in mind that our CI runs on GitHub Actions.", ("github actions",)),
    ("I use Neovim as my editor, so skip VS Code tips.", ("neovim",)),
    ("FYI the staging database is called stage_db.", ("stage_db",)),
    ("My dog is named Pixel and I mention him a lot.", ("pixel",)),
]
# First messages that also ask something: the answer matters as much as the write.
ASKING_CASES: list[str] = [
    "Hi there, what's the capital of France?",
    "I'm Tomas. I live in Leeds and I have a dog called Biscuit. Can you suggest a name "
    "for a cat?",
    "Please remember: I'm allergic to peanuts, so never suggest recipes with peanuts. "
    "What should I cook tonight?",
    "My name is Li and I'm learning Japanese. How do I say thank you?",
]

_REFUSAL = re.compile(r"\b(?:can(?:no|')?t|unable to|not able to) (?:assist|help)", re.I)
_META = re.compile(r"\b(?:tool(?:s| calls?)?|memory|the user|saved|(?:this|your) reply)\b",
                   re.I)


def _flaw(answer: str, message: str) -> str:
    """What makes ``answer`` no answer to ``message`` ("" for none), by pattern."""
    text = " ".join(answer.split())
    if not text:
        return "empty"
    if text.startswith("[The model"):
        return "notice"
    if _REFUSAL.search(text):
        return "refusal"
    if _META.search(text):
        return "meta"
    said = re.findall(r"\w+", text.lower())
    asked = re.findall(r"\w+", message.lower())
    if SequenceMatcher(None, said, asked, autojunk=False).ratio() >= 0.8:
        return "echo"
    return ""


def _home(root: Path, model_file: Path, threads: int) -> Home:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text(
        f"model:\n  path: {model_file}\nlocal:\n  threads: {threads}\n", encoding="utf-8")
    return Home(root)


_TIMINGS = re.compile(r"local model: (\d+) prompt tokens read, (\d+) from the cache")


def _once(home: Home, message: str) -> dict[str, float | int]:
    env = {**os.environ, "MNEMO_HOME": str(home.root)}
    log = home.logs_dir / "agent.log"
    seen = log.read_text(encoding="utf-8") if log.exists() else ""
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "mnemo", "chat", "--once", message],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    first = process.stdout.read(1)
    ttft = time.monotonic() - started if first else float("nan")
    process.stdout.read()
    process.wait()
    total = time.monotonic() - started
    new_log = log.read_text(encoding="utf-8")[len(seen):] if log.exists() else ""
    calls = [(int(a), int(b)) for a, b in _TIMINGS.findall(new_log)]
    read, cached = calls[0] if calls else (-1, -1)
    return {"ttft": ttft, "turn": total, "read": read, "cached": cached,
            "code": process.returncode}


def latency(model_file: Path, threads: int) -> None:
    print("| run | prompt cache | first token (s) | turn (s) | prompt read | from cache |")
    print("|---|---|---:|---:|---:|---:|")
    for cache in (True, False):
        with tempfile.TemporaryDirectory() as folder:
            home = _home(Path(folder), model_file, threads)
            for label, message in (("first --once", FIRST), ("later --once", LATER)):
                if not cache:
                    for saved in (home.root / "cache" / "prompt").glob("*"):
                        saved.unlink()
                row = _once(home, message)
                print(f"| {label} | {'on' if cache else 'off'} | {row['ttft']:.1f} | "
                      f"{row['turn']:.1f} | {row['read']} | {row['cached']} |", flush=True)


def memory(model_file: Path, threads: int, limit: int) -> None:
    # Replies capped at 256 tokens: what is measured is the tool call, which comes first.
    client = LocalChatClient(model_file, context_length=8192, threads=threads, timeout=600,
                             max_tokens=256, prompt_cache=False)
    good = answered = clean = 0
    cases = MEMORY_CASES[:limit]
    flaws: dict[str, int] = {}
    try:
        for number, (message, words) in enumerate(
                [*cases, *((asking, ()) for asking in ASKING_CASES[:limit])], start=1):
            with tempfile.TemporaryDirectory() as folder:
                home = _home(Path(folder), model_file, threads)
                agent = build_agent(load_config(home=home), home=home, cwd=Path(folder),
                                    client=client)
                with agent:
                    result = agent.run_turn(message)
                saved = " ".join(
                    (home.memories_dir / name).read_text(encoding="utf-8")
                    for name in ("USER.md", "MEMORY.md")
                    if (home.memories_dir / name).exists()).lower()
                ok = result.memory_written and all(w in saved for w in words)
                good += ok and bool(words)
                # An answer in words, not a notice that the model gave none.
                words_back = bool(result.text.strip()) and not result.text.startswith(
                    "[The model")
                answered += words_back
                flaw = _flaw(result.text, message)
                clean += not flaw
                if flaw:
                    flaws[flaw] = flaws.get(flaw, 0) + 1
                tools = ",".join(run.name for run in result.tool_runs) or "-"
                mark = ("ok " if ok else "MISS") if words else "ask "
                print(f"{number:2d}. {mark} tools={tools:<20} "
                      f"{message[:50]!r} → {saved.strip()[:70]!r}", flush=True)
                print(f"      answer ({result.model_calls} calls{', ' + flaw if flaw else ''}): "
                      f"{' '.join(result.text.split())[:100]!r}", flush=True)
                if words and not ok:  # why: what the model sent and what the tool answered
                    for run in result.tool_runs:
                        print(f"      {run.name}({json.dumps(run.arguments)[:120]}) → "
                              f"{run.result[:160]}", flush=True)
    finally:
        client.close()
        stop_shared_servers()
    turns = len(cases) + len(ASKING_CASES[:limit])
    print(f"\nmemory writes: {good}/{len(cases)} ({100 * good / len(cases):.0f}%), "
          f"targets {', '.join(TARGETS)}")
    print(f"turns ending with an answer in words: {answered}/{turns}")
    print(f"clean answers: {clean}/{turns} "
          f"({', '.join(f'{k} {v}' for k, v in sorted(flaws.items())) or 'no flaws'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("latency", "memory", "all"), default="all")
    parser.add_argument("--limit", type=int, default=len(MEMORY_CASES))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--verbose", action="store_true", help="log every model call")
    args = parser.parse_args()
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    model_file = ensure_default_model(Home(Path(tempfile.gettempdir()) / "mnemo-bench-model"))
    if args.part in ("latency", "all"):
        latency(model_file, args.threads)
    if args.part in ("memory", "all"):
        memory(model_file, args.threads, args.limit)


if __name__ == "__main__":
    main()
