"""The prompt for small windows: short guidance and short tool schemas.

A model with an 8k window (the embedded 0.5B model) cannot spend a quarter of it on
instructions: the tool schemas alone, rendered by the chat template, cost more than a
thousand tokens at full length, and on a CPU every one of them is read before the first
word of an answer. For a window of at most ``SMALL_WINDOW_TOKENS`` the agent sends:

- guidance blocks cut to what a small model acts on, the memory one with a worked
  example (small models copy an example far more reliably than they follow a rule);
- tool schemas with one-line descriptions and without the rarely needed parameters
  (``compact_tool_schemas``): the memory tool offers add/replace/remove, session_search
  its query and mode, skill_view the skill's name. The handlers are unchanged, so the
  full tools still accept every argument a model sends.

The budget (system prompt plus rendered tool schemas ≤ 12% of an 8k window) is checked by
``tests/prompt/test_small_window.py`` and, on the real model, by the local-model tests.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "GUIDANCE_OPENINGS",
    "MEMORY_EXAMPLE_ENTRY",
    "SMALL_MEMORY_GUIDANCE",
    "SMALL_SESSION_SEARCH_GUIDANCE",
    "SMALL_TOOL_USE_GUIDANCE",
    "SMALL_WINDOW_TOKENS",
    "compact_tool_schemas",
    "copies_example",
    "is_small_window",
    "may_start_example",
    "without_example_copy",
]

SMALL_WINDOW_TOKENS = 16_384

# The entry the memory guidance's worked example saves. Small models copy it into
# their own entries ("Name: Tomas. Prefer tabs."): the agent leaves such a copy out
# without a word (``agent/memory_writes.py``).
MEMORY_EXAMPLE_ENTRY = "Name: Sam. Prefers tabs."

_MEMORY_EXAMPLE_SAID = "I'm Sam and I prefer tabs"

SMALL_MEMORY_GUIDANCE = (
    "# Memory\n"
    "When the user tells you their name, a preference, how they like answers, or a "
    "lasting fact about their work or project, your reply starts with a memory tool call "
    "that saves that fact in a few words; answer after the tool result. Facts about the "
    "user go to target \"user\", facts about projects and tools to target \"memory\".\n"
    f"For example, to \"{_MEMORY_EXAMPLE_SAID}\" your reply starts with:\n"
    "<tool_call>\n"
    '{"name": "memory", "arguments": {"action": "add", "target": "user", '
    f'"content": "{MEMORY_EXAMPLE_ENTRY}"}}}}\n'
    "</tool_call>\n"
    "Use the USER PROFILE and MEMORY notes, when shown, without being asked."
)

SMALL_SESSION_SEARCH_GUIDANCE = (
    "# Past sessions\n"
    "When the user mentions an earlier conversation, call session_search with a few "
    "keywords before answering."
)

SMALL_TOOL_USE_GUIDANCE = (
    "# Tools\n"
    "Call a tool through the tool-call format, never by describing the call. Base what "
    "you say about results on what the tools returned."
)


# The worked example's phrases: a reply sentence that holds one with a word the user
# never said copies the example ("Tomas. I prefer tabs." as the answer to "Hi, I'm
# Tomas", seen by hand) and is not kept, or the next replies and the summary carry it on
# (a model summary made it the chat's goal: "To add a new user named Tomas with tabs as
# their preferred tab."). Its phrases, not its words alone: "Python wants spaces, not
# tabs." is an answer.
_EXAMPLE_PHRASE = re.compile(r"\bprefers? (tabs)\b|\b(?:i'?m|i am|name:) (sam)\b",
                             re.IGNORECASE)
_REPLY_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?]+|\n|$)")


# Where a clause being streamed may go on into one of them: held until the next word.
_EXAMPLE_START = re.compile(r"\b(?:i|i'?m|i am|prefers?)$", re.IGNORECASE)


def copies_example(text: str, said: str) -> bool:
    """True when ``text`` holds a phrase of the memory guidance's worked example ("prefer
    tabs", "I'm Sam") whose word ``said`` (what the user said) lacks."""
    return any(not re.search(rf"\b{word}\b", said, re.IGNORECASE)
               for match in _EXAMPLE_PHRASE.finditer(text) for word in match.groups() if word)


def may_start_example(clause: str) -> bool:
    """True when ``clause`` (streamed so far) ends where a phrase of the example may
    begin ("… I prefer")."""
    return _EXAMPLE_START.search(clause.rstrip()) is not None


def without_example_copy(text: str, said: str) -> str:
    """``text`` without its sentences that copy the worked example (``copies_example``)."""
    if not _EXAMPLE_PHRASE.search(text):
        return text
    return "".join(s for s in _REPLY_SENTENCE.findall(text)
                   if not copies_example(s, said)).strip()


def _openings(guidance: str) -> tuple[str, str]:
    """A guidance block's heading with the first words after it, and its first sentence
    up to its sixth word: where a reply that starts copying the block out begins. The
    second under a heading of the model's own: by hand a reply went on "# Memory & Past
    Sessions\nWhen the user mentions an earlier conversation, call session_search …"."""
    heading, _, body = guidance.partition("\n")
    words = body.split()
    return heading + "\n" + " ".join(words[:4]), " ".join(words[:6])


# By hand the embedded model ended replies by copying its memory guidance out ("# Memory
# When the user tells me their name, …"), shown to the user and then copied again from
# the conversation: a reply is cut where it starts one of these (``agent.py``).
# … or where it starts the worked example's line (by hand: 'To "I'm Sam and I prefer
# tabs" your reply starts with:', shown as the answer to "What do you remember about my
# food rules?").
GUIDANCE_OPENINGS = (*(opening for g in (
    SMALL_MEMORY_GUIDANCE, SMALL_SESSION_SEARCH_GUIDANCE, SMALL_TOOL_USE_GUIDANCE)
    for opening in _openings(g)),
    f"To \"{_MEMORY_EXAMPLE_SAID}\"", f"to \"{_MEMORY_EXAMPLE_SAID}\"",
    f"\"{_MEMORY_EXAMPLE_SAID}\" your reply")

_SHORT: dict[str, dict[str, Any]] = {
    "memory": {
        "name": "memory",
        "description": "Save lasting facts for future sessions: the user's name, "
                       "preferences and habits (target user); project and tool facts "
                       "(target memory).",
        "parameters": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["add", "replace", "remove"]},
                "target": {"type": "string", "enum": ["user", "memory"]},
                "content": {"type": "string", "description": "the fact, one short line"},
                "old_text": {"type": "string",
                             "description": "part of the entry to replace or remove"},
            },
            "required": ["action", "target"],
        },
    },
    "session_search": {
        "name": "session_search",
        "description": "Search earlier conversations by keywords.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "mode": {"type": "string", "enum": ["search", "recent"]},
            },
            "required": [],
        },
    },
    "skill_view": {
        "name": "skill_view",
        "description": "Load a listed skill's instructions by name.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
}


def is_small_window(context_length: int | None) -> bool:
    """True for a known window of at most ``SMALL_WINDOW_TOKENS`` tokens."""
    return context_length is not None and 0 < context_length <= SMALL_WINDOW_TOKENS


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end == -1 else flat[: end + 1]


def _stripped(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A schema with its description cut to one sentence and property descriptions gone."""
    short = copy.deepcopy(dict(schema))
    short["description"] = _first_sentence(str(short.get("description", "")))
    for prop in (short.get("parameters") or {}).get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("description", None)
    return short


def compact_tool_schemas(schemas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Short versions of ``schemas`` (same names, same order); inputs are not changed.

    A built-in tool gets its hand-written short schema only when every property of the
    short one exists in the full one (so a changed tool is never misdescribed); any other
    tool keeps its parameters with the descriptions trimmed.
    """
    compact: list[dict[str, Any]] = []
    for schema in schemas:
        short = _SHORT.get(str(schema.get("name")))
        full_props = (schema.get("parameters") or {}).get("properties", {})
        if short is not None and set(short["parameters"]["properties"]) <= set(full_props):
            compact.append(copy.deepcopy(short))
        else:
            compact.append(_stripped(schema))
    return compact
