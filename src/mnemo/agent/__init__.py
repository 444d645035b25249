"""The agent runtime: the turn loop that ties memory, context, prompt, sessions and models.

``Agent`` runs one conversation (SPEC A1); ``build_agent`` makes one from the config.
"""

from mnemo.agent.agent import Agent, Compaction, TurnResult
from mnemo.agent.nudges import MemoryNudger
from mnemo.agent.setup import build_agent, preview_system_prompt, summarizer_for
from mnemo.agent.tools import ToolRegistry, ToolRun

__all__ = [
    "Agent",
    "Compaction",
    "MemoryNudger",
    "ToolRegistry",
    "ToolRun",
    "TurnResult",
    "build_agent",
    "preview_system_prompt",
    "summarizer_for",
]
