"""The 60-turn session every framework's integration test drives (and the benchmark).

Each turn the user asks about one item; the scripted model calls the ``lookup`` tool,
reads its long output and answers. Turn 3 states a preference the model saves with the
``memory`` tool; turn 5's tool output holds a planted fact that compaction later removes
from the live context, and the last turn's model searches for it with ``session_search``.
The texts are sized so a 6,000-token window is compacted several times.
"""

from __future__ import annotations

import json
from typing import Any

TURNS = 60
WINDOW = 6_000  # tokens: the model's window in these tests
PREFERENCE = "favourite colour is teal"
PLANTED = "K-7731-kestrel-deploy"
MEMORY_TURN = 3
PLANTED_TURN = 5
SEARCH_TURN = TURNS - 1
_FILLER = ("The item has a history of small changes, reviews and notes that matter to "
           "the team but not to this question. ")


def user_text(turn: int) -> str:
    if turn == MEMORY_TURN:
        return f"Turn {turn}: remember that my {PREFERENCE}. Also look up item {turn}."
    if turn == SEARCH_TURN:
        return f"Turn {turn}: what was the deploy key of item {PLANTED_TURN}? Search for it."
    return f"Turn {turn}: please look up item {turn} and summarise it. " + _FILLER * 2


def lookup(item: int) -> str:
    """The ``lookup`` tool: a long record, with the planted fact in item PLANTED_TURN's."""
    extra = f" Deploy key: {PLANTED}." if item == PLANTED_TURN else ""
    return f"Record of item {item}.{extra} " + _FILLER * 12


def answer_text(turn: int) -> str:
    return f"Item {turn} is in order; nothing needs to change."


def memory_args() -> dict[str, Any]:
    return {"action": "add", "target": "user", "content": f"The user's {PREFERENCE}."}


def search_args() -> dict[str, Any]:
    return {"query": "deploy key kestrel"}


def turn_of(text: str) -> int:
    """The turn number a user message of this scenario carries."""
    return int(text.split(":", 1)[0].removeprefix("Turn ").strip())


def found_planted(result: str) -> bool:
    return PLANTED in json.dumps(json.loads(result), ensure_ascii=False)
