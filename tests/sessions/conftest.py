"""Fixtures for the session store tests: a real SQLite file in the test's home."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mnemo.home import Home
from mnemo.sessions import SessionStore


@pytest.fixture
def store(mnemo_home: Home) -> Iterator[SessionStore]:
    with SessionStore() as opened:
        yield opened
