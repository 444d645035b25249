"""``context_grep`` and ``context_expand``: search modes, budgets, paging and every error."""

from __future__ import annotations

import json
from typing import Any

import pytest
from convgen import assistant, call, tool, user
from lcmdriver import Driver, same, unrecoverable

from mnemo.context.lcm import LosslessContextEngine
from mnemo.context.lcm_grep import CONTEXT_GREP_SCHEMA, split_alternatives
from mnemo.context.lcm_tools import MAX_EXPAND_TOKENS, MIN_EXPAND_TOKENS
from mnemo.sessions import SessionStore
from mnemo.tokens import estimate_tokens_rough

Msg = dict[str, Any]


def turn(t: int, output: str | None = None) -> list[Msg]:
    cid = f"c{t}"
    return [
        user(f"Step {t}: check service-{t} on port {8000 + t}."),
        assistant("Checking.", [call(cid, "terminal", command=f"curl localhost:{8000 + t}")]),
        tool(cid, output if output is not None else f"service-{t} log\n" + "ok line\n" * 120),
        assistant(f"service-{t} answers on port {8000 + t}."),
    ]


@pytest.fixture
def driver(tmp_path: Any) -> Driver:
    store = SessionStore(tmp_path / "state.db")
    engine = LosslessContextEngine(context_length=8_000, sessions=store)
    drv = Driver(engine, store)
    for t in range(30):
        special = None
        if t == 3:
            special = "boot\nERROR disk /dev/sdb1 ENOSPC at 97% -> rotate logs\n" + "x\n" * 300
        if t == 5:
            special = "header\n" + "".join(f"row {k}: value {k * 7}\n" for k in range(3_000))
        drv.say(*turn(t, special))
    drv.compact()
    yield drv
    store.close()


def top_node(driver: Driver) -> str:
    return driver.live_nodes("summary")[0]


# -- context_grep --------------------------------------------------------------------------


def test_grep_words_finds_archived_messages_with_their_node(driver: Driver) -> None:
    result = driver.tool("context_grep", pattern="ENOSPC")
    assert result["success"] and result["mode"] == "words"
    match = result["matches"][0]
    assert ">>ENOSPC<<" in match["snippet"] and match["role"] == "tool"
    children = driver.expand_all(match["node_id"])
    assert any(e["message_id"] == match["message_id"] and "ENOSPC" in e["content"]
               for e in children)


def test_grep_only_searches_what_left_the_context(driver: Driver) -> None:
    live_only = driver.live[-1]["content"]  # the latest answer is in the context
    result = driver.tool("context_grep", pattern=live_only)
    assert all(m["message_id"] not in {s.id for s in driver.store.load_messages(driver.sid)}
               for m in result["matches"])


def test_grep_alternatives_scan_in_order_and_page(driver: Driver) -> None:
    pattern = "port 8001|PORT 8002| port 8004 |"
    result = driver.tool("context_grep", pattern=pattern, limit=2)
    assert result["mode"] == "alternatives" and len(result["matches"]) == 2
    assert result["total"] > 2 and result["next_offset"] == 2
    ids = [m["message_id"] for m in result["matches"]]
    assert ids == sorted(ids)
    rest = driver.tool("context_grep", pattern=pattern, limit=50, offset=2)
    assert len(rest["matches"]) == result["total"] - 2 and "next_offset" not in rest
    assert not set(ids) & {m["message_id"] for m in rest["matches"]}
    assert all(any(f">>{p}<<".lower() in m["snippet"].lower()
                   for p in ("port 8001", "port 8002", "port 8004"))
               for m in result["matches"] + rest["matches"])


def test_grep_symbols_fall_back_to_a_literal_scan(driver: Driver) -> None:
    result = driver.tool("context_grep", pattern="-> rotate")
    assert result["matches"] and result["mode"] in ("words", "literal")
    symbols = driver.tool("context_grep", pattern="->")
    assert symbols["matches"], symbols
    assert "-&gt;" not in json.dumps(symbols)


def test_regular_expression_syntax_is_searched_as_text(driver: Driver) -> None:
    forced = driver.tool("context_grep", pattern="ENOSPC at 9[0-9]%", regex=True)
    assert forced["success"] and forced["mode"] in ("words", "literal")  # its words match
    assert "regular expressions are not supported" in forced["note"]
    literal = driver.tool("context_grep", pattern="ENOSPC at 97%")
    assert literal["matches"] and literal["mode"] in ("words", "literal")
    auto = driver.tool("context_grep", pattern="disk (")
    assert auto["success"] and auto["mode"] in ("words", "literal")
    words = driver.tool("context_grep", pattern="port [80", regex=False)
    assert words["success"] and words["mode"] in ("words", "literal")
    assert "regex" not in CONTEXT_GREP_SCHEMA["parameters"]["properties"]


@pytest.mark.parametrize("pattern", [r"((a+))+$", r"(a|a)*$", r"(a|aa)+$", r"(a+)+$",
                                     r"(\w|a)*!x", "(?:a?){25}a{25}"])
def test_patterns_that_backtrack_in_a_regex_engine_answer_at_once(
        tmp_path: Any, pattern: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Checked by what is compiled, not by a clock: no quantifier of the model's pattern
    ever reaches the regex engine, so nothing can backtrack."""
    import re

    import mnemo.context.lcm_grep as lcm_grep

    compiled: list[str] = []
    real_compile = re.compile

    def recording(source: Any, flags: int = 0) -> Any:
        compiled.append(str(source))
        return real_compile(source, flags)

    with SessionStore(tmp_path / "state.db") as store:
        drv = Driver(LosslessContextEngine(context_length=8_000, sessions=store), store)
        for t in range(30):
            drv.say(user(f"step {t} " + "a" * 30 + "!"), assistant("ok " + "a" * 2000))
        drv.compact()
        monkeypatch.setattr(lcm_grep.re, "compile", recording)
        result = drv.tool("context_grep", pattern=pattern, regex=True)
        monkeypatch.undo()
    assert result["success"]
    for source in compiled:
        bare = re.sub(r"\\.", "", source)  # escaped characters are literals
        assert not any(q in bare for q in "*+?{"), source


def test_grep_says_when_nothing_matches(driver: Driver) -> None:
    result = driver.tool("context_grep", pattern="zanzibar quokka")
    assert result["success"] and result["matches"] == [] and "try other words" in result["note"]


@pytest.mark.parametrize(("args", "expected"), [
    ({}, "pattern is empty"),
    ({"pattern": "   "}, "pattern is empty"),
    ({"pattern": 42}, "pattern is empty"),
    ({"pattern": "x" * 400}, "at most 300"),
    ({"pattern": "port", "limit": "many"}, "limit must be a whole number"),
    ({"pattern": "port", "offset": True}, "offset must be a whole number"),
    ({"pattern": "port", "limit": 2**70}, "out of range"),
    ({"pattern": "port", "offset": -(2**70)}, "out of range"),
    ({"pattern": "port", "offset": float("inf")}, "offset must be a whole number"),
])
def test_grep_errors_say_what_to_do(driver: Driver, args: dict[str, Any], expected: str) -> None:
    before = driver.store.count_messages(driver.sid)
    result = json.loads(driver.engine.handle_tool_call("context_grep", args))
    assert result == {"success": False, "error": result["error"]}
    assert expected in result["error"]
    assert driver.store.count_messages(driver.sid) == before


def test_grep_limit_is_clamped_and_accepts_strings(driver: Driver) -> None:
    result = driver.tool("context_grep", pattern="service", limit="500")
    assert result["success"] and len(result["matches"]) <= 50
    one = driver.tool("context_grep", pattern="service", limit=0)
    assert len(one["matches"]) == 1


@pytest.mark.parametrize(("pattern", "pieces"), [
    ("a|b", ["a", "b"]), ("ENOSPC | disk full|", ["ENOSPC", "disk full"]),
    ("src/app.py", ["src/app.py"]), ("||", []), (r"(a|aa)+$", ["(a", "aa)+$"]),
])
def test_alternatives_are_literal_pieces(pattern: str, pieces: list[str]) -> None:
    assert split_alternatives(pattern) == pieces


# -- context_expand ------------------------------------------------------------------------


def test_expand_returns_every_original_in_order(driver: Driver) -> None:
    node = top_node(driver)
    entries = driver.expand_all(node)
    assert [e["index"] for e in entries] == list(range(len(entries)))
    order = [next(k for k, m in enumerate(driver.sent) if same(e, m))
             for e in entries if "node_id" not in e]
    assert order == sorted(order) and len(order) >= 40
    # Outputs cleared earlier sit one level down, below their tool-output nodes.
    assert unrecoverable(driver) == []


def test_expand_keeps_to_the_budget_and_cuts_fairly(driver: Driver) -> None:
    node = top_node(driver)
    result = driver.tool("context_expand", node_id=node, max_tokens=1_000)
    text = json.dumps(result, ensure_ascii=False)
    assert estimate_tokens_rough(text) <= 1_000 * 1.05
    cut = [e for e in result["messages"] if "truncated_chars" in e]
    whole = [e for e in result["messages"] if "truncated_chars" not in e]
    assert cut and whole, "long outputs are cut, short messages stay whole"
    assert max(len(e["content"]) for e in whole) <= min(len(e["content"]) for e in cut) + 50
    for entry in cut:
        assert f"{entry['truncated_chars']:,} of" in entry["content"]
        assert "returns this message whole" in entry["content"]
    assert "were cut to fit max_tokens=1000" in result["note"]


def test_a_cut_message_can_be_read_whole(driver: Driver) -> None:
    node = top_node(driver)
    result = driver.tool("context_expand", node_id=node, max_tokens=600)
    entry = next(e for e in result["messages"] if "truncated_chars" in e)
    hint = entry["content"].split("context_expand(", 1)[1].split(")", 1)[0]
    args = dict(part.strip().split("=", 1) for part in hint.split(","))
    whole = driver.tool("context_expand", node_id=args["node_id"].strip('"'),
                        offset=int(args["offset"]), limit=int(args["limit"]),
                        max_tokens=int(args["max_tokens"]))
    assert whole["returned"] == 1
    full = whole["messages"][0]
    assert "truncated_chars" not in full
    original = next(m for m in driver.sent if same(full, m))
    assert len(full["content"]) == len(original["content"])


def test_expand_pages_cover_each_message_once(driver: Driver) -> None:
    node = top_node(driver)
    total = driver.tool("context_expand", node_id=node)["messages_total"]
    seen: list[int] = []
    offset: int | None = 0
    while offset is not None:
        page = driver.tool("context_expand", node_id=node, offset=offset, max_tokens=300)
        assert page["returned"] >= 1
        seen += [e["index"] for e in page["messages"]]
        offset = page.get("next_offset")
    assert seen == list(range(total))


def test_expand_clamps_the_budget_and_accepts_loose_ids(driver: Driver) -> None:
    node = top_node(driver)
    small = driver.tool("context_expand", node_id=f' "{node.upper()}" ', max_tokens=5)
    assert small["success"] and f"clamped to {MIN_EXPAND_TOKENS}" in small["note"]
    big = driver.tool("context_expand", node_id=node, max_tokens="999999")
    assert big["success"] and f"clamped to {MAX_EXPAND_TOKENS}" in big["note"]
    zero = driver.tool("context_expand", node_id=node, max_tokens=0, offset=1.0)
    assert zero["success"] and zero["offset"] == 1 and f"clamped to {MIN_EXPAND_TOKENS}" in zero[
        "note"]


@pytest.mark.parametrize(("args", "expected"), [
    ({}, "is not a node id"),
    ({"node_id": "12"}, "is not a node id"),
    ({"node_id": "n00000000"}, "no node n00000000 in this session"),
    ({"node_id": "NODE", "offset": 1}, "is not a node id"),
    ({"node_id": "TOP", "offset": -1}, "offset must be 0 or more"),
    ({"node_id": "TOP", "offset": 10_000}, "is past the end"),
    ({"node_id": "TOP", "limit": 0}, "limit 1 or more"),
    ({"node_id": "TOP", "max_tokens": "lots"}, "max_tokens must be a whole number"),
    ({"node_id": "TOP", "offset": 2**70}, "out of range"),
    ({"node_id": "TOP", "limit": str(10**30)}, "out of range"),
])
def test_expand_errors_say_what_to_do(driver: Driver, args: dict[str, Any],
                                      expected: str) -> None:
    args = {k: top_node(driver) if v == "TOP" else v for k, v in args.items()}
    before = driver.store.count_messages(driver.sid)
    result = json.loads(driver.engine.handle_tool_call("context_expand", args))
    assert result["success"] is False and expected in result["error"]
    assert driver.store.count_messages(driver.sid) == before


def test_unknown_node_error_points_at_where_ids_are(driver: Driver) -> None:
    result = driver.tool("context_expand", node_id="nffffffff")
    assert "[LCM SUMMARY NODE" in result["error"] and "context_grep" in result["error"]


# -- the engine around the tools -----------------------------------------------------------


def test_tool_calls_outside_a_session_or_without_a_store(tmp_path: Any) -> None:
    no_store = LosslessContextEngine(context_length=8_000)
    result = json.loads(no_store.handle_tool_call("context_grep", {"pattern": "x"}))
    assert not result["success"] and "create_engine" in result["error"]
    with SessionStore(tmp_path / "s.db") as store:
        no_session = LosslessContextEngine(context_length=8_000, sessions=store)
        result = json.loads(no_session.handle_tool_call("context_expand", {"node_id": "n1"}))
        assert not result["success"] and "none is active" in result["error"]
        unknown = json.loads(no_session.handle_tool_call("context_read", {}))
        assert not unknown["success"] and "context_read" in unknown["error"]
        bad = json.loads(no_session.handle_tool_call("context_grep", ["x"]))  # type: ignore[arg-type]
        assert not bad["success"] and '{"pattern": "ENOSPC"}' in bad["error"]


def test_a_broken_archive_is_an_error_message_not_an_exception(driver: Driver) -> None:
    driver.say(user("one more"))  # the index is stale and must be read again
    driver.store.close()
    result = json.loads(driver.engine.handle_tool_call("context_grep", {"pattern": "x"}))
    assert not result["success"] and "could not be read" in result["error"]


def test_the_index_follows_the_session(driver: Driver) -> None:
    engine = driver.engine
    index = engine.index()
    assert engine.index() is index, "an unchanged session is not read again"
    for t in range(30, 50):
        driver.say(*turn(t))
    driver.compact()
    assert engine.index() is not index
    assert driver.tool("context_expand", node_id=top_node(driver))["success"]


def test_a_phrase_is_found_even_where_ranking_buries_it(tmp_path: Any) -> None:
    with SessionStore(tmp_path / "state.db") as store:
        engine = LosslessContextEngine(context_length=4_000, sessions=store)
        drv = Driver(engine, store)
        drv.say(user("start"), assistant("ok"))
        for i in range(130):
            drv.say(user(f"alpha number {i} comes before beta"), assistant(f"beta then alpha {i}"))
        drv.say(user("read the log"), assistant("", [call("c1", path="big.log")]),
                tool("c1", "noise line\n" * 800 + "the beta alpha handshake failed\n"),
                assistant("done"))
        for i in range(10):
            drv.say(user(f"later {i}"), assistant(f"reply {i}"))
        drv.compact()
        # Both words are in 260 short messages that outrank the long log; the phrase is
        # only in the log, so the scan finds it.
        result = drv.tool("context_grep", pattern="beta alpha")
        assert result["mode"] == "literal" and len(result["matches"]) == 1
        assert result["matches"][0]["role"] == "tool"
        words = drv.tool("context_grep", pattern="handshake alpha")  # not a literal phrase
        assert words["mode"] == "words" and words["matches"]


def test_tool_schemas_are_copies_all_the_way_down(tmp_path: Any) -> None:
    engine = LosslessContextEngine(context_length=8_000)
    schemas = engine.get_tool_schemas()
    schemas[0]["parameters"]["properties"]["pattern"]["description"] = "changed"
    schemas[1]["parameters"]["required"].append("oops")
    fresh = engine.get_tool_schemas()
    assert fresh[0]["parameters"]["properties"]["pattern"]["description"] != "changed"
    assert fresh[1]["parameters"]["required"] == ["node_id"]
