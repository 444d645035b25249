"""Pytest fixtures built on the shared test utilities.

Import them into a ``conftest.py`` to make them available to a test package::

    from support.fixtures import fake_openai  # noqa: F401  (re-exported fixture)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.fake_openai import FakeOpenAIServer


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started ``FakeOpenAIServer``; stopped (hanging replies released) after the test."""
    with FakeOpenAIServer() as server:
        yield server
