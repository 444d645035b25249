"""What a long agent session costs with and without mnemo's context engine.

    python bench/session_cost_bench.py [--turns 200] [--window 32000] [--chat]

A scripted 200-turn session (``ScriptedChatClient``; no model is called): every turn the
model reads a file through a tool (2–20 KB of output), every fifth turn it saves a fact
with the memory tool, then it answers. The same script runs twice:

* **mnemo** — the real agent with the compressor and a ``--window``-token context;
* **no engine** — the same agent with compression disabled and an unlimited window,
  i.e. what an agent loop that just appends messages would send.

With ``--chat`` the session is a chat instead, as ``mnemo chat`` on the embedded model
is used: short statements about the user's life, a short answer each, no tool called
(the tools are still offered, so their schemas are in every request). A compaction
there costs more than its own work: the embedded model reads everything after the
summary again (its prompt cache keeps only the unchanged prefix), on a CPU about 120
tokens a second.

Reported per run: prompt tokens per request (mean, p95, max, total), the share of each
request's prompt that is an exact prefix of the previous request (what a provider's
prefix cache can reuse), the tokens a server caching the previous prompt reads anew
over the session (the rest of each request), and the number of compactions. Token
counts are the rough estimate of C4 for every request, so the two runs are compared on
the same scale.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
from itertools import pairwise
from pathlib import Path
from typing import Any

from mnemo.agent import build_agent
from mnemo.config import MnemoConfig
from mnemo.home import Home
from mnemo.llm.testing import ChatRequest, ScriptedChatClient, assistant_tool_call
from mnemo.messages import Message, content_text
from mnemo.tokens import estimate_message_tokens_rough

READ_FILE = {
    "name": "read_file",
    "description": "Read a file of the project.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                   "required": ["path"]},
}


def _file_text(path: str, rng: random.Random) -> str:
    lines = [f"# {path}"]
    size = rng.randint(2_000, 20_000)
    n = 0
    while sum(len(line) + 1 for line in lines) < size:
        n += 1
        lines.append(f"def handler_{n}(request):  # line {n} of {path}, value={rng.random():.6f}")
    return "\n".join(lines)


def _script(turns: int) -> Any:
    """The model's behaviour: read a file, sometimes save a fact, then answer."""

    def reply(request: ChatRequest) -> Any:
        last = request.messages[-1]
        if last["role"] == "user":
            if not request.tools:  # a flush turn or the final no-tools call
                return "nothing to save"
            found = re.search(r"turn (\d+):", content_text(last))
            if found is None:
                return "nothing to save"
            turn = int(found.group(1))
            return assistant_tool_call("read_file", {"path": f"src/module_{turn}.py"},
                                       call_id=f"read_{turn}")
        if last["role"] == "tool" and last.get("tool_call_id", "").startswith("read_"):
            turn = int(str(last["tool_call_id"]).split("_")[1])
            if turn % 5 == 0:
                return assistant_tool_call("memory", {
                    "action": "add", "target": "memory",
                    "content": f"module_{turn}.py has {turn} handlers"},
                    call_id=f"mem_{turn}")
            return f"Module {turn} looks fine; the handlers follow the usual pattern."
        return "Saved that, and the module looks fine."

    return reply


_PLACES = ("harbour", "bakery", "museum", "river", "market", "library", "park", "ferry")


def _chat_message(turn: int) -> str:
    place, other = _PLACES[turn % 8], _PLACES[(turn * 3 + 1) % 8]
    return (f"Day {turn}: my friend Ana{turn} took me to the {place} near the {other}, "
            f"and we met {turn % 7 + 2} of her cousins there.")


def _chat_reply(request: ChatRequest) -> str:
    return "Noted: that sounds like a lovely day by the water, with family around."


def _prefix_share(previous: list[Message], current: list[Message]) -> float:
    """Share of ``current``'s tokens in messages identical to ``previous``'s leading ones."""
    total = sum(estimate_message_tokens_rough(m) for m in current)
    same = 0
    for old, new in zip(previous, current, strict=False):
        if json.dumps(old, sort_keys=True) != json.dumps(new, sort_keys=True):
            break
        same += estimate_message_tokens_rough(new)
    return same / total if total else 0.0


def run(turns: int, window: int, *, engine: bool, chat: bool = False) -> dict[str, Any]:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "home")
        config = MnemoConfig.model_validate({
            "compression": {"enabled": engine},
            "memory": {"memory_char_limit": 100_000, "nudge_interval": 0},
        })
        client = ScriptedChatClient(default=_chat_reply if chat else _script(turns),
                                    context_length=window if engine else 10**9)
        agent = build_agent(config, home=home, cwd=Path(tmp), client=client)
        agent.start()
        if not chat:
            agent.tools.add(READ_FILE, lambda args: _file_text(str(args.get("path")), rng))
        for turn in range(turns):
            agent.run_turn(_chat_message(turn) if chat else
                           f"turn {turn}: please review src/module_{turn}.py")
        compactions = agent.engine.compression_count
        agent.close()
    requests = [r for r in client.requests if r.tools]
    tokens = [sum(estimate_message_tokens_rough(m) for m in r.messages) for r in requests]
    shares = [_prefix_share(a.messages, b.messages) for a, b in pairwise(requests)]
    # What a server that caches the previous prompt's prefix (llama.cpp) reads anew.
    fresh = tokens[0] + sum(round(t * (1 - share)) for t, share in zip(tokens[1:], shares,
                                                                       strict=True))
    ordered = sorted(tokens)
    return {
        "requests": len(tokens),
        "mean": statistics.mean(tokens),
        "p95": ordered[int(len(ordered) * 0.95)],
        "max": ordered[-1],
        "total": sum(tokens),
        "prefix_reuse": statistics.mean(shares),
        "fresh": fresh,
        "compactions": compactions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--chat", action="store_true",
                        help="a chat of short statements instead of file reviews")
    args = parser.parse_args()
    rows = {"mnemo": run(args.turns, args.window, engine=True, chat=args.chat),
            "no engine": run(args.turns, args.window, engine=False, chat=args.chat)}
    kind = "chat turns" if args.chat else "turns"
    print(f"{args.turns} {kind}, window {args.window:,} tokens (threshold 50%)\n")
    print(f"{'':<10} {'requests':>8} {'mean tok':>9} {'p95':>9} {'max':>9} "
          f"{'total tok':>12} {'prefix reuse':>13} {'read anew':>10} {'compactions':>12}")
    for name, r in rows.items():
        print(f"{name:<10} {r['requests']:>8} {r['mean']:>9,.0f} {r['p95']:>9,} "
              f"{r['max']:>9,} {r['total']:>12,} {r['prefix_reuse']:>12.1%} "
              f"{r['fresh']:>10,} "
              f"{r['compactions']:>12}")
    saved = 1 - rows["mnemo"]["total"] / rows["no engine"]["total"]
    print(f"\nmnemo sends {saved:.1%} fewer prompt tokens over the session; its largest "
          f"request is {rows['mnemo']['max']:,} tokens vs {rows['no engine']['max']:,} "
          f"(window {args.window:,}).")


if __name__ == "__main__":
    main()
