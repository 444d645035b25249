"""The lossless engine's tools: ``context_grep`` and ``context_expand`` (C16).

``context_grep`` searches the messages compacted out of the current session — the live
ones are in the model's context already. Plain words go to the session store's ranked
full-text search (stemming, BM25; the best 200 hits), and hits that hold the pattern
literally (case-insensitive) come first. When the ranking finds nothing, or finds the
words of a phrase but never the phrase itself, a literal scan of every archived message
finds it wherever it is (in conversation order). A pattern with regular-expression
syntax (``\\ | * + [ ] ( ) { } ^ $`` or a ``?`` that does not end it), or ``regex=true``,
is matched case-insensitively against every archived message in conversation order.
Each match names the node that holds it (the innermost one: expanding it returns the
message).

``context_expand`` returns the originals behind a node, in order, within a token budget.
When they do not fit, the page holds as many messages as fit with each at least a few
hundred characters; the longest contents are then cut to one common length (short
messages stay whole), and each cut says how many characters went and which call returns
the message whole. ``next_offset`` continues the page.

Both return plain dicts; the engine turns them into the tool message's JSON text. Every
failure is ``{"success": false, "error": ...}`` saying what to do instead.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mnemo.context.lcm_index import SessionIndex
from mnemo.context.lcm_nodes import NODE_ID_RE
from mnemo.context.markers import SUMMARY_END_MARKER, split_summary_message
from mnemo.messages import content_text
from mnemo.sessions import SessionStore, StoredMessage
from mnemo.sessions.records import index_text
from mnemo.sessions.search import snippet_around

__all__ = [
    "CONTEXT_EXPAND_SCHEMA",
    "CONTEXT_GREP_SCHEMA",
    "DEFAULT_EXPAND_TOKENS",
    "DEFAULT_GREP_LIMIT",
    "MAX_EXPAND_TOKENS",
    "MAX_GREP_LIMIT",
    "MIN_EXPAND_TOKENS",
    "context_expand",
    "context_grep",
    "looks_like_regex",
]

DEFAULT_GREP_LIMIT = 10
MAX_GREP_LIMIT = 50
DEFAULT_EXPAND_TOKENS = 4_000
MIN_EXPAND_TOKENS = 200
MAX_EXPAND_TOKENS = 32_000
_MAX_PATTERN_CHARS = 300
_MIN_KEPT_CHARS = 400  # a message in a page keeps at least this much of its content
_FLOOR_CHARS = 120  # never cut a content below this, even when the page overflows
_ARGUMENT_CHARS = 2_000  # tool-call arguments longer than this are clipped
_SCAN_PAGE = 500
_WORD_POOL = 200  # ranked hits fetched, so literal ones can be put first
_REGEX_HINT = re.compile(r"[\\|*+\[\](){}^$]|\?(?!\s*$)")
# A group containing a repeat, itself repeated: the shape of catastrophic backtracking.
_NESTED_REPEAT = re.compile(r"\([^()]*[*+}][^()]*\)\s*[*+{]")
_NOT_FOUND_HINT = ("try other words, a shorter identifier or a regex; what is still in "
                   "your context is not searched")

CONTEXT_GREP_SCHEMA: dict[str, Any] = {
    "name": "context_grep",
    "description": (
        "Search the messages that were compacted out of this conversation (everything "
        "behind the [LCM SUMMARY NODE …] and [LCM TOOL OUTPUT NODE …] lines). Use it when "
        "a summary mentions something but the exact value (a path, an error message, a "
        "number, what the user said) is gone. Plain words are searched like a search "
        "engine; a regular expression (e.g. 'ENOSPC|disk full', 'port\\s*=\\s*\\d+') is "
        "matched against every archived message. Each match gives the message id, role, a "
        "snippet (>>match<<) and the node_id that holds it: pass that to context_expand "
        "to read the full messages."),
    "parameters": {
        "type": "object",
        "properties": {
            "pattern": {"type": "string",
                        "description": "Words, an exact identifier, or a regular expression."},
            "limit": {"type": "integer",
                      "description": f"Matches to return; default {DEFAULT_GREP_LIMIT}, "
                                     f"at most {MAX_GREP_LIMIT}."},
            "offset": {"type": "integer",
                       "description": "Skip this many matches (to page through results)."},
            "regex": {"type": "boolean",
                      "description": "Force regex (true) or word search (false); default: "
                                     "decided from the pattern."},
        },
        "required": ["pattern"],
    },
}

CONTEXT_EXPAND_SCHEMA: dict[str, Any] = {
    "name": "context_expand",
    "description": (
        "Return the original messages behind a summary node or a cleared tool output, in "
        "order, e.g. context_expand(node_id=\"n1a2b3c4d\"). Node ids appear in the [LCM "
        "SUMMARY NODE …] / [LCM TOOL OUTPUT NODE …] lines and in context_grep results. A "
        "returned message that has its own node_id is an older node: expand it the same "
        "way. Long results are paged (offset, next_offset) and very long messages are cut "
        "to fit max_tokens; each cut says how to read the message whole."),
    "parameters": {
        "type": "object",
        "properties": {
            "node_id": {"type": "string", "description": "The node, e.g. n1a2b3c4d."},
            "max_tokens": {"type": "integer",
                           "description": f"Size budget of the answer; default "
                                          f"{DEFAULT_EXPAND_TOKENS}, {MIN_EXPAND_TOKENS}–"
                                          f"{MAX_EXPAND_TOKENS}."},
            "offset": {"type": "integer",
                       "description": "Start at this message of the node (0 = the first)."},
            "limit": {"type": "integer", "description": "Return at most this many messages."},
        },
        "required": ["node_id"],
    },
}


def looks_like_regex(pattern: str) -> bool:
    """True when the pattern uses regular-expression syntax (see the module docstring)."""
    return _REGEX_HINT.search(pattern) is not None


def _failure(error: str) -> dict[str, Any]:
    return {"success": False, "error": error}


def _integer(args: dict[str, Any], key: str, default: int | None) -> int | None:
    """An integer argument (models send "5" as often as 5); ``ValueError`` names the key."""
    value = args.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        raise ValueError(f"{key} must be a whole number, not {value!r}")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    try:
        return int(str(value).strip())
    except ValueError:
        raise ValueError(f"{key} must be a whole number, not {value!r}") from None


# -- context_grep ------------------------------------------------------------------------


def context_grep(args: dict[str, Any], *, store: SessionStore,
                 index: SessionIndex) -> dict[str, Any]:
    """Search the archived messages of ``index.session_id`` (see the module docstring)."""
    pattern = args.get("pattern")
    if not isinstance(pattern, str) or not pattern.strip():
        return _failure("pattern is empty; pass words, an exact identifier or a regular "
                        "expression to look for")
    pattern = pattern.strip()
    if len(pattern) > _MAX_PATTERN_CHARS:
        return _failure(f"pattern is {len(pattern)} characters long; use at most "
                        f"{_MAX_PATTERN_CHARS} (the most distinctive part)")
    try:
        limit = min(max(_integer(args, "limit", DEFAULT_GREP_LIMIT) or 1, 1), MAX_GREP_LIMIT)
        offset = max(_integer(args, "offset", 0) or 0, 0)
    except ValueError as exc:
        return _failure(str(exc))
    wanted = args.get("regex")
    use_regex = looks_like_regex(pattern) if not isinstance(wanted, bool) else wanted
    if use_regex and _NESTED_REPEAT.search(pattern):
        # (a+)+ and friends can backtrack for hours on one message; refuse rather than hang.
        return _failure("pattern repeats a group that itself repeats (like (a+)+), which can "
                        "take forever to match; simplify it, e.g. drop the outer repeat")
    if use_regex:
        try:
            compiled = re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            if wanted is True:
                return _failure(f"pattern is not a valid regular expression ({exc}); fix "
                                "it or pass regex=false to search for the text literally")
            use_regex = False
        else:
            return _scan(store, index, pattern, compiled, "regex", limit, offset)
    return _word_search(store, index, pattern, limit, offset)


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


# -- context_expand ----------------------------------------------------------------------


def context_expand(args: dict[str, Any], *, store: SessionStore,
                   index: SessionIndex) -> dict[str, Any]:
    """The originals behind one node, in order, within the token budget."""
    raw = args.get("node_id")
    node_id = raw.strip().strip("\"'").lower() if isinstance(raw, str) else ""
    if not NODE_ID_RE.fullmatch(node_id):
        return _failure(f"node_id {raw!r} is not a node id; use one like n1a2b3c4d from an "
                        "[LCM … NODE …] line of the conversation or a context_grep result")
    try:
        asked = _integer(args, "max_tokens", DEFAULT_EXPAND_TOKENS)
        offset = _integer(args, "offset", 0) or 0
        limit = _integer(args, "limit", None)
    except ValueError as exc:
        return _failure(str(exc))
    if offset < 0 or (limit is not None and limit < 1):
        return _failure("offset must be 0 or more and limit 1 or more")
    record = index.nodes.get(node_id)
    if record is None:
        return _failure(f"no node {node_id} in this session; node ids appear in the [LCM "
                        "SUMMARY NODE …] and [LCM TOOL OUTPUT NODE …] lines of the "
                        "conversation and as node_id in context_grep results")
    asked = DEFAULT_EXPAND_TOKENS if asked is None else asked
    max_tokens = min(max(asked, MIN_EXPAND_TOKENS), MAX_EXPAND_TOKENS)
    child_ids = index.children.get(record.message_id, [])
    result: dict[str, Any] = {"success": True, "node_id": node_id, "kind": record.kind,
                              "messages_total": len(child_ids), "offset": offset}
    if not child_ids:
        result.update(returned=0, messages=[], note="this node stands for no stored "
                      "messages (they were never saved to the session archive)")
        return result
    if offset >= len(child_ids):
        return _failure(f"offset {offset} is past the end: node {node_id} holds "
                        f"{len(child_ids)} messages (offsets 0–{len(child_ids) - 1})")
    wanted = child_ids[offset:offset + limit if limit else None]
    originals = {m.id: m for m in store.originals_of(record.message_id)}
    for mid in wanted:  # adopted by the index, not in the node's own list (lcm_index.py)
        if mid not in originals and (extra := store.get_message(mid)) is not None:
            originals[mid] = extra
    entries = [_entry(offset + k, originals[i], index)
               for k, i in enumerate(wanted) if i in originals]
    envelope = len(json.dumps(result, ensure_ascii=False)) + 400  # + the fields set below
    page, cut = _fit(entries, max_tokens * 4 - envelope, node_id)
    end = offset + len(page)
    next_offset = end if page and end < len(child_ids) else None
    result.update(returned=len(page), next_offset=next_offset, messages=page)
    notes: list[str] = []
    if next_offset is not None:
        notes.append(f"messages {offset}–{offset + len(page) - 1} of {len(child_ids)}; "
                     f'context_expand(node_id="{node_id}", offset={next_offset}) returns '
                     "the next ones")
    if cut:
        notes.append(f"{cut} long message(s) were cut to fit max_tokens={max_tokens}; each "
                     "cut says how to read the message whole")
    if any("node_id" in e for e in page):
        notes.append("messages with a node_id are older nodes: expand them the same way")
    if asked != max_tokens:
        notes.append(f"max_tokens was clamped to {max_tokens}")
    if notes:
        result["note"] = "; ".join(notes)
    return result


def _entry(position: int, message: StoredMessage, index: SessionIndex) -> dict[str, Any]:
    own = index.node_at.get(message.id)
    text = message.text
    if own is not None and index.nodes[own].kind == "summary":
        # An older node's summary is already folded into this node's summary; its
        # header (and the turn it was merged into, if any) is what the model needs.
        text = _node_outline(message)
    entry: dict[str, Any] = {"index": position, "message_id": message.id,
                             "role": message.role, "content": text}
    if message.name:
        entry["name"] = message.name
    if message.tool_calls:
        entry["tool_calls"] = [_call(c) for c in message.tool_calls]
    if message.tool_call_id:
        entry["tool_call_id"] = message.tool_call_id
    if own is not None:
        entry["node_id"] = own
        entry["node_kind"] = index.nodes[own].kind
    return entry


def _node_outline(message: StoredMessage) -> str:
    """A summary node as a child: its header, and the turn it was merged into (C12 c)."""
    body, original = split_summary_message(message.to_message())
    header = body.split("\n", 1)[0]
    folded = f"{header}\n(its summary is folded into the summary of the node expanded now)"
    if original is None:
        return folded
    return f"{folded}{SUMMARY_END_MARKER}{content_text(original)}"


def _call(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    text = arguments if isinstance(arguments, str) else json.dumps(arguments,
                                                                   ensure_ascii=False)
    if len(text) > _ARGUMENT_CHARS:
        text = text[:_ARGUMENT_CHARS] + f"…[{len(text) - _ARGUMENT_CHARS:,} chars cut]"
    return {"id": call.get("id"), "name": function.get("name"), "arguments": text}


def _json_len(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _fit(entries: list[dict[str, Any]], budget: int,
         node_id: str) -> tuple[list[dict[str, Any]], int]:
    """The page of ``entries`` that fits ``budget`` characters of JSON, long contents cut
    to one common length; returns the page and how many contents were cut."""
    sizes = [_json_len(e) + 2 for e in entries]
    contents = [_json_len(e["content"]) for e in entries]
    fixed = [s - c for s, c in zip(sizes, contents, strict=True)]
    count, used = 0, 0
    for size_fixed, size_content in zip(fixed, contents, strict=True):
        cost = size_fixed + min(size_content, _MIN_KEPT_CHARS)
        if count and used + cost > budget:
            break
        used += cost
        count += 1
    page = entries[:count]
    if sum(sizes[:count]) <= budget:
        return page, 0
    cap = max(_water_level(contents[:count], budget - sum(fixed[:count])), _FLOOR_CHARS)
    out: list[dict[str, Any]] = []
    cut = 0
    for entry, size in zip(page, contents[:count], strict=True):
        if size > cap:
            entry = _cut(entry, size, cap, node_id)
            cut += 1
        out.append(entry)
    return out, cut


def _water_level(lengths: list[int], room: int) -> int:
    """The largest cap C with ``sum(min(length, C)) <= room``."""
    remaining = room
    ordered = sorted(lengths)
    for k, length in enumerate(ordered):
        left = len(ordered) - k
        if length * left > remaining:
            return max(remaining // left, 0)
        remaining -= length
    return ordered[-1] if ordered else 0


def _cut(entry: dict[str, Any], json_size: int, cap: int, node_id: str) -> dict[str, Any]:
    """``entry`` with its content cut to about ``cap`` JSON characters, head and tail kept."""
    text: str = entry["content"]
    ratio = json_size / max(len(text), 1)  # escaping makes the JSON longer than the text
    marker_room = 220
    keep = max(int((cap - marker_room) / ratio), 0)
    removed = len(text) - keep
    whole = (_json_len(entry) + 600) // 4 + 1
    if whole <= MAX_EXPAND_TOKENS:
        how = (f'context_expand(node_id="{node_id}", offset={entry["index"]}, limit=1, '
               f"max_tokens={whole}) returns this message whole")
    else:
        how = "too long to return whole: context_grep finds the lines you need"
    marker = f"\n…[{removed:,} of {len(text):,} chars cut; {how}]…\n"
    head = keep * 2 // 3
    tail = keep - head
    cut_entry = dict(entry)
    cut_entry["content"] = text[:head] + marker + (text[len(text) - tail:] if tail else "")
    cut_entry["truncated_chars"] = removed
    return cut_entry

