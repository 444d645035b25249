"""A stand-in for ``mnemo.llm._serve`` that needs no model: ``python -m support.fake_llama_serve``.

It speaks the same parent protocol (one JSON line on stdout, stop when stdin closes) and
serves ``/health`` and a trivial ``/v1/chat/completions`` (echoing the last message), so
``LocalModelServer``'s lifecycle is tested in milliseconds. The model path picks a
misbehaviour: a name containing ``fail`` reports a load error, ``crash`` exits without a
word, ``silent`` never reports ready.

Like llama.cpp it keeps a "slot": the words of the last prompt and reply. A request
reports in ``timings`` how many of its words came from the slot (``cache_n``) and how many
were read anew (``prompt_n``); ``/slots/0?action=save|restore`` writes the slot to a file
in ``--slot-dir`` and reads it back. ``stream: true`` sends the reply word by word as
server-sent events (with a ``prompt_progress`` chunk when ``return_progress`` is set); a
last message containing ``endless`` streams until the client goes away (counted in
``/stats``). There is one slot: a request waits while another generates, so a client that
left without stopping the generation would make the next request wait forever.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SLOT: dict[str, Any] = {"words": [], "dir": "", "endless_words": 0, "endless_done": 0}
# One slot, like llama.cpp with n_parallel=1: a request waits while another generates.
SLOT_LOCK = threading.Lock()


def _prompt_words(body: dict[str, Any]) -> list[str]:
    words: list[str] = []
    for message in body["messages"]:
        words += str(message.get("content") or "").split()
    return words


def _common(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


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
        if self.path.startswith("/stats"):
            self._send({k: v for k, v in SLOT.items() if k != "words"})
            return
        self._send({"status": "ok"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        if self.path.startswith("/slots/"):
            self._slot(body)
            return
        with SLOT_LOCK:
            self._complete(body)

    def _complete(self, body: dict[str, Any]) -> None:
        last = body["messages"][-1]["content"]
        words = _prompt_words(body)
        cache_n = _common(words, SLOT["words"])
        reply = f"echo: {last}"
        SLOT["words"] = words + reply.split()
        timings = {"cache_n": cache_n, "prompt_n": len(words) - cache_n,
                   "prompt_per_second": 1000.0, "predicted_n": 2,
                   "predicted_per_second": 100.0}
        usage = {"prompt_tokens": len(words), "completion_tokens": 2,
                 "total_tokens": len(words) + 2}
        if body.get("stream"):
            self._stream(body, reply, usage, timings, endless="endless" in str(last))
            return
        self._send({
            "id": "x", "object": "chat.completion", "created": 0, "model": "fake-gguf",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply}}],
            "usage": usage, "timings": timings,
        })

    def _slot(self, body: dict[str, Any]) -> None:
        action = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)["action"][0]
        path = Path(SLOT["dir"]) / body["filename"]
        if action == "save":
            path.write_text(json.dumps(SLOT["words"]))
            self._send({"n_saved": len(SLOT["words"])})
        elif path.is_file():
            SLOT["words"] = json.loads(path.read_text())
            self._send({"n_restored": len(SLOT["words"])})
        else:
            self.send_error(400, "no such file")

    def _event(self, payload: dict[str, Any] | str) -> None:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        chunk = f"data: {data}\n\n".encode()
        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        self.wfile.flush()

    def _stream(self, body: dict[str, Any], reply: str, usage: dict[str, int],
                timings: dict[str, Any], *, endless: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = {"id": "x", "object": "chat.completion.chunk", "created": 0,
                "model": "fake-gguf"}
        if body.get("return_progress"):
            total = usage["prompt_tokens"]
            self._event({**base, "choices": [], "prompt_progress": {
                "total": total, "cache": timings["cache_n"], "processed": total}})
        words = reply.split(" ")
        try:
            number = 0
            while number < len(words) or endless:
                word = words[number] if number < len(words) else "more"
                text = word if number == 0 else " " + word
                self._event({**base, "choices": [{"index": 0, "finish_reason": None,
                                                   "delta": {"content": text}}]})
                number += 1
                if endless:
                    SLOT["endless_words"] += 1
                    time.sleep(0.01)
            self._event({**base, "choices": [{"index": 0, "finish_reason": "stop",
                                               "delta": {}}]})
            self._event({**base, "choices": [], "usage": usage, "timings": timings})
            self._event("[DONE]")
            self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client went away: stop generating, like llama.cpp
            SLOT["endless_done"] += 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--ctx", type=int)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--verbosity", type=int)
    parser.add_argument("--slot-dir", default="")
    args = parser.parse_args()
    SLOT["dir"] = args.slot_dir
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
