"""Fixtures for the session store tests: every ``store`` test runs on both backends.

``store`` is a real SQLite file in the test's home, then a real PostgreSQL database
(``support.pg``). Tests about SQLite itself (its file, its connections, its locks) are
marked ``sqlite_only`` and run once.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mnemo.home import Home
from mnemo.sessions import SessionStore


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in list(items):
        callspec = getattr(item, "callspec", None)
        if (callspec is not None and callspec.params.get("store") == "postgres"
                and item.get_closest_marker("sqlite_only")):
            items.remove(item)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, mnemo_home: Home) -> Iterator[SessionStore]:
    if request.param == "sqlite":
        with SessionStore() as opened:
            yield opened
        return
    from mnemo.sessions.pg_store import PgSessionStore
    from mnemo.storage.factory import open_pg

    url = request.getfixturevalue("pg_url")
    with PgSessionStore(open_pg(url)) as opened:
        yield opened
