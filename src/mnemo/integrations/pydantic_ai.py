"""mnemo inside a pydantic-ai agent (SPEC I1): compaction, the memory snapshot, the tools.

``MnemoCapability(runtime)`` is the one-line way in::

    agent = Agent(model, capabilities=[MnemoCapability(MnemoRuntime(source="pydantic-ai"))])

It bundles three things, each usable alone:

* ``MnemoHistory`` — a history processor (``ProcessHistory(MnemoHistory(runtime))``):
  before each model request it converts the history to mnemo messages, archives what is
  new in the session store, and when the conversation reaches the threshold compacts it
  with the configured engine and hands pydantic-ai the compacted history, which replaces
  the run's history (pydantic-ai 2 writes a processor's result back to ``ctx.messages``);
* instructions — the frozen memory snapshot with the guidance for the tools;
* ``mnemo_toolset(runtime)`` — ``memory`` and ``session_search`` as pydantic-ai tools,
  with the exact schemas ``mnemo chat`` offers;
* after each run, the run's final answer is archived too.

Each ``ModelMessage`` is converted once (cached by identity): a request over a long
history costs a dictionary look-up per message plus the engine's threshold check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mnemo.integrations._carry import runs
from mnemo.integrations.pydantic_ai_messages import KEY, from_mnemo, message_to_mnemo
from mnemo.integrations.runtime import MnemoRuntime
from mnemo.memory.tool import MEMORY_SCHEMA
from mnemo.messages import Message
from mnemo.sessions.tool import SESSION_SEARCH_SCHEMA

try:
    from pydantic_ai import AgentRunResult, RunContext, Tool
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.toolsets import FunctionToolset
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError('mnemo.integrations.pydantic_ai needs pydantic-ai: '
                      'pip install "mnemo[pydantic-ai]"') from exc

__all__ = ["MnemoCapability", "MnemoHistory", "MnemoRuntime", "mnemo_toolset"]


class MnemoHistory:
    """A pydantic-ai history processor that compacts with mnemo's engine.

    Give it to ``ProcessHistory``, or use ``MnemoCapability``. It returns the list it was
    given when nothing is due, and a new, compacted list otherwise; the input list and
    its messages are never changed.
    """

    def __init__(self, runtime: MnemoRuntime) -> None:
        self.runtime = runtime
        # id(ModelMessage) -> (the message, its mnemo messages); the message is held so its
        # id cannot be reused by another object while the entry lives.
        self._cache: dict[int, tuple[ModelMessage, list[Message]]] = {}
        self._last_response: int | None = None

    def convert(self, messages: list[ModelMessage]) -> list[Message]:
        """The mnemo messages of ``messages``, each ``ModelMessage`` converted once."""
        out: list[Message] = []
        cache = self._cache
        for message in messages:
            hit = cache.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, message_to_mnemo(message))
                cache[id(message)] = hit
            out += hit[1]
        return out

    def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        self._observe_usage(messages)
        history = self.convert(messages)
        system = _instructions_of(messages)
        live = self.runtime.process(history, system)
        if live is None:
            return messages
        restored = self._restore(messages, live)
        keep = {id(m) for m in restored}
        self._cache = {k: v for k, v in self._cache.items() if k in keep}
        return restored

    def archive(self, messages: list[ModelMessage]) -> None:
        """Store what is new in ``messages`` (a run's last answer) without compacting."""
        self.runtime.record(self.convert(messages))

    def _observe_usage(self, messages: list[ModelMessage]) -> None:
        """Feed the newest response's real prompt tokens to the engine, once each (C3)."""
        for message in reversed(messages):
            if isinstance(message, ModelResponse):
                if id(message) != self._last_response and message.usage.input_tokens:
                    self._last_response = id(message)
                    self.runtime.observe_usage({"input_tokens": message.usage.input_tokens,
                                                "output_tokens": message.usage.output_tokens})
                return

    def _restore(self, messages: list[ModelMessage], live: list[Message]) -> list[ModelMessage]:
        """``live`` as ModelMessages: originals where a whole message survived unchanged."""
        whole: dict[int, ModelMessage] = {}  # id of a message's first mnemo dict -> message
        for message in messages:
            converted = self._cache[id(message)][1]
            if converted:
                whole[id(converted[0])] = message
        out: list[ModelMessage] = []
        i = 0
        while i < len(live):
            original = whole.get(id(live[i]))
            if original is not None:
                converted = self._cache[id(original)][1]
                if all(a is b for a, b in zip(converted, live[i:i + len(converted)],
                                               strict=False)) and i + len(converted) <= len(live):
                    out.append(original)
                    i += len(converted)
                    continue
            j = i + 1  # a run of changed or new messages, up to the next surviving original
            while j < len(live) and id(live[j]) not in whole:
                j += 1
            for made, group in _paired(from_mnemo(live[i:j]), live[i:j]):
                self._cache[id(made)] = (made, group)
                out.append(made)
            i = j
        return out


def _paired(made: list[ModelMessage],
            source: list[Message]) -> list[tuple[ModelMessage, list[Message]]]:
    """Each rebuilt ModelMessage with the mnemo messages it came from (same grouping as
    ``from_mnemo``), so the next request converts it to exactly those dicts again."""
    out: list[tuple[ModelMessage, list[Message]]] = []
    k = 0
    for message in made:
        n = 1 if isinstance(message, ModelResponse) else _request_size(message, source[k:])
        out.append((message, source[k:k + n]))
        k += n
    return out


def _request_size(message: ModelRequest, rest: list[Message]) -> int:
    for _gid, group in runs(rest, KEY):
        return len(group)
    return 0


def _instructions_of(messages: list[ModelMessage]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            return message.instructions
    return None


def mnemo_toolset(runtime: MnemoRuntime) -> FunctionToolset[Any]:
    """``memory`` and ``session_search`` as pydantic-ai tools (mnemo's own schemas)."""

    def memory(**kwargs: Any) -> str:
        return runtime.memory_tool(**kwargs)

    def session_search(**kwargs: Any) -> str:
        return runtime.session_search_tool(**kwargs)

    return FunctionToolset([
        _tool(memory, MEMORY_SCHEMA),
        _tool(session_search, SESSION_SEARCH_SCHEMA),
    ])


def _tool(function: Callable[..., str], schema: dict[str, Any]) -> Tool[Any]:
    return Tool.from_schema(function, name=schema["name"], description=schema["description"],
                            json_schema=schema["parameters"])


@dataclass
class MnemoCapability(AbstractCapability[Any]):
    """Compaction, the frozen memory snapshot and the two tools, as one capability."""

    runtime: MnemoRuntime
    history: MnemoHistory = field(init=False)

    def __post_init__(self) -> None:
        self.history = MnemoHistory(self.runtime)

    def get_instructions(self) -> Callable[[RunContext[Any]], str]:
        runtime = self.runtime

        def memory_snapshot(ctx: RunContext[Any]) -> str:
            return runtime.instructions()

        return memory_snapshot

    def get_toolset(self) -> FunctionToolset[Any]:
        return mnemo_toolset(self.runtime)

    async def before_model_request(self, ctx: RunContext[Any],
                                   request_context: ModelRequestContext) -> ModelRequestContext:
        messages = list(request_context.messages)
        processed = self.history(messages)
        if processed is not messages:
            request_context.messages = list(processed)
            ctx.messages[:] = processed  # the compacted history replaces the run's history
        return request_context

    async def after_run(self, ctx: RunContext[Any], *,
                        result: AgentRunResult[Any]) -> AgentRunResult[Any]:
        self.history.archive(result.all_messages())  # the final answer, archived now
        return result
