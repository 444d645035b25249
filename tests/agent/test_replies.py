"""What the agent takes for no answer (``mnemo.agent.replies``): a reply that only
repeats the user's question, or one question of the message."""

from __future__ import annotations

import pytest

from mnemo.agent.replies import copied_reply, questions_of, repeats_question, restates_earlier

ALLERGY = ("Please remember: I'm allergic to peanuts, so never suggest recipes with "
           "peanuts. What should I cook tonight?")


def test_the_questions_of_a_message_are_the_message_and_each_question_in_it() -> None:
    assert questions_of(ALLERGY) == [ALLERGY, "What should I cook tonight?"]
    # A decimal point ends no sentence.
    assert questions_of("Is it ok?\nWhat about the 3.5 version of it?") == [
        "Is it ok?\nWhat about the 3.5 version of it?", "Is it ok?",
        "What about the 3.5 version of it?"]
    # A question too short to tell ("Really?" answered "Really?" may be fine) is none.
    assert questions_of("My name is Ana. Really?") == ["My name is Ana. Really?"]
    assert questions_of("I live in Leeds now.") == []


@pytest.mark.parametrize(("reply", "repeat"), [
    ("What should I cook tonight?", True),
    ("What should I cook tonight", True),
    (ALLERGY, True),
    ("What should I cook tonight? A lentil curry with rice, no peanuts.", False),
    ("Tonight, cook a lentil curry.", False),
    ("", False),
])
def test_a_reply_repeats_the_message_or_one_of_its_questions(reply: str,
                                                              repeat: bool) -> None:
    assert repeats_question(reply, ALLERGY) is repeat


EARLIER = ["Hi! I'm Tomas, I work as a nurse in Leeds.",
           "We have a dog called Biscuit, he's a beagle.",
           "You should not add peanuts. Remember: I'm allergic to peanuts, never suggest "
           "recipes with peanuts.",
           "I'm learning Portuguese because we're going to Lisbon in May.",
           "Actually we're going to Maastricht rather than the Ardennes, it's easier with "
           "the wheelchair.", "We planned a day trip to the Ardennes on Saturday."]
CHANGED = "Actually we changed the trip: it's Porto now, not Lisbon."


@pytest.mark.parametrize(("reply", "asked", "restated"), [
    # Seen by hand (3,072 tokens): earlier messages given as the answer to another one.
    ("You should not add peanuts. Remember: I'm allergic to peanuts, never suggest "
     "recipes with peanuts.", "How do I say thank you in Portuguese?", True),
    ("Hi! I'm Tomas, I work as a nurse in Leeds.", "Which days are my night shifts?", True),
    ("Hi! I'm Tomas, and I work as a nurse in Leeds.", "Which days are my night shifts?",
     True),  # nearly word for word
    # About the message: a restatement may be the answer.
    ("We have a dog called Biscuit, he's a beagle.", "What's my dog's name?", False),
    # A sentence of its own, or too short to tell.
    ("Hi! I'm Tomas, I work as a nurse in Leeds. Obrigado is thank you.",
     "How do I say thank you in Portuguese?", False),
    ("Obrigado.", "How do I say thank you in Portuguese?", False),
    ("You should not add peanuts.", "How do I say thank you in Portuguese?", False),
    # What the message takes back is not what it is about: by hand, the stale plan was
    # given back as the answer to its correction.
    ("I'm learning Portuguese because we're going to Lisbon in May.", CHANGED, True),
    ("I'm learning Portuguese because we're going to Lisbon in May.",
     "Are we still going to Lisbon in May?", False),
    # It gives what the message asks for, a place for "where": by hand the user's own
    # correction was the right answer, and was asked again.
    ("Actually we're going to Maastricht rather than the Ardennes, it's easier with the "
     "wheelchair.", "Where are we going on Saturday?", False),
    ("You should not add peanuts. Remember: I'm allergic to peanuts, never suggest "
     "recipes with peanuts.", "Where are we going on Saturday?", True),
    # … about what the message asks: any day is no answer to "when do they land?" (by
    # hand, the day trip's Saturday was).
    ("We planned a day trip to the Ardennes on Saturday.", "When do my parents land?", True),
])
def test_a_reply_only_of_earlier_sentences_about_something_else_restates(
        reply: str, asked: str, restated: bool) -> None:
    assert restates_earlier(reply, asked, EARLIER) is restated
    assert not restates_earlier(reply, asked, [])
    # A message with no content word gives nothing to judge the reply against.
    assert not restates_earlier(reply, "Why?", EARLIER)
    assert not restates_earlier(reply, "", EARLIER)


def test_an_earlier_answer_that_gives_what_is_asked_is_no_copy() -> None:
    # By hand (3,072 tokens) the right answer to "Where are we going on Saturday?" had
    # been the model's reply to another message, and was asked again.
    answer = "We're going to Maastricht rather than the Ardennes, it's easier with the wheelchair."
    earlier = [("I'm glad everything worked out with the hotel for my brother Luca.", answer)]
    assert copied_reply(answer, "Where are we going on Saturday?", earlier) is None
    assert copied_reply(answer, "Can you suggest a restaurant for Sunday?", earlier) == answer
    # The place in one sentence, the word asked about in another (by hand too).
    answer = ("The meeting moved to next Friday at 19:30, not Thursday. Sophie will host it "
              "at her place on Biltstraat 45 instead of my flat.")
    earlier = [("When is the meeting now?", answer)]
    assert copied_reply(answer, "Where is the meeting?", earlier) is None
