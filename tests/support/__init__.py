"""Test utilities shared by every test package (not tests themselves).

``fake_openai`` is a scripted OpenAI-compatible HTTP server on 127.0.0.1; ``fixtures``
wraps it as the ``fake_openai`` pytest fixture. ``pg`` starts a real PostgreSQL server
(``pg_server``, ``pg_url``, ``fresh_pg_url`` fixtures) for the storage tests. Because
``tests/`` has no ``__init__.py``, pytest puts ``tests/`` itself on ``sys.path`` (rootdir conftest,
"prepend" import mode), so test modules import this package as ``support``::

    from support.fake_openai import FakeOpenAIServer, chat_reply, error_reply

and a conftest can load the fixture with ``from support.fixtures import fake_openai``.
"""
