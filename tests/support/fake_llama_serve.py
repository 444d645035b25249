"""A stand-in for ``mnemo.llm._serve`` that needs no model: ``python -m support.fake_llama_serve``.

It speaks the same parent protocol (one JSON line on stdout, stop when stdin closes) and
serves ``/health`` and a trivial ``/v1/chat/completions`` (echoing the last message), so
``LocalModelServer``'s lifecycle is tested in milliseconds. The model path picks a
misbehaviour: a name containing ``fail`` reports a load error, ``crash`` exits without a
word, ``silent`` never reports ready.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send({"status": "ok"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        last = body["messages"][-1]["content"]
        self._send({
            "id": "x", "object": "chat.completion", "created": 0, "model": "fake-gguf",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": f"echo: {last}"}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        })


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--ctx", type=int)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--verbosity", type=int)
    args = parser.parse_args()
    name = Path(args.model).name
    if "crash" in name:
        os._exit(3)
    if "fail" in name:
        print(json.dumps({"error": "RuntimeError: Failed to init server"}), flush=True)
        os._exit(1)
    if "silent" in name:
        sys.stdin.buffer.read()
        os._exit(0)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    print(json.dumps({"address": f"http://127.0.0.1:{httpd.server_address[1]}",
                      "load_seconds": 0.01, "threads": args.threads, "ctx": args.ctx}),
          flush=True)
    sys.stdin.buffer.read()
    os._exit(0)


if __name__ == "__main__":
    main()
