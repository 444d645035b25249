"""Grounding rules for the model's memory writes (SPEC M9): pure functions, no model."""

from __future__ import annotations

import pytest

from mnemo.context.summary.salience import named_after_not
from mnemo.memory.grounding import (
    Evidence,
    asked_only,
    check_grounding,
    corrected_entry,
    grounded_part,
    refusal_message,
    route_target,
    suggested_entry,
)

ANA = ["Hi! I'm Ana and I like short answers. What can you do?"]
CARLA = ["I'm Carla, I work on the billing service and I hate long explanations"]
ENV = ["The API runs on port 8080 and we deploy with `make ship` on Python 3.11"]


@pytest.mark.parametrize("entry", [
    "User prefers short answers",
    "The user's name is Ana",
    "Ana likes brief responses",
    "Name: Ana. Prefers concise replies.",
    "User likes short answers",
])
def test_grounded_phrasings_of_what_ana_said_pass(entry: str) -> None:
    assert check_grounding(entry, ANA).grounded


@pytest.mark.parametrize("entry", [
    "Carla works on the billing service",
    "User is Carla; working on billing service",
    "Dislikes long explanations",
    "Carla hates lengthy explanations",
])
def test_grounded_phrasings_of_what_carla_said_pass(entry: str) -> None:
    assert check_grounding(entry, CARLA).grounded


def test_fabricated_facts_are_refused() -> None:
    verdict = check_grounding("I love eating cookies and playing with my pets.", ANA)
    assert not verdict.grounded
    assert {"cookies", "pets"} <= set(verdict.unsupported)


def test_embellishment_is_refused_in_strict_mode() -> None:
    verdict = check_grounding(
        "User is Carla, working on the billing service for over a year", CARLA)
    assert not verdict.grounded and verdict.unsupported == ("year",)


def test_a_wrong_name_or_number_is_refused_even_when_lenient() -> None:
    assert not check_grounding("User's name is Anna", ANA, "lenient").grounded
    assert not check_grounding("API runs on port 8081", ENV, "lenient").grounded
    assert not check_grounding("Deploys with Python 3.12", ENV, "lenient").grounded
    assert check_grounding("API runs on port 8080, Python 3.11", ENV, "lenient").grounded


def test_lenient_accepts_a_paraphrase_with_one_extra_word() -> None:
    entry = "Carla works on the billing service and hates long explanations today"
    assert not check_grounding(entry, CARLA, "strict").grounded
    assert check_grounding(entry, CARLA, "lenient").grounded


def test_off_accepts_anything() -> None:
    assert check_grounding("Completely invented", ANA, "off").grounded


def test_names_match_whole_words_not_stems() -> None:
    evidence = ["my colleague Dan reviews the code"]
    assert check_grounding("Colleague Dan reviews code", evidence).grounded
    assert not check_grounding("Colleague Danny reviews code", evidence).grounded


def test_a_capital_after_a_comma_is_a_clause_start_not_a_name() -> None:
    evidence = ["I'm Priya; I maintain the payments API."]
    assert check_grounding("Name: Priya, Maintains the payments API.", evidence).grounded
    assert not check_grounding("Name: Priya, Maintains the payments API, Pria.",
                               evidence).grounded  # a name still matches only whole


def test_numbers_and_number_words() -> None:
    assert check_grounding("User has three cats", ["I have 3 cats"]).grounded
    assert check_grounding("User has 3 cats", ["I have three cats"]).grounded
    assert check_grounding("Budget is 8080 euros", ["the budget: 8,080 euros"]).grounded
    assert not check_grounding("User has 4 cats", ["I have 3 cats"]).grounded


def test_cjk_is_checked_by_characters() -> None:
    evidence = ["我喜欢简短的回答,我住在上海"]
    assert check_grounding("用户喜欢简短的回答", evidence).grounded
    assert check_grounding("用户住在上海", evidence).grounded
    verdict = check_grounding("用户住在北京", evidence)
    assert not verdict.grounded and set(verdict.unsupported) == {"北", "京"}


def test_evidence_is_reusable_and_order_free() -> None:
    evidence = Evidence([*CARLA, *ANA])
    assert check_grounding("Ana likes short answers", evidence).grounded
    assert check_grounding("Carla works on billing", evidence).grounded


def test_refusal_tells_the_model_what_to_do() -> None:
    verdict = check_grounding("User loves cookies, pets, cats, dogs, hikes, boats and cars",
                              ANA)
    message = refusal_message(verdict)
    assert message.startswith("Not saved:") and "user's own words" in message
    assert "'cookies'" in message and "more" in message  # long lists are cut


@pytest.mark.parametrize(("content", "target", "routed"), [
    ("User prefers tabs over spaces", "memory", "user"),
    ("User's name is Carla", "memory", "user"),
    ("The repo uses pnpm; run `pnpm dev` to start", "user", "memory"),
    ("Deploys go through make ship on port 8080", "user", "memory"),
    # A preference of the user's about the environment is about the user.
    ("User prefers that the repo uses pnpm", "memory", "user"),
    ("The user prefers pnpm in this repo", "user", "user"),
    ("Tabs in the build files, says the user", "memory", "memory"),  # mixed: left alone
    ("User prefers short answers", "user", "user"),
    ("Lessons: retry flaky tests once", "memory", "memory"),
])
def test_route_target(content: str, target: str, routed: str) -> None:
    assert route_target(content, target) == routed


# --- stances: every word said, the claim reversed ---------------------------------------

@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_a_flipped_preference_is_refused_in_every_checking_mode(mode: str) -> None:
    verdict = check_grounding(
        "Carla has a preference for long explanations, and I hate long explanations.",
        CARLA, mode)  # type: ignore[arg-type]
    assert not verdict.grounded
    assert verdict.unsupported == ()
    assert verdict.contradicted == ("preference for long explanations",)
    message = refusal_message(verdict)
    assert "opposite" in message
    # The refusal offers an entry in the user's own words, and that entry is accepted.
    suggested = message.split('content "')[1].rstrip('".')
    assert check_grounding(suggested, CARLA, mode).grounded  # type: ignore[arg-type]


@pytest.mark.parametrize("entry", [
    "Carla likes long explanations",
    "User prefers lengthy explanations",
    "Carla doesn't hate long explanations",
])
def test_reversals_of_a_dislike_are_refused(entry: str) -> None:
    verdict = check_grounding(entry, CARLA)
    assert not verdict.grounded and verdict.contradicted


@pytest.mark.parametrize("entry", [
    "Carla dislikes long explanations",
    "Carla does not like long explanations",
    "User doesn't want long explanations",
])
def test_the_same_dislike_in_other_words_passes(entry: str) -> None:
    assert check_grounding(entry, CARLA).grounded


def test_a_comparison_carries_both_stances() -> None:
    said = ["I prefer tabs over spaces, always."]
    assert check_grounding("User prefers tabs over spaces", said).grounded
    assert check_grounding("User avoids spaces", ["I prefer tabs, I avoid spaces"]).grounded
    assert check_grounding("Tabs preferred over spaces", said).grounded  # object first
    flipped = check_grounding("User prefers spaces over tabs", said)
    assert not flipped.grounded and flipped.contradicted


def test_a_stance_on_another_object_is_not_a_contradiction() -> None:
    said = ["No, I don't want long answers. I like short answers."]
    assert check_grounding("User likes short answers", said).grounded
    assert check_grounding("User doesn't want long answers", said).grounded
    # "No," opens the sentence; it does not negate the liking after the comma.
    assert check_grounding("No long answers; likes short answers", said).grounded


def test_an_allergy_is_a_stance_against_its_object() -> None:
    # Seen by hand: the embedded model saved "Oskar loves eggs." from these words and
    # "Alina loves dinosaurs".
    said = ["One of the kids, Oskar, is allergic to eggs, so we need an egg-free snack.",
            "Alina loves dinosaurs."]
    for flipped in ("Oskar loves eggs.", "Oskar is not allergic to eggs."):
        verdict = check_grounding(flipped, said)
        assert not verdict.grounded and verdict.said_instead == ("allergic to eggs",), flipped
    assert check_grounding("Oskar is allergic to eggs.", said).grounded
    assert check_grounding("Oskar needs an egg-free snack.", said).grounded


def test_a_rule_that_says_never_or_always_takes_a_stance() -> None:
    # Seen by hand: the embedded model saved "I prefer meat dishes" from these words.
    said = ["I prefer vegetarian recipes, by the way. Never suggest meat dishes."]
    for flipped in ("I prefer meat dishes.", "Likes meat dishes"):
        verdict = check_grounding(flipped, said)
        assert not verdict.grounded and verdict.contradicted, flipped
    for entry in ("Never suggest meat dishes.", "Prefers vegetarian recipes.",
                  "Does not want meat dishes"):
        assert check_grounding(entry, said).grounded, entry
    rules = ["Please always use tabs. Do not use emojis in answers."]
    assert check_grounding("Always use tabs.", rules).grounded
    assert not check_grounding("Likes emojis in answers", rules).grounded
    # Without always or never a request takes no stance: "suggest a dinner" is no liking.
    assert check_grounding("Likes a quick dinner", ["Can you suggest a quick dinner? I "
                                                    "like a quick dinner."]).grounded


def test_mixed_feelings_said_both_ways_are_not_refused() -> None:
    said = ["I love Python. Some days I hate Python, honestly."]
    assert check_grounding("User loves Python", said).grounded
    assert check_grounding("User hates Python", said).grounded


def test_grounded_part_keeps_the_said_sentences_only() -> None:
    evidence = Evidence(["Please remember that I prefer tabs over spaces in every file."])
    echoed = "I prefer tabs over spaces in every file. \n\n2% — 40/1,375 chars"
    assert grounded_part(echoed, evidence) == "I prefer tabs over spaces in every file."
    assert grounded_part("I love cookies. 2% — 40/1,375 chars", evidence) == ""


def test_a_refusal_offers_the_users_own_sentence_that_says_most() -> None:
    evidence = Evidence(["Call me Priya. I'm a data engineer."])
    entry = "Priya is a senior data engineer at Google"
    verdict = check_grounding(entry, evidence)
    suggestion = suggested_entry(entry, evidence)
    assert not verdict.grounded and suggestion == "I'm a data engineer."
    assert check_grounding(suggestion, evidence).grounded
    assert "content \"I'm a data engineer.\"" in refusal_message(verdict, suggestion)
    # Nothing in common with what was said: nothing to offer.
    assert suggested_entry("I love cookies", evidence) is None


def test_label_words_frame_a_fact_without_claiming_anything() -> None:
    said = ["Call me Priya. I'm a data engineer."]
    assert check_grounding("Name: Priya, Occupation: Data Engineer.", said).grounded
    assert not check_grounding("Occupation: Data Scientist", said).grounded


def test_evidence_stems_each_word_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Indexing a long tool output costs one stem per different word, not per word: the
    completed summary indexes a compaction's whole middle on the compaction's path."""
    import mnemo.memory.grounding as grounding

    stemmed: list[str] = []
    real = grounding._stem

    def counted(word: str) -> str:
        stemmed.append(word)
        return real(word)

    monkeypatch.setattr(grounding, "_stem", counted)
    evidence = Evidence(["the worker retries the failed jobs " * 2_000,
                         "The worker retries three times."])
    assert sorted(stemmed) == sorted({"the", "worker", "retries", "failed", "jobs",
                                      "three", "times"})
    assert check_grounding("The worker retries 3 times", evidence).grounded


PRIYA = ["Hello, I'm Priya and I teach maths at a school in Bristol.",
         "My brother Ravi lives in Manchester.",
         "Actually Ravi moved: he lives in Glasgow now, not Manchester."]


@pytest.mark.parametrize("entry", [
    "I now teach maths at a school in Glasgow now.",  # by hand, from the embedded model
    "Ravi teaches maths",  # a name at the start of the sentence is still a name
    "Priya's brother lives in Bristol",
])
def test_a_name_joined_to_facts_it_was_never_said_with_is_refused(entry: str) -> None:
    verdict = check_grounding(entry, PRIYA)
    assert not verdict.grounded and not verdict.unsupported and verdict.unlinked
    message = refusal_message(verdict, "My brother Ravi lives in Manchester.")
    assert message.startswith("Not saved: the user said ") and "not together" in message
    assert "for example with content 'My brother Ravi lives in Manchester.'" in message
    # Lenient mode (hosted models) does not ask for the link.
    assert check_grounding(entry, PRIYA, "lenient").grounded


@pytest.mark.parametrize("entry", [
    "My brother Ravi now lives in Glasgow.",
    "Priya teaches maths in Bristol.",
    "Name: Priya. Teaches maths at a school in Bristol.",
    "Ravi moved to Glasgow",
])
def test_a_name_said_with_what_the_entry_says_of_it_passes(entry: str) -> None:
    assert check_grounding(entry, PRIYA).grounded


def test_a_name_its_bearer_introduced_goes_with_any_of_their_facts() -> None:
    said = ["I'm Tomas.", "I live in Leeds and work as a nurse."]
    assert check_grounding("Tomas is a nurse in Leeds", said).grounded
    assert not check_grounding("Leeds is where Tomas trained as a nurse", said).grounded


def test_only_the_unlinked_sentence_of_an_add_is_left_out() -> None:
    evidence = Evidence(PRIYA)
    entry = "I am Priya. I now teach maths at a school in Glasgow now."
    assert grounded_part(entry, evidence) == "I am Priya."


SAVED = ["I run 5 km every Saturday morning in Ashton Court.",
         "My brother Ravi lives in Manchester.", "I grew up in Manchester."]


@pytest.mark.parametrize(("content", "corrected"), [
    ("My brother Ravi now lives in Glasgow now.", "My brother Ravi lives in Manchester."),
    ("Ravi lives in Glasgow now, not Manchester.", "My brother Ravi lives in Manchester."),
    ("Ravi lives in Manchester.", None),  # says the taken-back value again
    ("My sister lives in Glasgow.", None),  # shares "lives" only: another thing
    ("I teach maths in Glasgow.", None),
])
def test_a_correction_finds_the_entry_it_corrects(content: str, corrected: str | None) -> None:
    assert corrected_entry(content, ["manchester"], SAVED, named_after_not(content)) == corrected


def test_nothing_taken_back_corrects_nothing() -> None:
    assert corrected_entry("My brother Ravi lives in Glasgow.", [], SAVED) is None


ASKED = ["Please remember: I'm allergic to peanuts, so never suggest recipes with peanuts. "
         "What should I cook tonight?", "How do I say thank you in Portuguese?",
         "Did I tell you I'm vegan?", "Can you always answer in French?"]


@pytest.mark.parametrize(("entry", "question"), [
    ("Cook tonight.", "What should I cook tonight?"),  # by hand, from the embedded model
    ("Say thank you in Portuguese.", "How do I say thank you in Portuguese?"),
    ("User is allergic to peanuts.", None),
    ("Allergic to peanuts; cook tonight.", None),  # more than the question asks
    ("I'm vegan.", None),  # a question that states a fact about its asker
    ("Always answer in French.", None),  # a rule asked as a question
])
def test_an_entry_that_only_retells_a_question_is_found(entry: str,
                                                         question: str | None) -> None:
    assert asked_only(entry, Evidence(ASKED)) == question


def test_a_refusal_never_offers_a_question_as_the_entry() -> None:
    """By hand the embedded model was offered "What should I cook tonight?" and copied
    it, three times."""
    offered = suggested_entry("Cook tonight. Always make sure not to add peanuts.",
                              Evidence(ASKED))
    assert offered == "Please remember: I'm allergic to peanuts, so never suggest recipes " \
                      "with peanuts."
    assert suggested_entry("Cook tonight.", Evidence(ASKED[:1])) is None


DMITRI = ["Hi! My name is Dmitri and I'm a carpenter in Tallinn.",
          "My daughter Alina turns seven next Saturday, so we're planning a party.",
          "Alina loves dinosaurs, so the cake will be shaped like a stegosaurus.",
          "My wife Kersti is baking the cake herself, she's a pastry chef."]


@pytest.mark.parametrize("entry", [
    # By hand, from the embedded model: the cake of the second clause had linked Kersti
    # to the whole sentence.
    "Kersti loves dinosaurs, the cake will be shaped like a stegosaurus.",
    "Kersti loves dinosaurs and the cake will be shaped like a stegosaurus.",
    "Kersti and Dmitri love dinosaurs.",
])
def test_a_name_is_linked_within_its_clause(entry: str) -> None:
    verdict = check_grounding(entry, DMITRI)
    assert not verdict.grounded and verdict.unlinked == ("Kersti",)


@pytest.mark.parametrize("entry", [
    "Alina loves dinosaurs, the cake will be shaped like a stegosaurus.",
    "Kersti, a pastry chef, is baking the cake.",  # a clause of nothing but the name
    "Kersti is baking the cake, Alina loves dinosaurs.",
    "Kersti is baking the cake for Alina's party.",  # a possessive is its name
])
def test_each_clause_linked_to_its_name_passes(entry: str) -> None:
    assert check_grounding(entry, DMITRI).grounded


FAMILY = ["My daughter Alina turns seven next Saturday, so we're planning a party.",
          "We invited twelve kids from Alina's class.", "My brother Ravi lives in Glasgow.",
          "Ravi's wife Meena is a doctor."]


@pytest.mark.parametrize("entry", [
    # By hand, from the embedded model: Alina is the daughter, not a parent.
    "Alina's daughter turned seven next Saturday.",
    "Ravi's brother lives in Glasgow.",
])
def test_a_name_made_the_owner_of_what_it_was_called_is_refused(entry: str) -> None:
    verdict = check_grounding(entry, FAMILY)
    assert not verdict.grounded and not verdict.unsupported and verdict.unlinked


@pytest.mark.parametrize("entry", [
    "Twelve kids from Alina's class are invited.",  # said as a possessive: linked
    "Ravi's wife Meena is a doctor.",
    "My daughter Alina turns seven next Saturday.",
])
def test_what_a_possessive_said_links_its_name(entry: str) -> None:
    assert check_grounding(entry, FAMILY).grounded


DONE = [*FAMILY, "I called the dentist yesterday.", "We met Liis at the cafe.",
        "Kersti helped us with the decorations."]


@pytest.mark.parametrize(("entry", "said"), [
    # By hand, from the embedded model: the user invited the kids, not the other way.
    ("Twelve kids from Alina's class are inviting us.",
     "We invited twelve kids from Alina's class."),
    ("The dentist called me yesterday.", "I called the dentist yesterday."),
])
def test_the_user_made_the_object_of_what_they_did_is_refused(entry: str, said: str) -> None:
    verdict = check_grounding(entry, DONE)
    assert not verdict.grounded and not verdict.unsupported
    assert verdict.said_instead == (said,)
    assert f'content "User: {said}"' in refusal_message(verdict)
    assert check_grounding(entry, DONE, mode="lenient").grounded  # strict only


@pytest.mark.parametrize("entry", [
    "We invited twelve kids from Alina's class.",
    "Twelve kids from Alina's class are invited.",  # passive: still the user's doing
    "Liis met us at the cafe.",  # meeting goes both ways
    "Kersti helped us with the decorations.",  # said as done to the user
    "I called the dentist yesterday.",
])
def test_what_the_user_did_and_what_was_done_to_them_as_said_is_kept(entry: str) -> None:
    assert check_grounding(entry, DONE).grounded


MARTA = ["Hi, I'm Marta. I teach maths at a secondary school in Porto.",
         "My partner Jonas is a nurse; we have a cat called Figo."]


@pytest.mark.parametrize("mode", ["strict", "lenient"])
@pytest.mark.parametrize("entry", ["I am Jonas. I have a cat called Figo.", "Name: Jonas",
                                   "The user's name is Jonas.", "Call me Jonas."])
def test_the_user_made_someone_they_named_is_refused(entry: str, mode: str) -> None:
    # Seen by hand: the embedded model saved "I am Jonas. I have a cat called Figo." for
    # Marta; every word had been said.
    verdict = check_grounding(entry, MARTA, mode)  # type: ignore[arg-type]
    assert not verdict.grounded
    assert verdict.said_instead == ("My partner Jonas is a nurse",)
    message = refusal_message(verdict)
    assert "a name that is not theirs" in message
    suggested = message.split('content "')[1].rstrip('".')
    assert check_grounding(suggested, MARTA, mode).grounded  # type: ignore[arg-type]


@pytest.mark.parametrize("entry", ["I am Marta. I teach maths in Porto.", "Name: Marta",
                                   "Partner: Jonas, a nurse.", "We have a cat called Figo.",
                                   "Jonas is my partner.", "Partner name: Jonas.",
                                   "Cat's name: Figo.", "Name: Marta. Partner's name: Jonas."])
def test_who_the_user_is_and_who_they_named_are_kept(entry: str) -> None:
    assert check_grounding(entry, MARTA).grounded


@pytest.mark.parametrize("said", ["My dog is named Pixel and I mention him a lot.",
                                  "My dog's name is Pixel.", "We got a puppy called Pixel.",
                                  "Pixel, our dog, sleeps all day."])
def test_the_user_is_not_the_pet_they_named(said: str) -> None:
    # Seen in bench/local_agent_bench.py: "I'm Pixel. My name is Pixel, and I mention him
    # a lot." saved from "My dog is named Pixel and I mention him a lot."
    verdict = check_grounding("I'm Pixel. My name is Pixel.", [said])
    assert not verdict.grounded and verdict.said_instead == (said, said)
    # Said of the user themselves, "called" introduces them.
    assert check_grounding("Name: Marta", ["I'm called Marta, my dog is Pixel."]).grounded
    # A word that is no name, capitalised by the entry, is no one else.
    assert check_grounding("I'm Vegan.", ["Hi, I'm Marta.", "I'm vegan."]).grounded


def test_a_name_is_the_users_unless_something_says_whose_it_is() -> None:
    # Nothing tells who the user is: the name may be theirs ("Jonas here").
    assert check_grounding("Name: Jonas", ["Jonas here, I like green tea."]).grounded
    assert check_grounding("Name: Jonas", ["Jonas is my brother, I like green tea."],
                           "lenient").said_instead == ("Jonas is my brother, I like green tea.",)
    # The user introduced themselves by another name.
    verdict = check_grounding("Name: Jonas", ["Hi, I'm Marta.", "Jonas called me today."])
    assert not verdict.grounded and verdict.said_instead == ("Hi, I'm Marta.",)


def test_function_words_of_other_languages_claim_nothing() -> None:
    # Seen by hand: the embedded model's Spanish entries were refused for "tu", "una",
    # "que" — words no sentence claims anything with.
    said = ["Mi presupuesto para el vestido es de 300 euros.",
            "Mi novio Marco es alérgico al marisco."]
    assert check_grounding("El presupuesto del vestido: 300 euros.", said).grounded
    assert check_grounding("Marco, tu novio, es alérgico al marisco.", said).grounded
    verdict = check_grounding("Lucía es una persona que ama el marisco.", said)
    assert not verdict.grounded and "persona" in verdict.unsupported
    assert "una" not in verdict.unsupported and "que" not in verdict.unsupported
    # … while "Del" and "Una" written as names are names.
    assert not check_grounding("Del is allergic to shellfish.", ["Ana is allergic to "
                                                                 "shellfish."]).grounded
