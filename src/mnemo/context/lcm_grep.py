"""``context_grep``: search the messages compacted out of this session (C16).

Only archived messages are searched — the live ones are in the model's context already.
The pattern is text, never a regular expression: it comes from the model, and a
pattern like ``(a|aa)+$`` can keep a backtracking matcher busy for hours on one message.
Three kinds of pattern, none of which can backtrack:

* **words** (the default): the session store's ranked full-text search (stemming, BM25;
  the best 200 hits), hits that hold the pattern literally (case-insensitive) first.
  When the ranking finds nothing, or finds a phrase's words but never the phrase, a
  literal scan of every archived message finds it wherever it is (conversation order);
* **literal** text — ``->``, ``disk (`` — is found by that scan, case-insensitively;
* **alternatives** ``ENOSPC|disk full|quota``: any of the literal pieces (each matched
  as plain text), every archived message scanned in conversation order.

Each match names the node that holds it (the innermost one: expanding it returns the
message). A model that sends ``regex=true`` (an older schema) gets its pattern searched
as text, with a note saying so.
"""

from __future__ import annotations

import re
from typing import Any

from mnemo.context.lcm_index import SessionIndex
from mnemo.context.lcm_tools import (
    DEFAULT_GREP_LIMIT,
    MAX_GREP_LIMIT,
    failure,
    integer_argument,
)
from mnemo.sessions import SessionStore
from mnemo.sessions.records import index_text
from mnemo.sessions.search import snippet_around

__all__ = ["CONTEXT_GREP_SCHEMA", "MAX_PATTERN_CHARS", "context_grep", "split_alternatives"]

MAX_PATTERN_CHARS = 300
_SCAN_PAGE = 500
_WORD_POOL = 200  # ranked hits fetched, so literal ones can be put first
_NOT_FOUND_HINT = ("try other words, a shorter identifier, or alternatives like "
                   "'ENOSPC|disk full'; what is still in your context is not searched")
_NO_REGEX_NOTE = ("regular expressions are not supported: the pattern was searched as "
                  "text (use a|b|c for alternatives)")

CONTEXT_GREP_SCHEMA: dict[str, Any] = {
    "name": "context_grep",
    "description": (
        "Search the messages that were compacted out of this conversation (everything "
        "behind the [LCM SUMMARY NODE …] and [LCM TOOL OUTPUT NODE …] lines). Use it when "
        "a summary mentions something but the exact value (a path, an error message, a "
        "number, what the user said) is gone. The pattern is plain text, not a regular "
        "expression: words are searched like a search engine, an exact string (an "
        "identifier, a path, '->') is found wherever it is, and 'ENOSPC|disk full' finds "
        "messages holding any of the alternatives. Matching ignores case. Each match "
        "gives the message id, role, a snippet (>>match<<) and the node_id that holds "
        "it: pass that to context_expand to read the full messages."),
    "parameters": {
        "type": "object",
        "properties": {
            "pattern": {"type": "string",
                        "description": "Words, an exact string, or alternatives a|b|c "
                                       f"(plain text; at most {MAX_PATTERN_CHARS} "
                                       "characters)."},
            "limit": {"type": "integer",
                      "description": f"Matches to return; default {DEFAULT_GREP_LIMIT}, "
                                     f"at most {MAX_GREP_LIMIT}."},
            "offset": {"type": "integer",
                       "description": "Skip this many matches (to page through results)."},
        },
        "required": ["pattern"],
    },
}


def split_alternatives(pattern: str) -> list[str]:
    """The literal pieces of ``a|b|c`` (blank pieces dropped; one piece: no alternation)."""
    return [piece.strip() for piece in pattern.split("|") if piece.strip()]


def context_grep(args: dict[str, Any], *, store: SessionStore,
                 index: SessionIndex) -> dict[str, Any]:
    """Search the archived messages of ``index.session_id`` (see the module docstring)."""
    pattern = args.get("pattern")
    if not isinstance(pattern, str) or not pattern.strip():
        return failure("pattern is empty; pass words, an exact string or alternatives "
                       "like 'ENOSPC|disk full' to look for")
    pattern = pattern.strip()
    if len(pattern) > MAX_PATTERN_CHARS:
        return failure(f"pattern is {len(pattern)} characters long; use at most "
                       f"{MAX_PATTERN_CHARS} (the most distinctive part)")
    try:
        limit = min(max(integer_argument(args, "limit", DEFAULT_GREP_LIMIT) or 1, 1),
                    MAX_GREP_LIMIT)
        offset = max(integer_argument(args, "offset", 0) or 0, 0)
    except ValueError as exc:
        return failure(str(exc))
    pieces = split_alternatives(pattern)
    if len(pieces) > 1:
        # Escaped literals only: an alternation of plain strings cannot backtrack.
        compiled = re.compile("|".join(re.escape(p) for p in pieces), re.IGNORECASE)
        result = _scan(store, index, pattern, compiled, "alternatives", limit, offset)
    else:
        result = _word_search(store, index, pieces[0] if pieces else pattern, limit, offset)
    if args.get("regex") is True or args.get("regex") == "true":
        result["note"] = f"{_NO_REGEX_NOTE}; {result['note']}"
    return result


def _word_search(store: SessionStore, index: SessionIndex, pattern: str, limit: int,
                 offset: int) -> dict[str, Any]:
    """Ranked search, messages holding the pattern literally first; a literal scan when
    the ranking finds nothing, or finds a phrase's words but never the phrase."""
    sid = index.session_id
    fetch = min(1_000, max(_WORD_POOL, (offset + limit) * 3))
    hits = [h for h in store.search(pattern, limit=fetch, session_id=sid,
                                    exclude_active_of=sid) if h.matched]
    literal = pattern.casefold()
    exact = [h for h in hits if literal in h.content.casefold()]
    if not exact and (" " in pattern or not hits):
        # A phrase the ranking did not bring up (or words the index cannot match): the
        # scan finds it wherever it is.
        scanned = _scan(store, index, pattern, re.compile(re.escape(pattern), re.IGNORECASE),
                        "literal", limit, offset)
        if scanned["matches"] or not hits:
            return scanned
    exact_ids = {h.message_id for h in exact}
    ranked = exact + [h for h in hits if h.message_id not in exact_ids]
    page = ranked[offset:offset + limit]
    matches = [_match(index, h.message_id, h.role, h.snippet) for h in page]
    return _grep_result(pattern, "words", matches, offset, len(ranked) > offset + limit,
                        total=None)


def _scan(store: SessionStore, index: SessionIndex, pattern: str, compiled: re.Pattern[str],
          mode: str, limit: int, offset: int) -> dict[str, Any]:
    """Every archived message of the session, in order, matched against ``compiled``."""
    matches: list[dict[str, Any]] = []
    total = 0
    start = 0
    while True:
        page = store.read_session(index.session_id, start, _SCAN_PAGE, include_archived=True)
        for message in page:
            if message.active:
                continue
            text = index_text(message.to_message())
            found = compiled.search(text)
            if found is None:
                continue
            if offset <= total < offset + limit:
                needle = found.group(0) or pattern
                matches.append(_match(index, message.id, message.role,
                                      snippet_around(text, [needle])))
            total += 1
        if len(page) < _SCAN_PAGE:
            break
        start += _SCAN_PAGE
    return _grep_result(pattern, mode, matches, offset, total > offset + limit, total=total)


def _match(index: SessionIndex, message_id: int, role: str, snippet: str) -> dict[str, Any]:
    path = index.node_path(message_id)
    match: dict[str, Any] = {"message_id": message_id, "role": role, "snippet": snippet,
                             "node_id": path[-1] if path else None}
    if len(path) > 1:  # the node in the context, and how deep the match sits below it
        match["top_node_id"] = path[0]
        match["depth"] = len(path)
    own = index.node_at.get(message_id)
    if own is not None:  # an older node matched: expanding it goes one level down
        match["is_node"] = own
    return match


def _grep_result(pattern: str, mode: str, matches: list[dict[str, Any]], offset: int,
                 more: bool, *, total: int | None) -> dict[str, Any]:
    result: dict[str, Any] = {"success": True, "pattern": pattern, "mode": mode,
                              "matches": matches}
    if total is not None:
        result["total"] = total
    if more:
        result["next_offset"] = offset + len(matches)
    if not matches:
        result["note"] = f"no archived message matches; {_NOT_FOUND_HINT}"
    elif any(m["node_id"] is None for m in matches):
        result["note"] = ("context_expand(node_id=...) returns a match in full; a match "
                          "without node_id was archived outside any node: session_search "
                          "with mode=around and its message_id shows it")
    else:
        result["note"] = "context_expand(node_id=...) returns a match in full"
    return result
