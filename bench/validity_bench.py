"""API validity of compressed conversations (C12) over many generated conversations.

    python bench/validity_bench.py [--count 10000] [--seed 0]

Each conversation is random: an optional system message (string or parts), an optional
resumed summary, user turns (some multimodal), tool-call groups with 1–3 parallel calls
whose results come back in any order, duplicate and very large outputs, turns that end on
tool results. A third of them also carry the defects C12 must repair: tool results whose
call is gone (stray), answered twice, missing, or moved out of their group, and two user
(or two assistant) messages in a row. Each is compressed by a ``ContextCompressor`` with
random settings (window, threshold, head size, tail ratio); a third of them get more
turns and a second compression, as a live session would. Every output is checked with
``mnemo.context.validate_c12`` — the same check the property-based tests use — and for
the promises around it: the input is not modified, the latest user message still reaches
the model (``still_present``), no summary is nested, and a summary always makes the
conversation smaller.
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

from mnemo.context import (
    SUMMARY_END_MARKER,
    SUMMARY_PREFIX,
    ContextCompressor,
    still_present,
    validate_c12,
)
from mnemo.context.boundaries import latest_user_index
from mnemo.context.markers import summary_content
from mnemo.messages import content_text

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


def damage(r: random.Random, messages: list[Msg]) -> list[Msg]:
    """The same conversation with one to four defects a compression must repair."""
    out = list(messages)
    first = 1 if out and out[0]["role"] == "system" else 0
    for k in range(r.randint(1, 4)):
        results = [i for i, m in enumerate(out) if m["role"] == "tool"]
        kind = r.choice(["stray", "twice", "missing", "moved", "same role"])
        if kind == "stray" or (kind in ("twice", "missing", "moved") and not results):
            out.insert(r.randint(first, len(out)), {"role": "tool", "tool_call_id": f"gone{k}",
                                                    "content": _text(r, big=True) or "x"})
        elif kind == "twice":
            i = r.choice(results)
            out.insert(i + 1, dict(out[i]))
        elif kind == "missing":
            del out[r.choice(results)]
        elif kind == "moved":
            i = r.choice(results)
            moved = out.pop(i)
            later = [j for j in range(i, len(out)) if out[j]["role"] != "tool"]
            out.insert(later[0] + 1 if later else len(out), moved)
        else:
            spots = [i for i, m in enumerate(out) if m["role"] == "user"
                     or (m["role"] == "assistant" and not m.get("tool_calls"))]
            if spots:
                i = r.choice(spots)
                out.insert(i + 1, {"role": out[i]["role"], "content": f"and {k} " + _text(r)})
    return out


def _short(problem: str) -> str:
    """One label per kind of problem (validate_c12 names indices; the table counts kinds)."""
    if problem.startswith("message "):
        return "malformed message"
    return {"(a)": "(a) result without its call", "(b)": "(b) call without a result",
            "(c)": "(c) two consecutive same-role", "(d)": "(d) no user message left",
            "(e)": "(e) system message not first/added"}.get(problem[:3], problem)


def check(engine: ContextCompressor, messages: list[Msg], problems: Counter[str],
          stats: Counter[str]) -> list[Msg]:
    before = copy.deepcopy(messages)
    output = engine.compress(messages)  # type: ignore[arg-type]
    report = engine.last_report
    assert report is not None
    for problem in validate_c12(output, messages):  # type: ignore[arg-type]
        problems[_short(problem)] += 1
    if messages != before:
        problems["input modified"] += 1
    latest = latest_user_index(messages)  # type: ignore[arg-type]
    if latest is not None and not still_present(messages[latest], output):  # type: ignore[arg-type]
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
    input_valid = not validate_c12(messages)  # type: ignore[arg-type]
    stats["damaged input"] += not input_valid
    if not input_valid and not report.changed:
        problems["damaged input reported unchanged"] += 1
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
        if r.random() < 0.33:
            messages = damage(r, messages)
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
    for key in ("damaged input", "with a summary", "merged into a turn",
                "with pruned tool output"):
        print(f"  {key:<26} {stats[key]:>7,}")
    print(f"{'violations':<28} {sum(problems.values()):>7,}")
    for problem, count in sorted(problems.items()):
        print(f"  {problem:<26} {count:>7,}")


if __name__ == "__main__":
    main()
