"""The child process that hosts the embedded model: ``python -m mnemo.llm._serve``.

``LocalModelServer`` starts this module with the model settings as arguments. It loads
the GGUF into xllamacpp's in-process llama.cpp server (OpenAI-compatible HTTP on a free
127.0.0.1 port), prints one JSON line on stdout — ``{"address": ..., "load_seconds": ...}``
or ``{"error": ...}`` — and then waits for its stdin to close. The parent holds the other
end of that pipe, so when the parent exits for any reason (even ``kill -9``) the pipe
closes and this process shuts the server down and exits: it cannot outlive its owner.

Running the model in a child rather than in the caller's process keeps llama.cpp's
threads, memory and native crashes away from the agent, and lets the memory go back to
the system when the server stops.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

# A fixed sampler seed: the same request gives the same bytes at any temperature.
SEED = 42


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m mnemo.llm._serve")
    parser.add_argument("--model", required=True, help="path of the GGUF file")
    parser.add_argument("--ctx", type=int, default=8192, help="context window in tokens")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads")
    parser.add_argument("--verbosity", type=int, default=0, help="llama.cpp log verbosity")
    parser.add_argument("--slot-dir", default="",
                        help="folder for saved prompt caches (enables /slots save/restore)")
    return parser.parse_args(argv)


def _emit(payload: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    started = time.monotonic()
    try:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = args.model
        params.n_ctx = args.ctx
        params.n_parallel = 1  # one slot: the whole window serves one request at a time
        # Prompt batches of 512 tokens: progress is reported (and a dropped client noticed)
        # once per batch, so a long prompt shows it is moving; 512 is also the micro-batch,
        # so this costs no speed.
        params.n_batch = 512
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # the OS picks a free port; no race with other processes
        params.verbosity = args.verbosity
        params.use_jinja = True  # the GGUF's own chat template, tool calls included
        params.ui = False
        params.sampling.seed = SEED
        params.cache_prompt = True  # reuse the KV cache of a repeated prefix across requests
        if args.slot_dir:
            # /slots/0?action=save|restore: the prompt cache outlives the process.
            params.slot_save_path = args.slot_dir.rstrip("/") + "/"
            params.endpoint_slots = True
        server = xllamacpp.Server(params)
    except Exception as exc:
        _emit({"error": f"{type(exc).__name__}: {exc}"})
        return 1
    _emit({"address": server.listening_address,
           "load_seconds": round(time.monotonic() - started, 3)})
    # Block until the parent closes our stdin (or dies): that is the stop signal.
    sys.stdin.buffer.read()
    # Exit at once instead of running the server's destructor: it sometimes waits forever
    # for its HTTP loop when stopped right after a start, and the OS frees everything the
    # process holds anyway.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
