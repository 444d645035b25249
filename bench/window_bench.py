"""Requests over the window in paste-heavy sessions (C19; target: 0).

    python bench/window_bench.py [--turns 50] [--sessions 3] [--seed 0] [--windows 8192,32768]
    python bench/window_bench.py --embedded --turns 12     # the embedded model, for real

A session is ``--turns`` user turns, most of them pastes — logs, JSON, code, prose, from
0.5 to 30 KB — and a third of them asking for a tool whose output is 1 to 60 KB. The
scripted model counts every prompt with a real tokenizer (OpenAI's o200k through
``bpe-openai``, the ``tokenizer`` extra), adds its own chat-template framing, and refuses a
prompt over its window as llama.cpp does. Two ways the agent can count:

* ``exact``: the model's tokenizer is offered to the agent (as the embedded model's is);
* ``estimate``: it is not; the agent estimates by the shape of the text and corrects by
  the prompt sizes the model reports.

Reported per window and mode: requests, requests over the window (refused by the model),
requests over the budget (window − reply reserve), turns that failed, compactions that
summarised, messages cut, messages left out, and the fullest request as a share of the
window. ``--embedded`` runs the same kind of session on the embedded local model (8k
window; slow on a CPU: keep ``--turns`` small).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mnemo.agent import build_agent
from mnemo.config import MnemoConfig
from mnemo.errors import ContextLengthExceededError, MnemoError
from mnemo.home import Home
from mnemo.llm.testing import ChatRequest, ScriptedChatClient, assistant_tool_call
from mnemo.llm.types import ChatResponse, Usage
from mnemo.messages import Message, content_text
from mnemo.tokens import BpeTokenCounter

READ_FILE = {"name": "read_file", "description": "Read a file of the project.",
             "parameters": {"type": "object", "properties": {"size": {"type": "integer"}},
                            "required": ["size"]}}


class BenchModel(ScriptedChatClient):
    """A scripted model with a real tokenizer, its own framing and a hard window."""

    def __init__(self, window: int, tokenizer: BpeTokenCounter, *, share: bool) -> None:
        super().__init__(context_length=window, default=_reply)
        self.tokenizer = tokenizer
        self.share = share
        self.sizes: list[int] = []
        self.refused = 0

    def token_counter(self) -> BpeTokenCounter | None:
        return self.tokenizer if self.share else None

    def count(self, text: str) -> int:
        # In pieces: bpe-openai refuses one input over 200,000 tokens, and a baseline run
        # (an older mnemo) sends requests far bigger than that.
        return sum(self.tokenizer.count(text[i:i + 100_000])
                   for i in range(0, len(text), 100_000))

    def prompt_tokens(self, messages: Sequence[Message], tools: Sequence[Any] | None) -> int:
        total = 3
        for m in messages:
            total += 5 + self.count(content_text(m))
            for call in m.get("tool_calls") or []:
                total += self.count(json.dumps(call["function"]))
        if tools:
            total += 90 + self.count(json.dumps(list(tools)))
        return total

    def complete(self, messages: Sequence[Message], *, tools: Sequence[Any] | None = None,
                 max_tokens: int | None = None, temperature: float | None = None
                 ) -> ChatResponse:
        size = self.prompt_tokens(messages, tools)
        self.sizes.append(size)
        assert self.context_length is not None
        if size > self.context_length:
            self.refused += 1
            raise ContextLengthExceededError(f"request ({size} tokens) exceeds the available "
                                             f"context size ({self.context_length} tokens)")
        response = super().complete(messages, tools=tools)
        return ChatResponse(message=response.message, usage=Usage.of(size, 20),
                            finish_reason=response.finish_reason, model=self.model)


def _reply(request: ChatRequest) -> str | Message:
    last = request.messages[-1]
    text = content_text(last)
    if last["role"] == "user" and text.startswith("read:") and "read_file" in request.tool_names:
        return assistant_tool_call("read_file", {"size": int(text[5:].split()[0])},
                                   call_id=f"call_{len(request.messages)}")
    return "I looked at it: the errors start after the retry storm at 15:23."


def paste(r: random.Random, size: int) -> str:
    kind = r.choice(["log", "log", "json", "code", "prose"])
    out: list[str] = []
    n = 0
    while n < size:
        if kind == "log":
            line = (f"2026-11-30 15:{r.randint(0, 59):02d}:{r.randint(0, 59):02d},"
                    f"{r.randint(0, 999):03d} {r.choice(['INFO', 'WARN', 'ERROR'])} "
                    f"[worker-{r.randint(1, 9)}] id=0x{r.getrandbits(32):08x} "
                    f"took {r.randint(1, 5000)} ms")
        elif kind == "json":
            line = json.dumps({"id": r.randint(1, 10**6), "score": r.random(),
                               "tags": [r.choice("abcdef") * 3]})
        elif kind == "code":
            line = f"    result_{n} = compute(value={r.randint(0, 99)}, retries=3)  # step {n}"
        else:
            line = ("The deployment failed after the migration because the worker pool was "
                    "drained before the new schema was in place.")
        out.append(line)
        n += len(line) + 1
    return "\n".join(out)[:size]


def run_session(window: int, turns: int, seed: int, tokenizer: BpeTokenCounter,
                share: bool) -> dict[str, Any]:
    r = random.Random(seed)
    with tempfile.TemporaryDirectory() as folder:
        home = Home(Path(folder))
        home.ensure()
        model = BenchModel(window, tokenizer, share=share)
        agent = build_agent(MnemoConfig(), home=home, cwd=Path(folder), client=model)
        agent.start()
        agent.tools.add(READ_FILE, lambda args: paste(random.Random(args["size"]),
                                                      int(args["size"])))
        failed = summaries = cuts = dropped = 0
        with agent:
            for _ in range(turns):
                size = r.choice([500, 1500, 2600, 4000, 8000, 15000, 30000])
                text = (f"read:{r.randint(1000, 60000)} " if r.random() < 0.33 else "") + \
                    "Look at this:\n" + paste(r, size)
                try:
                    result = agent.run_turn(text)
                except MnemoError:
                    failed += 1
                    continue
                for c in result.compactions:
                    summaries += c.report.summary is not None
                    fit = getattr(c, "fit", None)  # None before the window guard (C19)
                    if fit is not None:
                        cuts += len(fit.cuts)
                        dropped += len(fit.dropped)
            # Without the guard (``--baseline`` on an older mnemo) the budget is the window.
            guard = getattr(agent, "window", None)
            budget = guard.budget if guard is not None else window
    return {"requests": len(model.sizes), "over_window": model.refused,
            "over_budget": sum(s > budget for s in model.sizes), "failed_turns": failed,
            "summaries": summaries, "cut": cuts, "left_out": dropped,
            "fullest": max(model.sizes) / window}


def embedded(turns: int, seed: int) -> None:
    from mnemo.llm import LocalChatClient

    r = random.Random(seed)
    with tempfile.TemporaryDirectory() as folder:
        home = Home(Path(folder))
        home.ensure()
        client = LocalChatClient(home=home, context_length=8192, max_tokens=32, timeout=900)
        sizes: list[int] = []
        original = client.complete

        def recording(messages: Any, **kwargs: Any) -> ChatResponse:
            response = original(messages, **kwargs)
            sizes.append(response.usage.prompt_tokens)
            return response

        client.complete = recording  # type: ignore[method-assign]
        agent = build_agent(MnemoConfig(), home=home, cwd=Path(folder), client=client)
        failed, started = 0, time.monotonic()
        with agent:
            for turn in range(turns):
                text = "What went wrong?\n" + paste(r, r.choice([1500, 2600, 4000, 8000]))
                try:
                    agent.run_turn(text)
                except MnemoError as exc:
                    failed += 1
                    print(f"  turn {turn + 1}: {type(exc).__name__}: {exc}")
            budget = agent.window.budget
        print(f"embedded model, 8,192-token window, {turns} turns: {len(sizes)} requests, "
              f"{sum(s > 8192 for s in sizes)} over the window, "
              f"{sum(s > budget for s in sizes)} over the budget ({budget:,}), "
              f"{failed} failed turns, fullest {max(sizes, default=0):,} tokens, "
              f"{time.monotonic() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--windows", default="8192,32768,131072")
    parser.add_argument("--embedded", action="store_true")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    if args.embedded:
        embedded(args.turns, args.seed)
        return
    tokenizer = BpeTokenCounter()
    print(f"{'window':>8} {'mode':>9} {'requests':>8} {'over win':>8} {'over bud':>8} "
          f"{'failed':>6} {'summ.':>5} {'cut':>5} {'left out':>8} {'fullest':>7}")
    for window in (int(w) for w in args.windows.split(",")):
        for mode in ("exact", "estimate"):
            totals: dict[str, float] = {}
            for session in range(args.sessions):
                row = run_session(window, args.turns, args.seed + session, tokenizer,
                                  share=mode == "exact")
                for key, value in row.items():
                    totals[key] = (max(totals.get(key, 0), value) if key == "fullest"
                                   else totals.get(key, 0) + value)
            print(f"{window:>8,} {mode:>9} {totals['requests']:>8.0f} "
                  f"{totals['over_window']:>8.0f} {totals['over_budget']:>8.0f} "
                  f"{totals['failed_turns']:>6.0f} {totals['summaries']:>5.0f} "
                  f"{totals['cut']:>5.0f} {totals['left_out']:>8.0f} {totals['fullest']:>7.0%}")


if __name__ == "__main__":
    main()
