"""Cost of one ``compress()`` on long agent transcripts, with and without the local summariser.

    python bench/compress_bench.py [--sizes 1000,10000,100000] [--repeat 3]

Transcripts are a realistic agent mix: user requests, assistant turns with one to three
(sometimes parallel) tool calls, and tool output of 2–20 KB each — Python source from
``read_file``, pytest logs with the occasional failure from ``terminal``, grep hits from
``search``, prose from ``web_fetch``. Each transcript is compressed once (best of
``--repeat`` runs) by a ``ContextCompressor`` with a 200,000-token window:

* ``local``: the default local summariser (C15) reads the whole middle;
* ``no-op``: a summariser callable that returns a fixed text at once, so the row measures
  the algorithm itself (pruning, boundaries, serialising and chunking the middle for the
  model's window, assembling and checking the result).

``seconds`` is wall time, ``cpu s`` the process's CPU time (what one core spent, whatever
else the machine is doing); the last column divides the CPU time by the number of
messages: a flat column is linear growth.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from mnemo.context import ContextCompressor
from mnemo.messages import Message

_IDENT = ("user", "order", "cache", "session", "token", "invoice", "report", "handler",
          "config", "payload", "account", "queue", "worker", "client", "router")


def _python_source(r: random.Random, size: int) -> str:
    lines: list[str] = ['"""Generated module."""', "", "from __future__ import annotations", ""]
    while sum(len(x) + 1 for x in lines) < size:
        a, b = r.choice(_IDENT), r.choice(_IDENT)
        lines += [f"def {a}_{b}_{r.randint(0, 999)}({a}: dict, {b}: int = 0) -> dict:",
                  f'    """Return the {a} with its {b} applied."""',
                  f"    if not {a}:",
                  f'        raise ValueError("empty {a}")' if r.random() < 0.2 else
                  "        return {}",
                  f"    result = dict({a})",
                  f'    result["{b}"] = {b} + {r.randint(1, 99)}',
                  "    return result", ""]
    return "\n".join(lines)


def _pytest_log(r: random.Random, size: int) -> str:
    lines = ["============================= test session starts =============================",
             "platform linux -- Python 3.11.9, pytest-8.3.2", "rootdir: /srv/app"]
    while sum(len(x) + 1 for x in lines) < size:
        name = f"tests/test_{r.choice(_IDENT)}.py::test_{r.choice(_IDENT)}_{r.randint(0, 99)}"
        lines.append(f"{name} PASSED")
    if r.random() < 0.25:
        lines += ["=========================== FAILURES ===========================",
                  "    def test_refund():", ">       assert refund(order) == 10",
                  "E       AssertionError: assert 12 == 10",
                  "FAILED tests/test_orders.py::test_refund - AssertionError: assert 12 == 10",
                  "==================== 1 failed, 212 passed in 4.21s ===================="]
    else:
        lines.append("========================= 213 passed in 4.02s =========================")
    return "\n".join(lines)


def _grep_hits(r: random.Random, size: int) -> str:
    lines: list[str] = []
    while sum(len(x) + 1 for x in lines) < size:
        lines.append(f"src/app/{r.choice(_IDENT)}_{r.randint(0, 60)}.py:{r.randint(1, 900)}:"
                     f"    {r.choice(_IDENT)} = load_{r.choice(_IDENT)}({r.choice(_IDENT)})")
    return "\n".join(lines)


def _prose(r: random.Random, size: int) -> str:
    words = ("the", "service", "stores", "each", "request", "in", "a", "queue", "and", "a",
             "worker", "processes", "it", "later", "while", "the", "client", "polls", "for",
             "the", "result", "using", "its", "token")
    text: list[str] = []
    while sum(len(x) + 1 for x in text) < size:
        text.append(" ".join(r.choice(words) for _ in range(r.randint(8, 30))).capitalize()
                    + ".")
    return " ".join(text)


_TOOLS = {"read_file": _python_source, "terminal": _pytest_log, "search": _grep_hits,
          "web_fetch": _prose}


def transcript(n: int, seed: int = 0) -> list[Message]:
    """A system message and agent turns, ``n`` messages in all."""
    r = random.Random(seed)
    pool = {name: [make(r, r.randint(2_000, 20_000)) for _ in range(40)]
            for name, make in _TOOLS.items()}
    out: list[Message] = [{"role": "system", "content": "You are a careful coding agent."}]
    turn = 0
    while len(out) < n:
        out.append({"role": "user", "content": f"Step {turn}: make the {r.choice(_IDENT)} "
                    f"handler in src/app/{r.choice(_IDENT)}.py return 404 for unknown ids. "
                    "Never change the public API."})
        for _ in range(r.randint(1, 4)):
            calls = []
            for k in range(r.choice((1, 1, 1, 2, 3))):
                name = r.choice(tuple(_TOOLS))
                args = ({"command": f"pytest -q tests/test_{r.choice(_IDENT)}.py"}
                        if name == "terminal" else {"path": f"src/app/{r.choice(_IDENT)}.py"})
                calls.append({"id": f"call_{len(out)}_{k}", "type": "function",
                              "function": {"name": name, "arguments": json.dumps(args)}})
            out.append({"role": "assistant", "content": "", "tool_calls": calls})
            for call in calls:
                body = r.choice(pool[call["function"]["name"]])
                out.append({"role": "tool", "tool_call_id": call["id"],
                            "content": f"# {call['id']}\n{body}"})
        out.append({"role": "assistant", "content": f"Step {turn} is done: the handler now "
                    "returns 404. I decided to keep the cache layer as it is."})
        turn += 1
    del out[n:]
    while out[-1].get("role") == "assistant" and out[-1].get("tool_calls"):
        out.pop()  # never end on calls without results
    return out


def _time(messages: list[Message], summarizer: object,
          repeat: int) -> tuple[float, float, int, int]:
    best = best_cpu = float("inf")
    engine = None
    for _ in range(repeat):
        engine = ContextCompressor(context_length=200_000,
                                   summarizer=summarizer)  # type: ignore[arg-type]
        start, start_cpu = time.perf_counter(), time.process_time()
        engine.compress(messages)
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    assert engine is not None and engine.last_report is not None
    return (best, best_cpu, engine.last_report.messages_after,
            engine.last_report.summary_calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    def noop(prompt: str) -> str:
        return "## Goal\n- continue the task"

    print(f"{'messages':>9} {'MB':>7} {'summariser':>10} {'seconds':>8} {'cpu s':>7} "
          f"{'after':>6} {'calls':>6} {'µs/message':>11}")
    for size in (int(s) for s in args.sizes.split(",")):
        messages = transcript(size)
        megabytes = sum(len(str(m.get("content") or "")) for m in messages) / 1e6
        repeat = args.repeat if size <= 10_000 else 1
        for label, summarizer in (("local", None), ("no-op", noop)):
            seconds, cpu, after, calls = _time(messages, summarizer, repeat)
            print(f"{len(messages):>9,} {megabytes:>7.1f} {label:>10} {seconds:>8.3f} "
                  f"{cpu:>7.3f} {after:>6} {calls:>6} {cpu / len(messages) * 1e6:>11.1f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
