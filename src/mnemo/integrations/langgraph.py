"""mnemo inside LangGraph / LangChain 1.x agents (SPEC I3): compaction, snapshot, tools.

``MnemoMiddleware(runtime)`` is an ``AgentMiddleware`` for ``langchain.agents.create_agent``::

    agent = create_agent(model, tools=[...], system_prompt="Be brief.",
                         middleware=[MnemoMiddleware(MnemoRuntime(source="langgraph"))])

* ``before_model`` archives the new messages of the ``messages`` state in mnemo's session
  store and, at the threshold, replaces the state with the compacted history
  (``RemoveMessage(REMOVE_ALL_MESSAGES)`` + the new list; surviving messages keep their
  ids). The archived originals stay searchable with ``session_search``.
* ``wrap_model_call`` appends the frozen memory snapshot to the system message of each
  request (the state is not touched, so the snapshot is never stored twice).
* ``tools`` are ``memory`` and ``session_search`` (``mnemo_tools(runtime)``), registered
  with the agent by the middleware itself;
* ``after_agent`` archives the run's final answer.

``mnemo_pre_model_hook(runtime)`` is the same compaction for LangGraph's prebuilt
``create_react_agent(..., pre_model_hook=...)``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from mnemo.integrations.langchain_messages import from_mnemo, message_to_mnemo
from mnemo.integrations.runtime import MnemoRuntime
from mnemo.memory.tool import MEMORY_SCHEMA
from mnemo.messages import Message
from mnemo.sessions.tool import SESSION_SEARCH_SCHEMA

try:
    from langchain.agents.middleware.types import (
        AgentMiddleware,
        AgentState,
        ModelRequest,
        ModelResponse,
    )
    from langchain_core.messages import AIMessage, AnyMessage, RemoveMessage, SystemMessage
    from langchain_core.tools import BaseTool, StructuredTool
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError('mnemo.integrations.langgraph needs LangChain and LangGraph: '
                      'pip install "mnemo[langgraph]"') from exc

__all__ = ["MnemoCompactor", "MnemoMiddleware", "MnemoRuntime", "mnemo_pre_model_hook",
           "mnemo_tools"]


class MnemoCompactor:
    """Converts the ``messages`` state (each message once) and compacts it when due."""

    def __init__(self, runtime: MnemoRuntime, system: str | None = None) -> None:
        self.runtime = runtime
        self.system = system  # the agent's own system prompt, counted for the threshold
        self._cache: dict[int, tuple[AnyMessage, Message]] = {}
        self._last_ai: int | None = None

    def convert(self, messages: list[AnyMessage]) -> list[Message]:
        out: list[Message] = []
        cache = self._cache
        for message in messages:
            hit = cache.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, message_to_mnemo(message))
                cache[id(message)] = hit
            out.append(hit[1])
        return out

    def compact(self, messages: list[AnyMessage]) -> list[AnyMessage] | None:
        """The compacted state, or None when nothing is due."""
        self._observe_usage(messages)
        system = "\n\n".join(s for s in (self.system, self.runtime.instructions()) if s)
        live = self.runtime.process(self.convert(messages), system)
        if live is None:
            return None
        by_dict = {id(hit[1]): hit[0] for hit in self._cache.values()}
        out: list[AnyMessage] = []
        for message in live:
            original = by_dict.get(id(message))
            if original is None:
                original = cast(AnyMessage, from_mnemo([message])[0])
                self._cache[id(original)] = (original, message)
            out.append(original)
        keep = {id(m) for m in out}
        self._cache = {k: v for k, v in self._cache.items() if k in keep}
        return out

    def _observe_usage(self, messages: list[AnyMessage]) -> None:
        for message in reversed(messages):
            if isinstance(message, AIMessage):
                usage = message.usage_metadata
                if id(message) != self._last_ai and usage and usage.get("input_tokens"):
                    self._last_ai = id(message)
                    self.runtime.observe_usage(dict(usage))
                return

    def state_update(self, messages: list[AnyMessage]) -> dict[str, Any] | None:
        compacted = self.compact(messages)
        if compacted is None:
            return None
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *compacted]}


class MnemoMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Compaction before each model call, the memory snapshot in the system message, and
    the ``memory`` and ``session_search`` tools, for ``create_agent``."""

    def __init__(self, runtime: MnemoRuntime, *, system_prompt: str | None = None) -> None:
        super().__init__()
        self.runtime = runtime
        self.compactor = MnemoCompactor(runtime, system_prompt)
        self.tools: list[BaseTool] = mnemo_tools(runtime)

    def before_model(self, state: AgentState[Any], runtime: Any) -> dict[str, Any] | None:
        return self.compactor.state_update(list(state["messages"]))

    async def abefore_model(self, state: AgentState[Any],
                            runtime: Any) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    def after_agent(self, state: AgentState[Any], runtime: Any) -> dict[str, Any] | None:
        # The final answer is archived now, not at the next turn's first model call.
        self.runtime.record(self.compactor.convert(list(state["messages"])))
        return None

    async def aafter_agent(self, state: AgentState[Any],
                           runtime: Any) -> dict[str, Any] | None:
        return self.after_agent(state, runtime)

    def _with_snapshot(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        snapshot = self.runtime.instructions()
        base = request.system_message.text if request.system_message is not None else ""
        return request.override(system_message=SystemMessage(
            content=f"{base}\n\n{snapshot}" if base else snapshot))

    def wrap_model_call(self, request: ModelRequest[Any],
                        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]) -> Any:
        return handler(self._with_snapshot(request))

    async def awrap_model_call(
            self, request: ModelRequest[Any],
            handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]) -> Any:
        return await handler(self._with_snapshot(request))


def mnemo_pre_model_hook(runtime: MnemoRuntime, *,
                         system_prompt: str | None = None) -> Callable[[dict[str, Any]],
                                                                         dict[str, Any]]:
    """A ``pre_model_hook`` for ``langgraph.prebuilt.create_react_agent`` that compacts."""
    compactor = MnemoCompactor(runtime, system_prompt)

    def hook(state: dict[str, Any]) -> dict[str, Any]:
        messages = list(state["messages"])
        # The hook must name what the model reads: the compacted state, or the state as is.
        return compactor.state_update(messages) or {"llm_input_messages": messages}

    return hook


def mnemo_tools(runtime: MnemoRuntime) -> list[BaseTool]:
    """``memory`` and ``session_search`` as LangChain tools (mnemo's own schemas)."""

    def memory(**kwargs: Any) -> str:
        return runtime.memory_tool(**kwargs)

    def session_search(**kwargs: Any) -> str:
        return runtime.session_search_tool(**kwargs)

    return [_tool(memory, MEMORY_SCHEMA), _tool(session_search, SESSION_SEARCH_SCHEMA)]


def _tool(function: Callable[..., str], schema: dict[str, Any]) -> BaseTool:
    return StructuredTool.from_function(
        function, name=schema["name"], description=schema["description"],
        args_schema={"title": schema["name"], **schema["parameters"]}, infer_schema=False)
