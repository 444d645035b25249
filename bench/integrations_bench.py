"""What the framework integrations save, and what they cost per request.

    python bench/integrations_bench.py [--window 6000] [--messages 500] [--repeat 200]

For each framework (pydantic-ai, OpenAI Agents SDK, LangChain/LangGraph), two measures:

* **prompt tokens per request** over the 60-turn scenario of the integration tests
  (``tests/support/integration_scenario.py``: a tool call with a long output every turn,
  a memory write, a search at the end), driven by the same scripted test doubles, once
  with the integration and once without it (the same agent and tools, the history left
  to grow — what the framework does by itself). Tokens are the rough estimate of C4 over
  each request as the model received it, as in ``session_cost_bench``.
* **overhead per request** at ``--messages`` messages of history: the integration's own
  work before a model call — converting the framework's messages (each is converted
  once and cached, so a request converts only the new ones), archiving the new ones and
  the engine's threshold check — with a window large enough that no compaction runs.
  ``steady`` is a request that adds one turn (2 messages) to a history the integration
  has seen; ``cold`` converts all of it (the first request of a resumed conversation).

No model is called and no network is used; the scripted models live with the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from mnemo.config import MnemoConfig
from mnemo.integrations.runtime import MnemoRuntime
from mnemo.messages import Message
from mnemo.tokens import estimate_messages_tokens_rough
from support import integration_scenario as scenario


def _runtime(home: Path, window: int, source: str) -> MnemoRuntime:
    return MnemoRuntime(config=MnemoConfig(), home=home, context_length=window, source=source)


# -- 60-turn sessions -----------------------------------------------------------------------


def pydantic_ai_session(home: Path, window: int, integrated: bool) -> list[list[Message]]:
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel

    from integrations.test_pydantic_ai import ScriptedModel
    from mnemo.integrations.pydantic_ai import MnemoCapability, mnemo_toolset

    model = ScriptedModel()
    runtime = _runtime(home, window, "pydantic-ai")
    agent: Agent[None, str] = (
        Agent(FunctionModel(model), capabilities=[MnemoCapability(runtime)]) if integrated
        else Agent(FunctionModel(model), toolsets=[mnemo_toolset(runtime)]))
    agent.tool_plain(scenario.lookup)
    history: list[Any] = []
    for turn in range(scenario.TURNS):
        history = agent.run_sync(scenario.user_text(turn), message_history=history).all_messages()
    runtime.close()
    return model.requests


def openai_agents_session(home: Path, window: int, integrated: bool) -> list[list[Message]]:
    from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled

    from integrations.test_openai_agents import ScriptedModel
    from mnemo.integrations.openai_agents import MnemoSession, mnemo_instructions, mnemo_tools

    set_tracing_disabled(True)
    model = ScriptedModel()
    runtime = _runtime(home, window, "openai-agents")
    agent: Agent[Any] = Agent(name="assistant", model=model,
                              instructions=mnemo_instructions(runtime, "Be brief."),
                              tools=[function_tool(scenario.lookup), *mnemo_tools(runtime)])
    session: Any = MnemoSession(runtime) if integrated else SQLiteSession("bench")

    async def run() -> None:
        for turn in range(scenario.TURNS):
            await Runner.run(agent, scenario.user_text(turn), session=session)

    asyncio.run(run())
    runtime.close()
    return model.requests


def langgraph_session(home: Path, window: int, integrated: bool) -> list[list[Message]]:
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool

    from integrations.test_langgraph import scripted_chat
    from mnemo.integrations.langgraph import MnemoMiddleware, mnemo_tools

    model = scripted_chat()
    runtime = _runtime(home, window, "langgraph")
    lookup = tool(scenario.lookup)
    if integrated:
        agent = create_agent(model, tools=[lookup], system_prompt="Be brief.",
                             middleware=[MnemoMiddleware(runtime, system_prompt="Be brief.")])
    else:
        agent = create_agent(model, tools=[lookup, *mnemo_tools(runtime)],
                             system_prompt="Be brief.\n\n" + runtime.instructions())
    messages: list[Any] = []
    for turn in range(scenario.TURNS):
        messages = agent.invoke({"messages": [*messages, HumanMessage(
            scenario.user_text(turn))]})["messages"]
    runtime.close()
    requests: list[list[Message]] = model.log["requests"]
    return requests


SESSIONS: dict[str, Callable[[Path, int, bool], list[list[Message]]]] = {
    "pydantic-ai": pydantic_ai_session,
    "openai-agents": openai_agents_session,
    "langgraph": langgraph_session,
}


def _tokens(requests: list[list[Message]]) -> dict[str, int]:
    sizes = sorted(estimate_messages_tokens_rough(r) for r in requests)
    return {"requests": len(sizes), "mean": round(statistics.fmean(sizes)),
            "p95": sizes[int(0.95 * (len(sizes) - 1))], "max": sizes[-1], "total": sum(sizes)}


# -- overhead per request -------------------------------------------------------------------


def _turn(turn: int) -> list[Message]:
    """Two chat messages of one scripted turn (user ask, assistant answer)."""
    return [{"role": "user", "content": scenario.user_text(turn)},
            {"role": "assistant", "content": scenario.answer_text(turn)}]


def _timed(step: Callable[[int], Any], repeat: int) -> float:
    """Median milliseconds of ``step(i)`` over ``repeat`` calls."""
    times = []
    for i in range(repeat):
        start = time.perf_counter()
        step(i)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def overhead(framework: str, home: Path, messages: int, repeat: int) -> dict[str, float]:
    base = [m for t in range(messages // 2) for m in _turn(t)]
    runtime = _runtime(home, 10_000_000, framework)  # nothing is ever due: the check only
    if framework == "pydantic-ai":
        from mnemo.integrations.pydantic_ai import MnemoHistory
        from mnemo.integrations.pydantic_ai_messages import from_mnemo as pa_from

        processor = MnemoHistory(runtime)
        history = pa_from(base)
        processor(history)
        grow: Callable[[list[Message]], Any] = pa_from

        def step(i: int) -> None:
            history.extend(grow(_turn(messages + i)))
            processor(history)

        def cold(i: int) -> None:
            MnemoHistory(runtime).convert(history)
    elif framework == "openai-agents":
        from mnemo.integrations.openai_agents import MnemoSession
        from mnemo.integrations.openai_agents_items import from_mnemo as oa_from
        from mnemo.integrations.openai_agents_items import to_mnemo as oa_to

        session = MnemoSession(runtime)
        items = oa_from(base)
        asyncio.run(session.add_items(items))

        def step(i: int) -> None:
            asyncio.run(session.add_items(oa_from(_turn(messages + i))))

        def cold(i: int) -> None:
            oa_to(items)
    else:
        from mnemo.integrations.langchain_messages import from_mnemo as lc_from
        from mnemo.integrations.langgraph import MnemoCompactor

        compactor = MnemoCompactor(runtime)
        state = lc_from(base)
        compactor.state_update(state)

        def step(i: int) -> None:
            state.extend(lc_from(_turn(messages + i)))
            compactor.state_update(state)

        def cold(i: int) -> None:
            MnemoCompactor(runtime).convert(state)
    result = {"steady_ms": _timed(step, repeat), "cold_ms": _timed(cold, max(5, repeat // 20))}
    runtime.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--window", type=int, default=scenario.WINDOW)
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--only", choices=sorted(SESSIONS), default=None)
    args = parser.parse_args()
    print(f"60-turn scenario, window {args.window:,} tokens; overhead at {args.messages} "
          "messages (median of the runs)\n")
    print(f"{'framework':<14} {'run':<12} {'requests':>8} {'mean':>7} {'p95':>7} {'max':>7} "
          f"{'total':>9}")
    costs: dict[str, dict[str, float]] = {}
    for name, run in SESSIONS.items():
        if args.only and name != args.only:
            continue
        for integrated in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                stats = _tokens(run(Path(tmp), args.window, integrated))
            label = "with mnemo" if integrated else "without"
            print(f"{name:<14} {label:<12} {stats['requests']:>8} {stats['mean']:>7,} "
                  f"{stats['p95']:>7,} {stats['max']:>7,} {stats['total']:>9,}")
        with tempfile.TemporaryDirectory() as tmp:
            costs[name] = overhead(name, Path(tmp), args.messages, args.repeat)
    print(f"\n{'framework':<14} {'steady ms/request':>18} {'cold ms (all new)':>18}")
    for name, cost in costs.items():
        print(f"{name:<14} {cost['steady_ms']:>18.3f} {cost['cold_ms']:>18.3f}")


if __name__ == "__main__":
    main()
