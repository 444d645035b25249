"""The LLM summariser the context compressor calls (C9), built from any ``ChatClient``.

The compressor builds the whole prompt (template, budget, focus topic) and takes the
summariser as a plain ``Callable[[str], str]``, so it never imports this package. This
module sends that prompt as one user message and returns the text. Failures are raised
as ``mnemo.errors`` classes so the compressor can tell what happened (C13): an auth or
connection error leaves the conversation as it is, anything else falls back to the local
summariser. An empty answer returns ``""``, which the compressor also treats as a failure.

Given the template's ``sections``, a client that takes grammars (the embedded model) is
constrained to write exactly those headings in order (``structured.sections_grammar``):
a small model then cannot drop a section or wander off the template.

Given ``stop``, the answer is streamed and ``stop`` asked as it comes (and while the
server reads the prompt): once it says True the call ends, the connection closes — a
llama.cpp server then frees its one slot at once — and ``CallStoppedError`` is raised.
A background summary is stopped so when a turn begins (C17: it never competes with a
turn's own call).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from mnemo.errors import CallStoppedError
from mnemo.llm.streaming import StreamHandlers
from mnemo.llm.structured import sections_grammar
from mnemo.llm.types import ChatClient, ChatResponse
from mnemo.messages import Message

__all__ = ["Summarizer", "make_summarizer"]

log = logging.getLogger("mnemo.llm")

Summarizer = Callable[[str], str]


def make_summarizer(
    client: ChatClient,
    *,
    max_tokens: int | None = None,
    temperature: float | None = 0.0,
    sections: Sequence[str] | None = None,
    stop: Callable[[], bool] | None = None,
) -> Summarizer:
    """A summariser that asks ``client`` to answer ``prompt`` and returns its text.

    ``max_tokens`` caps the answer (``None`` = the client's default). Temperature 0 keeps
    summaries reproducible: the same transcript gives the same checkpoint on the local
    model, byte for byte. ``sections`` (e.g. ``mnemo.context.TEMPLATE_SECTIONS``) turns on
    the section grammar for clients with ``supports_grammar``; others ignore it.
    ``stop`` (for a client that streams, e.g. the embedded model's) ends the call once it
    says True, with ``CallStoppedError``.
    """
    grammar = None
    if sections and getattr(client, "supports_grammar", False):
        grammar = sections_grammar(sections, max_tokens=max_tokens)

    complete: Any = client.complete

    def summarize(prompt: str) -> str:
        messages: list[Message] = [{"role": "user", "content": prompt}]
        # Once ``stop`` said True the call is over, even if it says False by the time the
        # call returns: a stopped stream returns quietly with what had arrived, and the
        # turn that stopped it may have answered meanwhile (the call waits for the server
        # the turn holds). By hand such summaries came back empty and were counted as
        # failures; one stopped while writing would have come back cut short.
        stopped = False

        def asked() -> bool:
            nonlocal stopped
            stopped = stopped or (stop is not None and stop())
            return stopped

        # The prompt-reading progress is asked for only so that ``stop`` is asked while
        # the server reads a long prompt too (seconds on the embedded model).
        streamed: dict[str, Any] = ({"stream": StreamHandlers(
            on_progress=lambda read, total: None, stop=asked)} if stop is not None and getattr(
                client, "supports_streaming", False) else {})  # the keyword is a capability
        if asked():
            raise CallStoppedError("the summary was not started: a turn is under way")
        try:
            response: ChatResponse = complete(
                messages, max_tokens=max_tokens, temperature=temperature,
                **({"grammar": grammar} if grammar is not None else {}), **streamed)
        except Exception as exc:
            # Stopped meanwhile, the call's own failure is not one (the session ended and
            # its model server was stopped under it).
            if asked():
                raise CallStoppedError("the summary was stopped") from exc
            raise
        if asked():
            raise CallStoppedError("the summary was stopped: a turn began")
        text = response.text.strip()
        log.info("summary from %s: %d chars, %d prompt + %d completion tokens (%s)",
                 response.model, len(text), response.usage.prompt_tokens,
                 response.usage.completion_tokens, response.finish_reason)
        return text

    return summarize
