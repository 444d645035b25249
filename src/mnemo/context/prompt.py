"""Steps 4 and 5 of compression (C9, C10, C14): what the summariser model is asked.

The middle turns are serialised one block per message (``[USER]: …``, ``[ASSISTANT]: …``
with ``[Tool calls: …]``, ``[TOOL RESULT <id>]: …``), each capped at 6,000 characters.
The prompt casts the model as a summarisation agent writing a checkpoint for a
*different* assistant — so it reports questions instead of answering them — and asks for
the ten-section template below within a stated token budget. The second and later
compressions send the previous summary plus the new turns and ask for one merged summary.

A prompt never exceeds the summariser's window: ``model_summary.py`` plans the calls
(chunks of the serialised turns, each chunk's summary becoming the previous summary of
the next) with the pieces defined here.
"""

from __future__ import annotations

from collections.abc import Sequence

from mnemo.messages import Message, content_text, tool_call_text, tool_calls_of
from mnemo.tokens import estimate_tokens_rough

__all__ = [
    "CHUNK_WINDOW_SHARE",
    "CONTENT_HEAD",
    "CONTENT_MAX",
    "CONTENT_TAIL",
    "MIN_SUMMARY_TOKENS",
    "PROGRESS_SUBSECTIONS",
    "SUMMARY_RATIO",
    "SUMMARY_TEMPLATE",
    "TEMPLATE_SECTIONS",
    "TRUNCATION_MARKER",
    "block_cost",
    "build_summary_prompt",
    "chunk_blocks",
    "chunk_ranges",
    "serialize_message",
    "serialize_turns",
    "summary_budget",
    "truncate_for_summary",
]

CONTENT_MAX = 6_000  # fixed (C9): longest message text sent to the summariser
CONTENT_HEAD = 4_000
CONTENT_TAIL = 1_500
TRUNCATION_MARKER = "\n...[truncated]...\n"

SUMMARY_RATIO = 0.20  # fixed (C5): summary tokens per token of summarised turns
MIN_SUMMARY_TOKENS = 2_000  # fixed (C5)
CHUNK_WINDOW_SHARE = 0.60  # the largest prompt, as a share of the summariser's window (C9)

TEMPLATE_SECTIONS = (
    "Goal",
    "Constraints & Preferences",
    "Progress",
    "Key Decisions",
    "Resolved Questions",
    "Pending User Asks",
    "Relevant Files",
    "Remaining Work",
    "Critical Context",
    "Tools & Patterns",
)
PROGRESS_SUBSECTIONS = ("Done", "In Progress", "Blocked")

SUMMARY_TEMPLATE = """\
## Goal
[What the user wants to achieve overall, and their latest request]

## Constraints & Preferences
[Rules, constraints and preferences the user stated, in their own words]

## Progress
### Done
[Completed work, with its results]
### In Progress
[Work started and not finished]
### Blocked
[What is stuck, and why]

## Key Decisions
[Decisions taken, and the reason for each]

## Resolved Questions
[Questions already answered, with the answer, so they are not answered again]

## Pending User Asks
[Questions and requests from the user not answered or done yet]

## Relevant Files
[Files read, created or changed, and what was done to each]

## Remaining Work
[A to-do list of what is left: items to consider, not instructions to act on]

## Critical Context
[Exact values that must not be lost: file paths, error messages verbatim, commands, \
URLs, config values, identifiers]

## Tools & Patterns
[Tools used, how well they worked, conventions established]"""

_PREAMBLE = """\
You are a summarization agent creating a context checkpoint. Your output will be \
injected as reference material for a DIFFERENT assistant that continues the \
conversation. Do NOT respond to any questions or requests in the conversation — only \
output the structured summary. Do not add a preamble or closing remarks."""

_RULES = """\
Rules:
- Write in the language the user writes in.
- Never copy secrets (API keys, tokens, passwords, private keys): write [REDACTED] instead.
- Keep exact values (file paths, error messages, commands, URLs, config values) verbatim.
- Target length: about {budget} tokens; never more than {budget} tokens."""

_UPDATE_INSTRUCTIONS = """\
Update the summary: PRESERVE all existing information that is still relevant. ADD new \
progress. Move items from "In Progress" to "Done" when they were completed, and from \
"Pending User Asks" to "Resolved Questions" when they were answered. Write one merged \
summary; never copy the previous summary inside the new one."""

_FOCUS = """\
FOCUS TOPIC: "{topic}"
PRIORITISE preserving all information related to the focus topic, in full detail. For \
content NOT related to it, summarise more aggressively. Focus topic material should \
receive roughly 60-70% of the summary token budget."""

_EXTRA = """\
ADDITIONAL CONTEXT (from the memory providers; use it to judge what matters):
{extra}"""


def truncate_for_summary(text: str, max_chars: int = CONTENT_MAX) -> str:
    """Cap a message at 6,000 chars: the first 4,000, a marker, the last 1,500.

    A smaller ``max_chars`` (a summariser with a small window) keeps the same shares of
    the head and the tail.
    """
    if len(text) <= max_chars:
        return text
    scale = max_chars / CONTENT_MAX
    head, tail = int(CONTENT_HEAD * scale), int(CONTENT_TAIL * scale)
    if head + tail + len(TRUNCATION_MARKER) > max_chars:  # too small for the marker
        return text[:max(max_chars, 0)]
    return text[:head] + TRUNCATION_MARKER + (text[-tail:] if tail else "")


def serialize_message(message: Message) -> str:
    """One block of the summariser's transcript for one message."""
    role = str(message.get("role", ""))
    text = truncate_for_summary(content_text(message))
    if role == "tool":
        return f"[TOOL RESULT {message.get('tool_call_id', '')}]: {text}"
    block = f"[{role.upper()}]: {text}"
    calls = tool_calls_of(message)
    if calls:
        listed = truncate_for_summary(", ".join(tool_call_text(c) for c in calls))
        block += f"\n[Tool calls: {listed}]"
    return block


def serialize_turns(messages: Sequence[Message]) -> list[str]:
    return [serialize_message(m) for m in messages]


def summary_budget(turn_tokens: int, max_summary_tokens: int) -> int:
    """Tokens the summary may use: 20% of the turns, within [2,000, max_summary_tokens]."""
    return max(MIN_SUMMARY_TOKENS, min(int(turn_tokens * SUMMARY_RATIO), max_summary_tokens))


def build_summary_prompt(
    turns: str,
    *,
    budget: int,
    previous_summary: str | None = None,
    focus_topic: str | None = None,
    extra_context: str = "",
) -> str:
    """The whole prompt for one summariser call."""
    parts = [_PREAMBLE, _RULES.format(budget=budget)]
    if focus_topic:
        parts.append(_FOCUS.format(topic=focus_topic))
    if extra_context.strip():
        parts.append(_EXTRA.format(extra=truncate_for_summary(extra_context.strip())))
    if previous_summary:
        parts += [f"PREVIOUS SUMMARY:\n{previous_summary}",
                  f"NEW TURNS TO INCORPORATE:\n{turns}", _UPDATE_INSTRUCTIONS]
    else:
        parts.append(f"TURNS TO SUMMARIZE:\n{turns}")
    parts.append(f"Write the summary with exactly these sections, in this order:\n\n"
                 f"{SUMMARY_TEMPLATE}")
    return "\n\n".join(parts)


def chunk_ranges(costs: Sequence[int], max_tokens: int) -> list[range]:
    """Consecutive runs of blocks whose ``costs`` add up to at most ``max_tokens`` each (a
    block larger than that is a run of its own: the caller cuts blocks to fit first)."""
    runs: list[range] = []
    start, size = 0, 0
    for i, cost in enumerate(costs):
        if i > start and size + cost > max_tokens:
            runs.append(range(start, i))
            start, size = i, 0
        size += cost
    if start < len(costs):
        runs.append(range(start, len(costs)))
    return runs


def block_cost(block: str) -> int:
    """Tokens a block adds to a chunk (its rough estimate plus the blank line joining it)."""
    return estimate_tokens_rough(block) + 1


def chunk_blocks(blocks: Sequence[str], max_tokens: int) -> list[str]:
    """Join serialised blocks into chunks of at most ``max_tokens`` (a block is never split)."""
    return ["\n\n".join(blocks[i] for i in run)
            for run in chunk_ranges([block_cost(b) for b in blocks], max_tokens)]
