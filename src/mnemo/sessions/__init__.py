"""Sessions and search: every conversation kept in SQLite, findable again (SPEC D1–D3).

``SessionStore`` keeps sessions and messages in ``$MNEMO_HOME/state.db`` (WAL, numbered
migrations, FTS5 and trigram indexes); compaction archives messages instead of deleting
them. ``session_search`` and ``SESSION_SEARCH_SCHEMA`` expose the archive to a model.
"""

from mnemo.sessions.live import LiveSync
from mnemo.sessions.records import SearchHit, SessionInfo, StoredMessage
from mnemo.sessions.search import SearchTuning
from mnemo.sessions.store import SessionStore
from mnemo.sessions.tool import SESSION_SEARCH_SCHEMA, session_search

__all__ = [
    "SESSION_SEARCH_SCHEMA",
    "LiveSync",
    "SearchHit",
    "SearchTuning",
    "SessionInfo",
    "SessionStore",
    "StoredMessage",
    "session_search",
]
