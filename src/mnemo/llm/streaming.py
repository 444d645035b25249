"""Reading a streamed chat completion (OpenAI chunks) into one reply, showing it as it comes.

``StreamHandlers`` are the caller's callbacks: ``on_text`` gets each piece of answer text
as the server sends it, ``on_progress`` gets ``(read, to_read)`` new prompt tokens (the
cached prefix left out) while a llama.cpp server is still reading the prompt (its
``prompt_progress`` chunks, asked for with ``return_progress``), and ``stop`` can end the
reading early. ``collect_stream`` folds the chunks — text deltas, tool-call deltas by
index, the closing usage chunk and llama.cpp's ``timings`` — into a ``StreamedReply`` the
client turns into its usual ``ChatResponse``.

The stream is read inside the caller's ``with`` block: when the caller is interrupted
(Ctrl-C raises ``KeyboardInterrupt`` in the middle of the loop) the HTTP response is
closed, and llama.cpp stops generating for a client that went away; so it is when
``stop`` ends the reading.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from mnemo.messages import Message, ToolCall

__all__ = ["StreamHandlers", "StreamedReply", "collect_stream"]


@dataclass(frozen=True)
class StreamHandlers:
    """What to call while a reply streams in (all optional). ``stop`` is asked after each
    piece of text, and of prompt-reading progress: once it says True, no more is read (a
    reply that loops: ``agent/loops.py``; a background summary when a turn begins), and
    the connection is closed as for an interrupted one."""

    on_text: Callable[[str], None] | None = None
    on_progress: Callable[[int, int], None] | None = None
    stop: Callable[[], bool] | None = None


@dataclass
class StreamedReply:
    """A streamed reply, put back together."""

    text: str = ""
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    finish_reason: str | None = None
    model: str | None = None
    usage: Any = None
    timings: dict[str, Any] | None = None
    progress: dict[str, Any] | None = None  # llama.cpp's last ``prompt_progress``
    chunks: int = 0

    def prompt_timings(self) -> dict[str, Any] | None:
        """llama.cpp's ``timings``; for a reply stopped before its last chunk (Ctrl-C, a
        loop cut short) the prompt's part of them, from the last progress report."""
        if self.timings is not None or self.progress is None:
            return self.timings
        cached = int(self.progress.get("cache", 0) or 0)
        read = max(0, int(self.progress.get("processed", 0) or 0) - cached)
        millis = float(self.progress.get("time_ms", 0) or 0)
        timings: dict[str, Any] = {"prompt_n": read, "cache_n": cached, "prompt_ms": millis}
        if millis > 0:
            timings["prompt_per_second"] = read * 1000.0 / millis
        return timings

    @property
    def started(self) -> bool:
        """Some answer (text or a call) has arrived: a retry would repeat it."""
        return bool(self.text or self.calls)

    def message(self) -> Message:
        """The assistant message: the text (``None`` if empty) and the calls in order."""
        message: Message = {"role": "assistant", "content": self.text or None}
        calls: list[ToolCall] = []
        for number, index in enumerate(sorted(self.calls), start=1):
            call = self.calls[index]
            calls.append({"id": call.get("id") or f"call_{number}", "type": "function",
                          "function": {"name": call.get("name", ""),
                                       "arguments": call.get("arguments") or "{}"}})
        if calls:
            message["tool_calls"] = calls
        return message


def _field(obj: Any, name: str) -> Any:
    """An attribute of an SDK object, or a key of a plain dict (servers add fields)."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _plain(obj: Any) -> Any:
    """An SDK model (or anything) as plain JSON data."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump()
    return obj if isinstance(obj, dict) else json.loads(json.dumps(obj, default=str))


def collect_stream(chunks: Iterable[Any], handlers: StreamHandlers,
                   into: StreamedReply | None = None) -> StreamedReply:
    """Fold ``chunks`` into a ``StreamedReply`` (``into``, filled in place so a caller
    interrupted midway still sees what arrived), calling ``handlers`` as text arrives."""
    reply = into if into is not None else StreamedReply()
    for chunk in chunks:
        reply.chunks += 1
        reply.model = reply.model or _field(chunk, "model")
        progress = _field(chunk, "prompt_progress")
        if progress is not None:
            reply.progress = data = _plain(progress)
            cached = int(data.get("cache", 0) or 0)  # counted in both, read in neither
            if handlers.on_progress is not None:
                handlers.on_progress(max(0, int(data.get("processed", 0) or 0) - cached),
                                     max(0, int(data.get("total", 0) or 0) - cached))
            if handlers.stop is not None and handlers.stop():
                return reply
        usage = _field(chunk, "usage")
        if usage is not None:
            reply.usage = usage
        timings = _field(chunk, "timings")
        if timings is not None:
            reply.timings = dict(_plain(timings))
        for choice in _field(chunk, "choices") or ():
            reply.finish_reason = _field(choice, "finish_reason") or reply.finish_reason
            delta = _field(choice, "delta")
            if delta is None:
                continue
            text = _field(delta, "content")
            if text:
                reply.text += text
                if handlers.on_text is not None:
                    handlers.on_text(text)
                if handlers.stop is not None and handlers.stop():
                    reply.finish_reason = "stop"
                    return reply
            for part in _field(delta, "tool_calls") or ():
                _add_call_delta(reply, part)
    return reply


def _add_call_delta(reply: StreamedReply, part: Any) -> None:
    index = _field(part, "index")
    index = int(index) if index is not None else len(reply.calls)
    call = reply.calls.setdefault(index, {})
    if _field(part, "id"):
        call["id"] = str(_field(part, "id"))
    function = _field(part, "function")
    if function is None:
        return
    if _field(function, "name"):
        call["name"] = call.get("name", "") + str(_field(function, "name"))
    arguments = _field(function, "arguments")
    if arguments:
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call["arguments"] = call.get("arguments", "") + arguments
