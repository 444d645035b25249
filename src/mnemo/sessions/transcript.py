"""Reading a transcript file into messages, and importing it as one session.

Accepted shapes: a JSON list of messages, a JSON object with a ``messages`` list (the
shape many exports use), or JSON Lines with one message per line (blank lines skipped).
Every message is checked before anything is written, and an error names the line (JSONL)
or the index (JSON) of the first bad one, so a malformed file imports nothing at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mnemo.errors import UsageError
from mnemo.messages import Message, content_text
from mnemo.sessions.records import encode_message
from mnemo.sessions.store import SessionStore

__all__ = ["import_transcript", "parse_transcript", "read_transcript"]


def _from_json(data: Any, name: str) -> list[tuple[str, Any]]:
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    elif isinstance(data, dict) and "role" in data:
        data = [data]
    if not isinstance(data, list):
        raise UsageError(f"{name}: expected a JSON list of messages, an object with a "
                         f"'messages' list, or JSON Lines (got {type(data).__name__}).")
    return [(f"{name}: message {index}", item) for index, item in enumerate(data)]


def _from_jsonl(text: str, name: str) -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append((f"{name}: line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise UsageError(f"{name}: line {number} is not valid JSON ({exc.msg} at column "
                             f"{exc.colno}); fix the line or export the transcript "
                             "again.") from exc
    return items


def parse_transcript(text: str, name: str = "transcript") -> list[Message]:
    """The messages of a transcript's text; any problem is a ``UsageError`` naming where."""
    stripped = text.strip()
    if not stripped:
        raise UsageError(f"{name} is empty; give a JSON list of messages or JSON Lines.")
    try:
        items = _from_json(json.loads(stripped), name)
    except json.JSONDecodeError:
        if stripped.startswith("["):
            try:
                json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{name} is not valid JSON ({exc.msg} at line {exc.lineno}, "
                                 f"column {exc.colno}).") from exc
        items = _from_jsonl(text, name)
    if not items:
        raise UsageError(f"{name} holds no messages.")
    messages: list[Message] = []
    for where, item in items:
        encode_message(item, where)  # raises with the line or index in the message
        messages.append(item)
    return messages


def read_transcript(path: Path | str) -> list[Message]:
    """The messages of a transcript file (JSON list, ``{"messages": [...]}`` or JSONL)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UsageError(f"{file} does not exist.") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{file} cannot be read as UTF-8 text ({exc}).") from exc
    return parse_transcript(text, file.name)


def import_transcript(
    store: SessionStore,
    path: Path | str,
    *,
    title: str | None = None,
    source: str = "import",
) -> tuple[str, int]:
    """Import a transcript file as one new session; return (session id, message count).

    The first system message also becomes the session's system prompt. The session and
    its messages are written in one transaction, after the whole file has been checked.
    """
    file = Path(path)
    messages = read_transcript(file)
    system = next((content_text(m) for m in messages if m.get("role") == "system"), "")
    session_id = store.create_session(
        source=source, system_prompt=system, title=title or file.stem,
        meta={"imported_from": str(file.resolve())}, messages=messages,
    )
    return session_id, len(messages)
