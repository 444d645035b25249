"""API validity of compressed conversations (C12) over many generated conversations.

    python bench/validity_bench.py [--count 10000] [--seed 0]

Each conversation is random but valid: an optional system message (string or parts), an
optional resumed summary, user turns (some multimodal), tool-call groups with 1–3
parallel calls whose results come back in any order, duplicate and very large outputs,
turns that end on tool results. Each is compressed by a ``ContextCompressor`` with random
settings (window, threshold, head size, tail ratio); a third of them get more turns and a
second compression, as a live session would. Every output is checked for C12 (a)–(e) and
for the promises around it: the input is not modified, the latest user message survives,
no summary is nested, and a summary always makes the conversation smaller.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import random
import time
from collections import Counter
from typing import Any

from mnemo.context import SUMMARY_END_MARKER, SUMMARY_PREFIX, ContextCompressor
from mnemo.context.markers import summary_content
from mnemo.messages import content_text, tool_call_ids

Msg = dict[str, Any]


def _text(r: random.Random, big: bool = False) -> str:
    words = ["fix", "the", "bug", "in", "src/app.py", "why?", "Error: boom", "ok", "never",
             "push", "https://example.com/a", "PORT=8080", "done."]
    base = " ".join(r.choice(words) for _ in range(r.randint(0, 12)))
    size = r.choice([0, 0, 0, 200, 2_000, 9_000] if big else [0, 0, 0, 100, 800])
    return base + "z" * size


def conversation(r: random.Random) -> list[Msg]:
    out: list[Msg] = []
    if r.random() < 0.6:
        out.append({"role": "system", "content": [{"type": "text", "text": "sys"}]}
                   if r.random() < 0.2 else {"role": "system", "content": "You are an agent."})
    if r.random() < 0.15:
        out.append({"role": r.choice(["user", "assistant"]),
                    "content": summary_content("## Goal\n- an earlier goal")})
    for t in range(r.randint(1, 25)):
        if out and out[-1]["role"] == "user":
            out.append({"role": "assistant", "content": "ok"})
        text = f"ask {t} " + _text(r)
        out.append({"role": "user", "content": text if r.random() < 0.85 else [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]})
        for g in range(r.choice([0, 0, 1, 1, 2, 3, 5])):
            ids = [f"c{t}_{g}_{k}" for k in range(r.choice([1, 1, 1, 2, 3]))]
            calls = [{"id": i, "type": "function", "function": {
                "name": r.choice(["read_file", "terminal", "search"]),
                "arguments": json.dumps({"path": f"src/{i}.py"})}} for i in ids]
            out.append({"role": "assistant", "content": r.choice(["", None, "Checking."]),
                        "tool_calls": calls})
            results = [{"role": "tool", "tool_call_id": i, "content": _text(r, big=True)}
                       for i in ids]
            if r.random() < 0.5:
                r.shuffle(results)
            if r.random() < 0.1:
                results[0]["content"] = "duplicate output\n" * 40
            out += results
        if r.random() < 0.8:
            out.append({"role": "assistant", "content": f"answer {t} " + _text(r)})
    return out


def violations(output: list[Msg], source: list[Msg]) -> list[str]:
    """C12 (a)–(e), one short label per problem."""
    found: list[str] = []
    open_ids: list[str] = []
    answered: set[str] = set()
    for i, message in enumerate(output):
        role = message.get("role")
        if role == "tool":
            cid = str(message.get("tool_call_id"))
            if cid not in open_ids or cid in answered:
                found.append("(a) result without its call")
            answered.add(cid)
            continue
        if any(c not in answered for c in open_ids):
            found.append("(b) call without a result")
        open_ids, answered = (tool_call_ids(message) if role == "assistant" else []), set()
        if i and role in ("user", "assistant") and output[i - 1].get("role") == role:
            found.append("(c) two consecutive " + str(role))
    if any(c not in answered for c in open_ids):
        found.append("(b) call without a result")
    if any(m["role"] == "user" for m in source) and not any(m["role"] == "user" for m in output):
        found.append("(d) no user message left")
    if source and source[0]["role"] == "system" and output[0]["role"] != "system":
        found.append("(e) system message not first")
    return found


def _latest_user(messages: list[Msg]) -> Msg | None:
    for message in reversed(messages):
        if message["role"] == "user" and not content_text(message).startswith(SUMMARY_PREFIX):
            return message
    return None


def _survives(message: Msg, output: list[Msg]) -> bool:
    """The message is in the output as it was, or with the summary merged in front."""
    content = message["content"]
    for m in output:
        if m == message:
            return True
        if m["role"] != "user" or not content_text(m).startswith(SUMMARY_PREFIX):
            continue
        if isinstance(content, list) and m["content"][1:] == content:
            return True
        if isinstance(content, str) and content_text(m).endswith(SUMMARY_END_MARKER + content):
            return True
    return False


def check(engine: ContextCompressor, messages: list[Msg], problems: Counter[str],
          stats: Counter[str]) -> list[Msg]:
    before = copy.deepcopy(messages)
    output = engine.compress(messages)  # type: ignore[arg-type]
    report = engine.last_report
    assert report is not None
    for problem in violations(output, messages):  # type: ignore[arg-type]
        problems[problem] += 1
    if messages != before:
        problems["input modified"] += 1
    latest = _latest_user(messages)
    if latest is not None and not _survives(latest, output):  # type: ignore[arg-type]
        problems["latest user message lost"] += 1
    if any(content_text(m).count(SUMMARY_PREFIX) > 1 for m in output):
        problems["nested summary"] += 1
    if sum(content_text(m).startswith(SUMMARY_PREFIX) for m in output) > 1:
        problems["two summaries"] += 1
    if report.summary is not None and report.tokens_after >= report.tokens_before:
        problems["summary made it bigger"] += 1
    stats["compressions"] += 1
    stats["with a summary"] += report.summary is not None
    stats["merged into a turn"] += any(SUMMARY_END_MARKER in content_text(m) for m in output)
    stats["with pruned tool output"] += bool(report.pruned)
    return output  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.getLogger("mnemo.context").setLevel(logging.ERROR)  # the guard's warnings
    r = random.Random(args.seed)
    problems: Counter[str] = Counter()
    stats: Counter[str] = Counter()
    start = time.perf_counter()
    for _ in range(args.count):
        engine = ContextCompressor(
            context_length=r.choice([500, 1_000, 2_000, 4_000, 8_000, 32_000]),
            threshold_percent=r.choice([0.3, 0.5, 0.8]),
            protect_first_n=r.randint(0, 5),
            summary_target_ratio=r.choice([0.1, 0.2, 0.5]))
        messages = conversation(r)
        output = check(engine, messages, problems, stats)
        if r.random() < 0.33:  # the session goes on and is compressed again
            more = [m for m in conversation(r) if m["role"] != "system"
                    and not content_text(m).startswith(SUMMARY_PREFIX)]
            if more and output and output[-1]["role"] == more[0]["role"] == "user":
                more.insert(0, {"role": "assistant", "content": "continuing"})
            if more and output and output[-1]["role"] == more[0]["role"] == "assistant":
                more.insert(0, {"role": "user", "content": "go on"})
            check(engine, output + more, problems, stats)
    seconds = time.perf_counter() - start
    print(f"{args.count:,} conversations, {stats['compressions']:,} compressions "
          f"in {seconds:.1f} s")
    for key in ("with a summary", "merged into a turn", "with pruned tool output"):
        print(f"  {key:<26} {stats[key]:>7,}")
    print(f"{'violations':<28} {sum(problems.values()):>7,}")
    for problem, count in sorted(problems.items()):
        print(f"  {problem:<26} {count:>7,}")


if __name__ == "__main__":
    main()
