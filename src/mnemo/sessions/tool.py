"""The ``session_search`` tool the model calls: its schema and dispatcher (SPEC D2).

Four modes over the session archive: ``search`` (best matching messages, grouped by
session, each with a snippet and its neighbouring messages), ``read`` (a page of one
session), ``around`` (scroll around one message) and ``recent`` (the latest sessions).
Every answer is JSON text; every failure is ``{"success": false, "error": ...}`` with an
error that says what to call instead, never an exception, so a bad call costs the model
one turn, not the conversation.

``current_session_id`` is supplied by the agent, not the model: search then skips the
messages the model can already see in its live context but still finds the ones that
compaction archived from it, and ``recent`` lists the other sessions.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mnemo.errors import MnemoError, UsageError
from mnemo.messages import tool_call_text
from mnemo.sessions.query import limits_note
from mnemo.sessions.records import StoredMessage, clean_text, iso_time
from mnemo.sessions.store import SessionStore

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "MODES", "SESSION_SEARCH_SCHEMA", "session_search"]

MODES = ("search", "read", "around", "recent")
DEFAULT_LIMIT = 3
MAX_LIMIT = 10
READ_PAGE = 20  # messages per read page
AROUND_WINDOW = 5  # messages each side in "around" mode
NEIGHBOURS = 1  # messages each side of a search match
_MATCH_CHARS = 1500
_CONTEXT_CHARS = 400
_READ_CHARS = 2000
_QUERY_ECHO = 200  # characters of the query repeated in a search result
_INT_MAX, _INT_MIN = 2**63 - 1, -(2**63)  # SQLite's integer range

_DESCRIPTION = """\
Search your past conversations, including turns that were compacted out of this one. \
Use it when the user refers to something from before ("last time", "as we discussed", \
"that error from yesterday"), when you need a detail that is no longer in your context \
(a summary mentions it but the exact value is gone), or before redoing work that may \
have been done already.

Modes:
- search (default): query = a few distinctive keywords (names, paths, error text, \
topics), not a whole sentence. Returns the best matching messages grouped by session, \
each with a snippet (matches marked >>like this<<) and the messages just before and after.
- around: message_id from a search result; returns the messages around it, to read \
more of that part of the conversation.
- read: session_id; returns that session in order, a page at a time (use offset to \
continue).
- recent: the latest sessions with their titles and first request.

limit: number of matches (search) or sessions (recent); default 3, at most 10. \
Tool outputs and archived turns are searched too. Quote what you find as past \
context; it may be out of date."""

SESSION_SEARCH_SCHEMA: dict[str, Any] = {
    "name": "session_search",
    "description": _DESCRIPTION,
    "parameters": {
        "type": "object",
        "properties": {
            "mode": {
                "type": "string",
                "enum": list(MODES),
                "description": "search (default), around, read or recent.",
            },
            "query": {
                "type": "string",
                "description": "Keywords to search for (search mode).",
            },
            "session_id": {
                "type": "string",
                "description": "The session to read (read mode) or to search in (search).",
            },
            "message_id": {
                "type": "integer",
                "description": "The message to scroll around (around mode).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "description": "How many matches or sessions (default 3, at most 10).",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "Where to start reading a session (read mode).",
            },
        },
        "required": [],
    },
}

Result = dict[str, Any]


class _Refused(Exception):
    """A tool call that cannot be answered; the message goes back to the model."""


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"… [{len(text) - limit} more chars]"


def _int_arg(name: str, value: Any, *, default: int) -> int:
    """A whole-number argument (a numeric string or float accepted), within ±2**63."""
    if value is None:
        return default
    number: int | None = None
    whole_float = isinstance(value, float) and value.is_integer()
    numeric_text = isinstance(value, str) and re.fullmatch(r"\s*-?\d{1,12}\s*", value)
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif whole_float or numeric_text:
        number = int(value)
    if number is None:
        raise _Refused(f"{name} must be a whole number, not {_shown(value)}.")
    return max(_INT_MIN, min(number, _INT_MAX))


def _text_arg(name: str, value: Any, what: str) -> str | None:
    """A string argument or None, cleaned as stored text is (a lone surrogate cannot be
    sent to PostgreSQL: ``clean_text``); anything else is refused with what to pass."""
    if value is None:
        return None
    if isinstance(value, str):
        return clean_text(value)
    raise _Refused(f"{name} must be a string ({what}), not {type(value).__name__}.")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


def _message_view(message: StoredMessage, limit: int, *, match: bool = False) -> Result:
    calls = [tool_call_text(c) for c in message.tool_calls or []]
    view: Result = {
        "message_id": message.id,
        "role": message.role,
        "content": _clip(message.text, limit),
        "timestamp": iso_time(message.timestamp),
    }
    if message.name:
        view["name"] = message.name
    if calls:
        view["tool_calls"] = [_clip(c, limit // 2) for c in calls]
    if message.compacted:
        view["archived"] = True
    if match:
        view["match"] = True
    return view


def _session_header(store: SessionStore, session_id: str) -> Result:
    info = store.get_session(session_id)
    if info is None:
        return {"session_id": session_id}
    return {
        "session_id": info.id,
        "title": info.title,
        "source": info.source,
        "started_at": iso_time(info.started_at),
    }


def _search(
    store: SessionStore, query: str | None, session_id: str | None, limit: int,
    current_session_id: str | None,
) -> Result:
    if query is None or not query.strip():
        raise _Refused("mode 'search' needs a query: a few distinctive keywords. To list "
                       "sessions without a query use mode 'recent'.")
    # Extra hits: replies already shown as the context of a match are skipped below,
    # and the next real match takes their place.
    hits = store.search(
        query, limit=3 * limit, session_id=session_id,
        exclude_active_of=current_session_id,
    )
    groups: dict[str, list[Result]] = {}
    shown: set[int] = set()
    taken = 0
    for hit in hits:
        if taken == limit:
            break
        if not hit.matched and hit.message_id in shown:
            continue
        around = store.messages_around(hit.message_id, NEIGHBOURS, NEIGHBOURS)
        shown.update(m.id for m in around)
        match: Result = {
            "message_id": hit.message_id,
            "role": hit.role,
            "timestamp": iso_time(hit.timestamp),
            "archived": hit.compacted,
            "snippet": hit.snippet,
            "context": [
                _message_view(m, _MATCH_CHARS if m.id == hit.message_id else _CONTEXT_CHARS,
                              match=m.id == hit.message_id)
                for m in around
            ],
        }
        if not hit.matched:
            match["note"] = "no keyword here; it follows or precedes a matching message"
        groups.setdefault(hit.session_id, []).append(match)
        taken += 1
    results = [{**_session_header(store, sid), "matches": matches}
               for sid, matches in groups.items()]
    count = sum(len(matches) for matches in groups.values())
    # A long query is not echoed whole: the model already has it, and a pasted page
    # would double the size of the answer.
    result: Result = {"success": True, "mode": "search", "query": _clip(query, _QUERY_ECHO),
                      "count": count, "results": results}
    note = limits_note(query)
    if note:
        result["note"] = note
    if hits:
        result["hint"] = ("To read more, call again with mode 'around' and a message_id, or "
                          "mode 'read' and a session_id.")
    else:
        result["message"] = ("No matches. Try fewer or other keywords (a name, a path, an "
                             "error word), or mode 'recent' to see the latest sessions.")
    return result


def _read(store: SessionStore, session_id: str | None, offset: int) -> Result:
    if not session_id:
        raise _Refused("mode 'read' needs a session_id; find one with mode 'search' or "
                       "'recent'.")
    info = store.get_session(session_id)
    if info is None:
        raise _Refused(f"no session {session_id!r}; find ids with mode 'search' or 'recent'.")
    if offset < 0:
        raise _Refused("offset must be 0 or more.")
    page = store.read_session(session_id, offset=offset, limit=READ_PAGE)
    result: Result = {
        "success": True,
        "mode": "read",
        **_session_header(store, session_id),
        "message_count": info.message_count,
        "offset": offset,
        "messages": [_message_view(m, _READ_CHARS) for m in page],
    }
    if offset + len(page) < info.message_count:
        result["next_offset"] = offset + len(page)
    return result


def _around(store: SessionStore, message_id: Any) -> Result:
    if message_id is None:
        raise _Refused("mode 'around' needs a message_id from a search result.")
    mid = _int_arg("message_id", message_id, default=0)
    target = store.get_message(mid)
    if target is None:
        raise _Refused(f"no message {_shown(message_id)}; use a message_id from a search "
                       "result.")
    window = store.messages_around(mid, AROUND_WINDOW, AROUND_WINDOW)
    return {
        "success": True,
        "mode": "around",
        **_session_header(store, target.session_id),
        "message_id": mid,
        "messages": [_message_view(m, _READ_CHARS, match=m.id == mid) for m in window],
        "hint": "Call again with the first or last message_id to scroll further.",
    }


def _recent(store: SessionStore, limit: int, current_session_id: str | None) -> Result:
    sessions = store.recent_sessions(limit, exclude_session_id=current_session_id)
    return {
        "success": True,
        "mode": "recent",
        "sessions": [
            {
                "session_id": s.id,
                "title": s.title,
                "source": s.source,
                "started_at": iso_time(s.started_at),
                "last_active": iso_time(s.updated_at),
                "message_count": s.message_count,
                "first_request": _clip(" ".join(s.preview.split()), 200),
            }
            for s in sessions
        ],
    }


def session_search(
    query: str | None = None,
    *,
    mode: str = "search",
    session_id: str | None = None,
    message_id: int | None = None,
    limit: int | None = DEFAULT_LIMIT,
    offset: int | None = 0,
    store: SessionStore,
    current_session_id: str | None = None,
) -> str:
    """Run one ``session_search`` tool call and return its result as JSON text."""
    try:
        if mode not in MODES:
            raise _Refused(f"unknown mode {_shown(mode)}; use one of: {', '.join(MODES)}.")
        count = _int_arg("limit", limit, default=DEFAULT_LIMIT)
        if count < 1:
            raise _Refused(f"limit must be between 1 and {MAX_LIMIT}, not {count}.")
        count = min(count, MAX_LIMIT)
        start = _int_arg("offset", offset, default=0)
        text = _text_arg("query", query, "a few keywords")
        sid = _text_arg("session_id", session_id, "an id from mode 'search' or 'recent'")
        current = _text_arg("current_session_id", current_session_id, "the agent's session")
        if mode == "search":
            result = _search(store, text, sid, count, current)
        elif mode == "read":
            result = _read(store, sid, start)
        elif mode == "around":
            result = _around(store, message_id)
        else:
            result = _recent(store, count, current)
    except _Refused as exc:
        result = {"success": False, "error": str(exc)}
    except UsageError as exc:  # an argument the checks above let through: still the call's
        result = {"success": False, "error": str(exc)}
    except MnemoError as exc:
        result = {"success": False, "error": f"{exc} (the session archive could not be read; "
                                             "answer without it)"}
    # Lone surrogates in a query or stored text would break the JSON a client sends on.
    return clean_text(json.dumps(result, ensure_ascii=False))
