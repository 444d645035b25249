"""The small-window prompt: short tool schemas that stay true to the tools, within budget."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from mnemo.config import MnemoConfig
from mnemo.home import Home
from mnemo.memory import MEMORY_SCHEMA
from mnemo.prompt import SKILL_VIEW_SCHEMA, build_system_prompt
from mnemo.prompt.small_window import compact_tool_schemas, is_small_window, without_example_copy
from mnemo.sessions import SESSION_SEARCH_SCHEMA
from mnemo.tokens import estimate_tokens_rough

FULL = [MEMORY_SCHEMA, SESSION_SEARCH_SCHEMA, SKILL_VIEW_SCHEMA]


def test_short_schemas_keep_names_order_and_inputs() -> None:
    before = copy.deepcopy(FULL)
    short = compact_tool_schemas(FULL)
    assert before == FULL  # inputs untouched
    assert [s["name"] for s in short] == ["memory", "session_search", "skill_view"]
    assert estimate_tokens_rough(json.dumps(short)) < estimate_tokens_rough(
        json.dumps(FULL)) / 3
    for full, small in zip(FULL, short, strict=True):  # no parameter the tool lacks
        assert set(small["parameters"]["properties"]) <= set(
            full["parameters"]["properties"])


def test_an_unknown_tool_keeps_its_parameters_with_a_short_description() -> None:
    tool = {"name": "lookup", "description": "Find a thing. Then explain at length.",
            "parameters": {"type": "object", "properties": {
                "key": {"type": "string", "description": "what to find"}}}}
    (short,) = compact_tool_schemas([tool])
    assert short["description"] == "Find a thing."
    assert short["parameters"]["properties"] == {"key": {"type": "string"}}
    assert tool["parameters"]["properties"]["key"]["description"] == "what to find"


def test_small_windows() -> None:
    assert is_small_window(8192) and is_small_window(16_384)
    assert not is_small_window(32_768) and not is_small_window(None)


def test_the_small_prompt_fits_twelve_percent_of_8k(mnemo_home: Home, tmp_path: Path) -> None:
    tools = ["memory", "session_search"]
    small = build_system_prompt(config=MnemoConfig(), home=mnemo_home, cwd=tmp_path,
                                tool_names=tools, small_window=True)
    full = build_system_prompt(config=MnemoConfig(), home=mnemo_home, cwd=tmp_path,
                               tool_names=tools)
    schemas = json.dumps(compact_tool_schemas([MEMORY_SCHEMA, SESSION_SEARCH_SCHEMA]))
    assert small.tokens + estimate_tokens_rough(schemas) <= 0.12 * 8192
    assert small.tokens < full.tokens
    assert "<tool_call>" in small.text  # the worked example a small model copies


@pytest.mark.parametrize(("reply", "said", "kept"), [
    # Seen by hand: the answer to "Hi, I'm Tomas" copied the worked example.
    ("Tomas. I prefer tabs.", "Hi, I'm Tomas. I work as a nurse.", "Tomas."),
    ("Hello! I'm Sam and I work as a nurse. How can I help?", "Hi, I'm Tomas.",
     "Hello! How can I help?"),
    # The user's own words are no copy, nor is the word without the example's phrase.
    ("Hi Sam! You prefer tabs, noted.", "I'm Sam and I prefer tabs.",
     "Hi Sam! You prefer tabs, noted."),
    ("Python wants spaces, not tabs.", "How do I indent Python?",
     "Python wants spaces, not tabs."),
])
def test_a_copy_of_the_worked_example_is_left_out_of_a_reply(reply: str, said: str,
                                                              kept: str) -> None:
    assert without_example_copy(reply, said) == kept
