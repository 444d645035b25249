"""Where sessions and curated memory are stored: the home's files or PostgreSQL (SPEC D4).

``factory`` opens the stores the config asks for (``open_session_store``,
``open_memory_store``); ``pg`` is the PostgreSQL connection pool both PostgreSQL stores
share; ``pg_schema`` its numbered migrations; ``migrate`` copies a home into PostgreSQL.
Nothing is imported here, so ``import mnemo.storage.pg`` stays a leaf (the factory sits
above ``sessions/`` and ``memory/``, the rest below them).
"""
