"""A fake OpenAI-compatible server on 127.0.0.1 for tests: scripted replies, recorded requests.

It is a real HTTP server (stdlib ``http.server`` in a thread), so the real ``openai`` SDK,
its HTTP stack and our retry and error mapping all run as in production — which mocks of
the transport cannot promise (respx does not intercept current SDKs).

Use it as a context manager or through the ``fake_openai`` fixture (``support.fixtures``)::

    with FakeOpenAIServer() as server:
        server.queue(error_reply(429, "slow down"), chat_reply("hello", usage=(12, 3)))
        client = OpenAIChatClient("fake-model", base_url=server.base_url, api_key="k")
        client.complete([{"role": "user", "content": "hi"}])
        assert server.requests[-1].body["messages"][0]["content"] == "hi"

Replies are served in the order queued; when the queue is empty the server answers with
``default`` (a plain "ok" reply unless changed). A reply can be delayed, can hang until
the server stops, or can drop the connection without an answer (a reset).
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FakeOpenAIServer",
    "RecordedRequest",
    "Reply",
    "chat_reply",
    "context_length_reply",
    "error_reply",
    "tool_call",
]


@dataclass
class Reply:
    """One scripted answer. ``body`` is sent as JSON (a ``str`` is sent as it is)."""

    status: int = 200
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering
    hang: bool = False  # never answer; released when the server stops
    drop: bool = False  # close the connection without any answer


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def tool_call(
    name: str, arguments: dict[str, Any] | str, call_id: str = "call_1"
) -> dict[str, Any]:
    """A tool call as it appears in a chat-completions reply."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def chat_reply(
    text: str | None = "ok",
    *,
    tool_calls: Iterable[dict[str, Any]] | None = None,
    usage: tuple[int, int] | None = (10, 2),
    finish_reason: str | None = None,
    model: str = "fake-model",
    delay: float = 0.0,
    hang: bool = False,
) -> Reply:
    """A successful chat completion; ``usage=None`` leaves the usage block out."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    calls = list(tool_calls or [])
    if calls:
        message["tool_calls"] = calls
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": finish_reason or ("tool_calls" if calls else "stop"),
        }],
    }
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                         "total_tokens": usage[0] + usage[1]}
    return Reply(body=body, delay=delay, hang=hang)


def error_reply(
    status: int,
    message: str,
    *,
    code: str | None = None,
    type: str = "invalid_request_error",
    headers: dict[str, str] | None = None,
) -> Reply:
    """An error in the OpenAI shape: ``{"error": {"message", "type", "code"}}``."""
    error: dict[str, Any] = {"message": message, "type": type, "param": None, "code": code}
    return Reply(status=status, body={"error": error}, headers=dict(headers or {}))


def context_length_reply() -> Reply:
    """OpenAI's 400 for a prompt longer than the model's window."""
    return error_reply(
        400,
        "This model's maximum context length is 8192 tokens. However, your messages "
        "resulted in 9001 tokens. Please reduce the length of the messages.",
        code="context_length_exceeded",
    )


class FakeOpenAIServer:
    """A scripted chat-completions server on a free 127.0.0.1 port.

    ``base_url`` ends with ``/v1`` like a real endpoint. ``requests`` lists every request
    received, oldest first. ``responder`` (optional) computes a reply from a request when
    the queue is empty, for tests that need to answer based on the input.
    """

    def __init__(
        self,
        *,
        default: Reply | None = None,
        responder: Callable[[RecordedRequest], Reply] | None = None,
    ) -> None:
        self.default = default or chat_reply("ok")
        self.responder = responder
        self.requests: list[RecordedRequest] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------
    def queue(self, *replies: Reply) -> FakeOpenAIServer:
        with self._lock:
            self._replies.extend(replies)
        return self

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._replies:
                return self._replies.popleft()
        return self.responder(request) if self.responder else self.default

    @property
    def pending(self) -> int:
        """Scripted replies not served yet."""
        with self._lock:
            return len(self._replies)

    # -- lifecycle -------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the fake server is not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        # A short poll interval makes stop() quick (shutdown waits for one poll).
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,),
                                         name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases hanging handlers
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except json.JSONDecodeError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            request = RecordedRequest(self.command, self.path,
                                      {k.lower(): v for k, v in self.headers.items()}, body)
            reply = server._next_reply(request)
            if reply.hang:
                server._stopping.wait()
                self.close_connection = True
                return
            if reply.delay:
                deadline = time.monotonic() + reply.delay
                server._stopping.wait(max(0.0, deadline - time.monotonic()))
            if reply.drop:
                # SO_LINGER 0 makes close() send a TCP reset, as a crashing proxy would.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.close_connection = True
                return
            payload = (reply.body if isinstance(reply.body, str)
                       else json.dumps(reply.body if reply.body is not None else {}))
            data = payload.encode("utf-8")
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        do_POST = _serve
        do_GET = _serve

    return Handler
