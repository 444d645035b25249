"""The ``recall`` provider (SPEC P6): before each turn, search past sessions for the message.

It turns the session archive into recalled memory: the user's message is searched in
every earlier session (never the current one, which the model already sees) and the best
few matches come back with their session and date, within a character budget, for the
agent to fence (P3) and append to the message.

Settings (``memory.providers.recall`` in config.yaml): ``max_chars`` (1500), ``max_hits``
(4), ``min_query_chars`` (3), ``roles`` (["user", "assistant", "tool"]).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from mnemo.memory.provider import MemoryProvider

if TYPE_CHECKING:
    from mnemo.sessions import SessionStore

__all__ = ["RecallProvider"]

log = logging.getLogger("mnemo.memory")

_DEFAULTS: dict[str, Any] = {"max_chars": 1500, "max_hits": 4, "min_query_chars": 3,
                             "roles": ["user", "assistant", "tool"]}


class RecallProvider(MemoryProvider):
    """Recall from the session store of this home (``state.db``)."""

    def __init__(self) -> None:
        self.session_id = ""
        self.settings: dict[str, Any] = dict(_DEFAULTS)
        self._sessions: SessionStore | None = None
        self._owns_store = False

    @property
    def name(self) -> str:
        return "recall"

    def is_available(self) -> bool:
        return True  # needs only SQLite with FTS5, which the session store checks

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.session_id = session_id
        settings = kwargs.get("settings") or {}
        unknown = set(settings) - set(_DEFAULTS)
        if unknown:
            raise ValueError(f"unknown recall setting(s) {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(_DEFAULTS)}")
        self.settings = {**_DEFAULTS, **settings}
        sessions = kwargs.get("sessions")
        if sessions is None:
            from mnemo.home import Home
            from mnemo.sessions import SessionStore

            home = kwargs.get("home") or Home()
            sessions = SessionStore(home.state_db)
            self._owns_store = True
        self._sessions = sessions

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []  # the session_search tool is a core tool already

    def prefetch(self, query: str) -> str:
        query = query.strip()
        if self._sessions is None or len(query) < int(self.settings["min_query_chars"]):
            return ""
        max_hits = int(self.settings["max_hits"])
        hits = self._sessions.search(query, limit=max_hits * 3,
                                     exclude_session_id=self.session_id or None,
                                     role=list(self.settings["roles"]))
        budget = int(self.settings["max_chars"])
        lines: list[str] = []
        used = 0
        titles: dict[str, str] = {}
        for hit in hits[:max_hits]:
            if hit.session_id not in titles:
                info = self._sessions.get_session(hit.session_id)
                titles[hit.session_id] = (info.title or "") if info else ""
            title = f' "{titles[hit.session_id]}"' if titles[hit.session_id] else ""
            date = time.strftime("%Y-%m-%d", time.localtime(hit.timestamp))
            head = f"- [{date}, session {hit.session_id}{title}] {hit.role}: "
            room = budget - used - len(head)
            if room < 40:
                break
            text = _excerpt(hit.content, hit.snippet, room)
            lines.append(head + text)
            used += len(head) + len(text) + 1
        if not lines:
            return ""
        return "Recalled from earlier sessions (best matches first):\n" + "\n".join(lines)

    def queue_prefetch(self, query: str) -> str | None:
        return self.prefetch(query)

    def shutdown(self) -> None:
        if self._owns_store and self._sessions is not None:
            self._sessions.close()
        self._sessions = None


def _excerpt(content: str, snippet: str, room: int) -> str:
    """The message text, flattened; when too long, the part around the matched snippet."""
    flat = " ".join(content.split())
    if len(flat) <= room:
        return flat
    # The store marks matches in snippets as >>word<<; find the unmarked text.
    core = " ".join(snippet.replace(">>", "").replace("<<", "").strip(".… ").split())
    anchor = flat.find(core[:40]) if core else -1
    start = max(0, anchor - room // 4) if anchor >= 0 else 0
    piece = flat[start:start + room - 2]
    return ("…" if start > 0 else "") + piece + "…"
