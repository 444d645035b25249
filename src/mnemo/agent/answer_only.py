"""The request that asks a small model to answer in words once its tools are withheld.

The agent withholds tools when a turn reaches ``max_tool_iterations``, when the model only
repeats calls it already made, and when it asks again after a reply that was no answer.
A large model answers such a request as it is. The embedded 0.5B model does not (seen
with the README's first command):

* after a tool message, with no tools offered, it ends its reply at the first token;
* with the system prompt's tool guidance still there ("your reply starts with a memory
  tool call"), it writes that call as text again, however the request asks for words.

So for a small window the request is reshaped, and only the request: the stored
conversation keeps its calls and results. The system prompt drops its tool guidance
parts. The current turn's calls and what they returned — but the memory tool's, which
the model answered about in place of the user — become a note on the user's message,
which ends the request, followed by the instruction to answer now.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from mnemo.context.markers import COMPACTION_NOTE, SUMMARY_END_MARKER, SUMMARY_PREFIX
from mnemo.context.prompt import TEMPLATE_SECTIONS
from mnemo.context.summary.notes import CHANGE_MARK
from mnemo.context.textscan import one_line, sentences
from mnemo.memory.tool import ACTIONS as MEMORY_ACTIONS
from mnemo.messages import Message, content_text, tool_calls_of
from mnemo.prompt import SystemPrompt
from mnemo.prompt.builder import PART_SEPARATOR

__all__ = ["ANSWER_COPIED", "ANSWER_LANGUAGE", "ANSWER_NOW", "ANSWER_PLAIN", "ANSWER_REPEATED",
           "ANSWER_RESTATED", "COPIED_NOTE", "COPIED_SUMMARY", "HINT_OPENINGS", "RETRY_OPENING",
           "answer_only_request", "answer_only_system", "copied_call_openings", "with_extra",
           "without_copied_note"]

# Added to the request when the model has to answer without tools.
ANSWER_NOW = ("[Tools are not available for this reply. Answer the user's last message "
              "directly, in plain words.]")
# What a small model's request without tools ends with instead: the embedded model wrote
# ANSWER_NOW's first words out as its answer ("No tools available for this reply.").
ANSWER_PLAIN = "[Answer the message above directly, in plain words.]"

# Added when the model's reply only repeated the user's question (``replies.py``).
ANSWER_REPEATED = ("[Your last reply only repeated the question. Answer it, in plain "
                   "words, from what you know of the conversation.]")

# Added when the model's reply copied one it gave to an earlier message (``replies.py``).
ANSWER_COPIED = ("[Your last reply copied an earlier answer. Answer the user's last "
                 "message itself, in plain words.]")

# Added when the model's reply was in another language than the user's message.
ANSWER_LANGUAGE = ("[Your last reply was not in the language of the user's message. "
                   "Answer it in that language, in plain words.]")

# Added when the model's reply only repeated earlier messages about something else.
ANSWER_RESTATED = ("[Your last reply only repeated earlier messages. Answer the user's "
                   "last message itself, in plain words.]")

_NOTE_OPENING = "[Your tool calls this turn"
# How the agent's hint for a call written as text opens (``Agent._retry_hint``), and the
# memory reminders (``nudges.py``): by hand the embedded model answered a correction with
# 'Hi there! …\n[Your last reply was a memory call written as text, and it was not run:
# …]', and streamed '[Reminder "I'm learning Portuguese…"'.
# Both come with tools offered, so a reply is cut at them in every request.
RETRY_OPENING = "[Your last reply was a "
HINT_OPENINGS = (RETRY_OPENING, "[Reminder")
# Where an answer that starts copying out its request's note or instruction is cut:
# in what is stored (``without_copied_note``) and in what is streamed to the user.
COPIED_NOTE = (_NOTE_OPENING, ANSWER_NOW, ANSWER_PLAIN, ANSWER_REPEATED, ANSWER_COPIED,
               ANSWER_RESTATED, ANSWER_LANGUAGE, *HINT_OPENINGS)


# Where a reply starts writing out a result of the agent's own tools — by hand (3,072
# tokens) the embedded model answered '{"usage": "4% — 59/1,375 chars"}', and from then
# on every reply copied it with a refusal's '{"error": "Not saved: …"}}' after it, its
# braces unbalanced (no JSON ``echoes_results`` could read) and the results it copied
# long since compacted away.
_COPIED_RESULTS = tuple(f'{{"{key}":{gap}' for key in ("success", "error", "usage")
                        for gap in ("", " "))


def copied_call_openings(names: Sequence[str]) -> tuple[str, ...]:
    """Where a reply starts writing out one of the tools ``names``' calls as the note
    shows a call (``- memory {…} returned: …``), in brackets of its own, or as JSON that
    is no call (one a call would be made real before the cut): by hand the embedded
    model answered, then wrote "[Memory {…} returned: {…}]" for each call it had made,
    and another time a memory call with the note's words inside its arguments, then a
    ``{"name": "tool_response", …}`` of its own — and the user was shown the JSON; or
    writes one of their results out (``_COPIED_RESULTS``). With
    ``COPIED_SUMMARY``, the ``stop_at`` strings of a small window's replies (the agent's
    ``_call``)."""
    marked = (f"{mark}{spelt} {{" for name in names
              for spelt in dict.fromkeys((name, name.capitalize())) for mark in ("[", "- "))
    written = (f'{{"name":{gap}"{name}"' for name in (*names, "tool_response")
               for gap in ("", " "))
    # The note's own line for a memory call, without its dash: by hand a reply went on
    # 'In my previous turn, I returned "memory add user "Name: Tomas. Prefer tabs."":
    # done (Entry added.)' — the model's call as it wrote it, not what was saved.
    told = (f"{spelt} {action} " for spelt in ("memory", "Memory") if "memory" in names
            for action in MEMORY_ACTIONS)
    # A tool's instruction to the model, retold to the user as what to do: by hand
    # (3,072 tokens) the embedded model answered five messages of one chat with "Call
    # memory with content 'Parking is free at the back entrance.'" or "To bring your BIG
    # registration number …, call memory with content '…'", a memory refusal's "call
    # memory again, for example with content '…'" reworded. The user calls no tool.
    instructed = (f"{verb} {name} {then}" for name in names for verb in ("call", "Call")
                  for then in ("with ", "again"))
    # The chat template's own tag for a tool's answer: by hand (3,072 tokens) a reply
    # ended "… going to Lisbon in May.\n\n<tool_response>", shown, and the summary
    # kept it as a note of the assistant's. So are the template's preamble to the tools
    # and their list: another reply went on "# Memory & Past Sessions … # Tools\n\nYou
    # may call one or more functions … <tools>\n{"type": "function", …", shown.
    return (*marked, *written, *told, *instructed, *_COPIED_RESULTS, "<tool_response>",
            *_TEMPLATE_TOOLS)


# The Qwen chat template's words before the tool list (the embedded model's template).
_TEMPLATE_TOOLS = ("# Tools\n\nYou may call", "You may call one or more functions",
                   "<tools>")


_SUMMARY_END = SUMMARY_END_MARKER.strip(" -\n")


# Where a reply starts copying out the summary of compacted turns it was given: its
# frame, its section headings, or a note as the summary labels one ("- User: …"). Seen
# by hand (3,072-token window): a reply went on with "- User: We now live in York…" and
# "## Tools & Patterns", the summary's last lines. Headings general enough to open an
# answer ("## Goal", "## Progress") count only with what the summary writes under them.
# A heading is found whatever its level: the embedded model wrote "# Tools & Patterns".
# Any sentence of the frame or of the note after it counts (by hand: "… 9:00 AM in
# Amersfoort. Here's the updated schedule:\n\n[Note: Some earlier conversation turns …",
# and "… in Amersfoort. Do NOT answer questions or fulfill requests mentioned in this
# summary; …").
COPIED_SUMMARY = (*(sentence[:30] for frame in (SUMMARY_PREFIX, COMPACTION_NOTE)
                    for sentence in sentences(frame)), COMPACTION_NOTE[1:31],
                  *(f"# {name}" for name in TEMPLATE_SECTIONS
                    if name not in ("Goal", "Progress")),
                  "- User: ", "- Assistant: ",
                  # "## Goal" as the summary writes it, with its first bullet under it (by
                  # hand: an answer went on "## Goal\n- To help Biscuit remember …").
                  "## Goal\n- ", "## Progress\n### ",
                  # … and the parts of Progress (by hand the embedded model answered in
                  # the summary's layout, "### Done\n- Mia has turned from 10 to 12.\n…
                  # ### In Progress\n- …", and the next summaries read it as its notes).
                  "### Done\n- ", "### In Progress\n", "### Blocked\n",
                  # … and a value correction's mark, which the model copied with the
                  # values made up: "… fly home on the 15th. [Since changed: 4500 euros,
                  # not 3500 euros.]" (by hand).
                  CHANGE_MARK,
                  # The marker after a summary, in the cases the model writes it ("---
                  # End of Context Summary ---" after an answer, by hand).
                  _SUMMARY_END, "End of Context Summary", _SUMMARY_END.capitalize())


# The system prompt's parts that tell the model how and when to call its tools.
_TOOL_GUIDANCE = frozenset({"memory_guidance", "session_search_guidance",
                            "skills_guidance", "tool_use_guidance"})


def answer_only_system(prompt: SystemPrompt) -> str:
    """``prompt``'s text without its tool guidance (the memory notes themselves stay)."""
    return PART_SEPARATOR.join(p.text for p in prompt.parts if p.name not in _TOOL_GUIDANCE)


def answer_only_request(system: str, messages: Sequence[Message], extra: str) -> list[Message]:
    """``[system, *messages]`` with the turn after the last user message folded into a
    note on that message, then ``extra`` and ``ANSWER_PLAIN`` (once, in place of
    ``ANSWER_NOW``). Neither the note nor the earlier turns hold memory calls and their
    results (``_without_memory_calls``); earlier turns are otherwise sent as they are —
    each of them ends with an answer. With no user message at all (a conversation left
    as a summary and calls) the note is a user message of its own."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    done = _what_the_tools_did(_without_memory_calls(messages[last_user + 1:]))
    extra = extra.replace(ANSWER_NOW, ANSWER_PLAIN)
    hints = [part for part in (done, extra) if part]
    if ANSWER_PLAIN not in extra:
        hints.append(ANSWER_PLAIN)
    note = "\n\n".join(hints)
    head: list[Message] = [{"role": "system", "content": system},
                           *_without_memory_calls(messages[:max(last_user, 0)])]
    if last_user < 0:
        return [*head, {"role": "user", "content": note}]
    return [*head, with_extra(messages[last_user], note)]


def _without_memory_calls(messages: Sequence[Message]) -> list[Message]:
    """``messages`` without the memory tool's calls and their results: what they saved
    is in the system prompt's notes or will be after the next compaction, and a reply
    without tools must not take them for the way to answer. By hand (3,072 tokens), with
    every earlier turn opening on a memory call, the embedded model answered nearly every
    request without tools with another one ("The model replied with a memory call
    instead of an answer"). Told in the note, the current turn's memory calls were what
    it answered about ("The user has already saved their message as …", "The tool used
    to generate your response was "memory"", a refusal to the README's first message) in
    place of the user's message (``bench/local_agent_bench.py --part memory``)."""
    dropped: set[str] = set()
    kept: list[Message] = []
    for message in messages:
        calls = tool_calls_of(message)
        if message.get("role") == "assistant" and calls:
            memory = {str(c.get("id", "")) for c in calls
                      if isinstance(c.get("function"), dict)
                      and c["function"].get("name") == "memory"}
            if memory:
                dropped |= memory
                rest = [c for c in calls if str(c.get("id", "")) not in memory]
                copy: dict[str, Any] = {k: v for k, v in message.items() if k != "tool_calls"}
                if rest:
                    copy["tool_calls"] = rest
                elif not content_text(message).strip():
                    continue
                message = copy  # type: ignore[assignment]
        elif message.get("role") == "tool" and str(message.get("tool_call_id", "")) in dropped:
            continue
        kept.append(message)
    return kept


def _what_the_tools_did(turn: Sequence[Message]) -> str:
    """One line per distinct call of ``turn`` and what it returned ("" for none)."""
    results = {str(m.get("tool_call_id", "")): content_text(m)
               for m in turn if m.get("role") == "tool"}
    lines: dict[str, None] = {}  # a small model repeats its calls: each is told once
    for message in turn:
        for call in tool_calls_of(message):
            function: Any = call.get("function")
            if not isinstance(function, dict):
                continue
            name = str(function.get("name") or "tool")
            answer = results.get(str(call.get("id", "")), "(no result)")
            lines[f"- {name}{_arguments_in_words(function.get('arguments'))}: "
                  f"{_outcome_in_words(answer)}"] = None
    if not lines:
        return ""
    return f"{_NOTE_OPENING}, and what they returned:\n" + "\n".join(lines) + "]"


# The fields of a tool result that only say how the call went (the memory tool's).
_STATUS_FIELDS = frozenset({"success", "error", "message", "note", "usage", "entry_count",
                            "target", "terminal"})
_NAME = re.compile(r"[A-Za-z_][\w-]{0,30}")
_FIRST_SENTENCE = re.compile(r"^.*?[.!?。！？](?=\s|$)")


def _arguments_in_words(arguments: Any) -> str:
    """A call's arguments as the note tells them: its action, then its texts quoted.
    Written as JSON (``memory {"action": …} returned: {…}``), the note was what the
    embedded model copied as its answer, call and made-up result (seen by hand)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return f" {one_line(arguments, 120)}"
    if not isinstance(arguments, dict):
        return ""
    action = arguments.get("action")
    said = [action] if isinstance(action, str) else []
    # A name ("user", "memory") as it is, a text quoted.
    said += [value if _NAME.fullmatch(value) else f'"{one_line(value, 120)}"'
             for key, value in arguments.items()
             if key != "action" and isinstance(value, str) and value.strip()]
    return "".join(f" {part}" for part in said)


def _outcome_in_words(result: str) -> str:
    """What a call returned as the note tells it: a status in words ("done (Entry
    added.)", "not done: Not saved: …" — the first sentence of the error, not its advice
    to call again, which a reply without tools cannot take); any other result (what a
    search found, for the answer to use) as it came."""
    try:
        value = json.loads(result)
    except ValueError:
        return result
    if not isinstance(value, dict) or not set(value) <= _STATUS_FIELDS:
        return result
    if value.get("success") is False:
        error = str(value.get("error") or "failed")
        first = _FIRST_SENTENCE.match(error)
        return f"not done: {first.group() if first else error}"
    told = value.get("note") or value.get("message")
    return f"done ({told})" if told else "done"


def without_copied_note(text: str, openings: Sequence[str] = COPIED_NOTE) -> str:
    """``text`` cut where it starts copying the note or the instruction — or another of
    the ``openings`` (seen by hand: the embedded model answered, then wrote out the note,
    and the next turn copied it again from the conversation); the sentence it began in
    too, when it is left unfinished after a whole one."""
    # A heading general enough to open an answer ends it as the start of a copy of the
    # summary (by hand, in Chinese: "您好！我叫李明，…不要用花生。\n\n## Goal").
    if (trimmed := _TRAILING_HEADINGS.sub("", text)) != text:
        text = trimmed.rstrip()
    found = [at for opening in openings if (at := text.find(opening)) >= 0]
    if not found:
        return text
    # '… You live in York now. In my previous turn, I returned "memory add …': the
    # unfinished sentence goes with the copy, and so does a rule line before it ("---")
    # or a heading right before it ("# Memory & Past Sessions", the model's own).
    kept = _HEADINGS_BEFORE_COPY.sub("", _RULE_LINES.sub("", text[:min(found)])).rstrip()
    # A copy begun after the first clause of the reply's only sentence leaves no answer:
    # "To bring your BIG registration number and two payslips, call memory with content
    # '…'" (by hand) is none without its copy, and the empty reply is asked again.
    if kept.endswith(",") and not _WHOLE.search(kept):
        return ""
    return _UNFINISHED.sub("", kept)


_TRAILING_HEADINGS = re.compile(r"(?:\n[ \t]*#{1,6}[ \t]*(?:Goal|Progress)[ \t]*)+\s*$")
_WHOLE = re.compile(r"[.!?。！？](?:\s|$)")
_UNFINISHED = re.compile(r"(?<=[.!?。！？])[ \t]+[^\n.!?。！？]*$")
_RULE_LINES = re.compile(r"(?:\n[ \t]*[-=*_]{3,}[ \t]*)+\s*$")
_HEADINGS_BEFORE_COPY = re.compile(r"(?:\n[ \t]*#{1,6}[ \t][^\n]*)+\s*$")


def with_extra(message: Message, extra: str) -> Message:
    """A copy of ``message`` with ``extra`` after its text (in a part of its own when
    the content is in parts)."""
    copy: dict[str, Any] = dict(message)
    content = message.get("content")
    if isinstance(content, list):
        copy["content"] = [*content, {"type": "text", "text": extra}]
    else:
        copy["content"] = f"{content or ''}\n\n{extra}"
    return copy  # type: ignore[return-value]
