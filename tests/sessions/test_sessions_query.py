"""Query parsing: what becomes a search term, and how it is quoted for FTS5."""

from __future__ import annotations

from mnemo.sessions.query import escape_like, fts_quote, parse_query


def test_words_are_folded_deduplicated_and_stop_words_dropped() -> None:
    parsed = parse_query("What did Caroline research about Adoption? adoption!")
    assert [t.text for t in parsed.terms] == ["caroline", "research", "adoption"]
    assert parsed.fts_expression(prefix=False) == '"caroline" OR "research" OR "adoption"'


def test_only_stop_words_are_kept_when_nothing_else_is_left() -> None:
    assert [t.text for t in parse_query("to be or not to be").terms] == ["to", "be", "or", "not"]


def test_possessives_and_contractions_split_like_the_tokenizer() -> None:
    assert [t.text for t in parse_query("Caroline's mom didn’t call").terms] == [
        "caroline", "mom", "call"]


def test_punctuated_chunks_become_phrases() -> None:
    parsed = parse_query("open src/app.py now")
    assert [t.tokens for t in parsed.terms] == [("open",), ("src", "app", "py")]
    assert parsed.terms[1].fts(prefix=True) == '"src app py"'  # last token too short


def test_prefix_only_for_long_enough_words() -> None:
    parsed = parse_query("painting cat")
    assert parsed.fts_expression(prefix=True) == '"painting"* OR "cat"'


def test_cjk_runs_are_kept_apart_from_words() -> None:
    parsed = parse_query("用Python部署服务器 ok 部署服务器")
    assert parsed.cjk == ("用", "部署服务器")
    assert [t.text for t in parsed.terms] == ["python", "ok"]


def test_syntax_characters_never_reach_fts5_unquoted() -> None:
    parsed = parse_query('foo AND "bar" NOT (baz*) -qux: NEAR(a b)')
    for term in parsed.terms:
        assert term.fts(prefix=True).startswith('"')
    assert '"bar"' in parsed.fts_expression(prefix=False)
    assert fts_quote('say "hi"') == '"say ""hi"""'


def test_empty_and_symbol_only_queries() -> None:
    assert parse_query("").is_empty
    assert parse_query("   \t\n").is_empty
    emoji = parse_query("🎉🔥")
    assert not emoji.terms and not emoji.cjk and emoji.literal == "🎉🔥"
    assert parse_query("a\x00b").literal == "a b"


def test_like_escaping() -> None:
    assert escape_like("100%_done\\") == "100\\%\\_done\\\\"
