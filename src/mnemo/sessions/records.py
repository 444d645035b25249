"""The values the session store hands out, and how a message becomes a row and back.

A stored message must give back exactly the dict that went in (the archive is lossless):
string content stays a string, list content (text and image parts) is kept as JSON and
decoded again, ``None`` and a missing ``content`` key are told apart, and keys mnemo does
not know (``reasoning``, ``refusal``, …) are kept in ``extra``. What the full-text index
sees is a separate, derived text (``index_text``): the content's text, the speaker's
``name``, and every tool call's name and arguments, so a search can find what a tool was
asked to do as well as what it answered.

Text that cannot be stored as UTF-8 — lone surrogates, which ``os.fsdecode`` produces for
a file name that is not valid UTF-8 and which a broken JSON escape (``"\\ud800"``) can
carry — is stored with each such character replaced by U+FFFD (``clean_text``), in every
text and JSON column; a well-formed surrogate pair becomes the character it encodes.
Tool output is never refused for it, and the message read back is the cleaned one.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from mnemo.errors import UsageError
from mnemo.messages import ROLES as MESSAGE_ROLES
from mnemo.messages import Message, content_text, tool_call_text, tool_calls_of

__all__ = [
    "CJK_CLASS",
    "ROLES",
    "SearchHit",
    "SessionInfo",
    "StoredMessage",
    "clean_optional",
    "clean_text",
    "encode_message",
    "has_cjk",
    "index_text",
    "iso_time",
]

ROLES = MESSAGE_ROLES  # one list for the whole package (mnemo.messages)

# Han (with extensions and compatibility forms), kana and Hangul. The same ranges feed
# the Python regex used on queries and the SQL GLOB class that flags stored rows, so a
# query and the rows it can match are classified identically. Written as escapes so the
# characters are unambiguous in the source.
_CJK_RANGES = (
    ("\u3400", "\u4dbf"),
    ("\u4e00", "\u9fff"),
    ("\uf900", "\ufaff"),
    ("\U00020000", "\U0002ffff"),
    ("\u3040", "\u30ff"),
    ("\u31f0", "\u31ff"),
    ("\uff66", "\uff9f"),
    ("\u1100", "\u11ff"),
    ("\u3130", "\u318f"),
    ("\uac00", "\ud7af"),
)
CJK_CLASS = "".join(f"{lo}-{hi}" for lo, hi in _CJK_RANGES)
_CJK_RE = re.compile(f"[{CJK_CLASS}]")

_KNOWN_KEYS = frozenset({"role", "content", "name", "tool_calls", "tool_call_id"})
ContentKind = Literal["text", "parts", "null", "absent"]


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Chinese, Japanese or Korean character."""
    return _CJK_RE.search(text) is not None


def clean_text(text: str) -> str:
    """``text`` as it can be stored: each lone surrogate replaced by U+FFFD.

    Paired surrogates (``"\\ud83d\\ude00"``) are joined into the character they encode.
    Plain text is returned as is, at the cost of one encode for non-ASCII text.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def clean_optional(text: str | None) -> str | None:
    return None if text is None else clean_text(text)


def iso_time(timestamp: float | None) -> str | None:
    """A UNIX timestamp as an ISO-8601 UTC string (seconds precision)."""
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")


def _dumps(value: Any) -> str:
    # ensure_ascii=False keeps CJK text literal, which the CJK flag (a GLOB) relies on;
    # it also lets lone surrogates through as characters, which clean_text replaces.
    return clean_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def index_text(message: Message | dict[str, Any]) -> str:
    """The text the full-text index holds for a message.

    ``name: content`` (the name of a speaker or tool, when the message has one), then one
    line per tool call with its name and arguments.
    """
    text = content_text(message)
    name = message.get("name")
    if isinstance(name, str) and name:
        text = f"{name}: {text}"
    calls = [tool_call_text(c) for c in tool_calls_of(message)]
    return "\n".join(part for part in (text, *calls) if part)


@dataclass(frozen=True)
class EncodedMessage:
    """A message as the columns of the ``messages`` table."""

    role: str
    content: str | None
    content_kind: ContentKind
    tool_calls: str | None
    tool_call_id: str | None
    name: str | None
    extra: str | None
    search_text: str | None


def encode_message(message: Any, where: str = "message") -> EncodedMessage:
    """Check one message and turn it into column values; a bad one is a ``UsageError``.

    ``where`` names the message in the error ("message 3", "line 7").
    """
    if not isinstance(message, dict):
        raise UsageError(f"{where} is not a message dict (got {type(message).__name__}); "
                         "pass {'role': ..., 'content': ...}.")
    role = message.get("role")
    if role not in ROLES:
        raise UsageError(f"{where} has role {role!r}; use one of: {', '.join(ROLES)}.")
    kind: ContentKind
    raw = message.get("content")
    if "content" not in message:
        kind, content = "absent", None
    elif raw is None:
        kind, content = "null", None
    elif isinstance(raw, str):
        kind, content = "text", clean_text(raw)
    elif isinstance(raw, list) and all(isinstance(p, dict) for p in raw):
        kind, content = "parts", _dumps(raw)
    else:
        raise UsageError(f"{where} has content of type {type(raw).__name__}; content must "
                         "be a string, a list of content parts (dicts) or null.")
    calls = message.get("tool_calls")
    if calls is not None and not (isinstance(calls, list)
                                  and all(isinstance(c, dict) for c in calls)):
        raise UsageError(f"{where} has tool_calls that are not a list of dicts.")
    for key in ("name", "tool_call_id"):
        value = message.get(key)
        if value is not None and not isinstance(value, str):
            raise UsageError(f"{where} has a non-string {key!r}.")
    extra = {k: v for k, v in message.items() if k not in _KNOWN_KEYS}
    try:
        extra_json = _dumps(extra) if extra else None
        calls_json = _dumps(calls) if calls is not None else None
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{where} holds a value that is not JSON-serialisable ({exc}).") from exc
    text = clean_text(index_text(message))
    return EncodedMessage(
        role=role,
        content=content,
        content_kind=kind,
        tool_calls=calls_json,
        tool_call_id=clean_optional(message.get("tool_call_id")),
        name=clean_optional(message.get("name")),
        extra=extra_json,
        # Stored only when it differs from the content, so plain chat is not kept twice.
        search_text=None if text == (content or "") and kind == "text" else text,
    )


@dataclass(frozen=True)
class StoredMessage:
    """One row of the archive: the message plus where and when it was stored."""

    id: int
    session_id: str
    position: float
    role: str
    content: str | list[dict[str, Any]] | None
    timestamp: float
    active: bool
    compacted: bool
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    external_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    content_kind: ContentKind = "text"

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> StoredMessage:
        kind: ContentKind = row["content_kind"]
        raw: str | None = row["content"]
        content: str | list[dict[str, Any]] | None = raw
        if kind == "parts" and raw is not None:
            content = json.loads(raw)
        return cls(
            id=row["id"],
            session_id=row["session_id"],
            position=row["position"],
            role=row["role"],
            content=content,
            timestamp=row["timestamp"],
            active=bool(row["active"]),
            compacted=bool(row["compacted"]),
            name=row["name"],
            tool_calls=json.loads(row["tool_calls"]) if row["tool_calls"] else None,
            tool_call_id=row["tool_call_id"],
            external_id=row["external_id"],
            meta=json.loads(row["meta"]) if row["meta"] else {},
            extra=json.loads(row["extra"]) if row["extra"] else {},
            content_kind=kind,
        )

    @property
    def text(self) -> str:
        """The content as plain text (list parts joined)."""
        return content_text({"role": "user", "content": self.content})

    def to_message(self) -> Message:
        """The message exactly as it was appended (a new dict each call)."""
        out: dict[str, Any] = {"role": self.role}
        if self.content_kind != "absent":
            out["content"] = self.content
        if self.name is not None:
            out["name"] = self.name
        if self.tool_calls is not None:
            out["tool_calls"] = self.tool_calls
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        out.update(self.extra)
        return out  # type: ignore[return-value]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view for the CLI and tools."""
        return {
            "message_id": self.id,
            "session_id": self.session_id,
            "role": self.role,
            "content": self.text,
            "name": self.name,
            "tool_calls": self.tool_calls,
            "tool_call_id": self.tool_call_id,
            "timestamp": iso_time(self.timestamp),
            "active": self.active,
            "compacted": self.compacted,
            "external_id": self.external_id,
        }


@dataclass(frozen=True)
class SessionInfo:
    """One row of the ``sessions`` table plus its message counts."""

    id: str
    source: str
    model: str
    system_prompt: str
    parent_id: str | None
    title: str | None
    started_at: float
    ended_at: float | None
    end_reason: str | None
    updated_at: float
    prompt_tokens: int
    completion_tokens: int
    message_count: int = 0
    archived_count: int = 0
    preview: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> SessionInfo:
        keys = row.keys()
        return cls(
            id=row["id"],
            source=row["source"],
            model=row["model"],
            system_prompt=row["system_prompt"],
            parent_id=row["parent_id"],
            title=row["title"],
            started_at=row["started_at"],
            ended_at=row["ended_at"],
            end_reason=row["end_reason"],
            updated_at=row["updated_at"],
            prompt_tokens=row["prompt_tokens"],
            completion_tokens=row["completion_tokens"],
            message_count=row["message_count"] if "message_count" in keys else 0,
            archived_count=row["archived_count"] if "archived_count" in keys else 0,
            preview=(row["preview"] or "") if "preview" in keys else "",
            meta=json.loads(row["meta"]) if row["meta"] else {},
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (the system prompt is left out: it is long and rarely wanted)."""
        return {
            "session_id": self.id,
            "title": self.title,
            "source": self.source,
            "model": self.model,
            "parent_id": self.parent_id,
            "started_at": iso_time(self.started_at),
            "ended_at": iso_time(self.ended_at),
            "end_reason": self.end_reason,
            "updated_at": iso_time(self.updated_at),
            "message_count": self.message_count,
            "archived_count": self.archived_count,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "preview": self.preview,
        }


@dataclass(frozen=True)
class SearchHit:
    """One message that matched a search; ``score`` is higher for better matches."""

    session_id: str
    message_id: int
    role: str
    content: str
    snippet: str
    score: float
    timestamp: float
    compacted: bool
    active: bool
    position: float = 0.0
    external_id: str | None = None
    matched: bool = True  # False: a turn next to a match, added because it may answer it

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "message_id": self.message_id,
            "role": self.role,
            "content": self.content,
            "snippet": self.snippet,
            "score": round(self.score, 6),
            "timestamp": iso_time(self.timestamp),
            "compacted": self.compacted,
            "active": self.active,
            "matched": self.matched,
            "external_id": self.external_id,
        }
