"""The plain-word screens the reader runs before its patterns never hide a match.

``reading._CLAIM_WORDS`` (before ``PREFERENCE``, ``DECISION`` and ``REMAINING``),
``salience._STANDING_WORDS`` (before the standing-rule pattern) and
``salience._GREETING_START`` (before the vocative one) let most sentences skip a
pattern that is tried at every character (C18: the first compaction's cost). A screen
that missed one branch would silently drop a rule or a decision, so each branch of
each pattern has a sentence here that it matches; the screen must let it through, and
the screened reading must equal the pattern's.
"""

from __future__ import annotations

import pytest

from mnemo.context.summary import reading, salience
from mnemo.context.textscan import DECISION, PREFERENCE, REMAINING

# One sentence per branch of the three claim patterns (in their order).
CLAIMS = [
    "You must keep the API stable.", "It mustn't break.", "Never deploy on Fridays.",
    "Always run the linter.", "I prefer tabs.", "She preferred the blue one.",
    "Don't touch the config.", "Dont push to main.", "Do not rename files.",
    "Avoid global state.", "Make sure the tests pass.", "You shouldn't guess.",
    "Only use the stdlib.", "Please use UTC.", "I like short answers.",
    "I want the JSON output.", "I need it by noon.", "I hate emojis.",
    "No more than 80 columns.", "At most three retries.", "At least one test.",
    "Tests are required.", "That is a requirement.", "One constraint applies.",
    "Use ruff instead of flake8.", "Please keep it short.", "Keep the docs in sync.",
    "Keep them small.", "Keep it simple.", "Keep these apart.", "Stick to Python 3.11.",
    "I'd like a summary.", "Id like a summary.", "I would like more detail.",
    "Write it without classes.",
    "We decided to ship.", "A big decision for us.", "We'll use Postgres.",
    "We will go with SQLite.", "I'll use the cache.", "I will use pip.",
    "Going with option B.", "They chose React.", "We choose to wait.", "We opted out.",
    "We settled on Friday.", "Everyone agreed.", "Let's use uv.", "Lets go with it.",
    "Let's keep the name.", "Let's switch to tabs.", "We switched to Rust.",
    "TODO: add tests.", "A to-do remains.", "The next step is docs.",
    "Next, I'll write the test.", "Next I will fix it.", "I still need the key.",
    "Two remaining items.", "Nothing left to do.", "A follow-up is due.",
    "Follow up with Ana.", "Later we deploy.", "After that, the release.",
]

# One sentence per English branch of the standing-rule pattern.
RULES = [
    "Never suggest meat.", "Please always answer in French.", "Only recommend books.",
    "Don't use emojis.", "Do not ever swear.", "Please stop suggest meat.",
    "I'm vegan, so keep that in mind.", "Remember that I'm allergic to nuts.",
    "From now on be brief.", "Going forward, cite sources.", "Next time you plan, ask.",
    "I'd like you to always use metric.", "I want short answers.",
    "Keep your replies brief.", "Make responses simple.", "Call me Bea.",
]

VOCATIVES = ["Thanks Nate!", "Hey Mel, how are you?", "Good luck, Ana!", "hi Jo!",
             "Anytime Nate!", "That sounds great, Caroline."]


@pytest.mark.parametrize("sentence", CLAIMS)
def test_every_claim_branch_passes_the_claim_screen(sentence: str) -> None:
    low = sentence.lower()
    matched = [p for p in (PREFERENCE, DECISION, REMAINING) if p.search(sentence)]
    assert matched, f"no claim pattern matches {sentence!r}: the example is stale"
    assert reading._CLAIM_WORDS.search(low), sentence


@pytest.mark.parametrize("sentence", RULES)
def test_every_rule_branch_passes_the_rule_screen(sentence: str) -> None:
    assert salience._STANDING_RULE.search(sentence), f"stale example {sentence!r}"
    assert salience.is_standing_rule(sentence)


@pytest.mark.parametrize("sentence", VOCATIVES)
def test_a_name_said_to_the_listener_is_still_taken_out(sentence: str) -> None:
    assert salience._VOCATIVE.search(sentence), f"stale example {sentence!r}"
    assert "," in sentence or salience._GREETING_START.match(sentence)


@pytest.mark.parametrize("sentence", CLAIMS + RULES + VOCATIVES + [
    "Step 5: make the invoice handler in src/app/a.py return 404 for unknown ids.",
    "We went hiking near the lake last Sunday.", "你以后叫我小李", "别用英文回答",
])
@pytest.mark.parametrize("role", ["user", "assistant"])
def test_the_screened_reading_equals_the_patterns_reading(sentence: str, role: str) -> None:
    low = sentence.lower()
    read = reading._sentence.__wrapped__(sentence, role, ())
    if read is None:  # phatic: nothing to claim
        return
    assert read.preference == (role == "user" and bool(PREFERENCE.search(low)))
    assert read.decision == bool(DECISION.search(low))
    assert read.remaining == (role == "assistant" and bool(REMAINING.search(low)))
    assert salience.is_standing_rule(sentence) == bool(salience._STANDING_RULE.search(sentence))
