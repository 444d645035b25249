"""A capped model summary completed by the local summariser (``completed_summary.py``, C17).

The model summaries here are scripted text (a short template-shaped answer, as the
embedded model's capped background summary is); the local summariser, the parsing and
the preparer's jobs are the real ones.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mnemo.context import TEMPLATE_SECTIONS, ContextCompressor
from mnemo.context.completed_summary import completed, with_rules_kept
from mnemo.context.local_summary import (
    parse_summary_sections,
    render_sections,
    summarize_locally,
)
from mnemo.context.prepare import Preparer
from mnemo.context.prompt import CONTENT_MAX
from mnemo.messages import Message, content_text
from mnemo.tokens import estimate_message_tokens_rough, estimate_tokens_rough

_MODEL = """## Goal
- Ana is chatting about her family and plans.

## Constraints & Preferences
- Ana likes short answers.

## Critical Context
- Ana's brother plays the cello in the Porto orchestra.
"""


def _chat() -> list[Message]:
    # The model's lines above are grounded in what was said (``completed`` leaves out
    # those that are not).
    said = [
        "I'm Ana, I like short answers, and I'm chatting about my family and plans. My "
        "brother plays the cello in the Porto orchestra.",
        "Nice! What does your sister do?",
        "My sister Rita works as a nurse at the Santa Maria hospital in Lisbon.",
        "Are you travelling soon?",
        "We are flying to Tokyo on 3 March for the cherry blossoms.",
        "That sounds lovely.",
        "Our dog Biscuit is a six-year-old beagle who hates the rain.",
        "Who looks after him while you travel?",
        "My neighbour Joana looks after Biscuit whenever we travel.",
        "Good to know!",
    ]
    # The assistant's replies go on at length, as a model's do: what the summary
    # replaces is large enough to leave room beside the model's lines.
    advice = ("Here are some thoughts on planning step {} with care, keeping the calendar "
              "open, booking early, checking the weather forecast, packing light and "
              "asking the neighbours for tips about routes and quiet places to visit. ")
    return [{"role": "user", "content": text} if i % 2 == 0 else
            {"role": "assistant", "content": text + " " + advice.format(i) * 4}
            for i, text in enumerate(said)]


def _lines(text: str) -> list[str]:
    return [line for lines in parse_summary_sections(text).values() for line in lines]


def test_every_model_line_stays_and_the_local_lines_fill_the_room() -> None:
    text = completed(_MODEL, _chat(), budget_tokens=2_000)
    for line in _lines(_MODEL):
        assert line in _lines(text)
    for fact in ("Rita", "Tokyo", "Biscuit", "Joana"):
        assert fact in text
    assert estimate_tokens_rough(text) <= 2_000
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert headings == list(TEMPLATE_SECTIONS)  # one template, its order


def test_a_local_line_the_model_already_wrote_is_not_added_again() -> None:
    text = completed(_MODEL, _chat(), budget_tokens=2_000)
    assert text.count("cello") == 1


def test_the_budget_holds_when_the_room_is_small() -> None:
    budget = estimate_tokens_rough(_MODEL) + 160
    text = completed(_MODEL, _chat(), budget_tokens=budget)
    assert estimate_tokens_rough(text) <= budget
    for line in _lines(_MODEL):
        assert line in _lines(text)


def test_in_a_small_room_the_model_keeps_half_and_the_facts_it_missed_get_the_rest() -> None:
    # A capped 0.5B summary that restates one thing line after line, as seen by hand.
    rambling = "## Goal\n" + "".join(
        f"- Ana adopted the Pixel from the shelter and adopted it again, part {i}.\n"
        for i in range(12)) + "## Critical Context\n- Ana's brother plays the cello.\n"
    budget = 400
    assert estimate_tokens_rough(rambling) > budget // 2
    text = completed(rambling, _chat(), budget_tokens=budget)
    assert estimate_tokens_rough(text) <= budget
    kept = [line for line in _lines(rambling) if line in _lines(text)]
    assert kept and len(kept) < len(_lines(rambling))  # its most important lines stay
    assert "Tokyo" in text or "Rita" in text or "Biscuit" in text


def test_what_the_previous_summary_said_keeps_its_room_beside_a_short_turn() -> None:
    # By hand (3,072 tokens, a compaction after every turn): with the previous summary
    # counted at half, as the turns are, the summary halved at every compaction and
    # each fact was gone one compaction after it was summarised.
    previous = ("## Goal\n- Tomas, a nurse in Leeds.\n\n## Constraints & Preferences\n"
                "- User: Please remember: I'm allergic to peanuts, never suggest recipes "
                "with peanuts.\n\n## Progress\n### Done\n- User: My partner Sam and I "
                "moved to a flat in Headingley last week.\n\n## Critical Context\n"
                "- User: We have a dog called Biscuit, he's a beagle.\n"
                "- User: My night shifts are on Tuesdays and Thursdays.\n")
    turns: list[Message] = [
        {"role": "user", "content": "Actually we changed the trip: it's Porto now, not Lisbon."},
        {"role": "assistant", "content": "Got it, Porto it is."}]
    model = ("## Goal\n- Tomas is a nurse in Leeds who is going to Porto.\n\n"
             "## Critical Context\n- The trip is to Porto now, not Lisbon.\n")
    text = completed(model, turns, budget_tokens=300, previous_summary=previous)
    assert "Porto now, not Lisbon" in text and "peanuts" in text
    assert "Headingley" in text and "Tuesdays and Thursdays" in text


def test_a_model_line_naming_what_the_user_took_back_is_left_out() -> None:
    # By hand: "… recipes for beagles in Lisbon." after "it's Porto now, not Lisbon".
    model = ("## Goal\n- We are going to Lisbon in May.\n\n## Critical Context\n"
             "- Night shifts are on Tuesdays and Thursdays.\n")
    turns: list[Message] = [
        {"role": "user", "content": "We're going to Lisbon in May."},
        {"role": "user", "content": "Actually we changed the trip: it's Porto now, not Lisbon."},
        {"role": "user", "content": "My night shifts are on Tuesdays and Thursdays."}]
    text = completed(model, turns, budget_tokens=400)
    assert "Tuesdays and Thursdays" in text and "going to Lisbon in May" not in text
    again: list[Message] = [*turns, {"role": "user", "content": "Sorry, we're going to "
                                      "Lisbon in May after all."}]
    assert "We are going to Lisbon in May." in completed(model, again, budget_tokens=400)


def test_no_room_or_nothing_new_leaves_the_model_summary_as_it_is() -> None:
    # (Within so small a budget an empty heading says no "(none)".)
    headings = estimate_tokens_rough(render_sections({}, marked=False))
    assert completed(_MODEL, _chat(), budget_tokens=headings + 20) == _MODEL
    assert completed(_MODEL, [], budget_tokens=2_000) == _MODEL
    echo: list[Message] = [{"role": "user", "content": content_text(_chat()[0])}]
    assert completed(_MODEL, echo, budget_tokens=2_000) == _MODEL


def test_in_a_small_window_the_models_none_lines_go_and_every_heading_stays() -> None:
    # By hand (3,072 tokens) a model summary swapped in kept nine "(none)" lines, which
    # the local summary of the same window leaves out.
    empty = "\n".join(f"## {name}\n- (none)" for name in TEMPLATE_SECTIONS
                      if name not in ("Goal", "Constraints & Preferences", "Critical Context"))
    model = f"{_MODEL}\n{empty}\n"
    for text in (completed(model, _chat(), budget_tokens=400),
                 with_rules_kept(model, None, 400)):
        assert "(none)" not in text
        headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
        assert sorted(headings) == sorted(TEMPLATE_SECTIONS)
        for line in _lines(_MODEL):
            assert line in _lines(text)
    # A large budget's summary says "(none)", as the local one does.
    assert "(none)" in with_rules_kept(model, None, 2_000)
    assert "(none)" in completed(model, _chat(), budget_tokens=2_000)


def test_the_models_repeated_lines_fragments_and_template_hints_are_left_out() -> None:
    # The embedded model's capped summary as seen by hand in an 8k window: the same two
    # lines under every heading, a fragment, the template's own hint paraphrased.
    repeated = "- The user is Ana, 31 years old, planning to relocate to Porto.\n" \
               "- She will work as a night nurse at Santo António hospital,\n"
    model = ("## Goal\n- Adopt a beagle puppy Pixel from the Oakland shelter near the\n"
             "- near the\n"
             f"## Constraints & Preferences\n{repeated}"
             f"## Key Decisions\n{repeated}"
             f"## Resolved Questions\n{repeated}"
             "## Remaining Work\n- [ ] [A to-do list of what is left: items to consider, "
             "not actions to\n- [ ] perform]\n"
             f"## Critical Context\n{repeated}- Her shifts run from 8 pm to 8 am.\n")
    # What the model summarised (its lines are grounded in it: ``completed`` leaves out
    # those that are not).
    told: list[Message] = [
        {"role": "user", "content": "I'm Ana, 31 years old, planning to relocate to Porto. "
                                    "I will work as a night nurse at Santo António "
                                    "hospital; my shifts run from 8 pm to 8 am. I want to "
                                    "adopt a beagle puppy Pixel from the Oakland shelter."},
        {"role": "assistant", "content": "Noted."}, *_chat()]
    for text in (completed(model, told, budget_tokens=2_000),
                 completed(model, [], budget_tokens=2_000)):
        sections = parse_summary_sections(text)
        assert text.count("31 years old") == 1 and text.count("night nurse") == 1
        assert sections["Constraints & Preferences"][0].startswith("The user is Ana")
        assert not any("31 years old" in line for key in (
            "Key Decisions", "Resolved Questions", "Critical Context")
            for line in sections.get(key, []))
        assert "A to-do list" not in text and "perform]" not in text
        assert "- near the\n" not in text
        assert "8 pm to 8 am" in text and "Oakland shelter" in text  # the rest stays
    assert "Tokyo" in completed(model, told, budget_tokens=2_000)  # room for the facts


def test_a_line_of_the_previous_summary_copied_only_so_far_is_left_out() -> None:
    # As seen by hand in a 3,072-token window: the 0.5B model, rewriting the previous
    # summary with one new turn, copied two of its lines only so far.
    previous = ("## Progress\n### Done\n- 1 Dec 2026 · User: Last Fri [27 Nov 2026] I "
                "started pottery classes in Lisbon with my friend Joana.\n"
                "## Critical Context\n- User: My sister Rita is getting married in Braga on "
                "14 June.\n- Assistant: Rui read \"The Shadow of the Wind\" on Sunday "
                "[29 Nov 2026].\n- User: My brother Rui plays the cello in the Porto "
                "orchestra. My favourite food is grilled sardines. I am allergic to peanuts, "
                "so I never eat satay. My car is a red Fiat 500 that I bought in 2019.\n")
    model = ("## Progress\n### Done\n- 1 Dec 2026 · User: Last Fri [27 Nov 2026] I started "
             "pottery\n## Critical Context\n- User: My sister Rita is getting married in "
             "Braga on 14 June.\n- [Rui read \"The Shadow of the Wind\" on Sunday [29 Nov\n"
             "- User: I'm saving money to buy a flat in Matosinhos\n"
             "- sister Rita is getting married in Braga on 14 June.\n"
             # … or with two words run together where it stopped (by hand, a move).
             "- User: My brother Rui plays the cello in the Porto orchestra. My favourite "
             "food is grilledSar\n"
             "- Ana adopted Pixel from the Oakland shelter yesterday and")
    turns: list[Message] = [
        {"role": "user", "content": "I'm Ana. I adopted Pixel from the Oakland shelter "
                                    "yesterday, and I'm saving money to buy a flat in "
                                    "Matosinhos next year."},
        {"role": "assistant", "content": "Matosinhos is close to the beach and to Porto."},
        {"role": "user", "content": "My best friend Marta lives in Berlin and works for a "
                                    "bike startup."},
        {"role": "assistant", "content": "Marta works for a bike startup in Berlin."}]
    text = completed(model, turns, budget_tokens=2_000, previous_summary=previous)
    lines = [line for items in parse_summary_sections(text).values() for line in items]
    assert not any(line.endswith(("I started pottery", "[29 Nov")) for line in lines), lines
    assert not any(line.startswith("sister Rita") for line in lines), lines  # cut at the start
    # A line cut by the model's token cap loses the word it was cut after.
    assert "Ana adopted Pixel from the Oakland shelter yesterday" in lines
    # A line that is whole, or new, stays — even one the model did not end with a stop.
    assert "- User: My sister Rita is getting married in Braga on 14 June." in text
    assert "buy a flat in Matosinhos" in text


def test_a_line_copied_so_far_with_two_words_run_together_is_left_out() -> None:
    # By hand (3,072 tokens, a chat about a move): the model's merge wrote "… with my
    # partnerLot", and every later summary carried it in place of the user's words.
    previous = ("## Goal\n- User: I'm moving from Utrecht to Ghent on March 14th with my "
                "partner Lotte.\n## Tools & Patterns\n- memory ×4 (3 failed)\n")
    model = ("## Goal\n- I'm moving from Utrecht to Ghent on March 14th with my partnerLot\n"
             "## Constraints & Preferences\n- The moving van costs 420 euros for the day.\n")
    turns: list[Message] = [
        {"role": "user", "content": "The moving van costs 420 euros for the day."},
        {"role": "assistant", "content": "Noted, 420 euros for the van. Book it early, "
                                         "check the parking rules in Ghent and ask the "
                                         "neighbours about the lift before the day."}]
    text = completed(model, turns, budget_tokens=2_000, previous_summary=previous)
    assert "partnerLot" not in text
    assert "with my partner Lotte." in text
    assert "The moving van costs 420 euros for the day." in text


def test_a_model_line_wrapped_over_lines_is_one_item() -> None:
    # As the 0.5B model wrote it by hand (3,072-token window): the previous summary's
    # long lines copied wrapped at about 65 characters, the last piece cut short.
    model = ("## Progress\n### Done\n- 1 Dec 2026 · User: Last Fri [27 Nov 2026] I started "
             "pottery and\nhiked the Gerês trail with Pixel and Joana. I finished reading \"A\n"
             "## Critical Context\n- User: My brother Rui plays the cello in the Porto "
             "orchestra. My\nsister Rita is getting married in Braga on 14 June. My grandma\n"
             "Lucia taught me to bake pão de ló when I was ten. My best friend\n"
             "- Ana likes short answers\n- She lives in Porto\n"
             "## Key Decisions\n- User: My brother Rui plays the cello in the Porto orchestra "
             "and\n• he tours Spain in May.\n• Rita is getting married in Braga\n• 14 June.\n"
             "• Rui moved to Porto.\n• Rita moved to Braga.\n")
    # The parser joins them wherever a summary is read (a previous summary carried by
    # the local summariser too), and the completed summary is printed from its items.
    assert parse_summary_sections(completed(model, [], budget_tokens=2_000)) == (
        parse_summary_sections(model))
    sections = parse_summary_sections(model)
    assert sections["Progress/Done"] == [
        "1 Dec 2026 · User: Last Fri [27 Nov 2026] I started pottery and hiked the Gerês "
        "trail with Pixel and Joana."]
    assert sections["Critical Context"] == [
        "User: My brother Rui plays the cello in the Porto orchestra. My sister Rita is "
        "getting married in Braga on 14 June. My grandma Lucia taught me to bake pão de ló "
        "when I was ten.", "Ana likes short answers", "She lives in Porto"]
    # Pieces under a bullet of their own, another than the item's (the model wrote "• ").
    assert sections["Key Decisions"] == [
        "User: My brother Rui plays the cello in the Porto orchestra and he tours Spain in "
        "May.", "Rita is getting married in Braga", "14 June.", "Rui moved to Porto.",
        "Rita moved to Braga."]


def test_text_outside_the_headings_is_kept() -> None:
    loose = "Ana's brother plays the cello in Porto."
    text = completed(loose, _chat(), budget_tokens=2_000)
    assert loose in text and "Tokyo" in text


class _Manual:
    def notify(self) -> None:
        pass


_CITIES = ("Coimbra", "Faro", "Braga", "Aveiro", "Evora", "Viseu", "Leiria", "Tomar")
_PETS = ("parrot", "tortoise", "ferret", "rabbit", "hamster", "canary", "gecko")


def _long_chat(turns: int) -> list[Message]:
    """A chat of many different facts: each turn tells of another cousin."""
    out: list[Message] = [{"role": "system", "content": "You help."}]
    for n in range(turns):
        facts = " ".join(
            f"My cousin Rui{n}x{k} moved to {_CITIES[(n + k) % 8]} street {n * 10 + k} "
            f"and adopted a {_PETS[(n * 3 + k) % 7]} called Kiwi{n}x{k}."
            for k in range(6))
        out += [{"role": "user", "content": f"Day {n}: {facts}"},
                {"role": "assistant", "content": f"Noted about the cousins of day {n}. " * 4}]
    return out


def test_the_preparer_completes_its_summaries_and_the_model_goes_on_from_its_own() -> None:
    prompts: list[str] = []

    def capped(prompt: str) -> str:
        prompts.append(prompt)
        return f"## Goal\n- Day {len(prompts)}: my cousins moved.\n"

    engine = ContextCompressor(context_length=16_000)
    preparer = Preparer(capped, protect_first_n=engine.protect_first_n, window=16_000,
                        runner=_Manual(), complete=True)

    def observe(messages: list[Message]) -> None:
        preparer.observe(messages, prompt_tokens=sum(
            estimate_message_tokens_rough(m) for m in messages),
            threshold=engine.threshold_tokens, tail_budget=engine.tail_token_budget,
            max_summary_tokens=engine.max_summary_tokens)

    def run() -> Any:
        job = preparer.begin()
        assert job is not None
        job.run()
        preparer.commit(job)
        return job

    messages = _long_chat(24)
    observe(messages)
    first = run()
    assert "Day 1: my cousins moved." in first.body and "Kiwi" in first.body
    assert first.model_body.strip() == "## Goal\n- Day 1: my cousins moved."
    observe(messages + _long_chat(30)[len(messages):])
    run()
    # The second update is sent the model's own summary, not the local lines added to it.
    assert "Day 1: my cousins moved." in prompts[1] and "Kiwi0" not in prompts[1]


_OWN_LINE = "Day 0: my cousin Rui0x0 moved to Coimbra."


def _engine(context_length: int, prompts: list[str], lines: int = 1) -> ContextCompressor:
    def capped(prompt: str) -> str:
        prompts.append(prompt)
        # Lines grounded in the turns (``completed`` leaves out those that are not).
        said = "".join(f"- My cousin moved to {_CITIES[(i // 6 + i % 6) % 8]} and adopted a "
                       f"{_PETS[(i // 6 * 3 + i % 6) % 7]}.\n" for i in range(1, lines))
        return f"## Goal\n- {_OWN_LINE}\n\n## Critical Context\n{said}"

    engine = ContextCompressor(context_length=context_length)
    engine.enable_background(capped, runner=lambda p: _Manual(), complete=True)
    return engine


def _until_the_threshold(engine: ContextCompressor, pauses: float = 1.0) -> list[Message]:
    """A live session's turns up to the first that reaches the threshold, prepared for
    after each one (the user pausing) until ``pauses`` of the threshold is reached."""
    preparer = engine.preparer
    assert preparer is not None
    turns = _long_chat(200)
    messages = turns[:1]
    for at in range(1, len(turns), 2):
        messages = turns[:at + 2]
        size = sum(map(estimate_message_tokens_rough, messages))
        if size >= engine.threshold_tokens:
            return messages
        if size >= pauses * engine.threshold_tokens:
            continue  # no pause: nothing is prepared for these turns
        engine.prepare(messages)
        while (job := preparer.begin()) is not None:
            job.run()
            preparer.commit(job)
    raise AssertionError("never reached the threshold")


def test_a_completed_summary_is_swapped_in_with_the_models_lines_and_local_facts() -> None:
    prompts: list[str] = []
    engine = _engine(16_000, prompts)
    messages = _until_the_threshold(engine)
    made = len(prompts)
    engine.compress(messages)
    report = engine.last_report
    assert report is not None and report.summary is not None
    assert report.prepared_messages > 0 and len(prompts) == made  # no model call waited
    assert _OWN_LINE in report.summary and "Kiwi" in report.summary


def test_turns_after_the_prepared_summary_are_folded_in_and_the_models_lines_stay() -> None:
    prompts: list[str] = []
    engine = _engine(4_000, prompts, lines=10)
    # The user stopped pausing at 60% of the threshold: the turns since are folded in by
    # the local summariser at the swap, in the room this small window has.
    messages = _until_the_threshold(engine, pauses=0.6)
    prepared = engine.preparer._latest if engine.preparer is not None else None
    assert prepared is not None and prepared.model_body
    out = engine.compress(messages)
    report = engine.last_report
    assert report is not None and report.summary is not None and report.prepared_messages
    for line in _lines(prepared.model_body):
        assert line in _lines(report.summary)
    later = [content_text(messages[i]).split(":")[0][4:] for i in report.removed
             if i >= prepared.end and messages[i]["role"] == "user"]
    assert later and any(f"Kiwi{day}x" in report.summary for day in later)
    assert sum(estimate_message_tokens_rough(m) for m in out) <= engine.threshold_tokens


def test_between_people_a_models_filler_does_not_outlive_the_facts_told_since() -> None:
    # A 0.5B model's summary, as seen by hand: one fact restated, filler around it.
    previous = ("## Goal\n- To summarize the adoption of the Pixel from the shelter.\n"
                "## Key Decisions\n- interest in its popularity.\n"
                "- She also wanted to ensure that both adoption dates are accurate\n"
                "## Remaining Work\n- [ ] has since adopted it at the same time.\n"
                "## Critical Context\n- Ana adopted Pixel from the Oakland shelter.\n")
    text = summarize_locally(_chat(), budget_tokens=170, previous_summary=previous)
    assert estimate_tokens_rough(text) <= 170
    # The facts told since win the room; the model's filler gets what is left, if any.
    for fact in ("cello", "Rita", "Tokyo", "Joana"):
        assert fact in text
    for filler in ("the adoption of the Pixel", "both adoption dates are accurate",
                   "has since adopted it at the same time"):
        assert filler not in text
    assert "Oakland" in text  # what it told is ranked as a note, and kept


def test_a_rule_the_model_only_mentioned_elsewhere_is_kept_as_a_rule() -> None:
    # Seen by hand: the 0.5B model wrote the user's rule into its Goal line.
    model = ("## Goal\n- Ana is vegetarian, so please only suggest vegetarian recipes; "
             "she talks about her family.\n")
    turns = _chat()
    turns[2:2] = [{"role": "user", "content": "I'm vegetarian, so please only suggest "
                                              "vegetarian recipes."},
                  {"role": "assistant", "content": "Noted."}]
    text = completed(model, turns, budget_tokens=2_000)
    rules = parse_summary_sections(text).get("Constraints & Preferences", [])
    assert any("only suggest vegetarian recipes" in line for line in rules), text
    # A fact the model told already is still not repeated.
    assert sum("cello" in line for line in _lines(text)) <= 1


def test_a_model_line_that_says_what_nobody_said_is_left_out() -> None:
    # The 0.5B model's background summary as seen by hand in a 3,072-token window: its
    # invented lines took the room of where the user works and who her husband is.
    turns: list[Message] = [
        {"role": "user", "content": "Hi, I'm Priya. I moved to Bristol from Pune in March."},
        {"role": "assistant", "content": "Welcome to Bristol, Priya!"},
        {"role": "user", "content": "I work as a nurse at Southmead hospital."},
        {"role": "assistant", "content": "Night shifts must be hard."},
        {"role": "user", "content": "I prefer vegetarian recipes. Never suggest meat dishes."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "My husband Arjun is a civil engineer."}]
    model = ("## Goal\n- Priya moved to Bristol from Pune in March.\n"
             "## Progress\n### Done\n- Replace \"Pune\" with \"Bristol\".\n"
             "## Relevant Files\n- File paths: /path/to/user/file.txt.\n"
             "## Critical Context\n- ### Goal\n- The user likes meat dishes.\n")
    # The assistant goes on at length (room for the local lines beside the model's).
    for turn in turns[1::2]:
        turn["content"] = f"{turn['content']} {'Here are a few thoughts on that. ' * 30}"
    text = completed(model, turns, budget_tokens=2_000)
    assert "Priya moved to Bristol from Pune in March." in text  # said: it stays
    for invented in ("Replace", "/path/to", "### Goal", "likes meat"):
        assert invented not in text, text
    for fact in ("Southmead", "Arjun", "Never suggest meat dishes"):
        assert fact in text


def test_the_users_rules_of_the_previous_summary_outlive_a_model_merge() -> None:
    # Seen by hand (3,072-token window, the English script): the rule was held by four
    # summaries in a row, then the model's merge wrote "File paths: Leeds, Headingley."
    # and left it out, with no room for the local lines to bring it back.
    previous = ("## Constraints & Preferences\n- User: I'm allergic to peanuts, keep that "
                "in mind when you suggest recipes.\n## Critical Context\n- User: I live "
                "in Headingley with my partner Sam, who is vegan.\n")
    turns: list[Message] = [
        {"role": "user", "content": "I'm Tomas. I work as a pharmacist in Leeds."},
        {"role": "assistant", "content": "Nice to meet you, Tomas."}]
    model = ("## Relevant Files\n- File paths: Leeds, Headingley.\n"
             "## Critical Context\n- Tomas works as a pharmacist in Leeds.\n")
    text = completed(model, turns, budget_tokens=2_000, previous_summary=previous)
    sections = parse_summary_sections(text)
    assert sections["Constraints & Preferences"][0].endswith(
        "I'm allergic to peanuts, keep that in mind when you suggest recipes.")
    assert "Relevant Files" not in sections  # the model's line names no file
    assert "Tomas works as a pharmacist in Leeds." in text
    # A rule the merge kept is not written twice.
    again = completed(text, turns, budget_tokens=2_000, previous_summary=previous)
    assert sum("peanuts" in line for line in _lines(again)) == 1


def test_a_rule_the_model_garbled_is_put_back_word_for_word() -> None:
    # Seen by hand: the merge kept most of the rule's words and lost the rest to a code
    # fence; a paraphrase gives way to the user's words as well, and a line that only
    # holds the rule with more after it stays as the model wrote it.
    rule = "I'm allergic to peanuts, keep that in mind when you suggest recipes."
    previous = f"## Constraints & Preferences\n- User: {rule}\n"
    turns: list[Message] = [
        {"role": "user", "content": "I'm Tomas. I work as a pharmacist in Leeds."},
        {"role": "assistant", "content": "Nice to meet you, Tomas."}]
    for model_rule in ("User: I'm allergic to peanuts, keep that in mind when you say "
                       "```json {", "The user is allergic to peanuts; keep in mind."):
        model = (f"## Constraints & Preferences\n- {model_rule}\n"
                 "## Critical Context\n- Tomas works as a pharmacist in Leeds.\n")
        text = completed(model, turns, budget_tokens=2_000, previous_summary=previous)
        rules = parse_summary_sections(text)["Constraints & Preferences"]
        assert rules[0] == f"User: {rule}", text
        assert sum("peanuts" in line for line in _lines(text)) == 1, text
    model = (f"## Constraints & Preferences\n- User: {rule.lower()} Sam is vegan.\n"
             "## Critical Context\n- Tomas works as a pharmacist in Leeds.\n")
    text = completed(model, turns, budget_tokens=2_000, previous_summary=previous)
    assert sum("peanuts" in line for line in _lines(text)) == 1, text
    assert "Sam is vegan." in text


def test_a_model_line_that_retells_the_memory_tools_answer_is_left_out() -> None:
    # Seen by hand: the merge wrote the memory tool's answers out as the conversation.
    turns: list[Message] = [
        {"role": "user", "content": "I'm Tomas. I work as a pharmacist in Leeds."},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "m1", "type": "function", "function": {
                "name": "memory", "arguments": '{"action": "add", "content": "Name: Tomas."}'}}]},
        {"role": "tool", "tool_call_id": "m1", "content":
         '{"success": true, "note": "Already saved as \'Name: Tomas.\'; nothing added."}'},
        {"role": "assistant", "content": "Nice to meet you, Tomas."},
        {"role": "user", "content": "Tomas has already saved 500 pounds for the trip."}]
    model = ("## Constraints & Preferences\n- The user has already saved the user's name as "
             "'Name: Tomas.'.\n"
             "## Progress\n### Done\n- The user has already saved the user as 'Name: Tomas.'.\n"
             "- Tomas has already saved 500 pounds for the trip.\n"
             "## Critical Context\n- The error message \"Already saved as 'Name: Tomas.'; "
             "nothing\n- Tomas works as a pharmacist in Leeds.\n")
    text = completed(model, turns, budget_tokens=2_000)
    assert "saved as" not in text.lower() and "nothing added" not in text
    assert "saved the user as" not in text and "saved the user's name" not in text
    assert "Tomas works as a pharmacist in Leeds." in text
    assert "500 pounds" in text  # a saving of the user's own is no tool's answer
    # Nor is a line made of a heading's words (by hand: "[ ] relevant", grounded in the
    # previous summary's heading).
    model += "## Remaining Work\n- [ ] relevant\n- [ ] tell Tomas about pharmacist work in Leeds\n"
    text = completed(model, turns, budget_tokens=2_000,
                     previous_summary="## Relevant Files\n- (none)\n")
    assert "[ ] relevant" not in text and "tell Tomas about pharmacist work" in text


def test_the_model_lines_are_grounded_in_the_turns_as_the_model_was_shown_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A long tool output is indexed as far as the summariser's transcript shows it
    (``truncate_for_summary``): the model never saw the rest, and at the swap the
    indexing is on the compaction's path."""
    import mnemo.context.completed_summary as module

    indexed: list[str] = []
    real = module.Evidence

    def recorded(texts: Any) -> Any:
        texts = list(texts)
        indexed.extend(texts)
        return real(texts)

    monkeypatch.setattr(module, "Evidence", recorded)
    log = "\n".join(f"line {i}: the worker {i} retried the job" for i in range(5_000))
    turns: list[Message] = [
        {"role": "user", "content": "Why do the jobs of worker 12 fail?"},
        {"role": "assistant", "content": "", "tool_calls": [{
            "id": "c1", "type": "function",
            "function": {"name": "terminal", "arguments": '{"command": "cat jobs.log"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": log},
        {"role": "assistant", "content": "Worker 12 retried the job three times."}]
    model = ("## Goal\n- Find why the jobs of worker 12 fail.\n"
             "## Critical Context\n- Worker 2500 retried the job.\n")
    text = completed(model, turns, budget_tokens=2_000)
    assert max(len(t) for t in indexed) <= CONTENT_MAX + len(": ")
    assert "jobs of worker 12 fail" in text
    assert "Worker 2500" not in text  # past what the model was shown: not grounded


def test_a_models_stray_headings_are_no_items() -> None:
    # The 0.5B model's merged summary, by hand in a 3,072-token window: a heading mark
    # before items, a placeholder, and a template heading repeated inside a section.
    model = ("## Key Decisions\n- ### The user asked to search the sessions for Sintra.\n"
             "## Resolved Questions\n- ### (none)\n"
             "## Critical Context\n- ### Goal\n- #123 is the ticket of the wedding photos.\n")
    assert parse_summary_sections(model) == {
        "Key Decisions": ["The user asked to search the sessions for Sintra."],
        "Critical Context": ["#123 is the ticket of the wedding photos."]}


def test_the_assistants_own_searches_point_to_no_file_list() -> None:
    turns: list[Message] = [{"role": "user", "content": "Where did I go in May?"}]
    for k in range(3):
        turns += [{"role": "assistant", "content": "", "tool_calls": [{
            "id": f"s{k}", "type": "function", "function": {
                "name": "session_search", "arguments": '{"query": "May trip"}'}}]},
            {"role": "tool", "tool_call_id": f"s{k}", "content": '{"success": true}'}]
    turns.append({"role": "assistant", "content": "I found nothing about May."})
    done = parse_summary_sections(summarize_locally(
        turns, budget_tokens=2_000))["Progress/Done"]
    assert "session_search: 3 calls" in done
    # … carried into the next summary of the work, the count adds up; going on a chat,
    # the count is under Tools & Patterns alone.
    work = ("## Progress\n### Done\n- session_search: 2 calls\n## Relevant Files\n"
            "- src/auth.py (read)\n## Tools & Patterns\n- session_search ×2\n")
    assert "session_search: 5 calls" in summarize_locally(
        turns, budget_tokens=2_000, previous_summary=work)
    chat = parse_summary_sections(summarize_locally(
        turns, budget_tokens=2_000, previous_summary=work.replace(
            "## Relevant Files\n- src/auth.py (read)\n", "")))
    assert not any("session_search" in line for line in chat.get("Progress/Done", []))
    assert "session_search ×5" in chat["Tools & Patterns"]


def test_a_model_line_that_tells_is_no_pending_ask() -> None:
    # By hand the 0.5B model listed the user's weekly distance as an ask still open.
    turns: list[Message] = [
        {"role": "user", "content": "I run about 35 km a week, on Tuesdays and Sundays."},
        {"role": "assistant", "content": "Good base."},
        {"role": "user", "content": "What time of day should I do my long runs?"},
        {"role": "user", "content": "I'd like a plan for the taper, please."}]
    model = ("## Pending User Asks\n- I run about 35 km a week, on Tuesdays and Sundays.\n"
             "- What time of day should I do my long runs?\n"
             "- I'd like a plan for the taper.\n")
    s = parse_summary_sections(completed(model, turns, budget_tokens=2_000))
    assert s["Pending User Asks"][:2] == ["What time of day should I do my long runs?",
                                          "I'd like a plan for the taper."]
    assert "I run about 35 km a week, on Tuesdays and Sundays." in s["Critical Context"]


def test_a_model_summary_in_chinese_keeps_its_lines() -> None:
    # Seen by hand: a line in Chinese had no content words, so every line of the
    # model's summary was left out as telling nothing, and the chat's facts with them.
    said = ["我叫李明，我在杭州做软件工程师。", "很高兴认识你。",
            "我对花生过敏，推荐菜谱的时候请记住。", "好的，我会记住。",
            "我们搬到上海了，住在浦东。", "上海很好。"]
    # The replies go on at length, as a model's do (see ``_chat``).
    advice = "有什么问题随时问我，我很乐意帮忙，也可以聊聊你的计划、工作和生活。" * 4
    turns: list[Message] = [{"role": "user", "content": text} if i % 2 == 0 else
                            {"role": "assistant", "content": text + advice}
                            for i, text in enumerate(said)]
    model = "## Goal\n- 李明在杭州做软件工程师。\n\n## Critical Context\n- 李明对花生过敏。\n"
    text = completed(model, turns, budget_tokens=2_000)
    assert "李明对花生过敏。" in text and "杭州做软件工程师" in text
    assert "浦东" in text  # a fact the model left out, from the local summary


# The summaries of a by-hand session (3,072-token window, 3 December 2026): the rule
# held by ten summaries, then a model merge without it, over a budget with no room to
# put it back beside every line.
_RULE = "User: Please remember: I'm allergic to peanuts, never suggest recipes with peanuts."
_HELD = (f"## Constraints & Preferences\n- {_RULE}\n## Progress\n### Done\n- 3 Dec 2026 · "
         "User: We changed the trip: it's Porto now, not Lisbon.\n## Pending User Asks\n- How "
         "do I say thank you in Portuguese?\n## Critical Context\n- User: We have a dog called "
         "Biscuit, he's a beagle. My night shifts are on Tuesdays and Thursdays.\n")
_MERGED = ("## Progress\n### Done\n- User: We changed the trip: it's Porto now, not Lisbon.\n"
           "## Critical Context\n- User: How do I say thank you in Portuguese? We have a dog "
           "called Biscuit, he's a beagle. My night shifts are on Tuesdays and Thursdays.\n"
           "## Tools & Patterns\n- memory ×9\n")


def test_a_rule_of_the_previous_summary_takes_the_room_of_other_lines() -> None:
    merged = render_sections(parse_summary_sections(_MERGED))
    assert estimate_tokens_rough(with_rules_kept(merged, _HELD, 2_000)) > 140
    text = with_rules_kept(merged, _HELD, 140)
    assert estimate_tokens_rough(text) <= 140
    assert parse_summary_sections(text)["Constraints & Preferences"] == [_RULE]
    assert "Porto now" in text  # the best of the rest, as far as the room goes
    # With no room even for the rule alone, the merge stays as it was (but for its
    # "(none)" lines: a budget so small prints none).
    assert with_rules_kept(merged, _HELD, 60) == merged.replace("- (none)\n", "")


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> Message:
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": call_id, "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def test_a_tool_is_counted_once_however_a_model_summary_spelt_it() -> None:
    # By hand (3,072 tokens): "Memory ×7" from a model summary beside "memory ×9".
    assert parse_summary_sections(summarize_locally(
        [], budget_tokens=2_000, previous_summary="## Critical Context\n- User: I live in "
        "York.\n## Tools & Patterns\n- Memory ×7\n- memory ×8\n- [memory ×2]\n"))[
        "Tools & Patterns"] == ["memory ×17"]
    turns: list[Message] = [{"role": "user", "content": (
        "Please refactor src/app/orders.py so the handler returns 404 for unknown ids; "
        "never change the public API.")}]
    for i in range(6):
        turns += [_tool_call(f"c{i}", "read_file", {"path": "src/app/orders.py"}),
                  {"role": "tool", "tool_call_id": f"c{i}",
                   "content": "def handler(order_id):\n    return lookup(order_id)\n" * 20}]
    turns.append({"role": "assistant", "content": "Done: the handler returns 404 now."})
    model = "## Goal\n- Refactor src/app/orders.py.\n## Tools & Patterns\n- Read_file ×40\n"
    text = completed(model, turns, budget_tokens=2_000,
                     previous_summary="## Tools & Patterns\n- Read_file ×40\n")
    assert parse_summary_sections(text)["Tools & Patterns"] == ["read_file ×46"]


def test_a_model_line_grounded_only_in_a_memory_refusal_is_left_out() -> None:
    # By hand (3,072 tokens) the model's summary held two lines made of what the memory
    # tool told it, and the next summaries kept them as the user's preferences.
    def call(number: int, content: str) -> Message:
        arguments = json.dumps({"action": "add", "target": "user", "content": content})
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{number}", "type": "function",
             "function": {"name": "memory", "arguments": arguments}}]}

    refusal = json.dumps({"success": False, "error": (
        "Not saved: the entry says things nobody in this conversation said ('Samanne', "
        "'tabs'). Memory keeps only facts the user or a tool stated. Restate the fact in "
        "the user's own words, leaving out anything they did not say, and call memory "
        "again, for example with content \"Hi, I'm Sanne.\".")})
    turns: list[Message] = [
        {"role": "user", "content": "Hi, I'm Sanne."},
        call(1, "Name: Samanne. Prefers tabs."),
        {"role": "tool", "tool_call_id": "call_1", "content": refusal},
        {"role": "assistant", "content": "Hello! How can I assist you today?"},
        {"role": "user", "content": "We're renovating the kitchen in our house in Haarlem."},
        {"role": "assistant", "content": "Let's talk about the kitchen. " * 20},
        {"role": "user", "content": "The budget is 12,000 euros for everything."},
        {"role": "assistant", "content": "Noted. " * 20}]
    model = ("## Goal\n- Sanne is renovating the kitchen in her house in Haarlem.\n"
             "## Constraints & Preferences\n"
             "- The user wants to replace their name with tabs in a conversation.\n"
             "- They are using a tool called memory to keep track of facts and do not save "
             "anything they did not say.\n")
    text = completed(model, turns, budget_tokens=2_000)
    assert "Sanne is renovating the kitchen in her house in Haarlem." in text
    assert "tabs" not in text and "tool called memory" not in text, text
    assert "12,000 euros" in text
    # What another tool returned is what was said.
    found = json.dumps({"results": [{"text": "The tiles come from Tegelhuis in Delft."}]})
    searched = [*turns[:-2], {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_2", "type": "function", "function": {
            "name": "session_search", "arguments": json.dumps({"query": "tiles"})}}]},
        {"role": "tool", "tool_call_id": "call_2", "content": found}, *turns[-2:]]
    told = completed(model + "- The tiles come from Tegelhuis in Delft.\n", searched,
                     budget_tokens=2_000)
    assert "Tegelhuis in Delft" in told
