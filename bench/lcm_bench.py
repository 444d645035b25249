"""What the lossless engine (``lcm``, C16) keeps recoverable, and what it costs in context.

    python bench/lcm_bench.py [--turns 600] [--context-length 32000] [--seed 0]

One long synthetic coding-agent session (requests, file reads of 2–6 KB, test runs with
failures, plain answers) is played through each engine the way the agent does it: every
message is appended to a real ``SessionStore``; before each turn, if the rough estimate
reaches the threshold, the conversation is compacted and the output stored with
``sync_live``. Every fourth turn plants a fact — ``the <topic> ticket is <TOKEN>`` — in a
user message, deep inside a tool output, or in an assistant reply.

After the session, for every planted fact whose message left the live context:

* **lcm exact**: ``context_grep(TOKEN)``, then ``context_expand`` on the node of the best
  match (paging with ``next_offset``); recovered if the expanded message holds the token;
* **lcm topic**: the same, but the model only remembers the topic
  (``context_grep("<topic> ticket")``): recovered if the token is in one of the first 5
  matches' expanded messages — the model does not know the token, so it reads them;
* **lcm whole message**: the expanded message is the original, character for character;
* **in context**: the token is in the live context at the end (the summary or a kept
  turn) — the only way a fact survives with no tools at all;
* **compressor + session_search**: the compressor's agent archives too (D3), so the
  same questions go to ``session_search`` (exact: limit 1, topic: limit 5); "whole" means
  the original content appears unclipped in its answer.

It also reports the live context after every compaction for both engines (messages and
rough tokens), compaction time, and the time of the tools on the final session.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
import string
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemo.context import ContextCompressor, ContextEngine, is_summary_message
from mnemo.context.lcm import LosslessContextEngine
from mnemo.context.lcm_index import build_index
from mnemo.messages import content_text
from mnemo.sessions import SessionStore, session_search
from mnemo.tokens import estimate_messages_tokens_rough

Msg = dict[str, Any]
ADJECTIVES = ("amber", "brisk", "coral", "dusky", "eager", "fuzzy", "gilded", "hollow",
              "ivory", "jolly", "khaki", "lunar", "mossy", "navy", "olive", "plucky")
ANIMALS = ("badger", "condor", "dingo", "egret", "ferret", "gecko", "heron", "ibis",
           "jackal", "koala", "lemur", "marmot", "newt", "ocelot", "puffin", "quokka")
PLACES = ("north", "south", "east", "west", "upper", "lower", "inner", "outer")
COMPONENTS = ("auth", "billing", "search", "export", "notify", "cache", "ledger", "gateway")
WHERE = ("user", "tool", "assistant")


@dataclass
class Fact:
    topic: str
    token: str
    where: str
    text: str = ""  # the whole content of the message that carries it


def _token(r: random.Random) -> str:
    letters = "".join(r.choice(string.ascii_uppercase) for _ in range(3))
    return f"{letters}-{r.randint(1000, 9999)}-{r.choice(string.ascii_lowercase)}"


def _code(r: random.Random, size: int, planted: str = "") -> str:
    lines: list[str] = []
    while sum(len(x) + 1 for x in lines) < size:
        c = r.choice(COMPONENTS)
        lines += [f"def {c}_{r.randint(1, 99)}(request, session=None):",
                  f"    client = {c.capitalize()}Client(session)",
                  "    if not request.ok:",
                  f"        raise ValueError('bad {c} request')",
                  "    return client.send(request)", ""]
    if planted:
        lines.insert(len(lines) // 2, planted)
    return "\n".join(lines)


def _log(r: random.Random, size: int) -> str:
    lines = ["============ test session starts ============"]
    while sum(len(x) + 1 for x in lines) < size:
        c = r.choice(COMPONENTS)
        lines.append(f"tests/test_{c}.py::test_{c}_{r.randint(1, 40)} "
                     f"{r.choice(['PASSED', 'PASSED', 'PASSED', 'FAILED'])}")
    lines.append(f"E   AssertionError: {r.choice(COMPONENTS)} returned {r.randint(400, 599)}")
    return "\n".join(lines)


def build_session(turns: int, seed: int) -> tuple[list[list[Msg]], list[Fact]]:
    """The session as a list of turns (each a list of messages), and the planted facts."""
    r = random.Random(seed)
    topics = [f"{p} {a} {b}" for p in PLACES for a in ADJECTIVES for b in ANIMALS]
    r.shuffle(topics)
    facts: list[Fact] = []
    out: list[list[Msg]] = []
    for t in range(turns):
        fact = None
        if t % 4 == 1:
            fact = Fact(topics[len(facts) % len(topics)], _token(r), WHERE[len(facts) % 3])
            facts.append(fact)
        line = f"the {fact.topic} ticket is {fact.token}" if fact else ""
        c = r.choice(COMPONENTS)
        path = f"src/{c}/module_{t}.py"
        ask = f"Step {t}: the {c} handler returns the wrong status; look at {path} and fix it."
        if fact and fact.where == "user":
            ask += f" By the way, {line}."
        cid = f"call_{t}"
        turn: list[Msg] = [{"role": "user", "content": ask}]
        if t % 3 == 2:
            turn += [
                {"role": "assistant", "content": "Running the tests first.", "tool_calls": [{
                    "id": cid, "type": "function", "function": {
                        "name": "terminal",
                        "arguments": json.dumps({"command": f"pytest tests/test_{c}.py"})}}]},
                {"role": "tool", "tool_call_id": cid, "content": _log(r, r.randint(2000, 4000))},
            ]
        planted = f"# NOTE: {line}" if fact and fact.where == "tool" else ""
        rid = f"{cid}_read"
        turn += [
            {"role": "assistant", "content": "Let me read it.", "tool_calls": [{
                "id": rid, "type": "function", "function": {
                    "name": "read_file", "arguments": json.dumps({"path": path})}}]},
            {"role": "tool", "tool_call_id": rid,
             "content": _code(r, r.randint(2000, 6000), planted)},
        ]
        answer = f"Fixed {path}: the {c} handler now checks the status before sending."
        if fact and fact.where == "assistant":
            answer += f" I also noted that {line}."
        turn.append({"role": "assistant", "content": answer})
        if fact:
            fact.text = next(str(m["content"]) for m in turn if fact.token in str(m["content"]))
        out.append(turn)
    return out, facts


@dataclass
class Run:
    engine: ContextEngine
    store: SessionStore
    session_id: str
    live: list[Msg]
    sizes: list[tuple[int, int]]  # (messages, tokens) after each compaction
    seconds: list[float]


def play(engine: ContextEngine, store: SessionStore, turns: list[list[Msg]]) -> Run:
    """The agent's loop without a model: store each message, compact when due, sync."""
    system = {"role": "system", "content": "You are a careful coding agent."}
    sid = store.create_session(source="bench")
    engine.on_session_start(sid)
    run = Run(engine, store, sid, [], [], [])
    for turn in turns:
        if engine.should_compress_preflight([system, *run.live, *turn[:1]]):
            started = time.perf_counter()
            out = engine.compress([system, *run.live])
            run.seconds.append(time.perf_counter() - started)
            if engine.last_report is not None and engine.last_report.changed:
                run.live = out[1:]
                store.sync_live(sid, run.live)
            run.sizes.append((len(run.live), estimate_messages_tokens_rough([system, *run.live])))
        for message in turn:
            store.append_message(sid, message)
            run.live.append(message)
    return run


def tool(engine: ContextEngine, name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(engine.handle_tool_call(name, args))
    return result


def expanded_text(engine: ContextEngine, node_id: str, message_id: int) -> tuple[str, int]:
    """The content of one message under a node, paging; and how many expand calls it took."""
    offset: int | None = 0
    calls = 0
    while offset is not None:
        page = tool(engine, "context_expand", node_id=node_id, offset=offset, max_tokens=4000)
        calls += 1
        for entry in page.get("messages", []):
            if entry["message_id"] == message_id:
                return str(entry["content"]), calls
        offset = page.get("next_offset")
    return "", calls


def recover(engine: ContextEngine, query: str, token: str, top: int) -> tuple[str, int]:
    """Grep, then expand the first ``top`` matches: (the message holding the token, or
    "", and the tool calls made)."""
    result = tool(engine, "context_grep", pattern=query, limit=top)
    calls = 1
    for match in result.get("matches", [])[:top]:
        if not match.get("node_id"):
            continue
        text, used = expanded_text(engine, match["node_id"], match["message_id"])
        calls += used
        if token in text:
            return text, calls
    return "", calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=600)
    parser.add_argument("--context-length", type=int, default=32_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    turns, facts = build_session(args.turns, args.seed)
    total_messages = sum(len(t) for t in turns)
    total_tokens = sum(estimate_messages_tokens_rough(t) for t in turns)
    print(f"session: {args.turns} turns, {total_messages:,} messages, ~{total_tokens:,} tokens; "
          f"{len(facts)} planted facts; context length {args.context_length:,}\n")
    with tempfile.TemporaryDirectory() as folder:
        lcm_store = SessionStore(Path(folder) / "lcm.db")
        lcm = play(LosslessContextEngine(context_length=args.context_length, sessions=lcm_store),
                   lcm_store, turns)
        plain_store = SessionStore(Path(folder) / "compressor.db")
        plain = play(ContextCompressor(context_length=args.context_length), plain_store, turns)
        report_sizes(lcm, plain)
        report_recovery(lcm, plain, facts)
        report_costs(lcm)
        lcm_store.close()
        plain_store.close()


def report_sizes(lcm: Run, plain: Run) -> None:
    print("live context after each compaction (messages / ~tokens):")
    print(f"{'compaction':>10} | {'lcm':>16} | {'compressor':>16}")
    count = max(len(lcm.sizes), len(plain.sizes))
    shown = sorted({0, 1, 2, count // 4, count // 2, 3 * count // 4, count - 1})
    for i in shown:
        cells = [f"{s[i][0]:>5} / {s[i][1]:>7,}" if i < len(s) else f"{'-':>16}"
                 for s in (lcm.sizes, plain.sizes)]
        print(f"{i + 1:>10} | {cells[0]:>16} | {cells[1]:>16}")
    for label, run in (("lcm", lcm), ("compressor", plain)):
        tokens = [t for _, t in run.sizes]
        print(f"{label:>10}: {len(run.sizes)} compactions, mean ~{statistics.mean(tokens):,.0f} "
              f"tokens after (max ~{max(tokens):,}), compress {_ms(run.seconds)}")
    print()


def report_recovery(lcm: Run, plain: Run, facts: list[Fact]) -> None:
    live_text = {name: "\n".join(content_text(m) for m in run.live)
                 for name, run in (("lcm", lcm), ("compressor", plain))}
    # The fact's own message left the context (a summary may still mention it).
    turns_text = "\n".join(content_text(m) for m in lcm.live if not is_summary_message(m))
    gone = [f for f in facts if f.token not in turns_text]
    rows: dict[str, list[bool]] = {name: [] for name in (
        "lcm exact", "lcm topic", "lcm whole message", "lcm in context",
        "compressor in context", "compressor + session_search exact",
        "compressor + session_search topic", "compressor + session_search whole")}
    by_where: dict[str, list[bool]] = {w: [] for w in WHERE}
    calls: list[int] = []
    for fact in gone:
        exact, used = recover(lcm.engine, fact.token, fact.token, top=1)
        topic, _ = recover(lcm.engine, f"{fact.topic} ticket", fact.token, top=5)
        rows["lcm exact"].append(bool(exact))
        rows["lcm topic"].append(bool(topic))
        rows["lcm whole message"].append(exact == fact.text)
        rows["lcm in context"].append(fact.token in live_text["lcm"])
        rows["compressor in context"].append(fact.token in live_text["compressor"])
        # The compressor's agent archives too (D3): session_search reaches the archive,
        # with a snippet around the match and message contents clipped for the model.
        found = session_search(fact.token, limit=1, store=plain.store,
                               current_session_id=plain.session_id)
        rows["compressor + session_search exact"].append(fact.token in found)
        rows["compressor + session_search whole"].append(
            json.dumps(fact.text, ensure_ascii=False)[1:-1] in found)
        found = session_search(f"{fact.topic} ticket", limit=5, store=plain.store,
                               current_session_id=plain.session_id)
        rows["compressor + session_search topic"].append(fact.token in found)
        by_where[fact.where].append(bool(exact and topic))
        calls.append(used)
    print(f"planted facts whose message left the live context: {len(gone)} of {len(facts)}")
    print(f"{'recovered by':<34} | {'share':>7} | count")
    for label, hits in rows.items():
        print(f"{label:<34} | {_pct(hits):>7} | {sum(hits)}/{len(hits)}")
    print("lcm exact + topic, by where the fact was: " + ", ".join(
        f"{w} {_pct(h)}" for w, h in by_where.items()))
    if calls:
        print(f"tool calls per exact recovery: mean {statistics.mean(calls):.2f}, "
              f"max {max(calls)}")
    print()


def report_costs(lcm: Run) -> None:
    engine = lcm.engine
    assert isinstance(engine, LosslessContextEngine) and engine.sessions is not None
    status = engine.get_status()
    started = time.perf_counter()
    index = build_index(engine.sessions, lcm.session_id)  # a cold read of the whole session
    cold = time.perf_counter() - started
    depth = max((len(index.node_path(m)) for m in index.owner), default=0)
    greps = []
    # Ranked words, an exact identifier, alternatives (a full scan), a path.
    for word in ("ticket", "AssertionError", "status 500|status 503", "module_12.py"):
        started = time.perf_counter()
        tool(engine, "context_grep", pattern=word)
        greps.append(time.perf_counter() - started)
    top = next(n for n, r in index.nodes.items() if r.active and r.kind == "summary")
    started = time.perf_counter()
    tool(engine, "context_expand", node_id=top)
    expand = time.perf_counter() - started
    print(f"lcm archive: {engine.sessions.count_messages(lcm.session_id):,} stored messages, "
          f"{status['summary_nodes']} summary nodes, {status['tool_output_nodes']} tool-output "
          f"nodes, deepest nesting {depth}")
    print(f"index read (cold) {cold * 1000:.0f} ms; context_grep {_ms(greps)}; "
          f"context_expand {expand * 1000:.1f} ms")


def _ms(seconds: list[float]) -> str:
    if not seconds:
        return "-"
    return (f"mean {statistics.mean(seconds) * 1000:.1f} ms, "
            f"max {max(seconds) * 1000:.1f} ms")


def _pct(hits: list[bool]) -> str:
    return f"{100 * sum(hits) / len(hits):.1f}%" if hits else "-"


if __name__ == "__main__":
    main()
