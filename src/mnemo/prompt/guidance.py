"""Behavioural guidance, model-specific guidance, the subscription block and the date line.

Guidance blocks are only added for tools the agent actually has (telling a model to call
``session_search`` when it cannot would make it invent calls). The execution guidance
(SPEC B6) is for model families that tend to describe an action instead of taking it, or
to compute from memory what a tool would get right; it is chosen by substrings of the
model name from ``prompt.execution_guidance_models``.

The date line carries the date only: a time would change the prompt every minute and
defeat the provider's prefix cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime

from mnemo.config.schema import SubscriptionConfig
from mnemo.context.markers import COMPACTION_NOTE  # one text, shared with the compressor

__all__ = [
    "COMPACTION_NOTE",
    "EXECUTION_GUIDANCE",
    "MEMORY_GUIDANCE",
    "SESSION_SEARCH_GUIDANCE",
    "SKILLS_GUIDANCE",
    "TOOL_USE_GUIDANCE",
    "date_line",
    "subscription_block",
    "wants_execution_guidance",
]

MEMORY_GUIDANCE = (
    "# Memory\n"
    "The MEMORY and USER PROFILE blocks, when present, are notes you kept in earlier "
    "sessions; use them without being asked. Keep them current with the memory tool: "
    "when the user corrects you, states a preference or shares something about "
    "themselves, or when you "
    "learn a durable fact about their environment, save it right away as one short "
    "entry. Save what will still matter next month; task progress and what you did today "
    "belong in the session history, not in memory. When a store is nearly full, merge "
    "or remove entries instead of dropping new facts."
)

SESSION_SEARCH_GUIDANCE = (
    "# Past sessions\n"
    "Earlier conversations are searchable with session_search. When the user refers to "
    "something you discussed before (\"like last time\", \"the bug from yesterday\"), or "
    "you need a detail that was probably settled in an earlier session, search first "
    "instead of asking the user to repeat themselves."
)

SKILLS_GUIDANCE = (
    "# Skills\n"
    "Skills are tested, step-by-step procedures for recurring tasks. Before starting "
    "multi-step work, check the skills index; when a skill fits, load it with "
    "skill_view(name) and follow it rather than improvising. If a skill turns out to be "
    "wrong or out of date, finish the task the right way and tell the user what should "
    "change in the skill."
)

TOOL_USE_GUIDANCE = (
    "# Using tools\n"
    "When you say you will do something, do it with a tool call in the same reply; never "
    "end your turn with a promise to act. Keep working until the task is done or you "
    "are truly blocked, then report what you did and what is left. Base claims about "
    "files, commands and results on what the tools actually returned."
)

EXECUTION_GUIDANCE = (
    "<mandatory_tool_use>\n"
    "Do not answer these from memory or mental arithmetic; use a tool every time:\n"
    "- arithmetic, maths and any calculation → run it in a terminal or code tool\n"
    "- hashes, checksums and encodings → compute them with a tool\n"
    "- the current date or time → run `date`\n"
    "- the state of the system (files, processes, versions, disk) → inspect it with a "
    "tool\n"
    "</mandatory_tool_use>\n"
    "\n"
    "<act_dont_ask>\n"
    "When a request has an obvious default reading, act on it at once instead of asking "
    "for clarification. Ask only when the choices differ in ways that matter and you "
    "cannot undo a wrong guess.\n"
    "</act_dont_ask>"
)

def wants_execution_guidance(model: str, patterns: Sequence[str]) -> bool:
    """True when ``model`` contains one of ``patterns`` (case-insensitive)."""
    name = model.lower()
    return bool(name) and any(p and p.lower() in name for p in patterns)


def subscription_block(subscription: SubscriptionConfig) -> str:
    """The capabilities the user's provider or subscription adds; "" when none are set."""
    name = subscription.name.strip()
    capabilities = [c.strip() for c in subscription.capabilities if c.strip()]
    if not name and not capabilities:
        return ""
    title = f"# {name} subscription" if name else "# Provider capabilities"
    intro = (f"The user's {name} subscription gives you these capabilities"
             if name else "The user's model provider gives you these capabilities")
    if not capabilities:
        return f"{title}\nThe user has a {name} subscription."
    lines = "\n".join(f"- {c}" for c in capabilities)
    return f"{title}\n{intro}; use them when they help:\n{lines}"


# Spelled out rather than strftime("%A"), which follows the process locale.
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def date_line(now: datetime | date) -> str:
    """``Conversation started: <date>`` with the date only (ISO, with the weekday)."""
    day = now.date() if isinstance(now, datetime) else now
    return f"Conversation started: {day.isoformat()} ({_WEEKDAYS[day.weekday()]})"
