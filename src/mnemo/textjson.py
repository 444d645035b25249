"""JSON objects written inside text, and whether a text is nothing but them.

A small model writes tool calls, and the results it imagines for them, as JSON in its
reply. Two places must tell such a reply from prose: the provider side, which turns a
written call into a real one (``mnemo.llm.text_tool_calls``), and the summariser, which
reads no prose in it (``mnemo.context.summary.reading``). Both find the objects here, so
they agree on what counts as one — including the call the embedded model ends a brace
or two short.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "CALL_MARKS",
    "RETURNED",
    "call_line_names",
    "has_words",
    "json_objects",
    "made_of_json",
    "outside_objects",
]

# Marks that cannot end a JSON object, which a small model writes after a call.
_END_MARKS = ");,."

# How a call and its result are written out for a model (``… returned: {…}``), which the
# embedded model copies as its reply: its own calls with made-up results (seen by hand).
RETURNED = re.compile(r"(?<!\w)returned:")
# Every mark a model writes around a call or its result: ``returned:`` and the chat
# template's tags, which a small model copies with them.
CALL_MARKS = re.compile(RETURNED.pattern + r"|</?tool_(?:call|response)>")

Found = list[tuple[int, int, Any]]  # (start, end, decoded value) of each object


def json_objects(text: str) -> Found:
    """Every top-level JSON object in ``text`` as (start, end, value), left to right.

    An object that runs to the end of ``text`` one or two closing braces short counts
    too: the embedded model sometimes stops before the last ``}`` of a call."""
    decoder = json.JSONDecoder()
    found: Found = []
    closed: list[str] | None = None  # ``text`` with one and two braces added, made once
    position = 0
    while (start := text.find("{", position)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            if closed is None:
                closed = _with_closing_braces(text)
            value = _decoded_to_the_end(decoder, closed, start)
            if value is not None:
                found.append((start, len(text), value))
                break
            position = start + 1
            continue
        found.append((start, end, value))
        position = end
    return found


def made_of_json(text: str) -> list[Any] | None:
    """The values of the JSON objects ``text`` is made of — nothing around or between them
    but marks (spaces, commas, a stray ``>``) — or None when it holds anything else."""
    found = json_objects(text)
    if not found or has_words("".join(outside_objects(text, found))):
        return None
    return [value for _, _, value in found]


# A line that opens as a call written as JSON, after a stray mark or a Hermes tag.
_CALL_LINE = re.compile(r'[>*-]?\s*(?:<tool_call>\s*)?\{\s*"name"\s*:\s*"([^"\n]+)"')


def call_line_names(text: str) -> list[str] | None:
    """The tool names, in order, when every line of ``text`` opens as a call written as
    JSON (``{"name": "memory", …``) and holds its arguments, however it goes on; None
    otherwise. By hand the embedded model wrote its calls with made-up results inside
    them, one a line (``{"name": "memory", "arguments": {…} returned: {…}}``): no JSON,
    still no answer."""
    names: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _CALL_LINE.match(line.strip())
        # Its arguments in it ({"name": "Ana", "age": 3} answers what the user asked),
        # and it ends as JSON does: words after it are an answer, a line cut inside a
        # value is no call either.
        if match is None or not ('"arguments"' in line or '"parameters"' in line) or (
                not line.rstrip().rstrip(_END_MARKS).endswith(("}", "]"))):
            return None
        names.append(match.group(1))
    return names or None


def outside_objects(text: str, found: Found) -> list[str]:
    """The pieces of ``text`` between and around the ``found`` JSON objects."""
    outside, last = [], 0
    for start, end, _ in found:
        outside.append(text[last:start])
        last = end
    outside.append(text[last:])
    return outside


def has_words(text: str) -> bool:
    """True when ``text`` holds a letter or a digit: words, not just marks."""
    return any(c.isalnum() for c in text)


def _with_closing_braces(text: str) -> list[str]:
    """``text`` with one and with two ``}`` added; none when it does not end like an
    object short of its braces (a reply cut inside a value is no missing brace). A
    mark written in place of the last brace (``"Omar"})``, seen) is dropped first."""
    stripped = text.rstrip().rstrip(_END_MARKS).rstrip()
    if not stripped.endswith(("}", '"')):
        return []
    return [stripped + "}", stripped + "}}"]


def _decoded_to_the_end(decoder: json.JSONDecoder, texts: list[str], start: int) -> Any:
    """The object at ``start`` of the first of ``texts`` it fills to the end, or None."""
    for text in texts:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if end == len(text):
            return value
    return None
