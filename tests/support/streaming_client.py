"""A scripted chat client that streams its text word by word, as the local client does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mnemo.llm.streaming import StreamHandlers
from mnemo.llm.testing import ScriptedChatClient
from mnemo.llm.types import ChatResponse
from mnemo.messages import Message


class StreamingScriptedClient(ScriptedChatClient):
    """``ScriptedChatClient`` whose replies reach ``stream.on_text`` a word at a time."""

    supports_streaming = True

    def complete(self, messages: Sequence[Message], *,
                 tools: Sequence[Mapping[str, Any]] | None = None,
                 max_tokens: int | None = None, temperature: float | None = None,
                 stream: StreamHandlers | None = None) -> ChatResponse:
        response = super().complete(messages, tools=tools, max_tokens=max_tokens,
                                    temperature=temperature)
        if stream is not None and stream.on_text is not None:
            for number, word in enumerate(response.text.split(" ")):
                stream.on_text(word if number == 0 else " " + word)
                if stream.stop is not None and stream.stop():
                    break  # as the real client does: the rest is never read
        return response
