"""The in-tree ``recall`` provider (SPEC P6) against a real session database."""

from __future__ import annotations

from mnemo.home import Home
from mnemo.memory import build_memory_context_block
from mnemo.memory.recall import RecallProvider
from mnemo.sessions import SessionStore


def test_recall_finds_a_fact_from_an_earlier_session(mnemo_home: Home) -> None:
    store = SessionStore(mnemo_home.state_db)
    old = store.create_session(title="staging setup")
    store.append_messages(old, [
        {"role": "user", "content": "The staging database password rotates every Monday."},
        {"role": "assistant", "content": "Noted: staging DB credentials rotate on Mondays."},
        {"role": "user", "content": "Unrelated: the cafeteria opens at nine."},
    ])
    current = store.create_session()
    store.append_message(current, {"role": "user",
                                   "content": "When does the staging database password rotate?"})
    provider = RecallProvider()
    provider.initialize(current, sessions=store, settings={"max_chars": 400})
    text = provider.prefetch("When does the staging database password rotate?")
    assert "rotates every Monday" in text
    assert "staging setup" in text and old in text
    assert current not in text and "When does" not in text  # never the current session
    assert len(text) <= 400 + len("Recalled from earlier sessions (best matches first):\n")
    block = build_memory_context_block(text)
    assert block.startswith("<memory-context>") and "rotates every Monday" in block


def test_recall_opens_its_own_store_and_respects_settings(mnemo_home: Home) -> None:
    store = SessionStore(mnemo_home.state_db)
    sid = store.create_session()
    store.append_message(sid, {"role": "user", "content": "Our CI runs on buildkite agents."})
    store.close()
    provider = RecallProvider()
    provider.initialize("other-session", home=mnemo_home, settings={"max_hits": 1})
    assert "buildkite" in provider.prefetch("which CI do we use? buildkite?")
    assert provider.prefetch("hi") == ""  # too short to search
    assert provider.prefetch("zyxwvut qqqq") == ""  # nothing matches
    provider.shutdown()


def test_unknown_setting_is_refused(mnemo_home: Home) -> None:
    provider = RecallProvider()
    try:
        provider.initialize("s", home=mnemo_home, settings={"max_char": 10})
    except ValueError as exc:
        assert "max_chars" in str(exc)
    else:
        raise AssertionError("a typo in the settings must be an error")


def test_long_messages_are_cut_around_the_match(mnemo_home: Home) -> None:
    store = SessionStore(mnemo_home.state_db)
    sid = store.create_session()
    long_text = ("filler words about nothing in particular. " * 60
                 + "The Grafana dashboard lives at grafana.internal/d/api-latency. "
                 + "more filler text here. " * 60)
    store.append_message(sid, {"role": "assistant", "content": long_text})
    provider = RecallProvider()
    provider.initialize("now", sessions=store, settings={"max_chars": 500})
    text = provider.prefetch("where is the grafana dashboard for api latency?")
    assert "grafana.internal/d/api-latency" in text
    assert len(text) < 600
