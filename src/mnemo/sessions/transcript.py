"""Reading a transcript file into messages, and importing it as one session.

Accepted shapes: a JSON list of messages, a JSON object with a ``messages`` list (the
shape many exports use), or JSON Lines with one message per line (blank lines skipped).
Every message is checked before anything is written, and an error names the line (JSONL)
or the index (JSON) of the first bad one, so a malformed file imports nothing at all.
"""

from __future__ import annotations

from pathlib import Path

from mnemo.errors import UsageError
from mnemo.messages import Message, content_text
from mnemo.sessions.records import encode_message
from mnemo.sessions.store import SessionStore
from mnemo.transcripts import parse_transcript as parse_messages

__all__ = ["import_transcript", "parse_transcript", "read_transcript"]


def parse_transcript(text: str, name: str = "transcript") -> list[Message]:
    """The messages of a transcript's text, checked as chat messages and as storable rows;
    any problem is a ``UsageError`` naming the line or index."""
    messages = parse_messages(text, source=name)
    for index, message in enumerate(messages):
        encode_message(message, f"{name}: message {index}")  # what the store will need
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
