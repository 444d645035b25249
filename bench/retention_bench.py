"""How many planted facts the local summariser (C15) keeps when their turns are compacted.

    python bench/retention_bench.py [--sessions 30] [--seed 0]

Long synthetic coding-agent sessions (requests, one to three tool calls per step with
1–6 KB of output, test logs with ordinary failures, answered questions, the odd
preference and decision) get five facts planted at random points between 25% and 60% of
the way through, each with a random token so a match is unambiguous:

* a file path (named by the user, or written by a tool call),
* an exact error string (deep in a long log or traceback),
* a user preference or rule,
* a question the assistant never answers (it must land under "Pending User Asks"),
* a decision the assistant states,

and three kinds held out from the extractor's design — plain statements that use none
of the words its patterns key on (no "must"/"never"/"prefer", no question mark, no path
or ``key=value``), so they measure what survives without a matching pattern:

* ``plain``: a fact the user states in ordinary words ("the … staging database listens on
  port 6543 now"),
* ``cjk``: a fact the user states in Chinese (no spaces between sentences),
* ``assistant``: a fact the assistant states in ordinary words ("the … worker retries
  three times before giving up").

Two ways of compressing, for a 32k and a 128k window, no model involved:

* ``once``: the whole session is compressed in one call;
* ``live``: messages arrive one by one and the session is compressed whenever the
  estimate reaches the threshold, as the agent does — facts must survive every later
  summary update, not just one.

A fact counts only if the message carrying it was compacted (listed in ``removed``);
it is kept if its key string is in the summary in the live context afterwards. The
bar (SPEC §Q) is 90%.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import string
from collections import Counter
from dataclasses import dataclass
from typing import Any

from mnemo.context import SUMMARY_PREFIX, ContextCompressor
from mnemo.context.local_summary import parse_summary_sections
from mnemo.messages import content_text
from mnemo.tokens import estimate_messages_tokens_rough

Msg = dict[str, Any]
COMPONENTS = ("auth", "billing", "search", "export", "notify", "scheduler", "cache", "api",
              "ui", "reports", "ledger", "gateway")
KINDS = ("path", "error", "preference", "pending", "decision", "plain", "cjk", "assistant")

# Held-out statements: none of the words the extractor's patterns look for. ``{t}`` is a
# random token (so a match is unambiguous), ``{c}`` a component, ``{n}`` a number.
PLAIN = (
    "Heads up, the {t} staging database listens on port {n} now.",
    "Our release of {t} is planned for the second week of March.",
    "The budget owner for {t} is Dana from finance.",
    "I'm wondering whether the {t} cron job still runs on the old host",
    "Most {t} customers use the Android app, and they file {n} tickets a week.",
    "The {c} team renamed their channel to {t}-oncall last Friday.",
)
CJK = (
    "{t} 服务的负责人是王工。",
    "测试环境的数据库端口改成了 {n}，编号 {t}。",
    "{t} 项目下周三上线。",
    "{t} 的日志保留九十天。",
)
SAID_BY_ASSISTANT = (
    "The {t} worker retries three times before giving up.",
    "The {t} service reads its settings from the vault at startup.",
    "The {t} table holds about {n} thousand rows.",
    "I found that {t} runs on the shared {c} cluster.",
)


TAG = "x_bench_fact"  # an extra key on the message that carries a fact; copies keep it


@dataclass
class Fact:
    kind: str
    key: str  # the string that must appear in the summary
    tag: int  # the value of TAG on the message that carries it


def _token(r: random.Random) -> str:
    return "".join(r.choice(string.ascii_lowercase) for _ in range(6))


def _code(r: random.Random, size: int) -> str:
    lines: list[str] = []
    while sum(len(x) + 1 for x in lines) < size:
        c = r.choice(COMPONENTS)
        lines += [f"def {c}_{r.randint(1, 99)}(request, session=None):",
                  f'    """Handle the {c} request."""',
                  f"    client = {c.capitalize()}Client(session)",
                  "    if not request.ok:",
                  f"        raise ValueError('bad {c} request')",
                  "    return client.send(request)", ""]
    return "\n".join(lines)


def _log(r: random.Random, size: int, planted: str = "") -> str:
    lines = ["============ test session starts ============", "platform linux, python 3.12"]
    while sum(len(x) + 1 for x in lines) < size:
        c = r.choice(COMPONENTS)
        lines.append(f"tests/test_{c}.py::test_{c}_{r.randint(1, 60)} PASSED")
    failed = 0
    if r.random() < 0.3:
        a, b = r.randint(1, 20), r.randint(21, 40)
        lines += ["__________ test_totals __________", f"E       AssertionError: assert {a} == {b}",
                  f"FAILED tests/test_{r.choice(COMPONENTS)}.py::test_totals - AssertionError"]
        failed = 1
    if planted:
        at = r.randint(len(lines) // 3, len(lines) - 1)
        lines[at:at] = ["Traceback (most recent call last):",
                        '  File "/srv/app/db/pool.py", line 88, in connect', planted]
        failed += 1
    tally = f"{failed} failed, " if failed else ""
    lines.append(f"===== {tally}{r.randint(50, 300)} passed in 3.1s =====")
    return "\n".join(lines)


def _call(cid: str, name: str, **args: Any) -> Msg:
    return {"id": cid, "type": "function", "function": {"name": name,
                                                          "arguments": json.dumps(args)}}


class Session:
    """Builds one session, message by message, planting facts where told."""

    def __init__(self, r: random.Random, steps: int) -> None:
        self.r = r
        self.messages: list[Msg] = [{"role": "system", "content": "You are a coding agent."}]
        self.facts: list[Fact] = []
        plant_at = sorted(r.sample(range(int(steps * 0.25), int(steps * 0.6)), len(KINDS)))
        kinds = list(KINDS)
        r.shuffle(kinds)
        self.plan = dict(zip(plant_at, kinds, strict=True))
        for step in range(steps):
            self.step(step, self.plan.get(step))

    def add(self, message: Msg, fact: tuple[str, str] | None = None) -> None:
        self.messages.append(message)
        if fact:
            message[TAG] = len(self.facts)
            self.facts.append(Fact(fact[0], fact[1], len(self.facts)))

    def tool_round(self, step: int, planted_error: str = "") -> None:
        r = self.r
        calls = []
        for k in range(r.choice((1, 1, 2, 3))):
            c = r.choice(COMPONENTS)
            name = r.choice(("read_file", "read_file", "terminal", "search"))
            args = ({"command": f"pytest -q tests/test_{c}.py"} if name == "terminal"
                    else {"path": f"src/{c}/{c}_{r.randint(1, 30)}.py"})
            calls.append(_call(f"s{step}_{k}_{len(self.messages)}", name, **args))
        self.add({"role": "assistant", "content": "", "tool_calls": calls})
        for i, call in enumerate(calls):
            name = call["function"]["name"]
            size = r.randint(1_000, 6_000)
            if planted_error and i == 0:  # a test run, or a log file the agent reads
                body = _log(r, size, planted_error)
                if name != "terminal":
                    call["function"]["arguments"] = json.dumps({"path": "logs/app.log"})
                self.add({"role": "tool", "tool_call_id": call["id"], "content": body},
                         ("error", planted_error.split(": ", 1)[-1]))
                continue
            body = _log(r, size) if name == "terminal" else _code(r, size)
            self.add({"role": "tool", "tool_call_id": call["id"], "content": body})

    def step(self, step: int, plant: str | None) -> None:
        r = self.r
        c, tok = r.choice(COMPONENTS), _token(r)
        write_path = plant == "path" and r.random() < 0.5
        if plant == "path" and not write_path:
            path = f"deploy/{tok}/values-staging.yaml"
            self.add({"role": "user", "content": f"The staging overrides for {c} live in "
                      f"{path}, keep them in sync with production."}, ("path", path))
        elif plant == "preference":
            a, b = r.choice((("httpx", "requests"), ("pytest", "unittest"), ("ruff", "flake8")))
            text = r.choice((f"From now on I prefer {a} over {b} in the {tok} service.",
                             f"Never call the {tok} endpoint directly from tests.",
                             f"Always run make lint-{tok} before committing."))
            key = text.split(" ", 2)[2] if text.startswith("From") else text
            self.add({"role": "user", "content": text}, ("preference", key.rstrip(".")))
        elif plant in ("plain", "cjk"):
            template = r.choice(PLAIN if plant == "plain" else CJK)
            text = template.format(t=tok, c=c, n=r.randint(1_000, 9_999))
            self.add({"role": "user", "content": text}, (plant, _core(text)))
        elif plant == "pending":
            text = (f"Also, can you find out whether the {tok} nightly backup still runs at "
                    "02:00 UTC?")
            self.add({"role": "user", "content": text}, ("pending", f"{tok} nightly backup"))
        elif r.random() < 0.15:
            question = f"Why does tests/test_{c}.py fail on CI?"
            self.add({"role": "user", "content": question})
            self.tool_round(step)
            self.add({"role": "assistant", "content": f"tests/test_{c}.py fails on CI because "
                      f"the {c} fixture is not reset between runs; I fixed the fixture."})
            return
        else:
            extra = " Use type hints everywhere." if r.random() < 0.05 else ""
            self.add({"role": "user", "content": f"Step {step}: refactor src/{c}/{c}_"
                      f"{r.randint(1, 30)}.py to use the new {c} client.{extra}"})
        if write_path:  # the other half of the path facts: a file the agent writes
            path = f"migrations/{tok}_add_{c}_index.sql"
            self.add({"role": "assistant", "content": "", "tool_calls": [
                _call(f"w{step}", "write_file", path=path, content="CREATE INDEX ...;")]},
                ("path", path))
            self.add({"role": "tool", "tool_call_id": f"w{step}", "content": "ok"})
        for _ in range(r.randint(1, 3)):
            error = ""
            if plant == "error":
                error = r.choice((
                    f'psycopg2.OperationalError: FATAL: password authentication failed for '
                    f'user "svc_{tok}"',
                    f"KeyError: 'tenant_{tok}' not found in the routing table",
                    f"error[E0382]: borrow of moved value: `cfg_{tok}`"))
                plant = None
            self.tool_round(step, error)
        if plant == "decision":
            x, y = r.choice((("Redis", "Postgres"), ("SQS", "Kafka"), ("gRPC", "REST")))
            text = f"We decided to use {x} instead of {y} for the {c} {tok} queue."
            self.add({"role": "assistant", "content": text},
                     ("decision", f"use {x} instead of {y} for the {c} {tok} queue"))
        elif plant == "assistant":
            text = r.choice(SAID_BY_ASSISTANT).format(t=tok, c=c, n=r.randint(10, 999))
            self.add({"role": "assistant", "content": f"Step {step} done. {text}"},
                     ("assistant", _core(text)))
        elif r.random() < 0.05:
            self.add({"role": "assistant", "content": f"I'll reuse the existing {c} helper "
                      "instead of writing a new one."})
        else:
            self.add({"role": "assistant", "content": f"Step {step} done: src/{c} uses the "
                      "new client and the tests pass."})


def _core(sentence: str) -> str:
    """What must survive of a held-out statement: the sentence without its end mark."""
    return sentence.rstrip(".。")


def _summary_text(messages: list[Msg]) -> str:
    return "\n".join(content_text(m) for m in messages
                     if content_text(m).startswith(SUMMARY_PREFIX))


def _kept(fact: Fact, summary: str) -> bool:
    if fact.kind == "pending":
        sections = parse_summary_sections(summary.split("\n\n", 1)[-1])
        return any(fact.key in line for line in sections.get("Pending User Asks", []))
    return fact.key in summary


def _compacted(before: list[Msg], removed: list[int]) -> set[int]:
    return {before[i][TAG] for i in removed if TAG in before[i]}


def run_once(session: Session, window: int) -> tuple[Counter[str], Counter[str]]:
    engine = ContextCompressor(context_length=window)
    out = engine.compress(session.messages)  # type: ignore[arg-type]
    assert engine.last_report is not None
    compacted = _compacted(session.messages, engine.last_report.removed)
    return _score(session.facts, compacted, _summary_text(out))  # type: ignore[arg-type]


def run_live(session: Session, window: int) -> tuple[Counter[str], Counter[str]]:
    engine = ContextCompressor(context_length=window)
    live: list[Msg] = []
    compacted: set[int] = set()
    for message in session.messages:
        live.append(message)
        if message["role"] == "assistant" and message.get("tool_calls"):
            continue  # the agent compresses between calls, never with results pending
        if estimate_messages_tokens_rough(live) >= engine.threshold_tokens:  # type: ignore[arg-type]
            before = live
            live = engine.compress(live)  # type: ignore[arg-type,assignment]
            assert engine.last_report is not None
            compacted |= _compacted(before, engine.last_report.removed)
    return _score(session.facts, compacted, _summary_text(live))


def _score(facts: list[Fact], compacted: set[int], summary: str
           ) -> tuple[Counter[str], Counter[str]]:
    total: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    for fact in facts:
        if fact.tag not in compacted:
            continue
        total[fact.kind] += 1
        kept[fact.kind] += _kept(fact, summary)
    return total, kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--steps", type=int, default=160)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.getLogger("mnemo.context").setLevel(logging.ERROR)
    runs = [(window, mode, run) for window in (32_000, 128_000)
            for mode, run in (("once", run_once), ("live", run_live))]
    results: list[tuple[Counter[str], Counter[str]]] = []
    for _window, _mode, run in runs:
        total: Counter[str] = Counter()
        kept: Counter[str] = Counter()
        for s in range(args.sessions):
            session = Session(random.Random(args.seed * 1_000 + s), args.steps)
            t, k = run(session, _window)
            total += t
            kept += k
        results.append((total, kept))
    print(f"{args.sessions} sessions of {args.steps} steps; kept / compacted per kind")
    print(f"{'kind':<22}" + "".join(f"{f'{w // 1000}k {m}':>16}" for w, m, _ in runs))
    groups = [(k, (k,)) for k in KINDS] + [
        ("designed (5 kinds)", KINDS[:5]), ("held out (3 kinds)", KINDS[5:]), ("all", KINDS)]
    for label, kinds in groups:
        cells = []
        for total, kept in results:
            t, k = sum(total[x] for x in kinds), sum(kept[x] for x in kinds)
            cells.append(f"{k:>4}/{t:<4} " + (f"{k / t:>4.0%}" if t else "   -"))
        if label.startswith("designed"):
            print("-" * (22 + 16 * len(runs)))
        print(f"{label:<22}" + "".join(f"{c:>16}" for c in cells))


if __name__ == "__main__":
    main()
