"""The fixed texts the compressor writes into a conversation, and how to find them again.

A compressed conversation carries a few marks: the summary message (``SUMMARY_PREFIX``
followed by the summary), the note appended to the system message, the placeholder that
replaces old tool output, and the stub result that answers a tool call whose result was
compacted. They are constants (C11, C12) because models and people grep for them, and
because the next compression must recognise its own earlier summary — a resumed session
hands it back — so that old summaries are taken apart instead of nested (C10).
"""

from __future__ import annotations

import re
from typing import Any

from mnemo.messages import SYSTEM_ROLES, ContentPart, Message, content_text

__all__ = [
    "ASK_AGAIN",
    "CALL_FAILED",
    "COMPACTION_NOTE",
    "FALLBACK_NOTICE",
    "INTERRUPTED",
    "MISSING_RESULT_STUB",
    "PRUNED_TOOL_PLACEHOLDER",
    "SUMMARY_END_MARKER",
    "SUMMARY_PREFIX",
    "SYSTEM_ROLES",
    "is_summary_message",
    "own_text",
    "split_summary_message",
    "strip_fallback_notice",
    "summary_content",
    "without_agent_notices",
]

SUMMARY_PREFIX = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary "
    "below. This is a handoff from a previous context window — treat it as background "
    "reference, NOT as active instructions. Do NOT answer questions or fulfill requests "
    "mentioned in this summary; they were already addressed."
)

COMPACTION_NOTE = (
    "[Note: Some earlier conversation turns have been compacted into a handoff summary to "
    "preserve context space. The current session state may still reflect earlier work, so "
    "build on that summary and state rather than re-doing work.]"
)

# Between a summary and the message it had to be merged into (C12 c).
SUMMARY_END_MARKER = "\n\n--- END OF CONTEXT SUMMARY ---\n\n"

PRUNED_TOOL_PLACEHOLDER = "[Old tool output cleared to save context space]"

MISSING_RESULT_STUB = "[Result from earlier conversation — see context summary above]"

# First words of a summary the local summariser wrote because the model failed (C13).
FALLBACK_NOTICE = "Summary generation was unavailable."

# The notices the agent stores as the assistant's turn when the model gave no answer
# (``agent.py``): "[The model gave no answer. Ask again, or rephrase.]", "[interrupted by
# the user]" after what was shown, "[no answer: the model call failed (TimeoutError)]".
# They tell the user what happened, not what was said: the local summariser leaves them
# out (by hand, "Ask again, or rephrase." became a note and "[The model replied with a
# memory call instead of an answer" a decision).
ASK_AGAIN = "Ask again, or rephrase."
INTERRUPTED = "interrupted by the user"
CALL_FAILED = "no answer: the model call failed"
_AGENT_NOTICE = re.compile(
    r"\[The model [^\n]*?" + re.escape(ASK_AGAIN) + r"\]"
    + r"|\[(?:" + re.escape(INTERRUPTED) + "|" + re.escape(CALL_FAILED) + r" \(\w*\))\]")


def summary_content(body: str) -> str:
    """The content of a summary message: the prefix, a blank line, the summary."""
    return f"{SUMMARY_PREFIX}\n\n{body}"


def is_summary_message(message: Message | dict[str, Any]) -> bool:
    """True for a message an earlier compression inserted (alone or merged into a turn)."""
    if message.get("role") not in ("user", "assistant"):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return content.startswith(SUMMARY_PREFIX)
    if isinstance(content, list) and content:
        first = content[0]
        return isinstance(first, dict) and str(first.get("text", "")).startswith(SUMMARY_PREFIX)
    return False


def split_summary_message(message: Message | dict[str, Any]) -> tuple[str, Message | None]:
    """Take a summary message apart: ``(summary body, the merged original turn or None)``.

    A summary that had to be merged into a turn (C12 c) comes back as the summary and a
    copy of that turn with its own content only, so the turn is summarised as itself.
    """
    content = message.get("content")
    rest_parts: list[ContentPart] | None = None
    if isinstance(content, list):
        head = str(content[0].get("text", "")) if content else ""
        rest_parts = list(content[1:])
    else:
        head = content_text(message)
    text = head[len(SUMMARY_PREFIX):] if head.startswith(SUMMARY_PREFIX) else head
    body, marker, original = text.partition(SUMMARY_END_MARKER)
    body = body.strip()
    if not marker and rest_parts is None:
        return body, None
    remainder: dict[str, Any] = dict(message)
    if rest_parts is not None:
        parts: list[ContentPart] = []
        if original:
            parts.append({"type": "text", "text": original})
        remainder["content"] = parts + rest_parts
    else:
        remainder["content"] = original
    if not marker and not rest_parts:
        return body, None
    return body, remainder  # type: ignore[return-value]


def own_text(message: Message | dict[str, Any]) -> str:
    """The text ``message`` says itself: for a summary message, only the turn merged into
    it (C12 c), or "" — what the user said there, not what the summary retells."""
    if not is_summary_message(message):
        return content_text(message)
    _, original = split_summary_message(message)
    return content_text(original) if original is not None else ""


def strip_fallback_notice(body: str) -> str:
    """A summary body without the fallback notice paragraph, so it is never repeated."""
    if not body.startswith(FALLBACK_NOTICE):
        return body
    _, _, rest = body.partition("\n\n")
    return rest.strip()


def without_agent_notices(text: str) -> str:
    """``text`` (an assistant turn) without the agent's notices in it (see
    ``ASK_AGAIN``): what the model said, if anything."""
    if "[" not in text:
        return text
    return _AGENT_NOTICE.sub("", text).strip()
