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
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import cast

from mnemo.llm.structured import sections_grammar
from mnemo.llm.types import ChatClient, ChatResponse, GrammarChatClient
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
) -> Summarizer:
    """A summariser that asks ``client`` to answer ``prompt`` and returns its text.

    ``max_tokens`` caps the answer (``None`` = the client's default). Temperature 0 keeps
    summaries reproducible: the same transcript gives the same checkpoint on the local
    model, byte for byte. ``sections`` (e.g. ``mnemo.context.TEMPLATE_SECTIONS``) turns on
    the section grammar for clients with ``supports_grammar``; others ignore it.
    """
    grammar = None
    if sections and getattr(client, "supports_grammar", False):
        grammar = sections_grammar(sections, max_tokens=max_tokens)

    def summarize(prompt: str) -> str:
        messages: list[Message] = [{"role": "user", "content": prompt}]
        response: ChatResponse
        if grammar is not None:
            response = cast(GrammarChatClient, client).complete(
                messages, max_tokens=max_tokens, temperature=temperature, grammar=grammar)
        else:
            response = client.complete(messages, max_tokens=max_tokens, temperature=temperature)
        text = response.text.strip()
        log.info("summary from %s: %d chars, %d prompt + %d completion tokens (%s)",
                 response.model, len(text), response.usage.prompt_tokens,
                 response.usage.completion_tokens, response.finish_reason)
        return text

    return summarize
