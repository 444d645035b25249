"""Tool calls a model wrote as text: find them, check them against the offered schemas.

Small local models often answer a tool request with the call spelled out in the reply —
``{"name": "memory", "arguments": {...}}`` or a Hermes-style ``<tool_call>…</tool_call>``
block — instead of the structured ``tool_calls`` field, especially when the chat template
parser of the server missed it. ``accept_text_tool_calls`` turns such text into real
tool calls, but only when the call names a tool that was offered *and* its arguments
validate against that tool's JSON schema; anything else stays text, so a model that
quotes JSON to the user is not hijacked.

The schema check is a small validator for the subset of JSON Schema our tools use
(``type``, ``enum``, ``required``, ``properties``, ``additionalProperties: false``,
``items``): no dependency, and a failure names the field so it can be logged.

``StreamGate`` is the streaming side of the same rule: it passes streamed text through
unless the reply so far may be the start of a text tool call, and holds that part back
until the reply is complete and the caller knows whether it was a call.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from mnemo.llm.types import ChatResponse
from mnemo.messages import Message, ToolCall
from mnemo.textjson import (
    CALL_MARKS,
    RETURNED,
    call_line_names,
    has_words,
    json_objects,
    made_of_json,
)

__all__ = [
    "StreamGate",
    "accept_text_tool_calls",
    "call_attempt",
    "echoes_results",
    "instruction_openings",
    "parse_text_tool_calls",
    "schema_problem",
]

_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"```(?:json)?\s*|```")
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_problem(value: Any, schema: Mapping[str, Any], path: str = "arguments") -> str | None:
    """Why ``value`` does not fit ``schema`` (the subset our tools use), or None."""
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _JSON_TYPES:
        wanted = _JSON_TYPES[kind]
        # bool is an int in Python, but not a JSON integer or number.
        if not isinstance(value, wanted) or (isinstance(value, bool) and kind != "boolean"):
            return f"{path} should be {kind}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path} should be one of {list(schema['enum'])}"
    if isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties") or {}
        for name in schema.get("required") or ():
            if name not in value:
                return f"{path}.{name} is missing"
        for name, item in value.items():
            if name in properties:
                problem = schema_problem(item, properties[name], f"{path}.{name}")
                if problem:
                    return problem
            elif schema.get("additionalProperties") is False:
                return f"{path}.{name} is not a parameter"
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for number, item in enumerate(value):
            problem = schema_problem(item, schema["items"], f"{path}[{number}]")
            if problem:
                return problem
    return None


def _as_call(value: Any,
             tools: Mapping[str, Mapping[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """(name, arguments) when ``value`` is a valid call of an offered tool."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict):  # the OpenAI wire shape written out
        value = value["function"]
    name = value.get("name")
    if not isinstance(name, str) or name not in tools:
        return None
    args = value.get("arguments", value.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    if not isinstance(args, dict):
        return None
    parameters = tools[name].get("parameters") or {"type": "object"}
    if schema_problem(args, parameters) is not None:
        return None
    return name, args


def _offered(tools: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Tool schemas by name, inner or wrapped (``{"type": "function", "function": ...}``)."""
    by_name: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        inner = tool.get("function") if tool.get("type") == "function" else tool
        if isinstance(inner, Mapping) and isinstance(inner.get("name"), str):
            by_name[inner["name"]] = inner
    return by_name


def parse_text_tool_calls(
    text: str, tools: Sequence[Mapping[str, Any]]
) -> tuple[list[ToolCall], str]:
    """The valid tool calls written in ``text``, and the text that is left around them.

    Looks inside ``<tool_call>`` blocks first; without any, at every JSON object in the
    text (code fences ignored). A candidate that names no offered tool or whose arguments
    do not validate is left in the text. No calls found: ``([], text)`` unchanged.
    """
    offered = _offered(tools)
    if not offered or "{" not in text:
        return [], text
    tagged = list(_TAG.finditer(text))
    spans: list[tuple[int, int]] = []
    calls: list[ToolCall] = []
    if tagged:
        for match in tagged:
            found = [call for _, _, value in json_objects(match.group(1))
                     if (call := _as_call(value, offered))]
            if found:
                spans.append(match.span())
                calls += [_tool_call(len(calls) + n, *call) for n, call in enumerate(found, 1)]
    else:
        for start, end, value in json_objects(text):
            call = _as_call(value, offered)
            if call:
                spans.append((start, end))
                calls.append(_tool_call(len(calls) + 1, *call))
    if not calls:
        return [], text
    rest, last = [], 0
    for start, end in spans:
        rest.append(text[last:start])
        last = end
    rest.append(text[last:])
    left = _FENCE.sub("", "".join(rest)).strip() if calls else text
    return calls, left


def call_attempt(text: str,
                 tools: Sequence[Mapping[str, Any]]) -> tuple[str, str | None] | None:
    """``(tool name, what is wrong with its arguments or None)`` when ``text`` is nothing
    but a call of one of ``tools`` written as text; None for anything else.

    Such a reply is an attempt at a call, not an answer: shown to the user it is noise.
    A reply with any words around the JSON stays an answer (it may be quoting JSON); a
    stray mark is no word (the embedded model writes ``>{"name": …}``).
    """
    offered = _offered(tools)
    if not offered or "{" not in text:
        return None
    body = _FENCE.sub("", RETURNED.sub(" ", _TAG.sub(lambda m: m.group(1), text))).strip()
    values = made_of_json(body)
    if values is None:
        names = call_line_names(body)
        return (names[0], "its JSON is not valid") if names and names[0] in offered else None
    for value in values:
        if isinstance(value, dict) and isinstance(value.get("function"), dict):
            value = value["function"]
        name = value.get("name") if isinstance(value, dict) else None
        if not isinstance(name, str) or name not in offered:
            continue
        args = value.get("arguments", value.get("parameters", {}))
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                return name, "its arguments are not valid JSON"
        if not isinstance(args, dict):
            return name, "its arguments are not a JSON object"
        return name, schema_problem(args, offered[name].get("parameters") or {"type": "object"})
    return _misnamed_call(values, offered) or _nameless_call(values, offered)


def _misnamed_call(values: Sequence[Any], offered: Mapping[str, Mapping[str, Any]]
                   ) -> tuple[str, str] | None:
    """``(tool, what is wrong)`` for a call written as text under a name no tool has,
    whose arguments are one offered tool's, every required one there (by hand the
    embedded model answered ``{"name": "user", "arguments": {"action": "replace",
    "target": "memory", …}}``, and the user was shown the JSON); None for anything
    else — a call of a tool that is not offered stays an answer."""
    for value in values:
        if not isinstance(value, dict) or set(value) != {"name", "arguments"}:
            continue
        name, args = value["name"], value["arguments"]
        if not isinstance(name, str) or not isinstance(args, dict) or not args:
            continue
        fits = [tool for tool, spec in offered.items()
                if set(args) <= set((spec.get("parameters") or {}).get("properties") or {})
                and schema_problem(args, spec.get("parameters") or {}) is None]
        if len(fits) == 1:
            return fits[0], f'it is named "{" ".join(name.split())[:40]}", not "{fits[0]}"'
    return None


def _nameless_call(values: Sequence[Any], offered: Mapping[str, Mapping[str, Any]]
                   ) -> tuple[str, str] | None:
    """``(tool, what is wrong)`` for a call written as its arguments alone, in one or
    more JSON objects that name no tool, whose keys together are one offered tool's
    parameters and fit its schema (by hand the embedded model answered "Our budget is
    18,000 euros." with ``{"mode": "search"}`` and ``{"query": "budget …"}``, shown to
    the user as the reply); None for anything else. An object of one key whose value is
    an offered tool's name (``{"target": "session_search"}``, written after them by
    hand) names the tool meant."""
    args: dict[str, Any] = {}
    named: set[str] = set()
    for value in values:
        if not isinstance(value, dict) or not value or {"name", "function"} & set(value):
            return None
        only = next(iter(value.values())) if len(value) == 1 else None
        if isinstance(only, str) and only in offered:
            named.add(only)
            continue
        args.update(value)
    fits = [tool for tool, spec in offered.items()
            if set(args) <= set((spec.get("parameters") or {}).get("properties") or {})
            and schema_problem(args, spec.get("parameters") or {}) is None
            and (not named or tool in named)]
    if not args or len(fits) != 1:
        return None
    return fits[0], "it names no tool"


def echoes_results(text: str, results: Sequence[str]) -> bool:
    """``text`` is nothing but JSON objects, each made of the fields of one of the tool
    ``results`` (JSON texts), or nothing but what the tools told the model
    (``_retells_instructions``): a small model repeating what its tools answered, not an
    answer to the user."""
    if not results:
        return False
    if "{" not in text:
        return _retells_instructions(text, results)
    body = _FENCE.sub("", CALL_MARKS.sub(" ", text)).strip()
    values = made_of_json(body)
    if values is None:
        return False
    shapes = []
    for result in results:
        try:
            value = json.loads(result)
        except ValueError:
            continue
        if isinstance(value, dict):
            shapes.append(set(value))
    return all(isinstance(value, dict) and value and any(set(value) <= shape
                                                         for shape in shapes)
               for value in values)


# The fields in which a tool speaks to the model rather than of what it found: a reply
# made of them tells the user nothing (by hand, "Can you suggest a quick breakfast before
# a run?" got "Certainly! To read more, call again with mode 'around' and a message_id,
# or mode 'read' and a session_id.", session_search's hint). Sentences shorter than
# ``_MIN_RETOLD_WORDS`` ("Certainly!", "Entry added.") tell nothing either way. A
# memory result's ``usage`` is of the same kind: by hand (3,072 tokens) the embedded
# model answered "Yesterday I had my first driving lesson." with "3% — 54/1,375 chars
# Entry added.", and copied that reply into every later one.
_INSTRUCTION_KEYS = ("hint", "error", "note", "message", "usage")
_MIN_RETOLD_WORDS = 4
_KEYS = "|".join(_INSTRUCTION_KEYS)
_INSTRUCTION_FIELD = re.compile(rf'"(?:{_KEYS})":\s*("(?:[^"\\]|\\.)*")')
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")  # a line is a sentence too


# A quoted span: what a tool quotes of the user ("Already saved as 'I don't like emojis
# in answers.'") is the user's, and a reply that says it again may be answering them.
_QUOTED = re.compile(r"""(?:(?<=[\s(])|^)(['"])(.+?)\1(?=[\s;:,.)!?]|$)""")


def _unquoted_words(match: re.Match[str]) -> str:
    """A quoted sentence left out; a quoted word ("mode 'around'") kept as it is."""
    return " " if len(match.group(2).split()) >= 3 else match.group(0)


def _instructions(result: str) -> list[str]:
    """The ``_INSTRUCTION_KEYS`` strings of a tool result, without what they quote of
    the user (``_QUOTED``)."""
    return [_QUOTED.sub(_unquoted_words, said) for said in _instruction_fields(result)]


def _instruction_fields(result: str) -> list[str]:
    """The ``_INSTRUCTION_KEYS`` strings of a tool result — found field by field when the
    JSON no longer parses: a small window's guard cuts the middle out of a long result
    (C19), and by hand the hint the model copied sat after such a cut."""
    try:
        value = json.loads(result)
    except ValueError:
        found = []
        for match in _INSTRUCTION_FIELD.finditer(result):
            try:
                found.append(json.loads(match.group(1)))
            except ValueError:
                continue
        return [said for said in found if isinstance(said, str)]
    if not isinstance(value, dict):
        return []
    return [said for key in _INSTRUCTION_KEYS if isinstance(said := value.get(key), str)]


# How a small model opens a reply before it retells its tools ("Certainly! To read
# more, …"): a streamed reply is held when it opens so (``instruction_openings``).
_ACKNOWLEDGEMENTS = ("", "certainly", "sure", "ofcourse", "okay", "ok", "absolutely", "yes",
                     "great", "gotit", "alright", "noted", "understood")


def instruction_openings(results: Sequence[str], words: int = 6) -> list[str]:
    """The first ``words`` words of what the tool ``results`` told the model (sentences of
    ``_MIN_RETOLD_WORDS`` or more), each also after a word of acknowledgement: the
    openings a ``StreamGate`` holds a reply on, so that a retelling is never shown."""
    openings: list[str] = []
    for result in results:
        for said in _instructions(result):
            for sentence in _SENTENCE_BREAK.split(said):
                if len(sentence.split()) >= _MIN_RETOLD_WORDS:
                    opening = _letters(" ".join(sentence.split()[:words]))
                    openings += [ack + opening for ack in _ACKNOWLEDGEMENTS]
    return list(dict.fromkeys(openings))


def _retells_instructions(text: str, results: Sequence[str]) -> bool:
    told = [" ".join(said.lower().split()) for result in results
            for said in _instructions(result)]
    if not told:
        return False
    long = [" ".join(part.lower().split()).rstrip(".!?") for part in _SENTENCE_BREAK.split(text)
            if len(part.split()) >= _MIN_RETOLD_WORDS]
    return bool(long) and all(any(part in said for said in told) for part in long)


def _tool_call(number: int, name: str, args: dict[str, Any]) -> ToolCall:
    # Unique across the conversation, as a server's ids are (a model repeating the same
    # call in a later reply must not produce the same id).
    return {"id": f"call_text_{uuid.uuid4().hex[:12]}_{number}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}


def accept_text_tool_calls(response: ChatResponse,
                           tools: Sequence[Mapping[str, Any]] | None) -> ChatResponse:
    """``response`` with tool calls written as text made real (a new response), or as is.

    Only a reply without structured tool calls is looked at; the text that surrounded the
    calls stays the message's content (``None`` when nothing is left).
    """
    if not tools or response.tool_calls or not response.text:
        return response
    calls, left = parse_text_tool_calls(response.text, tools)
    if not calls:
        return response
    if not has_words(left) or (RETURNED.search(left)
                               and made_of_json(RETURNED.sub(" ", left)) is not None):
        # A stray mark before the call (">") is not a reply to show, nor is the result
        # the model wrote for its own call ("returned: {…}"): kept, the next replies
        # copy it.
        left = ""
    message: Message = {"role": "assistant", "content": left or None, "tool_calls": calls}
    return replace(response, message=message, finish_reason="tool_calls")


# A reply that begins like one of these may be a tool call written as text, or tool
# results copied out; marks a small model sometimes puts before one (``>{"name": …}``)
# are looked past.
_CALL_OPENINGS = ("{", "<tool_call>", "<tool_response>", "```")
_STRAY_MARKS = ">:*-"


class StreamGate:
    """Streamed text to ``sink``, except a reply that may turn out to be a text tool call.

    ``feed`` each delta; at the end of the reply call ``finish(was_call)``: the held text
    is released to the sink when the reply was not a call, dropped when it was. From the
    first of the ``stop_at`` strings on, nothing more of the reply is shown (a small
    model that copies out the note its request ended with: ``agent/answer_only.py``); the
    end of the text shown so far that could be the start of one is held back until
    the next delta tells. While the reply is word for word the start of one of ``echo_of``
    (the question it answers, or a question of it: a small model may only repeat it), it
    is held too, and shown from the first letter that differs from them all;
    ``finish(was_call=True)`` drops a reply held to its end. ``withheld`` judges the
    clause being written (``ClauseFilter``): a clause it drops is not shown, one it holds
    waits for the next words. A reply that opens with
    one of the ``copy_openings`` (the first words of an earlier reply) is held whole:
    ``finish(was_call=True)`` drops it when it turned out a copy of that reply.
    """

    def __init__(self, sink: Callable[[str], None], stop_at: Sequence[str] = (),
                 echo_of: Sequence[str] = (), withheld: Callable[[str], str] | None = None,
                 copy_openings: Sequence[str] = ()) -> None:
        self._out = ClauseFilter(self._shown, withheld) if withheld else None
        self._sink = sink
        # Held while the reply's letters begin one of these.
        self._echo = tuple(e for e in map(_letters, echo_of) if e)
        self._openings = tuple(o for o in map(_letters, copy_openings) if o)
        self._whole = False  # opened like an earlier reply: held to the end
        self._stop_at = tuple(m for m in stop_at if m)
        self._seen = ""
        self._held: list[str] = []
        self._holding: bool | None = None  # None: too early to tell
        self._tail = ""  # shown text held back: it may begin a ``stop_at`` string
        self._stopped = False  # a ``stop_at`` string was reached
        self.released = False  # any text reached the sink

    def feed(self, delta: str) -> None:
        if not delta:
            return
        self._seen += delta
        if self._whole:
            return
        if self._openings:
            seen = _letters(self._seen)
            if any(seen.startswith(o) for o in self._openings):
                self._whole = True
                return
            if any(o.startswith(seen) for o in self._openings):
                return  # too early to tell
            self._openings, seen, self._seen = (), self._seen, ""
            self.feed(seen)
            return
        if self._echo:
            letters = _letters(self._seen)
            if any(echo.startswith(letters) for echo in self._echo):
                return
            # It says something else: from here on, as if it had all come at once.
            self._echo, seen, self._seen = (), self._seen, ""
            self.feed(seen)
            return
        if self._holding is None:
            head = self._seen.lstrip()
            opening = head.lstrip(_STRAY_MARKS).lstrip()
            if not opening:
                return
            if any(o.startswith(opening) and o != opening for o in _CALL_OPENINGS):
                return  # e.g. "<tool" so far: wait for a few more characters
            self._holding = opening.startswith(_CALL_OPENINGS)
            delta = head if not self._holding else delta
            if self._holding:
                self._held.append(head)
                return
        if self._holding:
            self._held.append(delta)
        else:
            self._show(delta)

    def finish(self, was_call: bool) -> None:
        """The reply is complete; release what was held unless it was a tool call (or a
        repeat of ``echo_of``, or a copy of an earlier reply)."""
        if self._whole or self._openings:  # held to the end
            self._whole, self._openings, seen, self._seen = False, (), self._seen, ""
            if not was_call:
                self.feed(seen)
        if self._echo:  # held to the end: all of it the start of a question
            self._echo, seen, self._seen = (), self._seen, ""
            if not was_call:
                self.feed(seen)
        # Held: the text so far was kept back (a possible call, or too short to tell).
        pending = "".join(self._held) if self._holding else self._seen.lstrip()
        if self._holding is not False and pending and not was_call:
            self._show(pending)
        if self._tail and not self._stopped:
            self._emit(self._tail)
        if self._out is not None:
            self._out.finish()
        self._seen, self._held, self._holding = "", [], None
        self._tail, self._stopped = "", False

    def _show(self, text: str) -> None:
        """Emit ``text``, up to a ``stop_at`` string (see the class docstring)."""
        if not self._stop_at:
            self._emit(text)
            return
        if self._stopped:
            return
        text = self._tail + text
        at = min((i for m in self._stop_at if (i := text.find(m)) >= 0), default=-1)
        if at >= 0:
            self._stopped, self._tail = True, ""
            if text[:at].strip():
                self._emit(text[:at].rstrip())
            return
        # Hold back whatever could begin a stop string, and the line breaks around it
        # (the answer may end there). Not a space: the word before it is shown only once
        # the space after it comes (``ClauseFilter``), and an interrupted reply keeps
        # what was shown.
        body = text.rstrip("\n")
        body = body[:len(body) - max(
            (k for m in self._stop_at for k in range(1, min(len(m), len(body) + 1))
             if body.endswith(m[:k])), default=0)].rstrip("\n")
        cut = len(body)
        if cut > 0:
            self._emit(text[:cut])
        self._tail = text[cut:]

    def _emit(self, text: str) -> None:
        if self._out is not None:
            self._out.feed(text)
        else:
            self._shown(text)

    def _shown(self, text: str) -> None:
        self.released = True
        self._sink(text)


# Where a clause ends: a mark that separates clauses, or a sentence's end (the space
# after it goes with the next clause).
_CLAUSE_END = re.compile(r"[,;:()]|\s[-–—]\s|[.!?…]+(?=\s)|\n")
_SENTENCE_END = ".!?…\n"
SHOW, HOLD, DROP = "show", "hold", "drop"
# A clause is judged by its last characters, so a long one (a line of code, a run-on
# sentence) costs the same at every word as a short one.
_JUDGED_CHARS = 400


class ClauseFilter:
    """Text to ``sink`` clause by clause, as ``judge`` says of the clause being written:
    ``SHOW`` it (as it comes), ``HOLD`` it until the next words tell, or ``DROP`` it.

    A small model sometimes writes a note of its request into its answer ("…, and since
    this conversation revealed a durable fact …, save it with the memory tool": see
    ``agent/nudges.py``). What was shown cannot be taken back, so a clause that may be
    such a note waits. After a dropped clause, the clauses that would wait (the rest of
    the note: "a user preference") go too, until one is shown; the comma or dash before
    a dropped clause goes with it, and a sentence whose end was dropped still ends.
    """

    def __init__(self, sink: Callable[[str], None], judge: Callable[[str], str]) -> None:
        self._sink = sink
        self._judge = judge
        self._reset()

    def _reset(self) -> None:
        self._clause = ""  # the clause being written
        self._shown = 0  # how much of it reached the sink
        self._mark = ""  # the separator before it: shown with it, or dropped with it
        self._dropping = False  # the last clause was dropped
        self._break = ""  # a line break dropped with it: the next shown text keeps it
        self._last = ""  # the last character shown
        self._lead = False  # the answer began with a dropped clause: its space goes too

    def feed(self, text: str) -> None:
        self._clause += text
        while (end := _CLAUSE_END.search(self._clause)) is not None:
            clause, mark = self._clause[:end.start()], end.group()
            self._clause = self._clause[end.end():]
            self._settle(clause, mark)
        # The words written whole so far are judged and shown (a word still being
        # written, "sav", may turn out to be the reminder's "save"), without the space
        # after them, which goes with the next word (or a dash's mark).
        space = max(self._clause.rfind(" "), self._clause.rfind("\t"))
        whole = self._clause[:space].rstrip() if space > 0 else ""
        if (whole.strip() and len(whole) > self._shown
                and self._judge(whole[-_JUDGED_CHARS:]) == SHOW):
            self._show(self._resumed(whole[self._shown:]))
            self._shown = len(whole)

    def finish(self) -> None:
        """The reply is complete: its last clause is settled."""
        self._settle(self._clause, "")
        if self._mark and not self._dropping:
            self._show(self._mark)
        elif self._dropping and self._last and self._last not in _SENTENCE_END:
            self._show(".")
        self._reset()

    def _settle(self, clause: str, mark: str) -> None:
        if not clause.strip() and self._dropping:  # between two marks ("),"): still
            self._shown = 0                         # the dropped note
            if "\n" in mark and self._last:
                self._break = "\n"
            return
        verdict = self._judge(clause[-_JUDGED_CHARS:]) if clause.strip() else SHOW
        rest, self._shown = clause[self._shown:], 0
        if verdict == DROP or (verdict == HOLD and self._dropping):
            self._dropping, self._mark = True, ""
            if "\n" in mark and self._last:
                self._break = "\n"
            self._lead = self._lead or not self._last
            if mark.strip() and mark.strip()[0] in _SENTENCE_END and self._last and (
                    self._last not in _SENTENCE_END):
                self._show(mark.strip())  # the sentence that was shown ends here
            return
        self._show(self._resumed(rest))
        if mark.strip() in (",", ";", ":", "(", "-", "–", "—"):
            self._mark += mark  # shown with the next clause, or dropped with it
        else:
            self._show(mark)

    def _resumed(self, text: str) -> str:
        """``text``, the first shown after dropped clauses, set apart from the sentence
        shown before them ("… in Leeds." and "I'm allergic …" had met as "Leeds.I'm"),
        by the line break dropped with them if there was one."""
        if self._dropping and self._last in _SENTENCE_END and text[:1].isalnum():
            text = (self._break or " ") + text
        self._dropping, self._break = False, ""
        return text

    def _show(self, text: str) -> None:
        text, self._mark = self._mark + text, ""
        if self._lead:
            text = text.lstrip()
            self._lead = not text
        if not text:
            return
        self._sink(text)
        self._last = text.rstrip(" ")[-1:] or self._last


def _letters(text: str) -> str:
    """``text``'s letters and digits, lower-cased: what a copy keeps whatever it does
    to the spaces, marks and line breaks ("Money update:\n- my car" → "moneyupdatemycar")."""
    return "".join(c for c in text.lower() if c.isalnum())
