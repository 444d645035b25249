"""How long building the system prompt takes with 1,000 skills, and where its tokens go.

Run: ``.venv/bin/python bench/prompt_bench.py [--skills 1000] [--repeat 7]``

Three ways the skills index can be built (SPEC B5):

* cold — no in-process cache and no disk snapshot: walk the tree, read and parse every
  SKILL.md, render, write the snapshot;
* cold + snapshot — a new process with a valid ``.skills_prompt_snapshot.json``: walk the
  tree and ``stat`` each file to check the manifest, load the parsed skills from JSON;
* warm — the in-process LRU holds the rendered index: no filesystem access at all.

Each is timed for the index alone and for a whole ``build_system_prompt`` (which also
reads SOUL.md and the context files). "Cold" here means cold caches of mnemo; the OS page
cache is warm, as it is for an agent started twice in a row.

The second table shows the parts of a typical prompt (default identity, cli, 40 skills, a
4 KB AGENTS.md, half-full memory stores, the three core tools, a GPT model) with the
rough token estimate and, when ``mnemo[tokenizer]`` is installed, exact o200k counts.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from mnemo.config import MnemoConfig
from mnemo.home import Home
from mnemo.memory import MemoryStore
from mnemo.prompt import SkillsIndexCache, build_skills_index, build_system_prompt
from mnemo.tokens import BpeTokenCounter

TOOLS = ("memory", "session_search", "skill_view")
NOW = datetime(2025, 4, 6)

_BODY = """\
# {name}

Use this skill when the task involves {topic}.

## Steps
1. Check the current state before changing anything (`git status`, the service's health
   endpoint, the last deploy log).
2. Make the smallest change that solves the problem; keep a note of each command.
3. Verify the result with the project's own checks and report what changed.

## Pitfalls
- Never run the destructive variant of a command without a dry run first.
- Configuration lives in `config/{name}.yaml`; do not edit the generated copy.
"""


def make_skills(root: Path, count: int, per_category: int = 40) -> None:
    for number in range(count):
        category = f"category-{number // per_category:02d}"
        name = f"skill-{number:04d}"
        folder = root / category / name
        folder.mkdir(parents=True, exist_ok=True)
        topic = f"topic {number} of {category}"
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Procedures for {topic}, step by step\n"
            f"platforms: [cli, telegram]\n---\n" + _BODY.format(name=name, topic=topic),
            encoding="utf-8",
        )
    for category in sorted({p.parent.parent for p in root.rglob("SKILL.md")}):
        (category / "DESCRIPTION.md").write_text(f"Skills of {category.name}\n")


def median_ms(action: Callable[[], object], repeat: int, before: Callable[[], None]) -> float:
    times = []
    for _ in range(repeat):
        before()
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench_build_times(count: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "home")
        home.ensure()
        make_skills(home.skills_dir, count)
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "AGENTS.md").write_text("Use pytest.\n" * 50)
        config = MnemoConfig()
        store = MemoryStore(home.memories_dir)
        store.load_from_disk()
        cache = SkillsIndexCache()

        def index() -> object:
            return build_skills_index(home.skills_dir, tools=TOOLS, platform="cli",
                                      snapshot_path=home.skills_snapshot, cache=cache)

        def prompt() -> object:
            return build_system_prompt(config=config, memory=store, cwd=project, home=home,
                                       model="gpt-4o", tool_names=TOOLS, now=NOW,
                                       skills_cache=cache)

        def no_caches() -> None:
            cache.clear()
            home.skills_snapshot.unlink(missing_ok=True)

        def snapshot_only() -> None:
            cache.clear()
            if not home.skills_snapshot.exists():
                index()
                cache.clear()

        def warm() -> None:
            index()

        rows = []
        for label, before in (("cold (no snapshot)", no_caches),
                              ("cold + valid snapshot", snapshot_only),
                              ("warm (LRU hit)", warm)):
            rows.append((label, median_ms(index, repeat, before),
                         median_ms(prompt, repeat, before)))
        shown = build_skills_index(home.skills_dir, tools=TOOLS, platform="cli",
                                   snapshot_path=home.skills_snapshot, cache=cache)
        print(f"Build time with {count:,} skills (median of {repeat}; index: "
              f"{shown.count:,} skills, {len(shown.text):,} chars)")
        print(f"{'mode':<24}{'skills index ms':>18}{'whole prompt ms':>18}")
        for label, index_ms, prompt_ms in rows:
            print(f"{label:<24}{index_ms:>18.3f}{prompt_ms:>18.3f}")
        print(f"snapshot size: {home.skills_snapshot.stat().st_size:,} bytes")


def bench_parts() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "home")
        home.ensure()
        make_skills(home.skills_dir, 40, per_category=8)
        project = Path(tmp) / "project"
        project.mkdir()
        agents = ("# Project conventions\n"
                  "- Python 3.11, type hints everywhere, ruff and mypy --strict clean.\n"
                  "- Tests with pytest; run `uv run pytest -q` before every commit.\n"
                  "- Keep modules under 400 lines; split by responsibility.\n")
        (project / "AGENTS.md").write_text((agents * 20)[:4_000])
        store = MemoryStore(home.memories_dir)
        for i in range(12):
            store.add("memory", f"Fact {i}: the staging host is stage-{i}.internal; "
                                "deploys need VPN.")
        for i in range(8):
            store.add("user", f"Preference {i}: answers in English, code in Python.")
        store.load_from_disk()
        built = build_system_prompt(config=MnemoConfig(), memory=store, cwd=project,
                                    home=home, model="gpt-4o", tool_names=TOOLS, now=NOW,
                                    skills_cache=SkillsIndexCache())
        try:
            exact: BpeTokenCounter | None = BpeTokenCounter()
        except ImportError:
            exact = None
        print()
        print("Tokens per part, typical setup (40 skills, 4 KB AGENTS.md, memory ~half full)")
        header = f"{'part':<26}{'chars':>8}{'tokens (len/4)':>16}"
        print(header + (f"{'tokens (o200k)':>16}" if exact else ""))
        for part in built.parts:
            line = f"{part.name:<26}{part.chars:>8,}{part.tokens:>16,}"
            print(line + (f"{exact.count(part.text):>16,}" if exact else ""))
        total = f"{'total':<26}{built.chars:>8,}{built.tokens:>16,}"
        print(total + (f"{exact.count(built.text):>16,}" if exact else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--skills", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    bench_build_times(args.skills, args.repeat)
    bench_parts()


if __name__ == "__main__":
    main()
