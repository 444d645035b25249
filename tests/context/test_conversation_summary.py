"""C18: the local summariser keeps what a conversation between people was about.

Phatic text never fills a section, a question is paired with the reply that answers it or
not at all, relative dates are resolved against the session date, near-identical facts
keep the newest, every message is read once, and the summary stays within its budget.
"""

from __future__ import annotations

import json
import random
from datetime import date

import pytest

from mnemo.context import ContextCompressor, summarize_locally
from mnemo.context.compressor import head_stems
from mnemo.context.extract import extract_facts, is_conversation
from mnemo.context.local_summary import (
    parse_summary_sections,
    render_sections,
    revised_by_later,
)
from mnemo.context.summary import salience as salience_module
from mnemo.context.summary.dates import (
    conversation_started,
    find_date,
    header_date,
    middle_date,
    resolve_relative,
)
from mnemo.context.summary.notes import (
    CHANGE_MARK,
    carried_notes,
    change_of,
    content_words,
    marked_sentences,
    take_notes,
    text_stems,
    told_in,
    value_change,
)
from mnemo.context.summary.reading import CACHE, read_values
from mnemo.context.summary.salience import (
    is_dietary,
    is_limitation,
    is_phatic,
    is_standing_rule,
    salience,
    stated_values,
    updated_things,
    without_phatic_clauses,
)
from mnemo.context.textscan import CONFIG
from mnemo.errors import UsageError
from mnemo.messages import Message
from mnemo.prompt.guidance import date_line
from mnemo.tokens import estimate_messages_tokens_rough, estimate_tokens_rough

PHATIC = ("Hey Mel! Good to see you!", "How have you been?", "Thanks so much, Mel!",
          "Keep it up!", "That must have been awesome.", "You're doing great!",
          "Agreed, Caroline!", "Wow, that's so cool!", "I'm so proud of you.",
          "Yeah, totally.", "Take care!", "Sounds great, talk soon!",
          # Phrases whose words carry facts elsewhere (see the second list below).
          "No worries, that makes sense.", "Enjoy your day!", "Thanks for the support!",
          "Can't wait to see it!", "Sounds like a plan!", "Wishing you the best, Mel!",
          "I'm gonna keep it up.", "Hope you have a great time!",
          "Sweet dreams!", "Long time no see.", "Darn, sorry to hear that.",
          "Thanks for the tip!", "Thanks for asking!", "Mmm, looks yummy!", "That was wild!",
          # Sounds, however many letters they hold; thanks for anything; a pronoun alone.
          "Woohoo!", "Woo-hoo!", "Yoohoo!", "It was sooo cool.", "Gotcha!", "C'mon!",
          "Thanks for checking in.", "Thanks for askin'!", "Thanks a bunch!",
          "Thank you for your guidance!", "Thanks for the recommendations.",
          "Appreciate your offer.", "Bon voyage!", "She's cute!", "They look so happy!",
          "I bet!", "Highly recommend it!", "You seriously rock.", "Nice to meet you!",
          # The small talk of every day.
          "Good job!", "Happy birthday!", "Fingers crossed!", "Fair enough.", "My pleasure!",
          "You're welcome, happy to help!", "Talk to you tomorrow!", "Keep me posted!",
          "It was great talking to you!", "Safe travels!", "That sucks.", "I'm fine, thanks.",
          # Whoever is addressed, named or not in the messages.
          "Congrats, Ana!", "Bye Jon!", "Yo Tim!", "Hiya Sam!", "Nice to meet you, Ana!",
          "Thank you Rui!", "Anytime Nate!", "No problem Nate!", "Good luck Calvin!",
          "Maybe soon!", "That's huge!", "Spill the beans!", "I'm on cloud nine!",
          # Wishes for whatever the listener is about to do.
          "Good luck with your next race!", "Enjoy your dinner.", "Wow, enjoy your trip!",
          "Great question!", "Hang in there!", "Hugs!", "Congrats on both!",
          "I'm sorry, but I can't assist with that request.",
          # An AI assistant's closing lines.
          "Let me know if you have any other questions or need assistance with something "
          "else.", "How can I assist you today?", "Is there anything else I can help you "
          "with?", "I'm glad I could help.",
          # A reaction to what was shown or told, whatever its adjective.
          "Looks delish!", "Must feel liberating!", "Sounds special.", "What a lovely photo!",
          "Wow, what an experience!", "That sounds delicious!", "Yum, that looks tasty!",
          "Such a cool experience!", "That's a beautiful picture!", "Jealous!",
          "Never say never!", "Oh no, that's awful!", "It was great catching up with you!",
          "What a great way to spend the day!", "It's been a while!", "I can imagine!",
          # Congratulations and pride in news the news itself tells; closing courtesies.
          "Congrats on the new job!", "Congratulations on completing it!",
          "I'm really proud of you for taking that step!", "Proud of you!",
          "Keep up the great work, Maria!", "That's so sweet of you to say!", "Morning!",
          "Anyway, enough about me.", "Well said!", "Bless you.", "Works for me!",
          "Sorry for the late reply!", "Wow, you're so brave!", "Give it a shot!",
          "Have fun with your writing!", "Btw look what i got!", "We'll reach our goals!",
          "That's a big change.", "That is such an accomplishment!",
          "Good morning Tomas!", "Welcome back Ana!")


def said(name: str, text: str) -> Message:
    role = "user" if name == "Caroline" else "assistant"
    return {"role": role, "name": name, "content": text}  # type: ignore[typeddict-item]


def conversation() -> list[Message]:
    """Two sessions of chit-chat around facts a reader needs later."""
    return [
        said("Caroline", "[Session 1, 1:56 pm on 8 May, 2023]\nHey Mel! Good to see you! "
                         "How have you been?"),
        said("Melanie", "Hey Caroline! Good to see you! I'm swamped with the kids & work."),
        said("Caroline", "I went to an LGBTQ support group yesterday and it was so powerful."),
        said("Melanie", "Wow, that's so cool! That must have been awesome. Keep it up!"),
        said("Caroline", "Thanks so much, Mel! What did you paint last week?"),
        said("Melanie", "I painted a sunrise over Lake Tahoe last week. You're doing great!"),
        said("Caroline", "My dog's name is Rex. Where do your kids go to school?"),
        said("Melanie", "I'm so proud of you. Anyway, my new pottery class starts on Monday."),
        said("Caroline", "[Session 2, 10:00 am on 20 June, 2023]\nAgreed, Caroline! "
                         "Last Friday I adopted a second dog. My dog's name is Max now."),
        said("Melanie", "Yeah, totally. We're planning to go camping in Yosemite next month."),
        said("Caroline", "Sounds great, talk soon! Take care!"),
        said("Melanie", "I'm so proud of you."),
    ]


def lines_of(summary: str) -> list[str]:
    return [line for items in parse_summary_sections(summary).values() for line in items]


def test_phatic_text_never_fills_a_section() -> None:
    summary = summarize_locally(conversation(), budget_tokens=2_000)
    for line in lines_of(summary):
        for phrase in PHATIC:
            assert phrase.rstrip("!.?") not in line, (phrase, line)
    # … while the facts around it are there.
    assert "LGBTQ support group" in summary and "Lake Tahoe" in summary
    assert "Yosemite" in summary


@pytest.mark.parametrize("sentence", PHATIC)
def test_phatic_sentences_are_recognised(sentence: str) -> None:
    assert is_phatic(sentence, ("Caroline", "Melanie"))


@pytest.mark.parametrize("sentence", [
    # Without the speakers' names (``mnemo chat``): a greeting's name is the listener's.
    "Hey Mel, how are you?", "Hi Caroline, good to see you!", "Oh my god, that's incredible!",
    "Glad you liked it!", "That makes me so happy!", "Sending hugs!",
    # Welcomes, wishes for someone's health, empty promises and a week's mood (a
    # written conversation of three sessions, read by hand).
    "Welcome back!", "Welcome home, Tom!", "Lovely choice.", "I hope he recovers quickly.",
    "Hope you feel better soon!", "Get well soon!", "I'll try.", "Come if you can!",
    "Crazy week.",
    # Waiting, listening, relief, admiration and leaving, with nothing said.
    "I'm glad to hear it went well.", "No way, that's crazy!", "Hope everything goes smoothly!",
    "Looking forward to it!", "Anything for a friend!", "I'm all ears.",
    "How have you been lately?", "It's been a pleasure chatting.", "I'm thrilled for you!",
    "That's rough, hang in there.", "I admire your dedication!",
    "Sounds like you had a great time!", "Lucky you!", "Ah, that's fair.",
    "That's a good question.", "Any time!", "Fair point.", "I'm glad everything worked out.",
    "That's such a relief!", "You made my day!", "I'm touched.", "See you around!",
    "Until next time!"])
def test_more_phatic_sentences_are_recognised_without_names(sentence: str) -> None:
    assert is_phatic(sentence)


@pytest.mark.parametrize("sentence", [
    "I adopted a second dog.", "My dog's name is Rex.", "Thanks, the 3 pm slot on Friday works.",
    "We moved to Denver in March.", "I love painting sunsets.", "我们用 Postgres 而不是 MySQL。",
    "I went to a support group.", "The day I moved to Paris was hard.",
    "Let me know if the deploy fails.", "I can't wait for the concert in Oslo.",
    "I'm sorry I missed your party in Lisbon.", "Wild horses live on the island.",
    "She's pregnant!", "What kind are they?", "I play rock music.", "I loooove Paris.",
    "Thanks for sharing the recipe for lemon pie.", "I can't forget the concert in Oslo.",
    "Appreciate your help with the move to Boston.", "My dog is so cute and loves the beach.",
    "I'm meeting you at the Lisbon office.", "I got a good job in Porto.", "I got a new job.",
    "I paid a parking fine in Lisbon.", "We hang out at the Majestic cafe on Fridays.",
    "Happy birthday to my sister Rita, she turns 30!", "Hey Jon, how was Paris?",
    "We spent the summer in Braga, Portugal.", "Maybe we will move to Porto.",
    "We bought a huge house in Braga.", "I enjoy the outdoors.",
    "Enjoy your dinner at Nobu tonight!", "Good luck with the Cardiff half marathon in October!",
    "I need help with my taxes.", "I can help you with the move to Boston.",
    # A reaction's frame around a name, or a state of the work, says something.
    "Looks like Paris!", "What a day at Disney!", "It looks broken.", "It seems to work.",
    "That looks like a bug in parse_args.", "That's the one I bought in Rome.",
    # Congratulations that tell the news, a morning that is a time, work that works.
    "Congrats on your promotion to senior engineer at Google!", "I run every morning.",
    "The fix works for me on Linux.", "I'm proud of my daughter, she won the chess cup.",
    "Keep up the payments on the Lisbon flat.", "Have fun in Paris!",
    "We had fun at the lake in Tahoe.", "That's a big change to the API.",
    "Hey Mel, I adopted a dog!", "Oh my god, we won the Boston marathon!",
    "I liked the Paris trip.", "I love Boston!", "See you in Boston!", "Take care of Max!",
    "I hope he recovers before the Berlin race.", "Lovely choice of wine from Porto.",
    "I'll try the sushi place in Alfama.", "Welcome back to the Lisbon office tour.",
    "We went to Lisbon.", "The road was rough near Porto.", "It worked out at 300 euros.",
    "I worked out at the gym.", "There is no way to get to Delft by train.",
    "I'm looking forward to the Berlin trip.", "We had a great time in Rome.",
    "Call me any time after 6.", "I was relieved when the biopsy came back clean.",
    # A bare question asks: its reply is the answer ("Where?" — "On Maple Street.").
    "Where?", "When?", "How many?"])
def test_sentences_that_say_something_are_not_phatic(sentence: str) -> None:
    assert not is_phatic(sentence, ("Caroline", "Melanie"))


def test_the_phatic_shortcut_agrees_with_the_phrase_search(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``is_phatic`` settles most sentences before searching the phrases; on sentences
    made of the phrases' own words (and words that begin like them) it must give what
    the phrase search alone gives."""
    module = salience_module
    words = sorted(module._PHRASE_WORDS | module._PHATIC_WORDS
                   | {w for w in module._PHRASE_STARTS if len(w) >= 3}
                   | {w + end for w in module._PHRASE_WORDS for end in ("s", "ing", "y")})
    words += ["don't", "can't", "c'mon", "I'm", "Rex", "Paris", "3", "dog"]
    r = random.Random(7)
    corpus = [*PHATIC, *[" ".join(r.choice(words) for _ in range(r.randint(1, 6)))
                         + r.choice(("", "!", "?", ".", ":")) for _ in range(5_000)]]
    names = ("Caroline", "Melanie")
    fast = [is_phatic(s, names) for s in corpus]
    monkeypatch.setattr(module, "_PHRASE_ANCHORS", ("",))  # every sentence searched
    assert [is_phatic(s, names) for s in corpus] == fast
    assert 0 < sum(fast) < len(fast)


def test_a_phatic_user_turn_in_a_work_session_is_no_ask() -> None:
    turns: list[Message] = [
        {"role": "user", "content": "Please add retries to the webhook sender."},
        {"role": "assistant", "content": "Added three retries with backoff to sender.py."},
        {"role": "user", "content": "Great, thanks! Keep it up!"},
        {"role": "assistant", "content": "You're welcome."},
    ]
    summary = summarize_locally(turns, budget_tokens=2_000)
    assert "Keep it up" not in summary and "Great, thanks" not in summary


def test_an_open_ask_is_printed_once() -> None:
    # By hand (a 3,072-token chat) "What should I eat before a long run?" stood under
    # Pending User Asks and again in the user's note.
    advice = "Here are a few thoughts on building up the weekly distance slowly. " * 4
    turns = chat("I'm training for the Berlin marathon on 27 September.", advice,
                 "I run about 35 km a week.", advice,
                 "I'm allergic to peanuts. What should I eat before a long run?")
    summary = summarize_locally(turns, budget_tokens=2_000)
    s = parse_summary_sections(summary)
    assert s["Pending User Asks"] == ["What should I eat before a long run?"]
    assert summary.count("What should I eat") == 1
    assert "allergic to peanuts" in summary


def test_a_question_in_a_work_session_is_no_constraint_nor_decision() -> None:
    # A rule's words in a question ("should", "decided") make it no rule: in a scripted
    # live chat the first compaction (laid out for work) listed "What should I eat
    # before a long run?" under Goal, Constraints & Preferences and Pending User Asks.
    turns = chat("What should I eat before a long run?",
                 "Oats with a banana, two hours before.",
                 "Have we decided to use Postgres? The API must stay backwards compatible.",
                 "Not yet.")
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000))
    assert s["Constraints & Preferences"] == ["The API must stay backwards compatible."]
    assert "Key Decisions" not in s


def test_questions_are_paired_with_the_reply_that_answers_them_or_not_at_all() -> None:
    s = parse_summary_sections(summarize_locally(conversation(), budget_tokens=2_000))
    pairs = s.get("Resolved Questions", [])
    # Answered by the next reply: paired with the sentence that answers it.
    assert ("Caroline: What did you paint last week? → Melanie: I painted a sunrise over "
            "Lake Tahoe last week [week of 1 May 2023].") in pairs
    # The reply to this one talks about something else: no pair, and not left open.
    assert not any("kids go to school" in p for p in pairs)
    assert not any("kids go to school" in p for p in s.get("Pending User Asks", []))
    # Every pair that is there pairs a question with a reply of the other speaker.
    for pair in pairs:
        question, answer = pair.split(" → ")
        assert question.endswith("?") and not answer.endswith("?")


@pytest.mark.parametrize(("question", "reply", "pair"), [
    # The reply right after a question for a date, a place, a number or a name answers
    # it in other words when it holds one.
    ("When is your wedding?", "It's on June 12th in Porto!", "It's on June 12th in Porto!"),
    ("Hey Mel, where did you go on vacation?", "Haha. We went to Hawaii last month.",
     "We went to Hawaii last month [Apr 2023]."),
    ("How many kids do you have?", "Three, all girls.", "Three, all girls."),
    ("Who taught you to paint?", "My aunt Rosa, years ago.", "My aunt Rosa, years ago."),
    # A place at the start of the reply, one of a kind by its name, a name asked for in
    # other words, and a bare question (a written conversation, read by hand).
    ("Where's the wedding?", "In Jaipur. I'm flying out on April 15.", "In Jaipur."),
    ("Which gym do you go to?", "We go to Parkside Boulders.", "We go to Parkside Boulders."),
    ("Which ryokan did you choose?", "Fukuzumiro. Two nights.", "Fukuzumiro."),
    ("What are you calling the bakery?", "Crumb & Co.", "Crumb & Co."),
    ("Where?", "Downtown, on Maple Street, next to the library.",
     "Downtown, on Maple Street, next to the library."),
    # A question for advice: the reply right after gives it, best where it names things.
    ("What should we see in Kyoto?", "Fushimi Inari, Kinkaku-ji and the bamboo grove.",
     "Fushimi Inari, Kinkaku-ji and the bamboo grove."),
    ("Any tips for the hike?", "Let me think. Bring two litres of water and start early.",
     "Bring two litres of water and start early."),
    ("What's a good gift for a host in Japan?", "Honestly, sweets from home are traditional.",
     "Sweets from home are traditional."),
    ("What do you recommend for a first visit?", "It depends. The Alfama walk is a classic.",
     "The Alfama walk is a classic."),
    ("What should we see in Kyoto?", "I'm not sure, I've never been.", None),
    # … and only then: no day for a place, no deferral, no type for an open question.
    ("Where do your kids go to school?", "Anyway, my pottery class starts on Monday.", None),
    ("When is your wedding?", "Not sure yet, maybe next year.", None),
    ("How was the concert?", "The band played for three hours.", None),
    ("Which day works for you?", "Tuesday is best for the movers.", None),
    ("Which one did you like more?", "The blue one, definitely.", None),
    ("Where?", "Honestly the rent was too high for the kids.", None),
    # A question for an amount shares its words with a sentence that gives none: the
    # reply's sentence that gives one answers it (LoCoMo 26: "It's amazing how art can
    # show things …" had answered "How long have you been creating art?").
    ("How long have you been creating art?",
     "It's amazing how art can show things that are hard to put into words. Since I was "
     "17 or so.", "Since I was 17 or so."),
    ("How long have you been creating art?",
     "It's amazing how art can show things that are hard to put into words.", None),
])
def test_a_question_for_a_date_place_number_or_name_pairs_with_a_reply_that_gives_one(
        question: str, reply: str, pair: str | None) -> None:
    turns = [said("Caroline", "[Session 1, 8 May, 2023]\nI adopted a puppy called Max."),
             said("Melanie", "I started pottery classes in Lisbon."),
             said("Caroline", question), said("Melanie", reply),
             said("Caroline", "I also bought a new bike for the river path.")]
    pairs = parse_summary_sections(summarize_locally(turns, budget_tokens=1_000)).get(
        "Resolved Questions", [])
    if pair is None:
        assert pairs == []
    else:
        # The question is kept past the greeting it opens with.
        asked = question.replace("Hey Mel, where", "Where")
        assert pairs == [f"Caroline: {asked} → Melanie: {pair}"]


def test_a_question_and_a_reply_sharing_only_a_pronoun_are_no_pair() -> None:
    turns = [*conversation()[:4],
             said("Caroline", "I met a woman at the pottery class. That's cool, what's her name?"),
             said("Melanie", "I'll definitely call her tomorrow!"),
             said("Caroline", "Do you think she would like the Lisbon museum?"),
             said("Melanie", "She loved the Porto museum we visited in March.")]
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000))
    assert not any("her name" in p for p in s.get("Resolved Questions", []))
    # The topic's words pair them: "museum".
    assert any(p.startswith("Caroline: Do you think she would like the Lisbon museum? → ")
               for p in s.get("Resolved Questions", []))


def test_an_unrelated_reply_does_not_resolve_a_request() -> None:
    turns: list[Message] = [
        {"role": "user", "content": "Can you find out whether the nightly backup still runs "
                                    "at 02:00 UTC?"},
        {"role": "assistant", "content": "Step 4 done: src/api uses the new client."},
        {"role": "user", "content": "Now refactor src/api/client.py to use httpx."},
        {"role": "assistant", "content": "Refactored src/api/client.py to use httpx."},
    ]
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000))
    assert not any("nightly backup" in x for x in s.get("Resolved Questions", []))
    assert any("nightly backup" in x for x in s["Pending User Asks"])
    later = [*turns, {"role": "assistant", "content": "The nightly backup still runs at "
                                                      "02:00 UTC, the cron entry is unchanged."}]
    s = parse_summary_sections(summarize_locally(later, budget_tokens=2_000))
    assert any(x.startswith("Can you find out whether the nightly backup")
               and x.endswith("→ The nightly backup still runs at 02:00 UTC, the cron entry "
                              "is unchanged.") for x in s["Resolved Questions"])
    assert not any("nightly backup" in x for x in s.get("Pending User Asks", []))


def pending_asks(turns: list[Message], **kwargs: object) -> list[str]:
    """The Pending User Asks of the local summary of ``turns``."""
    summary = summarize_locally(turns, budget_tokens=2_000, **kwargs)  # type: ignore[arg-type]
    return parse_summary_sections(summary).get("Pending User Asks", [])


def test_a_request_to_tell_is_a_question_and_one_to_do_stays_open() -> None:
    turns = chat("Hi! I'm Ana and I live in Lisbon.", "Nice to meet you, Ana!",
                 "Can you remind me on Friday to book the vet for Pixel?",
                 "Sure, I will remind you on Friday.",
                 "Could you suggest a gift for my sister Rita's wedding?",
                 "A framed photo of the two of them would be a nice present.",
                 "Can you share more details about the pottery class?",
                 "It meets on Mondays at the Alfama studio.",
                 "My dog Pixel is a beagle from the Oakland shelter.", "Pixel sounds lovely.")
    pending = pending_asks(turns)
    # Nothing said it is done: the reminder stays open.
    assert any("remind me on Friday" in x for x in pending)
    # Answered in other words, and the asker moved on: neither is left open.
    assert not any("gift" in x or "pottery class" in x for x in pending), pending


def test_a_question_answered_in_other_words_is_not_open_even_as_the_last_turn() -> None:
    # The asker's next message may be in the turns kept whole: the reply is enough.
    turns = chat("I'm flying to Osaka on April 3 with my wife Keiko.", "Lovely season for it.",
                 "What's a good gift for my cousin Hiro's wedding?",
                 "In Japan, cash in a goshugi-bukuro envelope is traditional, often 30,000 yen.")
    assert pending_asks(turns) == []
    # A reply that puts it off, and a request not done, leave them open.
    put_off = chat("What's a good gift for my cousin Hiro's wedding?",
                   "Let me check and get back to you.")
    assert pending_asks(put_off) == ["What's a good gift for my cousin Hiro's wedding?"]
    request = chat("Can you remind me to renew my passport before March 20?",
                   "Passports for Japan must be valid for the length of your stay.")
    assert pending_asks(request) == ["Can you remind me to renew my passport before March 20?"]


def test_a_reply_that_does_what_was_asked_closes_that_request_only() -> None:
    turns = chat("Hi! I'm Ana and I live in Lisbon.", "Nice to meet you, Ana!",
                 "Can you remind me on Friday to book the vet for Pixel?",
                 "Pixel is a lovely name.",
                 "Can you send me the photo of the Alfama studio?",
                 "Sure thing! Here you go.",
                 "My dog Pixel is a beagle from the Oakland shelter.", "Pixel sounds lovely.")
    pending = pending_asks(turns)
    assert not any("photo" in x for x in pending), pending  # "Here you go." sent it
    assert any("remind me on Friday" in x for x in pending)  # an older one is not done


def test_a_request_an_earlier_summary_left_open_stays_open_past_unrelated_replies() -> None:
    previous = summarize_locally(chat(
        "Step 1: refactor src/api/client.py to use httpx.", "Refactored it.",
        "Also, can you find out whether the nightly backup still runs at 02:00 UTC?",
        "Step 1 done: src/api uses the new client and the tests pass."), budget_tokens=2_000)
    assert "nightly backup" in " ".join(parse_summary_sections(previous)["Pending User Asks"])
    later = chat("Step 2: refactor src/db/pool.py to use the new client.",
                 "Step 2 done: src/db uses the new client and the tests pass.",
                 "Thanks! Can you also bump the version in pyproject.toml?", "Done!")
    pending = pending_asks(later, previous_summary=previous)
    assert any("nightly backup" in x for x in pending)
    # A reply that only says "done" closes the request it follows, not one carried over.
    assert "Thanks" not in " ".join(pending)
    assert not any("bump the version" in x for x in pending), pending


def test_relative_dates_are_resolved_against_the_session_date() -> None:
    summary = summarize_locally(conversation(), budget_tokens=2_000)
    assert "support group yesterday [7 May 2023]" in summary
    assert "Last Friday [16 Jun 2023] I adopted a second dog" in summary  # session 2
    assert "Yosemite next month [Jul 2023]" in summary
    # The timeline is dated by the session.
    assert "8 May 2023 · Caroline: I went to an LGBTQ support group" in summary


@pytest.mark.parametrize(("text", "expected"), [
    ("I went there yesterday.", "I went there yesterday [7 May 2023]."),
    ("We met last Friday at noon", "We met last Friday [5 May 2023] at noon"),
    ("It broke two weeks ago", "It broke two weeks ago [week of 24 Apr 2023]"),
    ("I moved last month", "I moved last month [Apr 2023]"),
    ("Last year I ran a marathon", "Last year [2022] I ran a marathon"),
    ("See you tomorrow", "See you tomorrow [9 May 2023]"),
    ("3 days ago it rained", "3 days ago [5 May 2023] it rained"),
    ("No dates here.", "No dates here."),
    # Short weekday names, read only when capitalised.
    ("Last Fri I took the kids", "Last Fri [5 May 2023] I took the kids"),
    ("I joined a group last Tues.", "I joined a group last Tues [2 May 2023]."),
    ("I last sat down in March", "I last sat down in March"),
    # "On Friday": before the session when told in the past, after it otherwise.
    ("We went there on Friday", "We went there on Friday [5 May 2023]"),
    ("See you on Friday", "See you on Friday [12 May 2023]"),
    ("I'll have finished it on Friday", "I'll have finished it on Friday [12 May 2023]"),
    # Weekends, couples and the days around today.
    ("We camped two weekends ago", "We camped two weekends ago [weekend of 29 Apr 2023]"),
    ("This past weekend was fun", "This past weekend [weekend of 6 May 2023] was fun"),
    ("a couple weeks ago", "a couple weeks ago [week of 24 Apr 2023]"),
    ("a couple of days ago", "a couple of days ago [6 May 2023]"),
    ("the day before yesterday", "the day before yesterday [6 May 2023]"),
    ("earlier today I ran", "earlier today [8 May 2023] I ran"),
    # "Over the weekend": the last one told in the past, the next one otherwise.
    ("Over the weekend I went hiking.", "Over the weekend [weekend of 6 May 2023] I went "
     "hiking."),
    ("Over the weekend I'll paint.", "Over the weekend [weekend of 13 May 2023] I'll paint."),
    ("Earlier this week I met Ana", "Earlier this week [week of 8 May 2023] I met Ana"),
    ("later this month", "later this month [May 2023]"),
    ("The week before last I was ill", "The week before last [week of 24 Apr 2023] I was ill"),
    ("the weekend before last", "the weekend before last [weekend of 29 Apr 2023]"),
    # Ahead of the session: "in …" only in a sentence not told in the past (a duration).
    ("The party is in two days.", "The party is in two days [10 May 2023]."),
    ("We leave three weeks from now", "We leave three weeks from now [week of 29 May 2023]"),
    ("We fly to Rome in 3 months", "We fly to Rome in 3 months [Aug 2023]"),
    ("I finished the puzzle in two days", "I finished the puzzle in two days"),
    ("I read the book in a week", "I read the book in a week"),
    # A weekday told with an irregular past ("swam", "wrote") is the one before.
    ("On Tuesday I swam a mile.", "On Tuesday [2 May 2023] I swam a mile."),
    ("I wrote to her on Thursday", "I wrote to her on Thursday [4 May 2023]"),
    # A participle after "is" tells of what stands now (by hand, "The interview is
    # scheduled on Tuesday" was dated the Tuesday before); after "was" it is the past.
    ("The interview is scheduled on Tuesday.", "The interview is scheduled on Tuesday "
     "[9 May 2023]."),
    ("I'm so excited about the show on Friday!", "I'm so excited about the show on "
     "Friday [12 May 2023]!"),
    ("The party was scheduled on Tuesday.", "The party was scheduled on Tuesday "
     "[2 May 2023]."),
    ("I painted it on Friday and it is finished.", "I painted it on Friday [5 May 2023] "
     "and it is finished."),
    # "need" is no past, nor is "hundred" (by hand "I need to bring my payslips at 10:30
    # on Tuesday" was dated the Tuesday before); "agreed" and "succeeded" are.
    ("I need to bring my payslips on Tuesday.", "I need to bring my payslips on Tuesday "
     "[9 May 2023]."),
    ("We need a hundred chairs on Friday.", "We need a hundred chairs on Friday "
     "[12 May 2023]."),
    ("We're getting married on Saturday!", "We're getting married on Saturday "
     "[13 May 2023]!"),
    ("We got married on Saturday.", "We got married on Saturday [6 May 2023]."),
    ("I agreed to it on Monday.", "I agreed to it on Monday [1 May 2023]."),
    ("She succeeded on Monday.", "She succeeded on Monday [1 May 2023]."),
    # The clause of the date tells its tense when it has a subject of its own (by hand
    # the first was dated the Monday before, for "booked"); a list's clause has none.
    ("Actually we booked three nights now, not two, so we leave on Monday.", "Actually we "
     "booked three nights now, not two, so we leave on Monday [15 May 2023]."),
    ("I finished the report and we meet on Friday.", "I finished the report and we meet "
     "on Friday [12 May 2023]."),
    ("We went to Ghent and Bruges on Friday.", "We went to Ghent and Bruges on Friday "
     "[5 May 2023]."),
    ("We flew to Rome, Milan and Venice on Friday.", "We flew to Rome, Milan and Venice "
     "on Friday [5 May 2023]."),
    # The day of the month after a weekday says which one (by hand "on Saturday the
    # 19th" was dated the coming Saturday); when the two disagree, neither is written.
    ("The party is on Saturday the 20th.", "The party is on Saturday [20 May 2023] the 20th."),
    ("The party is on Saturday, 3 June.", "The party is on Saturday [3 Jun 2023], 3 June."),
    ("We met on Saturday the 6th.", "We met on Saturday [6 May 2023] the 6th."),
    ("The party is on Friday the 20th.", "The party is on Friday the 20th."),
    ("On Saturday 3 friends came.", "On Saturday [6 May 2023] 3 friends came."),
    ("I was so tired, so on Friday I stayed home.", "I was so tired, so on Friday "
     "[5 May 2023] I stayed home."),
    # … after "to", "until", "by", "from" as well, whatever the verb's tense (by hand the
    # day a dinner moved to was left undated, and the model's "on Sunday" was dated the
    # Sunday before it); without the day of the month such a weekday is none.
    ("The dinner moved to Sunday the 21st, not Saturday.", "The dinner moved to Sunday "
     "[21 May 2023] the 21st, not Saturday."),
    ("We stay until Tuesday the 16th.", "We stay until Tuesday [16 May 2023] the 16th."),
    ("It moved from Friday the 5th to Monday the 15th.", "It moved from Friday [5 May "
     "2023] the 5th to Monday [15 May 2023] the 15th."),
    ("I went to Sunday school.", "I went to Sunday school."),
    ("It was postponed to Sunday.", "It was postponed to Sunday."),
    # Holidays: the one before the session, after it, or of its year.
    ("Last Christmas we went skiing.", "Last Christmas [25 Dec 2022] we went skiing."),
    ("next Christmas Eve", "next Christmas Eve [24 Dec 2023]"),
    ("Last Easter we hid eggs.", "Last Easter [9 Apr 2023] we hid eggs."),
    ("We host this Thanksgiving", "We host this Thanksgiving [23 Nov 2023]"),
    ("last New Year's Eve", "last New Year's Eve [31 Dec 2022]"),
    ("last new years day", "last new years day [1 Jan 2023]"),
    ("last Valentine’s Day", "last Valentine’s Day [14 Feb 2023]"),
    ("last Halloween I was a cat", "last Halloween [31 Oct 2022] I was a cat"),
    ("Merry Christmas!", "Merry Christmas!"),
])
def test_resolve_relative(text: str, expected: str) -> None:
    assert resolve_relative(text, date(2023, 5, 8)) == expected


@pytest.mark.parametrize(("text", "focus", "expected"), [
    # A weekday to come that may be the coming one or the one after the day the
    # conversation named last is left as it was said (by hand: "we leave on Monday
    # [7 Dec 2026]" beside "We arrive next Friday [11 Dec 2026]").
    ("We leave on Wednesday.", date(2023, 5, 12), "We leave on Wednesday."),
    ("We arrive on Friday and leave on Wednesday.", None,
     "We arrive on Friday [12 May 2023] and leave on Wednesday."),
    # … and so is the weekday of that very day a week on: by hand the model's "… from
    # Amsterdam on Thursday at 7:15" after the user's "Thursday the 17th" was dated the
    # coming Thursday, a week early.
    ("We leave on Wednesday.", date(2023, 5, 17), "We leave on Wednesday."),
    # A day named a week or more after the coming one, or not after it, settles nothing;
    # nor does one named after the weekday, a weekday told of the past, or "next".
    ("We leave on Wednesday.", date(2023, 5, 30), "We leave on Wednesday [10 May 2023]."),
    ("We leave on Wednesday.", date(2023, 5, 10), "We leave on Wednesday [10 May 2023]."),
    ("On Wednesday we fly, and we arrive on Friday.", None,
     "On Wednesday [10 May 2023] we fly, and we arrive on Friday [12 May 2023]."),
    ("We went there on Wednesday.", date(2023, 5, 12),
     "We went there on Wednesday [3 May 2023]."),
    ("We leave next Wednesday.", date(2023, 5, 12), "We leave next Wednesday [10 May 2023]."),
])
def test_a_weekday_after_a_day_to_come_is_left_undated(text: str, focus: date | None,
                                                        expected: str) -> None:
    assert resolve_relative(text, date(2023, 5, 8), focus) == expected


def test_the_day_to_come_is_carried_from_message_to_message_and_summary_to_summary() -> None:
    wishes = " Ghent is lovely in December, with the lights and the markets." * 3
    texts = ("We arrive next Friday by train from Brussels at 18:40.", "Lovely!" + wishes,
             "Actually we booked three nights now, not two, so we leave on Monday.",
             "Noted." + wishes)
    turns = chat(*texts)
    summary = summarize_locally(turns, budget_tokens=1_000, session_date=date(2026, 12, 5))
    assert "next Friday [11 Dec 2026]" in summary
    assert "[7 Dec 2026]" not in summary and "we leave on Monday." in summary
    # … from sentence to sentence of one message too.
    one = chat("We arrive next Friday at 18:40. We leave on Monday by train.",
               "Lovely!" + wishes, "Ewa is vegetarian.", "Noted." + wishes)
    summary = summarize_locally(one, budget_tokens=1_000, session_date=date(2026, 12, 5))
    assert "We leave on Monday by train." in summary and "[7 Dec 2026]" not in summary
    # The Friday stood in the summary before: the Monday is read beside it still.
    previous = "## Critical Context\n- User: We arrive next Friday [11 Dec 2026] at 18:40.\n"
    later = chat("Our hotel is the Pand, by the Korenmarkt.", "Lovely!" + wishes, *texts[2:])
    summary = summarize_locally(later, budget_tokens=1_000, previous_summary=previous,
                                session_date=date(2026, 12, 5))
    assert "[7 Dec 2026]" not in summary and "we leave on Monday." in summary
    # Without a day to come before it, the Monday is the coming one.
    summary = summarize_locally(later, budget_tokens=1_000, session_date=date(2026, 12, 5))
    assert "we leave on Monday [7 Dec 2026]." in summary


def test_the_day_to_come_is_read_from_a_goal_quoted_as_the_user_said_it() -> None:
    # By hand (3,072 tokens) a first summary laid out for work quoted "We fly from
    # Amsterdam on Thursday the 17th …" as its Goal, undated; at the next compaction the
    # model's "on Thursday at 7:15" was dated the coming Thursday, a week early.
    previous = ("## Goal\n- We fly from Amsterdam on Thursday the 17th at 7:15 with TAP.\n\n"
                "## Tools & Patterns\n- memory ×3\n")
    turns = chat("Our hotel is the Lumiares in Bairro Alto, four nights for 620 euros.",
                 "The flight will take place from Amsterdam on Thursday at 7:15, with TAP.")
    summary = summarize_locally(turns, budget_tokens=600, previous_summary=previous,
                                session_date=date(2026, 12, 5))
    assert "on Thursday [17 Dec 2026] the 17th at 7:15" in summary
    assert "Amsterdam on Thursday at 7:15, with TAP." in summary


@pytest.mark.parametrize(("text", "expected"), [
    # 8 May 2023 is a Monday: a Chinese week is named ("上周五": the Friday of last week).
    ("上周五我们去了西湖。", "上周五 [5 May 2023]我们去了西湖。"),
    ("下周三开会。", "下周三 [17 May 2023]开会。"),
    ("上上周日我们去爬山。", "上上周日 [30 Apr 2023]我们去爬山。"),
    ("下周末见！", "下周末 [weekend of 20 May 2023]见！"),
    ("上周一开始上班。", "上周一 [1 May 2023]开始上班。"),
    ("上个星期很忙。", "上个星期 [week of 1 May 2023]很忙。"),
    ("昨天我看了电影，明天去上班。", "昨天 [7 May 2023]我看了电影，明天 [9 May 2023]去上班。"),
    ("前天下雨了。", "前天 [6 May 2023]下雨了。"),
    ("我们计划下个月去成都。", "我们计划下个月 [Jun 2023]去成都。"),
    ("去年我开始学习摄影。", "去年 [2022]我开始学习摄影。"),
    ("我三天前刚买了相机。", "我三天前 [5 May 2023]刚买了相机。"),
    ("我们两个月前搬到上海。", "我们两个月前 [Mar 2023]搬到上海。"),
    ("十二天后出发。", "十二天后 [20 May 2023]出发。"),
    ("两周后考试。", "两周后 [week of 22 May 2023]考试。"),
    ("5年前我在北京。", "5年前 [2018]我在北京。"),
    ("I went there last Friday and 昨天 too.",
     "I went there last Friday [5 May 2023] and 昨天 [7 May 2023] too."),
    # Words that hold the characters of a date and are none.
    ("马上周末就到了。", "马上周末就到了。"),
    ("这周围很安静。", "这周围很安静。"),
    ("上周一起去吃饭。", "上周 [week of 1 May 2023]一起去吃饭。"),
    ("这周天气很好。", "这周 [week of 8 May 2023]天气很好。"),
    ("第三天后我们回家。", "第三天后我们回家。"),
    ("2019年前后我在北京。", "2019年前后我在北京。"),
    ("我们每周五去游泳。", "我们每周五去游泳。"),
    ("他想爬上月球。", "他想爬上月球。"),
])
def test_relative_dates_in_chinese_are_resolved(text: str, expected: str) -> None:
    assert resolve_relative(text, date(2023, 5, 8)) == expected


def test_a_resolved_date_is_not_resolved_twice() -> None:
    once = resolve_relative("昨天我们见了面，yesterday too.", date(2023, 5, 8))
    assert resolve_relative(once, date(2023, 5, 8)) == once


def test_a_chat_in_chinese_keeps_its_dates_and_drops_its_chit_chat() -> None:
    # An AI assistant's replies in Chinese open with chit-chat and go on at some length.
    turns = chat("你好！我叫李明，在杭州做数据工程师。",
                 "你好李明！很高兴认识你。数据工程的工作很有挑战，需要处理大量的数据管道和调度任务。",
                 "上周五我和女朋友王芳去了西湖。",
                 "哇，真厉害！西湖的断桥和雷峰塔都值得一看，春天的时候苏堤的风景特别好。",
                 "谢谢！我三天前刚买了一台新的索尼相机。",
                 "太棒了！加油！新相机可以先从自动模式开始熟悉，再慢慢尝试光圈优先和手动模式。",
                 "哈哈，谢谢你的鼓励。我们计划下个月去成都。",
                 "很好，坚持下去！成都除了火锅，还有宽窄巷子、大熊猫基地和青城山可以去看看。",
                 "我的猫叫豆豆。",
                 "好的，我会记住的。有什么问题随时问我，我很乐意帮忙。")
    summary = summarize_locally(turns, budget_tokens=2_000, session_date=date(2023, 5, 8))
    assert "上周五 [5 May 2023]我和女朋友王芳去了西湖" in summary
    assert "三天前 [5 May 2023]刚买了一台新的索尼相机" in summary
    assert "下个月 [Jun 2023]去成都" in summary
    assert "豆豆" in summary and "李明" in summary
    for chit_chat in ("很高兴认识你", "真厉害", "太棒了", "加油", "谢谢你的鼓励", "坚持下去",
                      "我会记住", "随时问我", "你好李明"):
        assert chit_chat not in summary, chit_chat


@pytest.mark.parametrize("sentence", [
    "哈哈，谢谢你的鼓励。", "哇，真厉害！", "加油！", "很好，坚持下去！", "好的，我会记住的。",
    "你好李明！", "很高兴认识你。", "太棒了！", "对。", "不客气！", "谢谢！",
    "有什么问题随时问我，我很乐意帮忙。", "恭喜你！", "晚安！",
    # An AI assistant's refusals and offers (by hand, the embedded model).
    "抱歉，但我无法协助完成这个请求。", "请问有什么我可以帮忙的吗？",
    "希望这些建议能满足你的需求。"])
def test_chinese_chit_chat_is_phatic(sentence: str) -> None:
    assert is_phatic(sentence)


@pytest.mark.parametrize("sentence", [
    "我对花生过敏。", "谢谢你帮我修好了电脑。", "你们去几天？", "我的猫叫豆豆。",
    "成都的火锅很有名！", "我可以游泳。", "五天。", "我做了桃子派，太好吃了！", "我不能吃花生。",
    "抱歉，我明天不能去杭州。"])
def test_chinese_sentences_that_say_something_are_not_phatic(sentence: str) -> None:
    assert not is_phatic(sentence)


def test_a_phatic_clause_in_chinese_is_left_out() -> None:
    assert without_phatic_clauses("我做了桃子派，太好吃了！") == "我做了桃子派！"
    assert without_phatic_clauses("哈哈，我们下个月去成都。") == "我们下个月去成都。"


def test_a_date_past_the_calendar_is_left_as_written() -> None:
    # A header typed by hand can name the calendar's first or last day: the summary
    # still comes, the relative dates that would fall off it unresolved.
    assert resolve_relative("See you tomorrow, next month", date(9999, 12, 31)) == (
        "See you tomorrow, next month")
    assert resolve_relative("yesterday and a week ago", date(1, 1, 1)) == (
        "yesterday and a week ago")
    assert resolve_relative("today, last year", date(1, 1, 1)) == (
        "today [1 Jan 1], last year")
    assert resolve_relative("last Christmas", date(1, 3, 1)) == "last Christmas"
    turns: list[Message] = [
        {"role": "user", "name": "Ana", "content": "[Session 1, 31 Dec, 9999]\nI sold my "
         "boat yesterday. See you tomorrow at the lake."},
        {"role": "assistant", "name": "Ben", "content": "I moved to Paris last year."}]
    summary = summarize_locally(turns, budget_tokens=2_000)
    assert "I sold my boat yesterday [30 Dec 9999]." in summary


def test_session_dates_are_read_in_common_forms() -> None:
    assert find_date("1:56 pm on 8 May, 2023") == date(2023, 5, 8)
    assert find_date("on Sept 3, 2021") == date(2021, 9, 3)
    assert find_date("2023-05-08T10:00") == date(2023, 5, 8)
    assert find_date("[第3次会话，2023年5月8日]") == date(2023, 5, 8)
    assert find_date("no date") is None
    assert resolve_relative("yesterday", None) == "yesterday"


def test_a_job_or_home_said_with_now_before_the_verb_replaces_the_old_one() -> None:
    # "I now work at …" (seen in a chat's summary beside "I work as a pharmacist in
    # Leeds", both kept) says where one works as "I work at … now" does.
    turns = chat("I work as a pharmacist in Leeds.", "Nice!", "I live in Headingley.",
                 "Lovely area.", "I now work at the York hospital pharmacy.",
                 "Big change!", "We currently live in York, near the Minster.")
    facts = extract_facts(turns, session_date=date(2026, 6, 10))
    texts = " ".join(note.text for note in facts.notes)
    assert "Leeds" not in texts and "Headingley" not in texts
    assert "I now work at the York hospital pharmacy." in texts
    assert "We currently live in York, near the Minster." in texts


def test_the_newest_of_two_conflicting_facts_is_kept() -> None:
    summary = summarize_locally(conversation(), budget_tokens=2_000)
    assert "My dog's name is Max now." in summary
    assert "My dog's name is Rex." not in summary


def test_where_someone_lives_and_works_now_replaces_what_they_said_before() -> None:
    turns = [said("Caroline", "[Session 1, 10:00 am on 5 January, 2025]\nI live in Leeds "
                  "with my partner Joe. I'm a software tester at Skyscanner."),
             said("Melanie", "I live in Glasgow, near the river Clyde."),
             said("Caroline", "I'm a member at the Leeds climbing wall."),
             said("Melanie", "[Session 2, 6:30 pm on 20 February, 2025]\nHow is Joe?"),
             said("Caroline", "Joe and I moved to York last week! I work at Monzo as a QA "
                  "lead now."),
             said("Melanie", "That's a big change."),
             said("Caroline", "I live in York now, in a flat by the Minster.")]
    summary = summarize_locally(turns, budget_tokens=2_000)
    assert "Leeds with my partner" not in summary and "Skyscanner" not in summary
    assert "I work at Monzo as a QA lead now" in summary
    # A move keeps its date when the new home is named again; a membership is no job.
    assert "moved to York last week [week of 10 Feb 2025]" in summary
    assert "Leeds climbing wall" in summary
    assert "I live in Glasgow" in summary  # another speaker's home


@pytest.mark.parametrize(("sentence", "undone"), [
    ("Actually we changed the trip: it's Porto now, not Lisbon.", ("lisbon",)),
    ("We're going to Porto instead of Lisbon.", ("lisbon",)),
    ("I'm not going to Berlin any more.", ("berlin",)),
    ("Sam, not Tomas, cooked.", ()),  # nothing changed
    ("I do not like Mondays.", ()),
    ("Now I'm not sure about Python.", ()),
])
def test_a_correction_names_what_no_longer_holds(sentence: str,
                                                 undone: tuple[str, ...]) -> None:
    assert salience_module.undone_names(sentence) == undone


@pytest.mark.parametrize(("older", "after"), [
    # An amount named once is written anew, the mark after it (by hand the embedded model
    # answered 4000 from a marked budget: it copies the sentence, not the mark).
    ("Our hotel is the Pand, we booked two nights with breakfast.",
     "Our hotel is the Pand, we booked three nights with breakfast. [Since changed: "
     "three, not two.]"),
    ("Two nights at the Pand on Friday.",
     "Three nights at the Pand on Friday. [Since changed: three, not two.]"),
    # Named twice, the text does not tell which; beside another amount, the new one
    # would give it a price nobody said: only marked.
    ("Two nights at the Pand for two people.",
     "Two nights at the Pand for two people. [Since changed: three, not two.]"),
    ("Our hotel is the Pand, we booked two nights for 240 euros.",
     "Our hotel is the Pand, we booked two nights for 240 euros. [Since changed: three, "
     "not two.]"),
    # Marked before (and written anew then): as it was.
    ("We booked three nights at the Pand. [Since changed: three, not two.]",
     "We booked three nights at the Pand. [Since changed: three, not two.]"),
])
def test_an_amount_taken_back_is_written_anew_where_it_stood(older: str, after: str) -> None:
    change = change_of("Actually we booked three nights now, not two.", 4)
    found = value_change(older, text_stems(older), "", {("", "2"): [change]})
    assert found == (4, after)


@pytest.mark.parametrize(("sentence", "swaps"), [
    ("Actually we changed the trip: it's Porto now, not Lisbon.", (("lisbon", "Porto"),)),
    ("Actually Ravi moved: he lives in Glasgow now, not Manchester.",
     (("manchester", "Glasgow"),)),
    ("I work at Acme now instead of Globex.", (("globex", "Acme"),)),
    ("It's Porto now, I'm not going to Lisbon.", (("lisbon", "Porto"),)),  # not "I'm"
    ("I'm not going to Berlin any more.", ()),  # nothing said in its place
    ("Sam, not Tomas, cooked.", ()),  # nothing changed
])
def test_a_correction_names_what_takes_the_place_of_what_it_takes_back(
        sentence: str, swaps: tuple[tuple[str, str], ...]) -> None:
    assert salience_module.replacements(sentence) == swaps


def test_a_correction_takes_back_the_older_notes_it_names() -> None:
    # By hand (3,072 tokens): the summary kept "going to Lisbon in May" beside "it's
    # Porto now, not Lisbon", and the embedded model answered Lisbon.
    previous = ("## Key Decisions\n- User: I'm learning Portuguese because we're going "
                "to Lisbon in May.\n\n## Critical Context\n- User: We have a dog called "
                "Biscuit, he's a beagle.\n- Assistant: Lisbon is lovely in May.\n")

    def after(message: str) -> str:
        return summarize_locally([{"role": "user", "content": message},
                                  {"role": "assistant", "content": "Got it."}],
                                 budget_tokens=400, previous_summary=previous)

    changed = after("Actually we changed the trip: it's Porto now, not Lisbon.")
    assert "Porto now, not Lisbon" in changed and "Biscuit" in changed
    assert "Lisbon in May" not in changed and "Lisbon is lovely" not in changed
    kept = after("My sister Rita lives in Porto.")  # no correction: nothing taken back
    assert "going to Lisbon in May" in kept and "Lisbon is lovely in May" in kept
    # Nor does an AI's answer that retells what was taken back outlive it (by hand).
    echoed = summarize_locally(
        [{"role": "user", "content": "Actually we changed the trip: it's Porto now, not "
                                     "Lisbon."},
         {"role": "assistant", "content": "I'm learning Portuguese because we're going to "
                                          "Lisbon in May."}],
        budget_tokens=400, previous_summary=previous)
    assert "Porto now, not Lisbon" in echoed and "Lisbon in May" not in echoed
    # A line carried whole that names it (a model's Goal, by hand) goes too.
    goal = "## Goal\n- To suggest recipes for beagles in Lisbon.\n\n"
    turn: list[Message] = [{"role": "user", "content": "Actually we changed the trip: "
                                                       "it's Porto now, not Lisbon."}]
    assert "beagles in Lisbon" not in summarize_locally(
        turn, budget_tokens=400, previous_summary=goal + previous)
    assert "beagles in Lisbon" in summarize_locally(
        [{"role": "user", "content": "My night shifts are on Tuesdays."}],
        budget_tokens=400, previous_summary=goal + previous)


def test_a_name_taken_back_leaves_a_line_that_tells_more_marked() -> None:
    # By hand (3,072 tokens) "it's the boathouse at Kralingen now, not the Zuiderpark
    # pavilion" took the party's line out of the summary, its day and hour with it.
    wishes = " A surprise party is a lovely way to mark a 40th birthday." * 3
    turns = chat("The party is on Saturday the 19th at the Zuiderpark pavilion, starting "
                 "at 19:00.", "Lovely." + wishes, "Actually the venue changed: it's the "
                 "boathouse at Kralingen now, not the Zuiderpark pavilion.", "Noted." + wishes)
    summary = summarize_locally(turns, budget_tokens=400, session_date=date(2026, 12, 5))
    assert ("The party is on Saturday [19 Dec 2026] the 19th at the Zuiderpark pavilion, "
            "starting at 19:00. [Since changed: Kralingen, not Zuiderpark.]") in summary
    assert "it's the boathouse at Kralingen now, not the Zuiderpark pavilion." in summary
    # An AI's line about the old place goes, as before: it is the user's plan retold.
    turns[1] = {"role": "assistant", "content": "The Zuiderpark pavilion has room for 60 "
                                                "guests and opens at 18:00." + wishes}
    summary = summarize_locally(turns, budget_tokens=400, session_date=date(2026, 12, 5))
    assert "room for 60" not in summary


def test_a_goal_line_in_the_users_words_goes_on_as_their_note() -> None:
    # By hand (3,072 tokens) a chat's first summaries, laid out as work, quoted "The party
    # is on Saturday the 19th …" as their Goal; once they went on as a chat's, which
    # quote no message, the line went, and the model's retelling of it stayed.
    wishes = " A surprise party is a lovely way to mark a 40th birthday." * 3
    previous = ("## Goal\n- The party is on Saturday the 19th at the Zuiderpark pavilion, "
                "starting at 19:00.\n- Help the user plan a surprise party.\n\n"
                "## Critical Context\n- Assistant: The party will be on Saturday [12 Dec "
                "2026] the 19th at the Zuiderpark pavilion, starting at 19:00.\n- User: "
                "Jonas loves Italian food, I booked the caterer Da Marco for 450 euros.\n")
    turns = chat("My brother Felix will bring Jonas there on a fake errand.",
                 "Noted." + wishes, "We invited 35 guests.", "Lovely." + wishes)
    summary = summarize_locally(turns, budget_tokens=400, previous_summary=previous,
                                session_date=date(2026, 12, 5))
    # … its date resolved as a note's is (quoted as said, it was not).
    assert ("- User: The party is on Saturday [19 Dec 2026] the 19th at the Zuiderpark "
            "pavilion, starting at 19:00.") in summary
    assert "The party will be on Saturday" not in summary  # the model's retelling
    # A model's goal is no note of the user's.
    assert "- Help the user plan a surprise party." in summary
    assert "User: Help the user" not in summary


@pytest.mark.parametrize(("sentence", "undone"), [
    ("We'll stay 10 days instead of 12.", ("12",)),
    ("We'll stay ten days instead of twelve.", ("12",)),
    ("My meeting with the landlord moved from Tuesday to Thursday.", ("tuesday",)),
    ("Actually, it's 2,500 euros now, not 3,000.", ("3,000",)),
    ("The flight was moved from the 3rd to the 5th.", ("3",)),
    ("Dinner got pushed from 7 pm to 8 pm.", ("7",)),
    ("I'm not 100% sure now.", ()),  # a share, not a value taken back
    ("I work from Monday to Friday.", ()),  # nothing moved
    ("I do not run 5 km every day.", ()),  # nothing changed
])
def test_a_correction_names_the_amount_day_or_month_it_takes_back(
        sentence: str, undone: tuple[str, ...]) -> None:
    assert salience_module.undone_values(sentence) == undone


def test_a_correction_takes_back_older_lines_with_that_value_about_the_same_thing() -> None:
    # By hand: "How long will you stay? → Twelve days." stood beside "We'll stay 10 days
    # instead of 12.", and "on Tuesday" beside the meeting moved to Thursday.
    turns = chat("I'm planning a trip to Japan with Lena in April.",
                 "Lovely! How long will you stay?",
                 "Twelve days.", "Twelve days is a good length for a first visit.",
                 "I meet my landlord about the lease on Tuesday.", "Good luck with the landlord.",
                 "My daughter Mia turns 12 in May, and she wants a party at the climbing gym "
                 "by the river with all her friends.",
                 "A climbing party sounds like a lot of fun.",
                 "We'll stay 10 days instead of 12.", "Ten days, noted.",
                 "The meeting with my landlord moved from Tuesday to Thursday.", "OK.")
    summary = summarize_locally(turns, budget_tokens=1_000)
    assert "10 days instead of 12" in summary and "from Tuesday to Thursday" in summary
    assert "Twelve days" not in summary  # the pair
    notes = [note.text for note in extract_facts(turns).notes]
    assert not any("Twelve days" in note or "lease on Tuesday" in note for note in notes)
    # The same value about another thing stays.
    assert any("Mia turns 12 in May" in note for note in notes)
    # A value carried in the previous summary is taken back as well.
    previous = ("## Resolved Questions\n- How long will you stay? → Twelve days.\n\n"
                "## Critical Context\n- User: My daughter Mia turns 12 in May.\n")
    later = summarize_locally(turns[8:10], budget_tokens=1_000, previous_summary=previous)
    assert "Twelve days" not in later and "Mia turns 12 in May" in later
    # Without a correction, nothing is taken back.
    assert "Twelve days" in summarize_locally(turns[:8], budget_tokens=1_000)


def test_a_day_taken_back_is_a_value_the_rest_of_its_line_stays() -> None:
    # By hand (3,072 tokens): "not Thursday" took the exam's line out of every summary
    # as a name taken back, and the place and the hour with it.
    advice = (" Practise the manoeuvres you find hard on quiet streets first, ask your "
              "instructor for feedback after every lesson, and get some sleep before the "
              "day.")
    turns = chat("Yesterday I had my first driving lesson with my instructor Piet.",
                 "How did it go?" + advice,
                 "My driving exam is next Thursday at 9 in Amersfoort.", "Good luck!" + advice,
                 "Each lesson costs 55 euros and I have 6 left.", "Noted." + advice,
                 "Actually the exam moved to Friday the 18th, not Thursday.", "Noted." + advice)
    summary = summarize_locally(turns, budget_tokens=1_000)
    assert "next Thursday at 9 in Amersfoort. [Since changed: Friday, not Thursday.]" in (
        summary)
    assert "moved to Friday the 18th, not Thursday" in summary
    # A place taken back is a name: its line goes, as before.
    moved = chat("We're going to Lisbon in May with the kids.", "Lovely!",
                 "We changed the trip: it's Porto now, not Lisbon.", "Porto it is.")
    assert "going to Lisbon" not in summarize_locally(moved, budget_tokens=1_000)


def test_a_carried_lines_change_mark_stays_with_its_sentence_once() -> None:
    # By hand (3,072 tokens): carried into the next compaction beside its correction,
    # the exam's sentence was marked again, and a compaction later the two marks stood
    # alone, the sentence gone.
    mark = "[Since changed: Friday, not Thursday.]"
    previous = ("## Critical Context\n- User: My driving exam is next Thursday at 9 in "
                f"Amersfoort. {mark} Last week Piet said I brake too late at roundabouts.\n"
                f"- User: {mark} Each lesson costs 55 euros and I have 6 left.\n")
    advice = " Practise on quiet streets first and ask your instructor for feedback." * 3
    turns = chat("Actually the exam moved to Friday the 18th, not Thursday.", "Noted." + advice,
                 "My sister Femke will lend me her car on Sunday.", "How kind!" + advice)
    summary = summarize_locally(turns, budget_tokens=1_000, previous_summary=previous)
    assert summary.count(mark) == 1
    assert f"at 9 in Amersfoort. {mark}" in summary
    assert "User: [Since" not in summary and f"{mark} {mark}" not in summary
    assert "Each lesson costs 55 euros" in summary and "brake too late" in summary
    notes, _ = carried_notes([previous.splitlines()[1][2:], previous.splitlines()[2][2:]],
                             {"User": "user"}, 0)
    assert [note.text for note in notes] == [
        f"My driving exam is next Thursday at 9 in Amersfoort. {mark}",
        "Last week Piet said I brake too late at roundabouts.",
        "Each lesson costs 55 euros and I have 6 left."]
    # Two corrections of one sentence keep both marks.
    other = "[Since changed: 10, not 9.]"
    assert marked_sentences(f"The exam is next Thursday at 9. {mark} {other} {mark}") == [
        f"The exam is next Thursday at 9. {mark} {other}"]


@pytest.mark.parametrize(("older", "after"), [
    ("We land on October 3rd.", ""),
    ("User: we land on the 3rd, early in the morning.", ""),
    # A line that holds more than the correction tells keeps it, the change marked.
    ("We land in Osaka on October 3rd.",
     "We land in Osaka on October 3rd. [Since changed: 5th, not 3rd.]"),
    ("We land on October 3rd and fly home on the 15th.",
     "We land on October 3rd and fly home on the 15th. [Since changed: 5th, not 3rd.]"),
    ("My niece turns 3 in October.", None),  # the same value about another thing
    # Marked before and carried again beside its correction: marked once (by hand the
    # line ended "[Since changed: 11, not 9.] [Since changed: 11, not 9.]").
    ("We land in Osaka on October 3rd. [Since changed: 5th, not 3rd.]",
     "We land in Osaka on October 3rd. [Since changed: 5th, not 3rd.]"),
])
def test_a_value_taken_back_ends_a_line_or_is_marked_in_it(older: str,
                                                           after: str | None) -> None:
    change = change_of("Change of plan: we land on October 5th instead of the 3rd.", 9)
    found = value_change(older, text_stems(older), "", {("", "3"): [change]})
    assert found == (None if after is None else (9, after))


@pytest.mark.parametrize(("sentence", "swaps"), [
    ("We'll stay 10 days instead of 12.", (("12", "12", "10"),)),
    ("We stay ten days instead of twelve.", (("12", "twelve", "ten"),)),
    ("Moved from Tuesday to Thursday.", (("tuesday", "Tuesday", "Thursday"),)),
    ("Actually our budget is now 3500 euros, not 4000.", (("4000", "4000", "3500"),)),
    ("We arrive on 5 October instead of 3 October.", (("3", "3", "5"),)),
    ("Not five, we now need six chairs.", (("5", "five", ""),)),  # nothing of its kind
])
def test_a_correction_says_what_takes_the_place_of_the_value_it_takes_back(
        sentence: str, swaps: tuple[tuple[str, str, str], ...]) -> None:
    assert salience_module.value_swaps(sentence) == swaps


def test_what_the_user_corrects_in_the_turns_kept_whole_is_revised_in_the_summary() -> None:
    # By hand (3,072 tokens): "Actually our budget is now 3500 euros, not 4000." was the
    # newest turn, kept whole, the summary beside it still said "Our budget is about 4000
    # euros", and the embedded model answered 4000.
    summary = ("## Goal\n- We land in Osaka on October 3rd and fly home on the 15th.\n\n"
               "## Critical Context\n- User: Our budget is about 4000 euros.\n"
               "- User: We're going to Lisbon in May.\n- User: My niece turns 3 in "
               "October.\n- (none)\n")
    later = chat("Change of plan: we land on October 5th instead of the 3rd. Actually our "
                 "budget is now 3500 euros, not 4000.",
                 "Lisbon instead of Porto might be better.", "It's Porto now, not Lisbon.")
    revised = revised_by_later(summary, later)
    assert revised == ("## Goal\n- We land in Osaka on October 3rd and fly home on the "
                       "15th. [Since changed: 5th, not 3rd.]\n\n## Critical Context\n"
                       "- User: My niece turns 3 in October.\n- (none)\n")
    # The assistant corrects nothing; without the user's corrections nothing changes.
    assert revised_by_later(summary, later[1:2]) == summary


def test_a_thing_said_to_be_another_value_now_in_the_kept_turns_is_revised_too() -> None:
    # By hand (Spanish, 3,072 tokens): "El presupuesto ahora es de 70 euros." stood after
    # a summary that still said 50 euros; a correction that names no old value revised
    # the notes of a compaction, not the summary beside it.
    summary = ("## Critical Context\n- User: Our budget is about 18,000 euros. We fly on "
               "Monday.\n- User: The movers come on Thursday the 14th at 8:00.\n")
    later = chat("Correction: the budget is 21,000 euros now.", "Noted.",
                 "The movers come on Friday the 15th now.", "Noted.")
    assert revised_by_later(summary, later) == (
        "## Critical Context\n- User: We fly on Monday.\n- User: The movers come on Friday "
        "the 15th at 8:00. [Since changed: Friday, not Thursday; 15th, not 14th.]\n")
    # The assistant's saying so corrects nothing.
    assert revised_by_later(summary, chat("Hi.", "The budget is 21,000 euros now.")) == summary


def test_an_ai_line_that_retold_the_plan_a_kept_correction_changes_is_revised_too() -> None:
    # By hand (3,072 tokens) the correction was among the turns kept whole; the user's
    # line went, the embedded model's retelling stayed, and it answered "Tuesday [8 Dec
    # 2026]" when asked when the interview was.
    summary = ("## Critical Context\n- User: The interview is on Tuesday [8 Dec 2026] at "
               "10:30.\n- Assistant: You will need your BIG registration number and two "
               "payslips at 10:30 on Tuesday [8 Dec 2026].\n- User: We visit the museum on "
               "Tuesday [8 Dec 2026].\n- Assistant: The museum opens at 11:00 on Tuesday "
               "[8 Dec 2026].\n")
    later = chat("Actually the interview moved to Wednesday at 14:00, not Tuesday.", "Noted.")
    assert revised_by_later(summary, later) == (
        "## Critical Context\n- Assistant: You will need your BIG registration number and "
        "two payslips at 10:30 on Tuesday [8 Dec 2026]. [Since changed: Wednesday, not "
        "Tuesday.]\n- User: We visit the museum on Tuesday [8 Dec 2026].\n- Assistant: "
        "The museum opens at 11:00 on Tuesday [8 Dec 2026].\n")
    # Between people the other speaker's notes are their own, and the user's own lines
    # need the correction's words.
    between = summary.replace("Assistant: ", "Melanie: ")
    assert "two payslips at 10:30 on Tuesday [8 Dec 2026].\n" in revised_by_later(between,
                                                                              later)


def test_a_compaction_revises_its_summary_by_a_correction_in_the_kept_turns() -> None:
    filler = [f"Day {i}: we walk along the river and look at the boats in the harbour."
              for i in range(12)]
    turns = chat(*[text for line in filler[:4] for text in (line, "Sounds lovely.")],
                 "Our budget for the trip is about 4000 euros, excluding flights.", "Noted.",
                 *[text for line in filler[4:] for text in (line, "Sounds lovely.")],
                 "Actually our budget is now 3500 euros, not 4000.", "Understood.")
    engine = ContextCompressor(context_length=3_072)
    engine.threshold_tokens = 400
    out = engine.compress(turns)
    report = engine.last_report
    assert report is not None and report.summary is not None
    assert "not 4000" in out[-2]["content"]  # kept whole …
    assert "about 4000 euros" not in report.summary  # … and the summary agrees
    assert not any("about 4000 euros" in str(m["content"]) for m in out)
    # (Summarised without the correction, the budget is there.)
    assert "about 4000 euros" in summarize_locally(turns[2:-2], budget_tokens=1_000)


def test_near_identical_facts_are_kept_once() -> None:
    turns = [said("Caroline", "I started a pottery class in Denver."),
             *conversation()[1:7],
             said("Caroline", "I started a pottery class in Denver!")]
    summary = summarize_locally(turns, budget_tokens=2_000)
    assert summary.count("pottery class in Denver") == 1


def test_sections_mean_what_they_say_between_people() -> None:
    s = parse_summary_sections(summarize_locally(conversation(), budget_tokens=2_000))
    # Who talks, and the date of the latest session a header line named (its line may
    # be summarised away: see test_the_latest_session_date_is_carried_to_the_next_summary).
    assert s["Goal"] == ["Participants: Caroline (user), Melanie (assistant)",
                         "Latest session date: 20 Jun 2023"]
    assert any("LGBTQ support group" in x for x in s["Progress/Done"])  # the timeline
    assert any("Yosemite" in x for x in s["Key Decisions"])  # plans
    assert "Progress/In Progress" not in s  # no "last step" quote of a chat message


def chat(*texts: str) -> list[Message]:
    """``texts`` as `mnemo chat` sends them: roles only, the user first, in turn."""
    return [{"role": ("user", "assistant")[i % 2], "content": text}
            for i, text in enumerate(texts)]


def unnamed(turns: list[Message]) -> list[Message]:
    """``turns`` as ``mnemo chat`` sends them: roles only, no speaker names."""
    return [{"role": m["role"], "content": m["content"]} for m in turns]


def test_a_conversation_without_names_gets_the_conversation_sections() -> None:
    turns = unnamed(conversation())
    assert is_conversation(extract_facts(turns))
    summary = summarize_locally(turns, budget_tokens=2_000)
    s = parse_summary_sections(summary)
    assert "Participants: " not in summary  # nothing to say beyond the roles
    assert any("8 May 2023 · User: I went to an LGBTQ support group" in x
               for x in s["Progress/Done"])  # the dated timeline
    assert any("Yosemite" in x for x in s["Key Decisions"])
    assert "User said: " not in summary and "Assistant noted: " not in summary
    assert "Progress/In Progress" not in s
    for line in lines_of(summary):
        assert not any(p.rstrip("!.") in line for p in PHATIC if len(p) > 12), line


def test_a_rule_the_user_sets_for_an_ai_assistant_is_a_constraint() -> None:
    turns: list[Message] = [
        {"role": "user", "content": "Hi! I just moved to Utrecht from Lisbon last month."},
        {"role": "assistant", "content": "Welcome! How are you settling in?"},
        {"role": "user", "content": "Also, I'm vegetarian, so please only suggest "
                                    "vegetarian recipes. From now on, call me Bea."},
        {"role": "assistant", "content": "Got it, vegetarian recipes only, Bea."},
        {"role": "user", "content": "Please suggest a quick dinner for tonight."},
        {"role": "assistant", "content": "Try a chickpea curry with spinach."},
        {"role": "user", "content": "By the way, my car broke down yesterday."},
        {"role": "assistant", "content": "Sorry to hear that! Good, so you'll have it "
                                         "back on Thursday."},
    ]
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000,
                                                 session_date=date(2026, 12, 1)))
    rules = " ".join(s["Constraints & Preferences"])
    assert "only suggest vegetarian recipes" in rules and "Call me Bea" in rules
    assert "quick dinner" not in rules  # a request for one answer sets no rule
    # A note that lost its phatic opening starts as a sentence does.
    notes = " ".join(s["Critical Context"])
    assert "User: My car broke down yesterday [30 Nov 2026]" in notes
    assert "You'll have it back on Thursday [3 Dec 2026]" in notes


@pytest.mark.parametrize(("sentence", "rule"), [
    # A rule put as "no … please" or "avoid … in my …" (a written chat, read by hand:
    # the allergy had stood among the notes, Constraints & Preferences empty).
    ("Oh, and I'm lactose intolerant, so no whey protein please.", True),
    ("No onions, please.", True), ("Please no emojis.", True),
    ("Avoid dairy in my meal plans.", True),
    ("Please avoid peanuts in any recipe you suggest.", True),
    ("No problem, please.", False), ("I have no idea, please help.", False),
    ("We avoid the highway in the mornings.", False),
    ("I said no to the job, please understand.", False)])
def test_a_rule_said_as_no_or_avoid(sentence: str, rule: bool) -> None:
    assert is_standing_rule(sentence) is rule


def test_a_note_does_not_open_with_the_connective_that_tied_it_to_the_sentence_before(
) -> None:
    turns = chat("I'm training for the Valencia half marathon.", "Great goal!",
                 "Oh, and I'm lactose intolerant, so no whey protein please.",
                 "Understood, I'll stick to pea protein.",
                 "Also I switched my long run to Saturdays because of work.")
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=1_000))
    assert any(line.startswith("User: I'm lactose intolerant")
               for line in s["Constraints & Preferences"])
    text = "\n".join(line for lines in s.values() for line in lines)
    assert "I switched my long run to Saturdays" in text
    assert "And I'm" not in text and "Also I switched" not in text


@pytest.mark.parametrize("sentence", [
    "Noted.", "Understood.", "Noted, thanks.", "Great goal!", "Good choice!",
    "Excellent progress!", "Great idea!", "Awesome advice!",
    "Good question!", "Certainly!", "Understood, I will keep that in mind.",
    "Thanks, I'll keep that in mind!"])
def test_an_ai_assistants_acknowledgement_is_phatic(sentence: str) -> None:
    assert is_phatic(sentence)


@pytest.mark.parametrize("sentence", [
    "Good choice of shoes for the Berlin race.", "I noted the address: 5 Elm Street.",
    "I'll keep that in mind for the trip to Rome."])
def test_praise_or_a_promise_with_a_fact_is_not_phatic(sentence: str) -> None:
    assert not is_phatic(sentence)


@pytest.mark.parametrize(("sentence", "kept"), [
    ("I'm so excited, I really loved the race!", "I'm excited, I loved the race!"),
    ("Yesterday I ran 18 km, my longest run so far.", None),
    ("Fruits such as bananas help.", None), ("Even if it rains, I will run.", None),
    ("I even ran 20 km.", "I ran 20 km.")])
def test_a_note_loses_its_fillers_but_not_the_phrases_they_stand_in(
        sentence: str, kept: str | None) -> None:
    # Seen in a chat's summary: "my longest run so far" had become "my longest run far".
    assert salience_module.condensed(sentence) == (kept or sentence)


def test_what_the_user_asks_the_assistant_to_keep_in_mind_is_a_constraint() -> None:
    turns: list[Message] = [
        {"role": "user", "content": "I need help planning my marathon training."},
        {"role": "assistant", "content": "Great goal! How far do you run each week?"},
        {"role": "user", "content": "About 35 km. I'm allergic to peanuts, so keep that in "
                                    "mind for fuel suggestions."},
        {"role": "assistant", "content": "Noted. Bananas and rice cakes with honey work well."},
        {"role": "user", "content": "Thanks, I'll keep that in mind. My coach is Marta."},
        {"role": "assistant", "content": "Understood, I will keep that in mind."},
    ]
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000))
    rules = " ".join(s["Constraints & Preferences"])
    assert "allergic to peanuts" in rules
    assert "I'll keep that in mind" not in rules  # the user's promise sets no rule
    every = " ".join(lines_of(summarize_locally(turns, budget_tokens=2_000)))
    assert "Noted" not in every and "Great goal" not in every
    assert "Understood" not in every and "Bananas and rice cakes" in every


def test_a_chat_with_a_rule_for_the_answers_stays_a_chat_and_the_rule_no_ask() -> None:
    # Seen by hand (``mnemo chat``, 3,072 tokens): the rule counted as work, and with the
    # model's one "Python" the first compaction was a work session's — its memory calls
    # under Done took the room of the partner, the dog and the trip — and the rule,
    # opening with "Please remember:", stood under Pending User Asks.
    turns: list[Message] = [
        {"role": "user", "content": "Please remember: I'm allergic to peanuts, so never "
                                    "suggest recipes with peanuts."},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "m1", "type": "function", "function": {"name": "memory", "arguments":
                '{"action": "add", "target": "user", "content": "Allergic to peanuts."}'}}]},
        {"role": "tool", "tool_call_id": "m1", "content": '{"success": true}'},
        {"role": "assistant", "content": "Never suggest recipes with peanuts."},
        *chat("My partner is called Sam and we just moved to Headingley last month.",
              "Welcome to Headingley!",
              "We have a dog named Biscuit, he is three years old.",
              "Biscuit is three years old.",
              "I started learning Portuguese on 3 March because we are going to Lisbon.",
              "Python is taught on 3 March.",
              "What are three phrases I should learn first?",
              "Start with olá, obrigado and por favor.")]
    facts = extract_facts(turns)
    assert is_conversation(facts)
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=400))
    assert any("allergic to peanuts" in line for line in s["Constraints & Preferences"])
    assert not any("peanuts" in line for line in s.get("Pending User Asks", []))
    every = " ".join(line for lines in s.values() for line in lines)
    assert "Headingley" in every and "Biscuit" in every and "Portuguese" in every
    assert "action=add" not in every


def test_between_people_advice_sets_no_rule() -> None:
    turns = [said("Caroline", "[Session 1, 1:56 pm on 8 May, 2023]\nI ran my first 10k."),
             said("Melanie", "Always use good shoes for long runs, and never skip the "
                  "warm-up before a race in Boston."),
             said("Caroline", "I bought trail shoes in Denver last week."),
             said("Melanie", "Mine are from a shop in Boston.")]
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000))
    assert "Constraints & Preferences" not in s  # Melanie's advice is her note
    assert any("never skip the warm-up" in x for x in s["Critical Context"])


def test_a_coding_chat_without_names_or_tools_stays_a_work_session() -> None:
    turns: list[Message] = []
    for k in range(6):
        turns += [{"role": "user", "content": f"Step {k}: the login handler in src/auth.py "
                   "returns 500 when the token expired. Can you look?"},
                  {"role": "assistant", "content": "The handler calls `jwt.decode()` without "
                   "catching ExpiredSignatureError; I'll wrap it and return 401."}]
    facts = extract_facts(turns)
    assert not is_conversation(facts)
    summary = summarize_locally(turns, budget_tokens=2_000)
    assert "src/auth.py" in summary
    assert "Latest request in these turns: Step 5" in summary  # the coding Goal lines


def test_a_short_exchange_without_names_is_not_taken_for_a_conversation() -> None:
    turns = unnamed(conversation()[2:4])  # two texts say too little to tell
    assert not is_conversation(extract_facts(turns))


@pytest.mark.parametrize("budget", [200, 500, 2_000])
def test_summaries_stay_within_the_budget(budget: int) -> None:
    turns = [said("Caroline" if i % 2 else "Melanie",
                  f"In week {i} I visited Lake Number{i} with Anna{i} and we caught {i} "
                  f"trout near Camp{i}. My bike number {i} broke last Friday.")
             for i in range(400)]
    summary = summarize_locally(turns, budget_tokens=budget)
    assert estimate_tokens_rough(summary) <= budget


def test_compress_keeps_the_summary_within_its_budget() -> None:
    messages = [said("Caroline" if i % 2 else "Melanie",
                     f"[Session {i // 20 + 1}, 1:56 pm on {i // 20 + 1} May, 2023]\n"
                     f"Last week I met Anna{i} in Paris{i} and bought {i} books."
                     if i % 20 == 0 else f"I met Anna{i} in Paris{i} and bought {i} books.")
                for i in range(600)]
    engine = ContextCompressor(context_length=8_000)
    engine.compress(messages)
    report = engine.last_report
    assert report is not None and report.summary is not None
    assert estimate_tokens_rough(report.summary) <= 2_000  # C9: max(2,000, …)


def _museum_days() -> list[Message]:
    """Eighty days of two people's news, with a system message."""
    messages: list[Message] = [{"role": "system", "content": "You are a helpful assistant."}]
    for i in range(80):
        messages += [said("Caroline", f"On day {i} I visited the museum number {i} in "
                                      f"Lisbon with my friend Ana{i}."),
                     said("Melanie", f"I baked {i} loaves of bread for the Porto market.")]
    return messages


def test_a_small_window_gets_a_summary_that_fits_it() -> None:
    # C9's floor (2,000 tokens) is more than a 3,072-token window holds beside its head
    # and tail: the summary is written to what fits, not cut by the window guard later.
    messages = _museum_days()
    engine = ContextCompressor(context_length=3_072)
    out = engine.compress(messages)
    report = engine.last_report
    assert report is not None and report.summary is not None
    assert estimate_messages_tokens_rough(out) <= engine.threshold_tokens
    assert "Caroline:" in report.summary  # still a summary of the conversation
    # Counted as the window guard counts — a tokenizer that finds more tokens in the
    # summary than its rough estimate — it still fits.
    engine = ContextCompressor(context_length=3_072)

    def counted(message: Message) -> int:
        return int(estimate_messages_tokens_rough([message]) * 1.3)

    engine.count_with(counted)
    out = engine.compress(messages)
    assert engine.last_report is not None and engine.last_report.summary is not None
    assert sum(counted(m) for m in out) <= engine.threshold_tokens


def test_the_summary_leaves_room_for_what_every_request_carries() -> None:
    # An agent's requests carry tool schemas besides the messages: a compaction that
    # filled the threshold with messages would be due again at the next turn.
    messages = _museum_days()
    sizes = {}
    for reserved in (0, 600):
        engine = ContextCompressor(context_length=6_000)
        engine.reserve(reserved)
        out = engine.compress(messages)
        assert engine.last_report is not None and engine.last_report.summary is not None
        sizes[reserved] = estimate_messages_tokens_rough(out)
        assert sizes[reserved] + reserved <= engine.threshold_tokens
    # The summary gave the room up (nine tenths of it: a tenth is kept in hand).
    assert sizes[600] <= sizes[0] - 450


@pytest.mark.parametrize("bad", [-1, 1.5, "600", None])
def test_a_bad_reserve_is_refused_and_the_engine_unchanged(bad: object) -> None:
    engine = ContextCompressor(context_length=8_192)
    engine.reserve(300)
    with pytest.raises(UsageError, match="reserved tokens must be a number of tokens"):
        engine.reserve(bad)  # type: ignore[arg-type]
    assert engine.reserved_tokens == 300


def test_a_cut_the_window_guard_made_in_a_summary_is_not_carried() -> None:
    from mnemo.context.shrink import cut_marker

    previous = ("## Critical Context\n- User: My cat Luna is twelve.\n"
                f"{cut_marker(484)}\n- User: I run 5 km every Tuesday.\n")
    assert parse_summary_sections(previous)["Critical Context"] == [
        "User: My cat Luna is twelve.", "User: I run 5 km every Tuesday."]
    # A cut inside a line (a note cut where the summary was) leaves "…" in its place.
    inside = f"## Critical Context\n- User: Pixel is 10 weeks old, {cut_marker(211)} in Gaia.\n"
    assert parse_summary_sections(inside)["Critical Context"] == [
        "User: Pixel is 10 weeks old, … in Gaia."]


def test_the_pieces_of_sentences_a_cut_left_are_no_notes() -> None:
    from mnemo.context.shrink import cut_marker, cut_text
    from mnemo.context.summary.reading import whole_sentences

    # Seen by hand (Spanish, 3,072 tokens): the window guard cut a reply mid-word, and
    # "… San Pabl s el domingo …" was a note; a memory call written as JSON text, cut
    # so, was a note of JSON.
    cut = (f"We fly to Lisbon on Friday. The hotel is near the Alfama and it has a\n"
           f"{cut_marker(161)}\ns the best view, the owner said. We land at 9:40.")
    assert whole_sentences(cut) == "We fly to Lisbon on Friday.\nWe land at 9:40."
    json_text = f'{{"name": "memory", "arguments": {{"action\n{cut_marker(194)}\nunt": 0}}}}'
    assert whole_sentences(json_text) == ""
    # A cut on a line break leaves whole lines, a list's too.
    items = "\n".join(f"- Item {i}: value {i}" for i in range(40))
    kept = whole_sentences(cut_text(items, 300)).splitlines()
    assert kept[0] == "- Item 0: value 0" and kept[-1] == "- Item 39: value 39"
    assert all(line.startswith("- Item ") for line in kept)
    turns = chat("We're off to Lisbon on Friday.", cut, "Sounds great.", "Thanks!")
    summary = summarize_locally(turns, budget_tokens=2_000)
    assert "We land at 9:40" in summary and "has a" not in summary, summary
    assert "s the best view" not in summary and "characters cut here" not in summary


def test_each_message_is_read_once() -> None:
    turns = conversation()
    CACHE.clear()
    first = extract_facts(turns)
    read = CACHE.misses
    assert read > 0
    again = extract_facts(turns)
    assert CACHE.misses == read  # nothing read a second time
    assert again.notes == first.notes and again.resolved == first.resolved
    # A live session: the next compaction reads only the messages that are new.
    more = [*turns, said("Caroline", "I finally booked the flight to Lisbon.")]
    extract_facts(more)
    assert CACHE.misses == read + 2  # the new message: its text and its notes


def test_the_cache_is_bounded() -> None:
    from mnemo.context.summary.cache import MessageCache

    cache = MessageCache(limit=10)
    for i in range(25):
        assert cache.get(("k", i), lambda i=i: i * 2) == i * 2
    assert len(cache) <= 10
    assert cache.get(("k", 24), lambda: -1) == 48  # the newest entries stay
    assert cache.misses == 25 and cache.hits == 1


def test_a_previous_summarys_notes_are_read_back_as_notes() -> None:
    speakers = {"Caroline": "user", "Melanie": "assistant"}
    notes, others = carried_notes([
        "8 May 2023 · Caroline: I went to a support group yesterday [7 May 2023]. "
        "Melanie: I painted a sunrise over Lake Tahoe.",
        "Melanie: My pottery class starts on Monday. We have two kids.",
        "Never deploy on Fridays.",
        "ValueError: bad input",
    ], speakers, -500)
    assert [(n.speaker, n.role, n.day, n.text) for n in notes] == [
        ("Caroline", "user", "8 May 2023",
         "I went to a support group yesterday [7 May 2023]."),
        ("Melanie", "assistant", "8 May 2023", "I painted a sunrise over Lake Tahoe."),
        ("Melanie", "assistant", "", "My pottery class starts on Monday."),
        ("Melanie", "assistant", "", "We have two kids."),
    ]
    assert [n.order for n in notes] == [-500, -499, -498, -498]
    assert others == ["Never deploy on Fridays.", "ValueError: bad input"]


def _chat(first: int, count: int) -> list[Message]:
    """``count`` exchanges of plain facts, numbered from ``first`` (one session)."""
    turns: list[Message] = []
    for i in range(first, first + count):
        turns.append(said("Caroline", f"I visited the {i}th museum in Lisbon with Ana."))
        turns.append(said("Melanie", f"We bought {i} tickets for the Porto ferry."))
    return turns


def test_a_live_conversation_keeps_its_best_old_notes_through_compactions() -> None:
    first = [said("Caroline", "[Session 1, 1:56 pm on 8 May, 2023]\nMy dog's name is Rex. "
                              "I adopted him from the Oakland shelter in 2019."), *_chat(1, 20)]
    summary = summarize_locally(first, budget_tokens=2_000)
    assert "Oakland shelter" in summary
    # The next compaction: many new notes, and one that replaces an old one.
    second = [*_chat(100, 40), said("Caroline", "My dog's name is Max now.")]
    merged = summarize_locally(second, budget_tokens=2_000, previous_summary=summary)
    assert "Oakland shelter in 2019" in merged  # it tells more than most new notes
    assert "My dog's name is Max now." in merged
    assert "Rex" not in merged  # the newer note replaced it
    assert estimate_tokens_rough(merged) <= 2_000
    # The assistant's old notes count against the assistant's room, as new ones do.
    assert "Melanie: We bought 1" in merged or "Melanie: We bought 2" in merged


def test_a_summary_merged_again_keeps_what_it_said() -> None:
    # A live chat merges its summary into the next again and again. Counted as turns
    # that the notes restate, the old notes lost half their room each time: the summary
    # halved within a few compactions (LoCoMo conversation 41 in a 4,096-token window:
    # 21 answers, then 18, 17, 15, 11, 10 with nothing new said).
    # Most of it is what the user said (the room of one speaker's notes was half).
    places = ("Lisbon", "Porto", "Braga", "Faro", "Évora", "Coimbra", "Sintra", "Aveiro",
              "Viseu", "Leiria", "Tomar", "Beja", "Guarda", "Lagos", "Nazaré", "Óbidos")
    texts: list[str] = []
    for year, place in enumerate(places, start=2001):
        texts += [f"My cousin moved to {place} in {year} to open a bakery.", "Nice!"]
    summary = summarize_locally(chat(*texts), budget_tokens=1_000)
    kept = [place for place in places if place in summary]
    assert len(kept) >= 6
    merged = summary
    for _ in range(3):
        merged = summarize_locally(chat("OK.", "Sure."), budget_tokens=1_000,
                                   previous_summary=merged)
    assert [place for place in places if place in merged] == kept, merged


def test_an_earlier_summarys_open_question_closes_when_the_asker_moves_on() -> None:
    # A question left open by one compaction (its reply fell in the next turns) was
    # carried as a request: it never closed, and a live chat's Pending User Asks grew by
    # one at nearly every compaction (20 lines by the end of a LoCoMo conversation).
    previous = ("## Pending User Asks\n- What was the prettiest spot?\n"
                "- Can you remind me on Friday to book the vet?\n")
    # The reply shares no word with the question (no pair), then the user moves on.
    turns: list[Message] = [
        {"role": "assistant", "content": "The lake at dawn, no doubt."},
        {"role": "user", "content": "I'm off to Lisbon next week."},
        {"role": "assistant", "content": "Have a safe trip!"}]
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000,
                                                 previous_summary=previous))
    assert s.get("Pending User Asks") == ["Can you remind me on Friday to book the vet?"]


def test_a_rule_said_as_a_chat_goes_on_keeps_it_a_chat() -> None:
    # A compaction in a small window summarises four or five texts; one of them a rule
    # or advice ("Never suggest meat dishes.") made the chat's summary a work session's.
    earlier = summarize_locally(unnamed(conversation()), budget_tokens=2_000)
    turns = chat("We adopted a second cat, Luna, on Sunday.", "Two cats now!",
                 "Never suggest meat dishes, I'm vegetarian.", "Understood.",
                 "My brother Tiago lives in Braga.")
    facts = extract_facts(turns, continued=True)
    assert is_conversation(facts)
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000,
                                                 previous_summary=earlier))
    text = " ".join(line for lines in s.values() for line in lines)
    assert "User said:" not in text
    # Dated by the earlier summary's latest session (20 June 2023, a Tuesday).
    assert "We adopted a second cat, Luna, on Sunday [18 Jun 2023]." in text
    assert any("Never suggest meat dishes" in line
               for line in s["Constraints & Preferences"])


def test_notes_a_first_work_style_summary_labelled_are_ranked_again_in_the_chat() -> None:
    # A live chat's first compaction holds too few texts to tell a chat: its summary is
    # laid out for work ("User said: ", "Assistant noted: "). Going on as a chat, those
    # lines are the speakers’ notes again, ranked with the new ones — in a live chat of
    # long replies at 3,072 tokens the assistant’s generic advice was carried whole and
    # outlived the user’s personal best and race goal.
    advice = ("Here are some suggestions. First, listen to your body and adjust the plan "
              "as needed. Second, consistency matters more than any single workout.")
    first = ("## Goal\n- What should I eat before a long run?\n## Critical Context\n"
             f"- Assistant noted: {advice}\n"
             "- User said: My personal best for a half marathon is 1:52, set in Manchester.\n")
    turns = chat("I'm training for the Berlin marathon.", "Thanks for sharing! " + advice,
                 "My goal is to finish under 4 hours.", "That's a great goal!",
                 "My coach Marta Okafor runs the Riverside Running Club.")
    s = summarize_locally(turns, budget_tokens=150, previous_summary=first)
    assert "said: " not in s and "noted: " not in s
    for fact in ("Berlin marathon", "1:52", "under 4 hours", "Marta Okafor"):
        assert fact in s, s
    assert "consistency matters" not in s  # the advice gives way to what the user told


def test_one_text_that_looks_like_work_does_not_end_a_chat() -> None:
    # Seen by hand: the embedded model wrote its memory call as JSON text, and the next
    # summary was a work session's, its "Last step" line the JSON, the notes gone.
    earlier = summarize_locally(unnamed(conversation()), budget_tokens=2_000)
    turns: list[Message] = [
        *_saved(1, "Learning the violin"),
        {"role": "assistant", "content": '{"name": "memory", "arguments": {"action": "add", '
                                         '"content": "Learning the violin"}}'},
        {"role": "user", "content": "My husband Arjun is a civil engineer in Bristol."}]
    s = summarize_locally(turns, budget_tokens=400, previous_summary=earlier)
    assert "Last step in these turns" not in s and "User said" not in s
    assert "My husband Arjun is a civil engineer in Bristol." in s
    assert "Yosemite" in s  # the earlier notes stay
    # A call written as JSON text, or its made-up result, is no prose at all (by hand the
    # embedded model wrote several in a row: two texts that show work end a chat).
    imitated = [{"role": "assistant", "content": 'returned: {"success": true, "entry_count": '
                                                 '6}\n{"name": "memory", "arguments": '
                                                 '{"action": "add", "content": "Meera"}}'},
                {"role": "user", "content": "We have a beagle called Toffee."}] * 2
    s = summarize_locally([*turns, *imitated], budget_tokens=400, previous_summary=earlier)
    assert "Last step in these turns" not in s and "returned" not in s
    assert "We have a beagle called Toffee." in s
    # Two such texts are work: a chat can turn into a coding session.
    code: list[Message] = [
        {"role": "user", "content": "Fix this:\n```python\ndef f(x):\n    return x[0]\n```"},
        {"role": "assistant", "content": "```python\ndef f(x):\n    return x[0] if x else "
                                         "None\n```"}]
    assert not is_conversation(extract_facts([*turns, *code], continued=True))


def test_a_small_summary_spends_no_room_on_empty_sections() -> None:
    # Twelve "(none)" lines are a third of a 3,072-token window's summary: there an
    # empty section is its heading alone (the layout stays).
    turns = unnamed(conversation())
    small = summarize_locally(turns, budget_tokens=150)
    assert "(none)" not in small
    for section in ("## Goal", "### Blocked", "## Critical Context", "## Tools & Patterns"):
        assert section in small
    assert "(none)" in summarize_locally(turns, budget_tokens=2_000)  # room to say so
    notes = [line for lines in parse_summary_sections(small).values() for line in lines]
    assert len(notes) >= 2 and estimate_tokens_rough(small) <= 150


def test_a_chats_memory_calls_give_way_to_what_the_user_said() -> None:
    # By hand, a small window's summary kept "memory ×4" and left out the user's job.
    turns: list[Message] = [
        {"role": "user", "content": "I work as a nurse at Southmead hospital, night shifts."},
        *_saved(1, "Nurse at Southmead"),
        {"role": "assistant", "content": "Night shifts are hard work."},
        {"role": "user", "content": "We have a beagle called Toffee."},
        *_saved(2, "Beagle Toffee"),
        {"role": "assistant", "content": "Toffee is a sweet name."},
        {"role": "user", "content": "My daughter Meera turns seven on 12 January."},
        *_saved(3, "Daughter Meera"),
        {"role": "assistant", "content": "Happy early birthday to Meera!"}]
    assert is_conversation(extract_facts(turns))
    # The smallest summary that holds the three facts has no room left for the count:
    # it went first when it weighed as a work session's tool line.
    facts = ("Southmead", "Toffee", "Meera")
    tight = next(summary for budget in range(60, 400, 2)
                 if all(f in (summary := summarize_locally(turns, budget_tokens=budget))
                        for f in facts))
    assert "memory ×3" not in tight
    assert "memory ×3" in summarize_locally(turns, budget_tokens=2_000)


def _called(call_id: str, name: str, args: dict[str, str], result: str = "ok"
            ) -> list[Message]:
    """An assistant message with one tool call, and the call's result."""
    call = {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]},  # type: ignore[list-item]
            {"role": "tool", "tool_call_id": call_id, "content": result}]


def _saved(number: int, content: str) -> list[Message]:
    """The memory call ``mnemo chat`` makes when the user tells it about themselves."""
    return _called(f"m{number}", "memory", {"action": "add", "target": "user",
                                            "content": content},
                   '{"success": true, "target": "user", "message": "Entry added."}')


def test_a_refused_memory_call_is_neither_done_nor_blocked() -> None:
    # By hand: the embedded model's three refused memory calls, one saving a name it made
    # up ("I'm Lisa …"), were listed under Done.
    refused = ('{"success": false, "error": "Not saved: the entry says things nobody in '
               'this conversation said (\'Lisa\')."}')
    turns: list[Message] = [
        {"role": "user", "content": "Hi, I'm Lena and we're off to Japan in October."},
        *_called("m1", "memory", {"action": "add", "target": "user",
                                  "content": "I'm Lisa and I travel to Japan."}, refused),
        {"role": "assistant", "content": "Hello Lena!"},
        {"role": "user", "content": "We land in Osaka on October 3rd."},
        *_called("d1", "deploy", {"command": "deploy --prod"},
                 '{"ok": false, "message": "the build is red"}'),
        {"role": "assistant", "content": "The deploy failed."},
    ]
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000))
    progress = " ".join(s.get("Progress/Done", []) + s.get("Progress/Blocked", []))
    assert "Lisa" not in progress
    assert "memory ×1 (1 failed)" in s["Tools & Patterns"]
    # Any other tool that says in JSON it failed is blocked, with what it said.
    assert any("the build is red" in line for line in s["Progress/Blocked"])


def test_a_chat_that_uses_the_memory_tool_is_still_a_conversation() -> None:
    # As `mnemo chat` sends it: roles only, and a memory call after what the user says
    # about themselves.
    turns: list[Message] = [
        {"role": "user", "content": "Yesterday I adopted a beagle puppy called Pixel."},
        *_saved(1, "Has a beagle puppy called Pixel"),
        {"role": "assistant", "content": "Congratulations on adopting Pixel!"},
        {"role": "user", "content": "My sister Rita is getting married in Porto on 14 June."},
        *_saved(2, "Sister Rita marries in Porto on 14 June"),
        {"role": "assistant", "content": "I hope the wedding in Porto goes well."},
        {"role": "user", "content": "I work as a nurse at Santa Maria hospital."},
        {"role": "assistant", "content": "Nursing must keep you busy."},
    ]
    facts = extract_facts(turns)
    assert is_conversation(facts)
    summary = summarize_locally(turns, budget_tokens=2_000)
    assert "User: Yesterday I adopted a beagle puppy called Pixel." in summary
    assert "Rita is getting married in Porto on 14 June" in summary
    # The memory tool's target is no file, and what it saved is in the notes already:
    # only its count is left, under Tools & Patterns.
    sections = parse_summary_sections(summary)
    assert sections.get("Relevant Files") is None
    assert not any("memory" in line for line in sections.get("Progress/Done", []))
    assert sections["Tools & Patterns"] == ["memory ×2"]
    # Any other tool makes it work.
    work = [*turns[:3], *_called("t1", "terminal", {"command": "ls"}, "notes.txt"),
            *turns[3:]]
    assert not is_conversation(extract_facts(work))


def test_a_target_or_source_is_a_file_only_when_it_looks_like_one() -> None:
    turns: list[Message] = [
        {"role": "user", "content": "Copy the config and save a note."},
        *_called("c1", "copy_file", {"source": "conf/app.toml", "destination": "backup"}),
        *_called("c2", "memory", {"action": "add", "target": "user", "content": "x"}),
        *_called("c3", "read_file", {"path": "Makefile"}),
        {"role": "assistant", "content": "Done."},
    ]
    assert sorted(extract_facts(turns).files) == ["Makefile", "conf/app.toml"]


def test_a_few_turns_that_go_on_a_conversation_are_summarised_as_one() -> None:
    # A live chat in a small window compacts two or three texts at a time: too few to
    # tell talk from work alone, so the previous summary tells.
    later: list[Message] = [
        {"role": "user", "content": "I bought a second-hand cello for 300 euros."},
        *_saved(3, "Bought a cello for 300 euros"),
        {"role": "assistant", "content": "A cello for 300 euros is a good find."},
    ]
    assert not is_conversation(extract_facts(later))  # on its own: too few texts
    earlier = summarize_locally(chat(
        "Yesterday I adopted a beagle puppy called Pixel.",
        "Pixel is a lovely name for a beagle; beagles love long walks and a lot of company.",
        "My sister Rita is getting married in Porto.",
        "Weddings in Porto are beautiful in June, when the evenings are long.",
    ), budget_tokens=2_000)
    assert "User: Yesterday I adopted a beagle puppy called Pixel." in earlier
    merged = summarize_locally(later, budget_tokens=2_000, previous_summary=earlier)
    # The user's notes, old and new, under one label (a work session says "User said").
    assert ("User: Yesterday I adopted a beagle puppy called Pixel. I bought a "
            "second-hand cello for 300 euros.") in merged
    assert "User said:" not in merged and "Last step in these turns" not in merged


def test_an_assistant_restating_what_it_was_told_adds_no_note() -> None:
    turns = chat("My sister Rita is getting married in Porto on 14 June.",
                 "I'm Rita getting married in Porto on 14 June.",
                 "I went to a pride parade last week.",
                 "I went to a pride parade last year too.",
                 "I work as a nurse at Santa Maria hospital.",
                 "Nursing at Santa Maria must keep you busy.",
                 "My favourite food is grilled sardines.",
                 "Grilled sardines are my favorite food.")
    texts = [note.text for note in extract_facts(turns).notes]
    assert "I'm Rita getting married in Porto on 14 June." not in texts  # an echo
    assert "Grilled sardines are my favorite food." not in texts  # in the other spelling
    assert "I went to a pride parade last year too." in texts  # a fact of its own
    assert "My sister Rita is getting married in Porto on 14 June." in texts


def test_a_reply_that_repeats_the_words_it_was_given_is_no_note_and_no_answer() -> None:
    # Seen by hand: the embedded model echoes a few words back.
    turns = chat("I live in Leeds and I'm a software tester at Skyscanner.",
                 "Leeds & Skyscanner.",
                 "Can you suggest a quick dinner for tonight?",
                 "Quick dinner for tonight.",
                 "How old is Biscuit?", "Biscuit is four.")
    facts = extract_facts(turns, session_date=date(2026, 12, 1))
    texts = [note.text for note in facts.notes]
    assert "Leeds & Skyscanner." not in texts
    assert not any(t.startswith("Quick dinner for tonight") for t in texts), texts
    assert not any("quick dinner" in item.text.lower() for item in facts.resolved)
    assert [item.text for item in facts.resolved] == ["How old is Biscuit? → Biscuit is four."]


def test_the_agents_notices_in_place_of_a_reply_are_left_out() -> None:
    # Seen by hand: "Ask again, or rephrase." became a note, "[The model replied with a
    # memory call instead of an answer" a decision, and the chat a work session. The
    # notices as the agent has stored them (sessions written before keep them).
    turns = chat("Joe and I moved to York last week.",
                 "[The model replied with a memory call instead of an answer (the action "
                 "must be add, replace or remove). Ask again, or rephrase.]",
                 "Our cat Miso is three years old.",
                 "[The model repeated your question instead of answering it. Memory was "
                 "updated this turn (`mnemo memory show` lists it). Ask again, or rephrase.]",
                 "What should I cook tonight?",
                 "Try a mushroom risotto with parmesan [interrupted by the user]",
                 "I work at Monzo as a designer.",
                 "[no answer: the model call failed (ProviderConnectionError)]")
    assert is_conversation(extract_facts(turns))
    summary = summarize_locally(turns, budget_tokens=2_000)
    for notice in ("The model", "Ask again", "mnemo memory show", "interrupted",
                   "no answer"):
        assert notice not in summary, summary
    for fact in ("moved to York", "Miso is three", "Monzo", "mushroom risotto"):
        assert fact in summary, summary


def test_an_ai_restating_an_older_statement_adds_no_note_a_person_saying_it_does() -> None:
    lines = ["We are planning a trip to Norway in June.", "Sounds lovely.",
             "My car is a blue Honda Jazz.", "Nice car!",
             "My best friend Priya lives in Bristol.",
             "We are planning a trip to Norway in June."]
    ai = [n.text for n in extract_facts(chat(*lines)).notes if n.role == "assistant"]
    assert not any("Norway" in t for t in ai), ai  # the embedded model's echo, 3 turns on
    people = [said("Caroline" if i % 2 == 0 else "Melanie", t) for i, t in enumerate(lines)]
    theirs = [n.text for n in extract_facts(people).notes if n.speaker == "Melanie"]
    assert "We are planning a trip to Norway in June." in theirs  # Melanie's own plan


def test_memory_calls_an_earlier_work_style_summary_listed_are_not_carried() -> None:
    # Seen by hand: a chat's first compaction had too few texts to tell it was one, and
    # listed the model's memory calls under Done ("… content=Name: Bea. Prefers tabs.",
    # where the tool had saved only the name); every later summary carried the line.
    previous = ("## Progress\n### Done\n- memory target=user action=add content=Name: Bea. "
                "Prefers tabs.\n- session_search query=Norway trip\n"
                "- User: I ran the York 10k.\n")
    turns = chat("My sister Anika is a nurse in Glasgow.", "How lovely.",
                 "Our cat is called Miso and she is three.", "Miso is a nice name.",
                 "I started learning the cello in October.", "Good luck with it.")
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000,
                                                 previous_summary=previous))
    done = " ".join(s.get("Progress/Done", []))
    assert "Prefers tabs" not in done and "session_search" not in done
    assert "York 10k" in done


def test_a_chat_first_summarised_as_work_goes_on_as_a_chat() -> None:
    # Seen by hand in a 3,072-token window: each compaction took two or three texts, the
    # first summary was a work session's (too few texts to tell), and so was every next
    # one; "I moved to York" became a Goal line the next compaction dropped.
    first = summarize_locally(chat("I live in Leeds and I'm a tester at Skyscanner.",
                                   "Leeds & Skyscanner."), budget_tokens=2_000)
    goal = parse_summary_sections(first)["Goal"]
    assert goal == ["I live in Leeds and I'm a tester at Skyscanner."]  # work-style
    turns = chat("Joe and I moved to York last week.", "That's a big move!",
                 "I work at Monzo as a QA lead now.")
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000,
                                                 previous_summary=first))
    notes = " ".join(line for lines in s.values() for line in lines)
    assert "User: Joe and I moved to York last week" in notes
    assert "I work at Monzo as a QA lead now" in notes
    # The latest request a summary quoted stays, as what the user said, once a newer
    # one takes its place in the Goal.
    third = summarize_locally(chat("Please only suggest vegetarian recipes.", "Noted."),
                              budget_tokens=2_000, previous_summary=summarize_locally(
                                  chat("Step 1: fix src/a.py.", "Fixed src/a.py.",
                                       "Joe and I moved to York last week.", "OK."),
                                  budget_tokens=2_000))
    assert "Joe and I moved to York last week" in third
    # A work session's summary goes on as one, though the next turns are few.
    work = summarize_locally(chat("Please fix the login bug in src/auth.py.",
                                  "Fixed: src/auth.py now catches the expired token."),
                             budget_tokens=2_000)
    s = parse_summary_sections(summarize_locally(
        chat("Now run the tests.", "All 42 tests pass."), budget_tokens=2_000,
        previous_summary=work))
    assert not any(line.startswith("User: ") for lines in s.values() for line in lines)


def test_a_chat_is_dated_by_the_day_its_system_prompt_says_it_started() -> None:
    # `mnemo chat` sends no header lines; its system prompt ends with the date line.
    started = date(2023, 5, 8)
    assert conversation_started(f"You are mnemo.\n\n{date_line(started)}") == started
    assert conversation_started("No date here. Deadline 2024-01-01.") is None
    system: Message = {"role": "system", "content": f"You are mnemo.\n\n{date_line(started)}"}
    messages: list[Message] = [system]
    for i in range(60):
        messages.append({"role": "user", "content": "Yesterday I adopted puppy number 5."
                         if i == 5 else f"My {i}th cousin lives in a town called Vila {i}, "
                         f"by the river, and she grows {i} kinds of tomatoes in her garden."})
        messages.append({"role": "assistant", "content": f"Cousin {i} in Vila {i} sounds "
                         "like a quiet place to live, with a garden full of tomatoes by the "
                         "river."})
    engine = ContextCompressor(context_length=8_000, summarizer=None)
    engine.compress(messages)
    report = engine.last_report
    assert report is not None and report.summary is not None
    assert "Yesterday [7 May 2023] I adopted puppy number 5." in report.summary
    # A header line in the turns names the date from where it stands.
    messages[17] = {"role": "user", "content": "[Session 2, 20 June, 2023]\nLast Friday I moved."}
    engine = ContextCompressor(context_length=8_000, summarizer=None)
    engine.compress(messages)
    report = engine.last_report
    assert report is not None and report.summary is not None
    assert "Yesterday [7 May 2023]" in report.summary
    assert "Last Friday [16 Jun 2023] I moved." in report.summary


def test_a_group_chats_notes_are_carried_for_every_speaker() -> None:
    def say(name: str, text: str) -> Message:
        return {"role": "user" if name != "Bot" else "assistant", "name": name,
                "content": text}
    previous = ("## Goal\n- Participants: Ana (user), Bot (assistant)\n\n"
                "## Critical Context\n- Rui: My bakery is called Pão Quente. I bake at 4 am.\n"
                "- Ana: I moved to Porto in March with my two cats.\n")
    turns = [say("Ana", "I adopted a third cat called Miso."),
             say("Bot", "Miso is a lovely name for a cat."),
             say("Rui", "My bakery is called Pão Doce now, after the new owner."),
             say("Bot", "Pão Doce is a sweet name.")]
    for day in ("Monday", "Tuesday", "Wednesday", "Thursday"):
        turns += [say("Ana", f"On {day} I walked along the Douro river to the old bridge "
                             "and watched the rabelo boats carry tourists upstream."),
                  say("Bot", f"The Douro on a {day} must be calm, with the boats and the "
                             "old bridge in the evening light.")]
    facts = extract_facts(turns)
    assert facts.speakers == {"Ana": "user", "Bot": "assistant", "Rui": "user"}
    merged = summarize_locally(turns, budget_tokens=2_000, previous_summary=previous)
    # Rui is no participant of a role (Ana spoke first), yet his old notes are his: the
    # newer name of his bakery replaces the old one.
    assert "Pão Doce now" in merged and "Pão Quente" not in merged


def test_a_reply_to_a_question_outranks_the_same_words_said_unasked() -> None:
    # The answer to "what genre is it?" is what a reader asks about later; the same kind
    # of sentence said out of the blue is less likely to be.
    names = ("Caroline", "Melanie")
    assert salience("It's a mix of jazz and soul.", names, reply=True) > (
        salience("It's a mix of jazz and soul.", names))
    turns = [said("Caroline", "What genre is your first screenplay?"),
             said("Melanie", "It's a mix of drama and romance."),
             said("Caroline", "It's a mix of jazz and soul, by the way.")]
    # The smallest budget that keeps the reply keeps it alone: ranked below it, the
    # other sentence (as long, and as cheap) would have been taken first. (A budget
    # too small for the reply may keep the other, a few characters shorter.)
    for budget in range(60, 200, 2):
        summary = summarize_locally(turns, budget_tokens=budget)
        if "drama and romance" in summary:
            break
    assert "drama and romance" in summary
    assert "jazz and soul" not in summary


def test_a_note_that_repeats_kept_words_gives_way_to_one_that_tells_something_new() -> None:
    # One thing told four ways (each scoring above the new thing: two names), then one
    # new thing: a summary with room for two notes keeps both things, not the pottery
    # studio twice.
    told = ["I visited the Lisbon pottery studio with Ana.",
            "Ana and I visited the pottery studio in Lisbon.",
            "I went back to the Lisbon pottery studio with Ana.",
            "I went to the pottery studio in Lisbon with Ana."]
    new = "I played chess at the club with my brother."
    turns: list[Message] = []
    for text in [*told, new]:
        turns += [said("Caroline", text), said("Melanie", PHATIC[3] + " " + PHATIC[4])]
    assert min(salience(t, ()) for t in told) > salience(new, ())
    for budget in range(90, 200, 2):  # the smallest budget with room for two notes
        notes = [line for line in parse_summary_sections(summarize_locally(
            turns, budget_tokens=budget)).get("Progress/Done", []) if "Caroline" in line]
        if " ".join(notes).count(". ") + " ".join(notes).count("! ") >= 1:
            break
    kept = " ".join(notes)
    assert "chess" in kept and kept.count("pottery") == 1


def test_the_budget_counts_lines_as_they_are_printed() -> None:
    # Neighbours that share a label are printed as one line (the label once, and a day's
    # events on one timeline line); the budget counts exactly that, so a summary is
    # filled by what fits rather than cut back after it went over.
    from mnemo.context.local_summary import _fit, _grouped, _Line, _printed

    lines: list[_Line] = []
    for i in range(120):
        who = ("Caroline: ", "Melanie: ")[i % 3 == 0]
        day = f"{1 + i // 7} May 2023 · "
        if i % 2:
            lines.append(_Line("Progress/Done", f"{day}{who}I saw film {i}.", i, 40 + i % 5,
                               merge=f"day|{day}", head=len(day), who=who))
        else:
            lines.append(_Line("Critical Context", f"{who}I own {i} books.", i, 41 + i % 3,
                               merge=who, head=len(who)))
    empty = len(render_sections({}))
    for room in (300, 900, 2_500):
        kept = _fit(lines, room, said_room=10**6, noted_room=10**6)
        kept.sort(key=lambda line: (line.order, line.seq))
        counted = 0
        for section in {line.section for line in kept}:
            rows = [line for line in kept if line.section == section]
            counted += sum(_printed(line, before) for before, line in zip(
                [None, *rows], rows, strict=False)) - len("- (none)\n")
        text = render_sections(_grouped(kept))
        assert len(text) == empty + counted
        assert room - 40 <= counted <= room  # filled, not over


def test_each_participants_facts_are_printed_together() -> None:
    turns = [said("Caroline", "My sister Rita lives in Porto."),
             said("Melanie", "My brother Tom works at the Lisbon aquarium."),
             said("Caroline", "My cat Luna is twelve years old."),
             said("Melanie", " ".join(PHATIC))]  # room enough (see _TALK_SHARE)
    facts = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000))
    assert facts["Critical Context"] == [
        "Caroline: My sister Rita lives in Porto. My cat Luna is twelve years old.",
        "Melanie: My brother Tom works at the Lisbon aquarium."]


def test_a_chats_goal_that_says_where_the_user_lives_gives_way_to_a_newer_home() -> None:
    # By hand, the embedded model's summary put "I live in Headingley …" under Goal, and
    # it stayed the Goal after "We now live in York too".
    previous = ("## Goal\n- I live in Headingley with my partner Sam, who is vegan.\n"
                "- Help the user plan their marathon training.\n\n"
                "## Critical Context\n- User: I'm allergic to peanuts.\n")
    turns = chat("I now work at the York hospital pharmacy, and we now live in York too.",
                 "That sounds like a big change!",
                 "My best half marathon is 1:52, in Manchester.", "Nice time.")
    s = summarize_locally(turns, budget_tokens=400, previous_summary=previous)
    assert "Headingley" not in s
    assert "we now live in York" in s and "1:52" in s
    assert "Help the user plan their marathon training." in s  # not about a home: stays
    # … and so does one carried beside it (by hand: the model's summary noted "We now
    # live in York too", the next local one kept the Goal beside it).
    moved = previous + "- User: We now live in York too, near the Minster.\n"
    s = summarize_locally(chat("My best half marathon is 1:52.", "Nice time."),
                          budget_tokens=400, previous_summary=moved)
    assert "Headingley" not in s and "We now live in York too" in s
    # With no other home told, it stays: the user's fact, no longer a Goal.
    s = summarize_locally(chat("My best half marathon is 1:52.", "Nice time."),
                          budget_tokens=400, previous_summary=previous)
    assert "I live in Headingley with my partner Sam" in s
    assert "Headingley" not in "".join(parse_summary_sections(s).get("Goal", []))


def test_a_models_unlabelled_line_in_the_users_words_gives_way_to_a_newer_job() -> None:
    # Seen by hand (3,072 tokens): the model's summary copied "I'm Tomas. I work as a
    # pharmacist in Leeds." without a label; carried whole, the next local summary kept
    # it and left out "I now work at the York hospital pharmacy" — the old job as now.
    previous = ("## Progress\n### Done\n- I'm Tomas. I work as a pharmacist in Leeds.\n"
                "- Sam is vegan.\n## Critical Context\n- User: I live in Headingley with "
                "my partner Sam, who is vegan.\n")
    turns = chat("Good news: I now work at the York hospital pharmacy, I started on Monday.",
                 "Congratulations!")
    s = summarize_locally(turns, budget_tokens=400, previous_summary=previous)
    assert "pharmacist in Leeds" not in s and "York hospital pharmacy" in s
    assert "Tomas" in s and "Sam is vegan." in s  # the rest of what it said stays
    # A third person's line is no user's note: it is carried as it was.
    other = previous.replace("I'm Tomas. I work as", "Tomas works as")
    s = summarize_locally(turns, budget_tokens=400, previous_summary=other)
    assert "Tomas works as a pharmacist in Leeds." in s


def test_a_note_that_replaces_an_older_one_outranks_shorter_notes() -> None:
    # Seen by hand (3,072 tokens): in a room of about 120 tokens shorter notes took the
    # summary and the new job never reached it; the one the reader must not miss is
    # what changed.
    said = ["Hi, I'm Tomas. I work as a pharmacist in Leeds.",
            "I live in Headingley with my partner Sam, who is vegan.",
            "I'm allergic to peanuts, so keep that in mind when you suggest recipes.",
            "Good news: I now work at the York hospital pharmacy, I started on Monday.",
            "Last Christmas we went to Oslo to see Sam's parents.",
            "My personal best for a half marathon is 1:52, set in Manchester."]
    turns = chat(*(text for line in said for text in (line, "Noted.")))
    s = summarize_locally(turns, budget_tokens=120)
    assert "York hospital pharmacy" in s and "peanuts" in s
    assert "pharmacist in Leeds" not in s


def test_an_ai_assistant_saying_where_it_lives_or_works_is_no_note() -> None:
    # Seen by hand: the embedded model retold the user's old job in the first person,
    # and its note outlived the user's new job (only the user's notes replace theirs).
    turns = chat("Hi, I'm Tomas. I work as a pharmacist in Leeds.",
                 "Good morning Tomas! I'm working as a pharmacist in Leeds now.",
                 "Good news: I now work at the York hospital pharmacy.", "Congratulations!",
                 "What should I eat before a long run?",
                 "Eat oatmeal and a banana about two hours before a long run.")
    s = summarize_locally(turns, budget_tokens=400)
    assert "Leeds" not in s and "York hospital pharmacy" in s and "oatmeal" in s
    # Between people it is the other person's own fact ("Melanie: I live in Glasgow":
    # test_where_someone_lives_and_works_now_replaces_what_they_said_before).


def test_an_ai_assistant_telling_a_name_as_its_own_is_no_note() -> None:
    # Seen by hand (3,072 tokens): the embedded model's "My name is Dmitri and I'm a
    # carpenter in Tallinn." stood in every summary beside the user's own first message.
    # (The user's own first message is in the protected head: not among the turns.)
    lines = ["We booked the party room at the Kalamaja community centre for 2 pm.",
             "My name is Dmitri and I'm a carpenter in Tallinn.",
             "My wife Kersti is baking the cake herself.", "Great!"]
    ai = [n.text for n in extract_facts(chat(*lines)).notes if n.role == "assistant"]
    assert not any("Dmitri" in t for t in ai), ai
    # … and "I'm Sanne, …" (by hand, the user's first message retold as the AI's own).
    lines[1] = "Hello! I'm Sanne, a nurse in Rotterdam and applying for a job at Erasmus."
    turns = chat(*lines, "Thanks!", "I'm sorry, Sanne, the room is booked until 4 pm.")
    summary = summarize_locally(turns, budget_tokens=1_000)
    assert "I'm Sanne" not in summary and "booked until 4 pm" in summary
    # … nor has it a family (by hand, "My wife Ewa and I are planning a weekend in Ghent.").
    lines[1] = "My wife Ewa and I are planning a weekend in Ghent."
    turns = chat(*lines, "Thanks!", "Your wife Ewa will love the room until 4 pm.")
    summary = summarize_locally(turns, budget_tokens=1_000)
    assert "My wife Ewa" not in summary and "Your wife Ewa will love the room" in summary
    lines[1] = "My name is Dmitri and I'm a carpenter in Tallinn."
    people = [said("Kersti" if i % 2 == 0 else "Dmitri", t) for i, t in enumerate(lines)]
    theirs = [n.text for n in extract_facts(people).notes if n.speaker == "Dmitri"]
    assert any(t.startswith("My name is Dmitri") for t in theirs), theirs  # a person's


def test_an_ai_restating_a_number_in_digits_adds_no_note() -> None:
    # Seen by hand: "seven" came back as "7", and the restatement outlived the statement.
    lines = ["My daughter Alina turns seven next Saturday, so we're planning a party.",
             "Alina turns 7 this Saturday, we're planning a party."]
    ai = [n.text for n in extract_facts(chat(*lines)).notes if n.role == "assistant"]
    assert not ai, ai


# Seen by hand: a chat in Chinese at 3,072 tokens, compacted every turn or two.
CHINESE_FACTS = ("我住在西湖区，和我太太小红一起，她是素食者。",
                 "我对花生过敏，推荐菜谱的时候请记住。",
                 "好消息：我现在在上海的一家银行工作了，上周一开始上班。",
                 "我的半程马拉松最好成绩是1小时52分，在苏州跑的。")
# A model's reply goes on at some length: the turns leave the notes room (``_fit``).
_CHINESE_REPLY = "好的，我记住了。需要的时候我会提醒你，有什么问题随时问我，我很乐意帮忙。"


def test_a_chat_in_chinese_keeps_each_fact_through_compactions() -> None:
    # Every sentence in Chinese had one empty key, and the newest replaced the others:
    # after four compactions only the last fact was left.
    summary = None
    for fact in CHINESE_FACTS:
        turns = chat(fact, _CHINESE_REPLY) + chat("谢谢！", "不客气！")
        summary = summarize_locally(turns, budget_tokens=2_000, previous_summary=summary)
    assert summary is not None
    for fact in CHINESE_FACTS:
        assert fact in summary
    # The same fact said again is kept once, and an AI assistant restating it adds no note.
    restated = "你对花生过敏，推荐菜谱的时候请记住。"
    again = chat(CHINESE_FACTS[1], restated) + chat("对。", _CHINESE_REPLY)
    merged = summarize_locally(again, budget_tokens=2_000, previous_summary=summary)
    assert merged.count("花生过敏") == 1
    for fact in CHINESE_FACTS:
        assert fact in merged


def test_a_home_or_job_told_anew_in_chinese_replaces_the_old_one() -> None:
    turns = chat("你好，我叫李明，我在杭州做软件工程师。", _CHINESE_REPLY,
                 "我住在西湖区，和我太太小红一起。", _CHINESE_REPLY,
                 "我每天在家做饭。", _CHINESE_REPLY,
                 "好消息：我现在在上海的一家银行工作了。", _CHINESE_REPLY,
                 "我们也搬到上海了，住在浦东。", _CHINESE_REPLY)
    texts = " ".join(note.text for note in extract_facts(turns).notes)
    assert "杭州做软件工程师" not in texts and "西湖区" not in texts
    assert "上海的一家银行" in texts and "浦东" in texts
    assert "我每天在家做饭。" in texts  # cooking at home is no job


def test_a_rule_said_in_chinese_is_a_constraint() -> None:
    turns = chat("我对花生过敏，推荐菜谱的时候请记住。", _CHINESE_REPLY,
                 "以后叫我小李。", _CHINESE_REPLY,
                 "今晚能推荐一个快手晚餐吗？", "试试番茄炒蛋，十分钟就好。",
                 "他们叫我明天去开会。", _CHINESE_REPLY,
                 "我特别用心准备了晚饭，只用了十分钟。", _CHINESE_REPLY)
    rules = " ".join(parse_summary_sections(summarize_locally(
        turns, budget_tokens=2_000))["Constraints & Preferences"])
    assert "我对花生过敏，推荐菜谱的时候请记住。" in rules and "以后叫我小李。" in rules
    assert "快手晚餐" not in rules and "开会" not in rules
    assert "十分钟" not in rules  # "特别用心", "只用了": no "别用", no "只用"


def test_a_chat_in_chinese_gets_the_conversation_sections() -> None:
    turns = chat("我很喜欢爬山，周末常去西湖边。", _CHINESE_REPLY,
                 "我们打算下个月去日本看樱花。", _CHINESE_REPLY,
                 "我们也搬到上海了，住在浦东。", _CHINESE_REPLY,
                 "我的半程马拉松最好成绩是1小时52分。", _CHINESE_REPLY)
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=2_000))
    assert "User: 我很喜欢爬山，周末常去西湖边。" in s["Constraints & Preferences"]
    assert any("下个月去日本" in line for line in s["Key Decisions"])
    assert any("搬到上海" in line for line in s["Progress/Done"])
    assert any("1小时52分" in line for line in s["Critical Context"])


@pytest.mark.parametrize(("text", "expected"), [
    # Said on a Sunday: "this Friday" in a plan is the coming one, in a story the past.
    ("My band plays at the Blue Note this Friday.",
     "My band plays at the Blue Note this Friday [25 Aug 2023]."),
    ("This Friday we went to the lake.", "This Friday [18 Aug 2023] we went to the lake."),
    ("This Sunday is the party.", "This Sunday [20 Aug 2023] is the party."),
])
def test_this_weekday_that_has_passed_is_the_coming_one_in_a_plan(text: str,
                                                                   expected: str) -> None:
    assert resolve_relative(text, date(2023, 8, 20)) == expected


def test_a_request_for_a_list_is_a_question_its_reply_answers() -> None:
    # By hand: an AI assistant's list of restaurants had left the ask under Pending User
    # Asks, as if nothing had answered it.
    turns = chat("We land in Osaka on October 3rd with my husband Carlos.", "Lovely.",
                 "Can you make me a list of three vegetarian restaurants in Tokyo?",
                 "Sure: Ain Soph Journey in Shinjuku, T's Tantan in Tokyo Station, and Saido "
                 "in Jimbocho.")
    assert pending_asks(turns) == []
    # A request to do something still waits for it to be done.
    assert pending_asks(chat("Can you book a table at Saido for Friday?",
                             "Saido is in Jimbocho.")) == [
        "Can you book a table at Saido for Friday?"]


def test_a_pair_of_the_previous_summary_is_kept_while_there_is_room() -> None:
    # C10 between people: a live chat's pairs had gone at its next compaction.
    first = summarize_locally([
        said("Caroline", "[Session 1, 2:00 pm on 17 March, 2024]\nWhere's the wedding?"),
        said("Melanie", "In Jaipur. My sister Meera is marrying Dev.")], budget_tokens=600)
    pair = "Caroline: Where's the wedding? → Melanie: In Jaipur."
    assert parse_summary_sections(first)["Resolved Questions"] == [pair]
    then = summarize_locally([said("Caroline", "I bought a new bike for the river path."),
                              said("Melanie", "I adopted a greyhound named Biscuit.")],
                             budget_tokens=600, previous_summary=first)
    sections = parse_summary_sections(then)
    assert sections["Resolved Questions"] == [pair]
    assert "Biscuit" in then and "river path" in then


def test_header_date_is_the_last_header_line_that_names_one() -> None:
    assert header_date("[Session 1, 8:15 pm on 3 March, 2024]\nHi!\n[Session 2, 2:00 pm on "
                       "17 March, 2024]\nHello again.") == date(2024, 3, 17)
    # A date inside a sentence, or brackets that name none, are no header.
    assert header_date("We met on 3 March 2024 [at the café].\n[Session 2]") is None


def test_the_kept_heads_header_dates_the_middle() -> None:
    # The head keeps the session's header line: before, the middle's "yesterday" was
    # left undated in every compaction of a transcript of sessions.
    messages: list[Message] = [
        said("Caroline", "[Session 1, 8:15 pm on 3 March, 2024]\nHey Mel!"),
        said("Melanie", "Hi Caroline!")]
    for i in range(40):
        messages.append(said("Caroline", "Yesterday I adopted a rescue greyhound named "
                             "Biscuit." if i == 3 else f"My {i}th cousin lives in Vila {i}, "
                             f"by the river, and grows {i} kinds of tomatoes."))
        messages.append(said("Melanie", f"Vila {i} sounds like a quiet place to live."))
    engine = ContextCompressor(context_length=3_000, summarizer=None)
    engine.compress(messages)
    report = engine.last_report
    assert report is not None and report.summary is not None
    assert "Yesterday [2 Mar 2024] I adopted a rescue greyhound" in report.summary
    # The head shows that date itself: the summary need not say it.
    assert "Latest session date" not in report.summary


def test_the_latest_session_date_is_carried_to_the_next_summary() -> None:
    first = summarize_locally([
        said("Caroline", "[Session 3, 10:30 am on 2 May, 2024]\nI'm back from India!"),
        said("Melanie", "Welcome back! How was the wedding in Jaipur?")], budget_tokens=600)
    assert "Latest session date: 2 May 2024" in first
    # The header line is summarised away: the next turns are still of 2 May 2024.
    then = summarize_locally([
        said("Caroline", "Yesterday I adopted a rescue greyhound named Biscuit."),
        said("Melanie", "I went climbing last weekend, my arms are sore.")],
        budget_tokens=600, previous_summary=first)
    assert "Yesterday [1 May 2024] I adopted a rescue greyhound" in then
    assert "last weekend [weekend of 27 Apr 2024]" in then
    assert parse_summary_sections(then)["Goal"].count("Latest session date: 2 May 2024") == 1
    # A newer header moves it on.
    later = summarize_locally([
        said("Caroline", "[Session 4, 9:00 am on 20 May, 2024]\nBiscuit learned to sit.")],
        budget_tokens=600, previous_summary=then)
    assert "Latest session date: 20 May 2024" in later and "2 May 2024" not in (
        " ".join(parse_summary_sections(later)["Goal"]))


def test_one_sentence_of_a_reply_answers_one_of_its_questions() -> None:
    # LoCoMo 26: both questions had been paired with the first sentence.
    turns = [said("Caroline", "[Session 1, 8 May, 2023]\nWhat was the best part of the "
                              "beach trip? Do you go to the beach often with the kids?"),
             said("Melanie", "Seeing my kids' faces so happy at the beach was the best! "
                             "We don't go often, usually only once or twice a year."),
             said("Caroline", "I bought a new bike for the river path.")]
    pairs = parse_summary_sections(summarize_locally(turns, budget_tokens=1_000))[
        "Resolved Questions"]
    assert pairs == [
        "Caroline: What was the best part of the beach trip? → Melanie: Seeing my kids' "
        "faces so happy at the beach was the best!",
        "Caroline: Do you go to the beach often with the kids? → Melanie: We don't go "
        "often, usually only once or twice a year."]


@pytest.mark.parametrize(("sentence", "dietary"), [
    ("Carlos is vegetarian, and I can't eat shellfish.", True),
    ("I'm lactose intolerant.", True), ("Oskar is severely allergic to eggs.", True),
    ("We don't eat pork.", True),
    ("My mother doesn't eat pork and she loves seafood.", True),
    ("Luca never eats meat.", True), ("The restaurant doesn't serve pork.", False),
    ("Kyoto has many temples that serve vegetarian Buddhist cuisine.", False),
    ("The vegan place on Rua Augusta closed.", False),
    ("卡洛斯吃素，我对贝类过敏。", True), ("我不能吃辣。", True),
    ("京都有很多寺庙。", False)])
def test_what_someone_must_not_eat_is_told_from_a_mention(sentence: str,
                                                          dietary: bool) -> None:
    assert is_dietary(sentence) is dietary
    assert (salience_module.kind(sentence) == "preference") is dietary


def test_a_paired_question_is_printed_once() -> None:
    # By hand, "What should we eat in Osaka?" stood as a pair and as a note of the user.
    turns = chat("I'm planning a trip to Japan with Lena in April.", "Lovely! How long?",
                 "Twelve days.", "Great.",
                 "Thanks! What should we see in Kyoto?",
                 "Fushimi Inari, Kinkaku-ji and the Arashiyama bamboo grove.",
                 "Is the rail pass worth it?", "Let me check the prices.")
    summary = summarize_locally(turns, budget_tokens=1_000)
    assert summary.count("What should we see in Kyoto?") == 1
    assert "What should we see in Kyoto? → Fushimi Inari" in summary
    # A question nothing answered is still told.
    assert "Is the rail pass worth it?" in summary


def test_questions_in_chinese_pair_with_the_reply_that_answers_them() -> None:
    # By hand no Chinese question was ever paired: its words (pairs of characters) are
    # seldom the reply's.
    turns = chat("我和丈夫卡洛斯十月要去日本旅行。", "太好了！你们什么时候出发？",
                 "十月三号从上海出发。", "好的。",
                 "京都有什么好玩的？", "伏见稻荷大社、金阁寺和岚山竹林都很值得去。",
                 "你们一共去几天？", "还没定。",
                 "你觉得这个计划怎么样？", "我觉得很好。",
                 "卡洛斯吃素，我对贝类过敏。", "明白了，我会推荐素食餐厅。")
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=800))
    assert s["Resolved Questions"] == [
        "你们什么时候出发？ → 十月三号从上海出发。",
        "京都有什么好玩的？ → 伏见稻荷大社、金阁寺和岚山竹林都很值得去。"]
    # What the user must not eat binds the answers, in Chinese too.
    assert "User: 卡洛斯吃素，我对贝类过敏。" in s["Constraints & Preferences"]


def test_what_the_user_must_not_eat_holds_in_a_small_summary_of_a_chat_with_an_ai() -> None:
    # By hand, a live chat with an AI in a small window: "Twelve days." and "Fukuzumiro."
    # had kept their place, and the shellfish allergy had gone.
    turns = chat("I'm planning a trip to Japan with my husband Carlos in October.",
                 "How long will you stay?", "Twelve days. We fly home from Tokyo on the 15th.",
                 "Do you have any dietary restrictions?",
                 "Carlos is vegetarian, and I can't eat shellfish.",
                 "Kyoto has many shojin ryori temples that serve vegetarian Buddhist cuisine.",
                 "We booked the ryokan in Hakone yesterday! Fukuzumiro, two nights.",
                 "Lovely choice.", "My budget is about 4000 euros for both of us.",
                 "The JR Special Rapid from Osaka to Kyoto takes about 30 minutes.")
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=120))
    assert s.get("Constraints & Preferences") == [
        "User: Carlos is vegetarian, and I can't eat shellfish."]


def test_the_middle_is_dated_by_the_heads_header_else_by_the_system_prompt() -> None:
    system: Message = {"role": "system", "content": "Conversation started: 2026-12-01 (Tuesday)"}
    head = said("Caroline", "[Session 2, 2:00 pm on 17 March, 2024]\nHi Mel!")
    assert middle_date([system, head, said("Melanie", "Hi!")], 1, 2) == date(2024, 3, 17)
    plain = said("Caroline", "Hi Mel!")
    assert middle_date([system, plain, said("Melanie", "Hi!")], 1, 2) == date(2026, 12, 1)
    assert middle_date([plain], 0, 1) is None


@pytest.mark.parametrize(("question", "note"), [
    # What a question opens with telling is a note (by hand, the plan had gone with the
    # question: "can we meet?" was let go once answered, and the trip with it).
    ("I am flying to Hangzhou next Friday for work, can we meet?",
     "Caroline: I am flying to Hangzhou next Friday [12 May 2023] for work."),
    ("我下周五要去杭州出差，我们可以见面吗？", "Caroline: 我下周五 [19 May 2023]要去杭州出差。"),
])
def test_the_statement_a_question_opens_with_is_a_note(question: str, note: str) -> None:
    turns = [said("Caroline", "[Session 1, 8 May, 2023]\nI adopted a puppy called Max."),
             said("Melanie", "I started pottery classes in Lisbon."),
             said("Caroline", question), said("Melanie", "Sure, I'm free that evening."),
             said("Caroline", "I also bought a new bike for the river path.")]
    summary = summarize_locally(turns, budget_tokens=1_000)
    assert note.split(": ", 1)[1] in summary


@pytest.mark.parametrize("question", [
    "Hey Jon, how was Paris?", "In that case, what do you suggest?", "你好，最近怎么样？",
    "What did you do last weekend, did you go hiking?"])
def test_a_question_without_a_statement_before_it_adds_no_note(question: str) -> None:
    from mnemo.context.summary.reading import read_prose
    prose = read_prose(question, "user", ("Caroline", "Melanie"))
    assert question not in prose.unclaimed and len(prose.unclaimed) == 0


@pytest.mark.parametrize("sentence", [
    "That helps!", "Thanks, that helps!", "That helps a lot.", "This really helped!",
    "Thank you for your input.", '"Thank you for your input."',
    "Feel free to ask if you have more questions.", "I hope that helps.", "Hope this helps!",
    "I hope this information helps.", "I cannot assist with this request.",
    "I am unable to help with that.", "Thank you for your time and consideration!",
    "Sure! I understand your request.", "I hope you all enjoy this occasion!",
    "Enjoy the party!"])
def test_thanks_for_an_answer_and_an_offer_of_more_are_phatic(sentence: str) -> None:
    assert is_phatic(sentence)


@pytest.mark.parametrize("sentence", [
    "You're correct.", "That's correct.", "Correct!", "Yes, that is correct."])
def test_agreeing_that_something_is_correct_is_phatic(sentence: str) -> None:
    # By hand "You're correct." stood in a summary's line for four compactions.
    assert is_phatic(sentence)
    assert not is_phatic("The correct address is 5 Main Street.")


def test_markdown_bold_is_no_part_of_a_note() -> None:
    # By hand the embedded model's "**Travel**: They are traveling …" stood in summaries.
    wishes = " Ghent is lovely in December, with the lights and the markets." * 3
    turns = chat("We take the train to Ghent.",
                 "**Travel**: They are traveling from Brussels to Ghent using a train. The "
                 "**Pand** hotel is near the Korenmarkt.", "Thanks!", "You're welcome." + wishes)
    summary = summarize_locally(turns, budget_tokens=1_000, session_date=date(2026, 12, 5))
    assert "Travel: They are traveling from Brussels to Ghent" in summary
    assert "The Pand hotel is near the Korenmarkt." in summary and "**" not in summary


@pytest.mark.parametrize("sentence", [
    "That helped us find the hotel.", "Yoga helps.", "Feel free to share the recipe with Anna.",
    "If you have questions about the visa, ask Anna.", "I hope this helps Anna with the visa.",
    "Thank you for your time at the Erasmus hospital.",
    "I understand your request for a vegetarian menu at the Pand.",
    "We enjoy the concert at the Ahoy every year."])
def test_help_with_a_fact_is_not_phatic(sentence: str) -> None:
    assert not is_phatic(sentence)


@pytest.mark.parametrize(("sentence", "limited"), [
    ("Mia is afraid of heights on the tall wall, so only bouldering.", True),
    ("My dad can't walk far.", True), ("She uses a wheelchair.", True),
    ("I get carsick on winding roads.", True), ("Tom has a fear of flying.", True),
    ("Carlos is vegetarian.", True), ("我恐高。", True),
    ("I'm afraid I can't make it on Friday.", False), ("The movie was scary.", False),
    ("I was scared of the dog as a kid.", False), ("I can't take the train before 9.", False)])
def test_what_someone_cannot_do_is_told_from_a_mention(sentence: str, limited: bool) -> None:
    assert is_limitation(sentence) is limited


def test_what_the_user_cannot_do_outranks_their_thanks_in_a_small_summary() -> None:
    # By hand (``mnemo chat``, 3,072 tokens) "Mia is afraid of heights …" was one note
    # among others and gave way in a merge, while "That helps!" stayed.
    turns = chat("My daughter Mia turns 12 in May, and she wants a climbing party.",
                 "A climbing party sounds like fun!",
                 "The climbing gym in Leiden charges 18 euros per kid.", "Okay.",
                 "Thanks, that helps!", "You're welcome!",
                 "Mia is afraid of heights on the tall wall, so only bouldering.", "Got it.")
    summary = summarize_locally(turns, budget_tokens=150)
    s = parse_summary_sections(summary)
    assert any("afraid of heights" in line for line in s["Constraints & Preferences"])
    assert "helps" not in summary


def test_a_reply_that_is_all_chit_chat_is_no_last_step() -> None:
    # By hand a chat's first compaction (laid out as work: too few texts to tell) said
    # "Last step in these turns: Hi! How can I assist you today?".
    turns: list[Message] = [
        {"role": "user", "content": "Hello!"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "m1", "type": "function", "function": {"name": "read_file", "arguments":
                '{"path": "notes.txt"}'}}]},
        {"role": "tool", "tool_call_id": "m1", "content": "shopping list"},
        {"role": "assistant", "content": "Hi! How can I assist you today?"}]
    s = parse_summary_sections(summarize_locally(turns, budget_tokens=1_000))
    assert not any(line.startswith("Last step") for line in s.get("Progress/In Progress", []))


def test_a_reply_that_says_it_knows_nothing_answers_nothing() -> None:
    # By hand (3,072 tokens) "Any tips for the table setting? → I don't have enough
    # information to give you tips on how to set up your table properly." stood under
    # Resolved Questions: the embedded model's reply shares the question's words.
    turns = chat("Any tips for the table setting?",
                 "I'm sorry, but I don't have enough information to give you tips on how to "
                 "set up your table properly. Can you tell me more about your table?",
                 "Where is the dinner?",
                 "Eva, I don't know where the dinner is.",
                 "How should I keep the soup warm?",
                 "I don't have the details of your stove, but a low oven keeps soup warm.")
    facts = extract_facts(turns)
    assert [item.text for item in facts.resolved] == [
        "How should I keep the soup warm? → I don't have the details of your stove, but a "
        "low oven keeps soup warm."]


def test_a_question_and_a_reply_that_share_only_a_word_of_time_are_no_pair() -> None:
    # By hand: "Where could we eat afterwards?" → "The climbing party will be held after
    # Noor and Sami, …" (the 0.5B model's reply) was printed as answered.
    turns = chat("Where could we eat afterwards?",
                 "The climbing party will be held after Noor and Sami, with no restrictions.")
    assert extract_facts(turns).resolved == []


def test_a_model_line_of_a_chat_competes_sentence_by_sentence() -> None:
    # By hand (``mnemo chat``, 3,072 tokens) the embedded model's summary put the user's
    # "Her best friend Noor is coming, and Noor's brother Sami too." in its Goal line,
    # after a sentence the user's own note told again; the next local merge weighed the
    # line as a whole, dropped it, and with it the only word of who was coming.
    previous = ("## Goal\n- The user wants a climbing party for her daughter Mia in May. "
                "Her best friend Noor is coming, and Noor's brother Sami too.\n\n"
                "## Critical Context\n- User: My daughter Mia turns 12 in May, and she "
                "wants a climbing party. The climbing gym in Leiden charges 18 euros per "
                "kid.\n")
    turns = chat("We invited 9 kids in total.", "Okay, 9 kids.",
                 "Mia is afraid of heights on the tall wall, so only bouldering.", "Got it.")
    summary = summarize_locally(turns, budget_tokens=150, previous_summary=previous)
    assert "Noor's brother Sami" in summary
    assert "afraid of heights" in summary


def test_a_reply_in_markdown_is_read_as_its_sentences() -> None:
    # By hand the embedded model answered in the summary's own layout, and its notes read
    # "- Mia has turned from 10 to 12. - The conversation was brief … ### In Progress - …".
    from mnemo.context.summary.reading import read_prose
    reply = ("Here is the plan.\n\n### Done\n- We booked the gym in Leiden.\n"
             "## Day 2: Kyoto temples and the bamboo grove\n1. Fushimi Inari early\n"
             "2) Kinkaku-ji at noon\n3 kids came along.\n#\n"
             # A task box goes with its mark, and a list item that only labels what
             # follows is none (by hand "- [ ] Remaining work:" became a to-do).
             "- [ ] Remaining work:\n- [x] Book the caterer Da Marco.\n* Tips:\n"
             # … numbered too: its number is not cut off as a sentence of its own.
             "1. Packing:\n2. Pack light. Bring a rain jacket.\n"
             # … nor a nested item's, indented.
             "   1. Shoes:\n  12. Wear boots. Dry socks.\n"
             # A bold label before chit-chat labels nothing (by hand, the model's last
             # tip); before a fact it stays.
             "3. **Budget**: 300 euros.\n4. **Enjoy Your Cooking**: Enjoy your cooking!\n"
             "5. **Final tip:** Have fun!")
    assert read_prose(reply, "assistant", ()).kept == (
        "Here is the plan.", "We booked the gym in Leiden.",
        "Day 2: Kyoto temples and the bamboo grove", "Fushimi Inari early",
        "Kinkaku-ji at noon", "3 kids came along.", "Book the caterer Da Marco.",
        "Pack light.", "Bring a rain jacket.", "Wear boots.", "Dry socks.",
        "**Budget**: 300 euros.")


def test_an_ai_assistant_retelling_the_chat_leaves_no_note() -> None:
    turns = chat("My daughter Mia turns 12 in May, and she wants a climbing party.",
                 "How lovely!", "Her best friend Noor is coming.",
                 "There are no new invites or questions from the user. The conversation "
                 "was brief and focused on her daughter's party. The gym in Leiden is "
                 "open until 9 pm. The user manual of the gym asks for closed shoes.")
    summary = summarize_locally(turns, budget_tokens=1_000)
    assert "from the user" not in summary and "conversation was brief" not in summary
    assert "The gym in Leiden is open until 9 pm." in summary
    assert "The user manual of the gym asks for closed shoes." in summary


def test_the_summarys_empty_mark_copied_into_a_reply_is_no_note() -> None:
    # By hand the embedded model ended a reply with "# Tools & Patterns\n- (none)", and the
    # next summary's note read "Noor cannot eat gluten-free food on her lunch. (none)".
    from mnemo.context.summary.reading import read_prose
    reply = "Noor cannot eat gluten-free food.\n\n# Tools & Patterns\n- (none)"
    assert read_prose(reply, "assistant", ()).kept == ("Noor cannot eat gluten-free food.",)


def test_a_note_in_chinese_said_again_one_character_apart_is_kept_once() -> None:
    # By hand (``mnemo chat``, 3,072 tokens) the embedded model restated one sentence in
    # five replies, a character or two apart, and three of them stood among the notes.
    from mnemo.context.summary.notes import latest_notes
    older = "我叫林娜和我的丈夫Carlos October正在旅行到大阪，十五号从东京回国。"
    newer = "我是 Nina和我的丈夫 Carlos October正在旅行到大阪，十五号从东京回国。"
    line = f"Assistant: {older} 京都有很多好玩的地方。 {newer}"
    notes, _ = carried_notes([line], {"Assistant": "assistant", "User": "user"}, 0)
    assert [note.text for note in latest_notes(notes)] == ["京都有很多好玩的地方。", newer]
    # Sentences that only share a frame stay ("我们十月三号到大阪。", "我们十月五号到东京。").
    other, _ = carried_notes(["User: 我们十月三号到大阪。 我们十月五号到东京。"],
                             {"User": "user"}, 0)
    assert len(latest_notes(other)) == 2


# By hand (3,072 tokens, a chat about a move): "Good morning, Lotte and Bram!" left
# "Lotte and Bram!" as a note, "That sounds like a lot of work." was one, and so was
# what the model's closing line left: "If you have any more questions or need
# assistance in a different area."
@pytest.mark.parametrize("sentence", [
    "Good morning, Lotte and Bram!", "Thanks, Lotte, Bram and Sami!",
    "Hi Mel and Jon, how are you?", "That sounds like a lot of work.",
    "It must have been a bit of a shock!",
    "If you have any more questions or need assistance in a different area, feel free "
    "to ask.",
    # … and the offer's "if" clause alone, whatever help it names (by hand).
    "If you have any more questions or need assistance in planning a trip!"])
def test_a_greeting_to_several_a_reaction_and_a_closing_offer_are_phatic(
        sentence: str) -> None:
    assert is_phatic(sentence)


@pytest.mark.parametrize(("sentence", "phatic"), [
    # By hand each list the model wrote left its opening line as a note.
    ("Here's the updated schedule:", True), ("Here's a practical way to do it:", True),
    ("Here are some tips:", True), ("The tool returned this information as follows:", True),
    ("The exam covers the following:", True),
    ("The exam covers the following: parking, roundabouts and the motorway.", False),
    ("Here's the address: 12 Baker Street.", False), ("Here are the 3 hotels:", False),
    ("Here is the plan for the move in Ghent on March 14th:", False),
    ("Here's what Piet said: brake earlier.", False),
    # By hand the embedded model opened a reply in a summary's layout so.
    ("Here is the summary with appropriate formatting for a console:", True),
    # By hand (3,072 tokens), the embedded model's list of tasks.
    ("For your information, the list of tasks that need to be completed includes:", True),
    ("The list of ingredients includes:", True), ("The package includes breakfast.", False)])
def test_a_line_that_only_opens_a_list_is_phatic(sentence: str, phatic: bool) -> None:
    assert is_phatic(sentence) is phatic


@pytest.mark.parametrize("sentence", [
    "Lotte and Bram are coming on Saturday.", "It looks like a lot of work is left.",
    "That sounds like a lot of work, so we hired movers.", "It sounds like it is working.",
    "We moved to a different area of town.", "If you have questions about the visa, ask Anna.",
    "If you have any more questions or need help with the move to Ghent on March 14th."])
def test_names_work_and_a_different_area_that_say_something_are_not_phatic(
        sentence: str) -> None:
    assert not is_phatic(sentence)


def test_an_ai_restating_the_goal_adds_no_note() -> None:
    # By hand (3,072 tokens) the embedded model answered "When are we moving and who is
    # helping?" with the Goal line word for word, and in a summary squeezed to three
    # lines that note took the place of the user's correction of the van's price.
    previous = ("## Goal\n- I'm moving from Utrecht to Ghent on March 14th with my partner "
                "Lotte.\n\n## Critical Context\n- User: The van costs 380 euros, not 420.\n")
    turns = chat("Bram from my office offered to help.", "That's kind of Bram.",
                 "When are we moving and who is helping?",
                 "Moving from Utrecht to Ghent on March 14th with my partner Lotte.",
                 "And the van?", "The van to Ghent comes at 8 in the morning with Lotte.")
    summary = summarize_locally(turns, budget_tokens=400, previous_summary=previous)
    s = parse_summary_sections(summary)
    assert not any("Moving from Utrecht" in line for line in s.get("Critical Context", []))
    assert "The van costs 380 euros, not 420." in summary
    # What the assistant adds to the Goal's words is its own note.
    assert "The van to Ghent comes at 8 in the morning with Lotte." in summary


def test_an_ai_saying_it_knows_nothing_of_a_thing_adds_no_note() -> None:
    turns = chat("Bram from my office offered to help on the day.",
                 "Sorry, but I don't have any information about your partner Bram's offer to "
                 "help on the day.",
                 "The museum trip is on Sunday.",
                 "I don't have the details of the timetable, but the museum opens at 9. "
                 "I didn't find any record of a booking.",
                 "Bram is bringing his van.", "I don't know what Bram's van can carry.",
                 "The van is blue.", "I'm sorry, but as an AI assistant, I don't have access "
                 "to the current conversation or your personal entry.",
                 "We pack on Friday.", "As an AI, I can't access your calendar.",
                 # … said to someone by name (by hand: the apology, a phatic clause,
                 # went and left "Eva, but I don't have any information on …").
                 "My sister Noor brings dessert, a lemon tart.",
                 "Eva, I'm sorry, but I don't have enough information to suggest a dessert "
                 "for your sister Noor.",
                 "Tom is vegan.", "I'm sorry, Eva, but I don't know what Tom can eat.")
    summary = summarize_locally(turns, budget_tokens=1_000)
    assert "enough information" not in summary and "what Tom can eat" not in summary
    assert "My sister Noor brings dessert, a lemon tart." in summary
    assert "access" not in summary and "We pack on Friday." in summary
    assert "Bram's offer" not in summary and "any record" not in summary
    assert "can carry" not in summary and "Bram is bringing his van." in summary
    assert "Bram from my office offered to help on the day." in summary
    assert "but the museum opens at 9" in summary


def test_an_ais_talk_of_its_searches_and_call_json_add_no_note() -> None:
    # By hand (3,072 tokens) the embedded model's notes read "I used a tool called
    # `session_search "Peeters Bouw contractor …"` search. {"target": "session_search"}
    # Gas is more expensive, …", and its next answers imitated them; another chat's
    # kept its copy of the memory tool's description.
    turns = chat("Our budget is 21,000 euros.",
                 'I used a tool called `session_search "kitchen budget"` search. '
                 '{"target": "session_search"} Gas is more expensive than induction.',
                 "What should we ask the contractor?", '{"mode": "search", "limit": 3}',
                 "The countertop is oak.", 'The config file says {"port": 8080} for it.',
                 "How do I keep track of it all?",
                 'You can use a memory tool such as "memory" to save lasting facts for '
                 "future sessions: your name, preferences and habits (target user); "
                 "project and tool facts (target memory).",
                 # (the user's sentence about the tool may be a fact of the work)
                 "The session_search tool returns duplicates.",
                 # (by hand, another chat: "Session search "429" recent: …")
                 'I see. Session search "429" recent: you should ask about career goals.')
    notes = [note.text for note in extract_facts(turns).notes]
    assert notes == ["Our budget is 21,000 euros.", "Gas is more expensive than induction.",
                     "The countertop is oak.", 'The config file says {"port": 8080} for it.',
                     "The session_search tool returns duplicates."]


def test_an_ai_framing_the_users_words_as_a_topic_adds_no_note() -> None:
    # By hand (3,072 tokens): the embedded model's answers, kept as its notes.
    turns = chat("We're renovating the kitchen in our house in Haarlem.",
                 "Let's talk about renovating the kitchen in our house in Haarlem.",
                 "Our contractor Dirk starts on Monday.",
                 "Let's discuss our contractor Dirk starting on Monday.",
                 "The budget is 12,000 euros.",
                 "Let's talk about the tiles for the bathroom first.")
    summary = summarize_locally(turns, budget_tokens=1_000)
    assert "Let's talk about renovating" not in summary and "Let's discuss" not in summary
    assert "Let's talk about the tiles for the bathroom first." in summary
    assert "Our contractor Dirk starts on Monday." in summary


def test_a_correction_that_moves_the_day_and_the_hour_leaves_nothing_of_the_old_line() -> None:
    # By hand (3,072 tokens) the old line stayed, marked, beside the correction, and the
    # embedded model answered "Tuesday at 10:30" whenever it was asked.
    wishes = "Good luck with it, I hope it goes well and you get the job. " * 3
    turns = chat("The interview is on Tuesday at 10:30.", wishes,
                 "Actually the interview moved to Wednesday at 14:00, not Tuesday.", wishes,
                 "My sister Anna lives in Delft.", "Nice!")
    summary = summarize_locally(turns, budget_tokens=1_000, session_date=date(2026, 12, 4))
    assert "10:30" not in summary and "moved to Wednesday at 14:00" in summary
    # What the correction does not tell again stays, marked.
    turns = chat("The interview is on Tuesday at 10:30 at the Erasmus hospital.", wishes,
                 "Actually the interview moved to Wednesday at 14:00, not Tuesday.", wishes,
                 "My sister Anna lives in Delft.", "Nice!")
    summary = summarize_locally(turns, budget_tokens=1_000, session_date=date(2026, 12, 4))
    assert "Erasmus hospital. [Since changed: Wednesday, not Tuesday.]" in summary


def test_an_ai_note_made_of_two_user_notes_is_left_out() -> None:
    # By hand (3,072 tokens) the embedded model joined the payslips to the interview's
    # hour and day: nothing new but a link the user never made.
    wishes = " Good luck with the application, and let me know how it went." * 3
    turns = chat("The interview is on Tuesday at 10:30.", "Good luck!" + wishes,
                 "I need to bring my BIG registration number and two payslips.",
                 "You will need your BIG registration number and two payslips at 10:30 on "
                 "Tuesday.", "What should I wear?",
                 "Wear a dark suit and bring your payslips in a folder.", "OK.", "Sure!")
    summary = summarize_locally(turns, budget_tokens=1_000, session_date=date(2026, 12, 4))
    assert "two payslips at 10:30" not in summary
    assert "The interview is on Tuesday [8 Dec 2026] at 10:30." in summary
    # A note with a word of its own is the AI's: the suit is, the folder is.
    assert "Wear a dark suit and bring your payslips in a folder." in summary


def test_a_correction_that_only_marks_the_old_line_still_ranks_first() -> None:
    # By hand (3,072 tokens) the user's correction gave way in a small summary, the old
    # line stayed marked, and the embedded model answered "two nights" from it.
    previous = ("## Critical Context\n- User: We arrive next Friday [11 Dec 2026] by train "
                "from Brussels at 18:40. Our hotel is the Pand, we booked two nights for 240 "
                "euros.\n- Assistant: They are traveling from Brussels to Ghent using a "
                "train. This setup is typical for planning a weekend getaway in a city like "
                "Ghent. The restaurant serves traditional dishes like fish curry and stew "
                "with vegetables.\n")
    turns = chat("We also want to visit the Gravensteen castle on Saturday morning.",
                 "The Gravensteen Castle is located in Ghent. It is an iconic landmark that "
                 "was built over the centuries, offering stunning architecture and sights.",
                 "Actually we booked three nights now, not two, so we leave on Monday.",
                 "You're correct. Now, we'll leave on Monday as planned.",
                 "How many nights are we staying?")
    summary = summarize_locally(turns, budget_tokens=200, previous_summary=previous,
                                session_date=date(2026, 12, 5))
    assert "We booked three nights now, not two" in summary
    assert "we booked two nights for 240 euros. [Since changed: three, not two.]" in summary


def test_a_thing_said_to_be_another_value_now_takes_the_older_value_back() -> None:
    # By hand (3,072 tokens) "Correction: the budget is 21,000 euros now, …" named no
    # value it took back: it ranked as ordinary news, gave way in a small summary to the
    # line it corrected, and the embedded model answered "Our budget is 18,000 euros".
    previous = ("## Critical Context\n- User: Our budget is 18,000 euros, including the new "
                "oven. My husband Joris wants an induction hob; I'd rather keep gas.\n")
    advice = (" Induction heats faster and is easier to clean, gas gives you more control "
              "over the flame and works when the power is out.") * 2
    turns = chat("Correction: the budget is 21,000 euros now, the countertop costs more than "
                 "we thought.", "Noted." + advice,
                 "The countertop is oak, from a supplier called Houtland in Lokeren.",
                 "Oak is a lovely choice." + advice)
    summary = summarize_locally(turns, budget_tokens=100, previous_summary=previous)
    assert "the budget is 21,000 euros now" in summary and "18,000" not in summary
    # A line that tells more than the old value stays, marked and with the new one.
    previous = ("## Critical Context\n- User: Our budget is 18,000 euros, and Bram Peeters "
                "starts on Monday.\n")
    summary = summarize_locally(turns, budget_tokens=1_000, previous_summary=previous)
    assert ("Our budget is 21,000 euros, and Bram Peeters starts on Monday. [Since changed: "
            "21,000, not 18,000.]") in summary
    # Other words of change, and a time.
    for older, newer in (("Our budget is 18,000 euros.", "Our new budget is 21,000 euros."),
                         ("We have a budget of €18,000.", "The budget went up to €21,000."),
                         ("The flight leaves at 7:15.", "Actually the flight leaves at 9:40."),
                         # how many of a thing: the noun after the number
                         ("We invited 120 guests.", "We have 135 guests now."),
                         ("Our budget is 18,000 euros.", "Budget: 21,000 euros now.")):
        notes = [note.text for note in extract_facts(chat(older, "OK.", newer, "OK.")).notes]
        assert notes == [newer], (older, newer)
    # A thing after words that qualify it, its other values in the clause, and an hour
    # written anew as an amount is (by hand, 3,072 tokens: the model answered "10:00"
    # and "12 euros" from the older lines).
    turns = chat("My dentist appointment is on Tuesday the 8th at 10:00 with Dr. Vermeulen.",
                 "OK.", "My daughter Emma has swimming lessons on Wednesdays; each lesson "
                 "costs 12 euros.", "OK.",
                 "Update: the dentist appointment is at 11:30 now, same day.", "OK.",
                 "The swimming lessons are 15 euros now.", "OK.")
    assert [note.text for note in extract_facts(turns).notes] == [
        "My dentist appointment is on Tuesday the 8th at 11:30 with Dr. Vermeulen. [Since "
        "changed: 11:30, not 10:00.]",
        "My daughter Emma has swimming lessons on Wednesdays; each lesson costs 15 euros. "
        "[Since changed: 15, not 12.]",
        "Update: the dentist appointment is at 11:30 now, same day.",
        "The swimming lessons are 15 euros now."]
    # Another thing's value, a value of another kind or unit, or no word of change:
    # nothing is taken back.
    for older, newer in (("The oven is 1,200 euros.", "The budget is 21,000 euros now."),
                         ("The work starts on Monday.", "The work starts at 8:00 now."),
                         ("The stay is 3 nights.", "The stay is 500 euros now."),
                         # (the wine's price is no value of the dinner's)
                         ("The dinner is on Sunday and the wine costs 96 euros.",
                          "The dinner is 40 euros now."),
                         ("We invited 120 guests.", "We booked 12 rooms now."),
                         ("Our budget is 18,000 euros.", "The budget is 21,000 euros.")):
        notes = [note.text for note in extract_facts(chat(older, "OK.", newer, "OK.")).notes]
        assert older in notes, (older, newer)


def test_a_days_update_by_a_verb_of_coming_takes_back_a_clause_about_they() -> None:
    # By hand (3,072 tokens) "Change of plans: the movers come on Friday the 15th now,
    # same time." took nothing back: "come" stated no value, and the older line said the
    # day of "they". The embedded model answered "Thursday the 14th at 8:00".
    older = ("The movers are Van Dijk Verhuizingen and they come on Thursday the 14th at "
             "8:00.")
    newer = "Change of plans: the movers come on Friday the 15th now, same time."
    assert stated_values(older) == (("mover", "day", "thursday", "Thursday"),
                                    ("mover", "date", "14", "14th"),
                                    ("mover", "time", "8:00", "8:00"))
    assert updated_things(newer) == ("mover",)
    turns = chat(older, "OK.", newer, "OK.")
    # The line keeps its hour and company, with the day and date the user said now.
    assert [note.text for note in extract_facts(turns).notes] == [
        "The movers are Van Dijk Verhuizingen and they come on Friday the 15th at 8:00. "
        "[Since changed: Friday, not Thursday; 15th, not 14th.]", newer]
    # A pronoun whose sentence has no subject to stand for states nothing.
    assert stated_values("Sure, and they come on Thursday the 14th.") == ()


def test_a_thing_moved_to_another_day_takes_back_what_someone_had_on_the_old_one() -> None:
    # By hand (3,072 tokens) "Update: the Adyen interview moved to Thursday the 10th at
    # 11:00." took nothing back from "I have an interview with Adyen on Wednesday the 9th
    # at 14:00, …": neither stated a value of the interview.
    older = ("I have an interview with Adyen on Wednesday the 9th at 14:00, with a recruiter "
             "called Pieter de Vries.")
    newer = "Update: the Adyen interview moved to Thursday the 10th at 11:00."
    assert [kind for _, kind, _, _ in stated_values(older)] == ["day", "date", "time"]
    assert updated_things(newer) == ("interview",)
    notes = extract_facts(chat(older, "Good luck!", newer, "Noted."),
                          session_date=date(2026, 12, 5)).notes
    # The recruiter still holds; the day goes with the date it was resolved to.
    assert notes[0].text == (
        "I have an interview with Adyen on Thursday the 10th at 11:00, with a recruiter "
        "called Pieter de Vries. [Since changed: Thursday, not Wednesday; 10th, not 9th; "
        "11:00, not 14:00.]")
    # A move says when: it moves no number, and a place is no value.
    assert stated_values("Our family moved to Utrecht in 2019.") == ()
    assert stated_values("The meeting was moved to Friday.") == (
        ("meeting", "day", "friday", "Friday"),)
    # (A change to another amount is one: "changed to" says any value.)
    assert stated_values("The price changed to 15 euros.") == (
        ("price", "number money", "15", "15"),)


def test_an_ai_restating_an_updated_thing_with_its_old_value_is_left_out() -> None:
    # By hand (3,072 tokens) the embedded model answered the movers' new day with
    # "Change of plans: the movers come on Thursday the 14th now, same time.": newer than
    # the user's correction and nearly its copy, it took its place in the next summary
    # (the old day was in the model's own copy of the user's words, carried over).
    advice = " Label every box with its room and keep the kettle in the car." * 3
    previous = ("## Critical Context\n- Assistant: The movers are Van Dijk Verhuizingen and "
                "they come on Thursday the 14th at 8:00.\n")
    turns = chat("Change of plans: the movers come on Friday the 15th now, same time.",
                 "No, you need not tell anyone.\n\nChange of plans: the movers come on "
                 "Thursday the 14th now, same time.",
                 "Our daughter Noor starts at De Regenboog school on the 18th.",
                 "Good luck to Noor." + advice)
    summary = summarize_locally(turns, budget_tokens=1_000, previous_summary=previous,
                                session_date=date(2026, 12, 5))
    assert "the movers come on Friday the 15th now" in summary
    assert "Thursday the 14th now" not in summary
    # … and its older copy says the new day and date.
    assert ("Verhuizingen and they come on Friday the 15th at 8:00. [Since changed: Friday, "
            "not Thursday; 15th, not 14th.]") in summary
    # Its note that gives the new day stays.
    turns[1] = {"role": "assistant", "content": "The movers come on Friday the 15th at "
                                                "8:00, so pack the kitchen on Wednesday."}
    summary = summarize_locally(turns, budget_tokens=1_000, previous_summary=previous,
                                session_date=date(2026, 12, 5))
    assert "The movers come on Friday the 15th at 8:00, pack the kitchen" in summary


def test_a_retelling_of_the_kept_head_is_no_news_for_the_date_it_was_given() -> None:
    # By hand (3,072 tokens) the model's copy of the kept first message, "We're moving
    # from Leiden to Rotterdam next month [Jan 2027].", took a third of a 100-token
    # summary: the resolved month was a number the head did not hold.
    head = head_stems(chat("Hi, I'm Tom. We're moving from Leiden to Rotterdam next month."))
    turns = chat("Our new address is Mathenesserlaan 212, third floor.",
                 "We're moving from Leiden to Rotterdam next month.",
                 "What should I pack first?", "Books and winter clothes.")
    summary = summarize_locally(turns, budget_tokens=1_000, session_date=date(2026, 12, 5),
                                kept_stems=head)
    assert "Mathenesserlaan 212" in summary and "Leiden" not in summary
    # A date the head does not tell is still news.
    turns[1] = {"role": "assistant", "content": "We're moving from Leiden to Rotterdam on "
                                                "the 14th."}
    summary = summarize_locally(turns, budget_tokens=1_000, session_date=date(2026, 12, 5),
                                kept_stems=head)
    assert "on the 14th" in summary


def test_a_chat_turning_to_work_keeps_the_users_rule_and_facts() -> None:
    # By hand (3,072 tokens) a chat about a failing app turned to the work layout when
    # the user pasted the error: the carried "User: Rule for this project: …" weighed as
    # any note, below the counts of memory calls, the error was printed twice (quoted as
    # the Goal and its latest request, and as an error) and once more as a "Config:"
    # line; the rule and the Python version were gone.
    previous = ("## Constraints & Preferences\n- User: Rule for this project: never add new "
                "dependencies, the Pi has little disk.\n## Critical Context\n- User: The app "
                "runs on Python 3.9 and we deploy it on a Raspberry Pi in the library "
                "basement.\n## Tools & Patterns\n- session_search ×4 (2 failed)\n"
                "- memory ×4\n")
    turns = chat("Ines is working on a Flask app called shelfie. The Pi runs on Python 3.9 "
                 "and the app has deployed on a Raspberry Pi in the library basement.",
                 'Yesterday the /loans page started failing with "sqlite3.OperationalError: '
                 'database is locked".')
    turns[0]["role"], turns[1]["role"] = "assistant", "user"
    error = 'sqlite3.OperationalError: database is locked'
    summary = summarize_locally(turns, budget_tokens=120, previous_summary=previous)
    assert "User: Rule for this project: never add new dependencies" in summary
    assert summary.count(error) == 1 and "Config:" not in summary
    summary = summarize_locally(turns, budget_tokens=200, previous_summary=previous)
    assert "User: The app runs on Python 3.9" in summary and summary.count(error) == 1


def test_a_link_only_the_ai_wrote_in_a_chat_ranks_below_the_notes() -> None:
    # By hand (3,072 tokens) the embedded model's made-up "[Rotterdam News](http://www.
    # rotterdamnews.nl/)" held a line of a 100-token summary over the movers' day.
    turns = chat("Hi, I'm Tom. We're moving from Leiden to Rotterdam.",
                 "Check the latest news on [Rotterdam News](http://www.rotterdamnews.nl/) "
                 "and [Leiden Transitions](https://www.leidens-transitions.com/).",
                 "The movers are Van Dijk Verhuizingen and they come on Thursday the 14th.",
                 "Okay.")
    summary = summarize_locally(turns, budget_tokens=90)
    assert "Van Dijk Verhuizingen" in summary and "rotterdamnews" not in summary
    # A link the user gave is theirs, and keeps its place.
    turns[2] = {"role": "user", "content": "The movers' page is https://vandijk.example/"
                                           "planning, and they come on Thursday the 14th."}
    summary = summarize_locally(turns, budget_tokens=90)
    assert "URL: https://vandijk.example/planning" in summary


def test_sample_code_the_ai_wrote_in_a_chat_about_work_sets_no_config() -> None:
    # By hand (3,072 tokens) the embedded model's sample code gave "Config:
    # capture_output=True" and "Config: result.returncode==" the room of the user's rule.
    turns = chat("The app runs on Python 3.9 and we deploy it on a Raspberry Pi in the "
                 "library basement.",
                 "Use this:\n```python\nresult = subprocess.run(['fuser', 'data/shelfie.db'], "
                 "capture_output=True)\n```",
                 "We run gunicorn with 3 workers.", "Then each worker opens its own connection.",
                 "Could a second gunicorn worker cause this?", "Yes.")
    summary = summarize_locally(turns, budget_tokens=130)
    assert "User said: We run gunicorn with 3 workers." in summary
    assert "capture_output" not in summary
    # A comparison sets nothing.
    assert CONFIG.findall("if result.returncode == 0:") == []
    assert CONFIG.findall("DATABASE_URL=postgres://h/db?sslmode=require") == [
        ("DATABASE_URL", "postgres://h/db?sslmode=require")]


def test_a_name_in_capitals_labelling_what_someone_says_is_no_config() -> None:
    # By hand (Spanish, 3,072 tokens) the embedded model answered "LUCIA: Hola, Lucy!
    # …", and "Config: LUCIA=Hola" stood in every later summary.
    turns = chat("Hola, soy Lucía y vivo en Sevilla.",
                 "LUCIA: Hola, Lucy! Estoy aquí para ayudarte.",
                 "La cena con mis suegros es el jueves a las 21h.", "Vale.")
    assert "Config: LUCIA" not in summarize_locally(turns, budget_tokens=400)
    # Settings in capitals stay settings.
    assert read_values("PORT: 8080, HOST: localhost").config == ("PORT=8080",
                                                                 "HOST=localhost")
    assert read_values("ENV: Staging\nLOG_LEVEL: Info, as agreed").config == (
        "ENV=Staging", "LOG_LEVEL=Info")


def test_a_carried_correction_keeps_its_rank_when_what_it_corrected_is_gone() -> None:
    # By hand (3,072 tokens) "We booked three nights now, not two" stood in a summary
    # whose "two nights" line had gone; at the next compaction it competed as any note
    # and gave way to the arrival, and the model answered "12 nights".
    previous = ("## Constraints & Preferences\n- User: Ewa is vegetarian and I can't eat "
                "shellfish.\n## Critical Context\n- User: We arrive next Friday [11 Dec "
                "2026] by train from Brussels at 18:40. We also want to visit the "
                "Gravensteen castle on Saturday [12 Dec 2026] morning. We booked three "
                "nights now, not two, we leave on Monday.\n- Assistant: They are traveling "
                "from Brussels to Ghent using a train. The restaurant serves traditional "
                "dishes like fish curry and stew with vegetables.\n")
    turns = chat("How many nights are we staying?", "12 nights", "What can't I eat?")
    summary = summarize_locally(turns, budget_tokens=100, previous_summary=previous,
                                session_date=date(2026, 12, 5))
    assert "- User: We booked three nights now, not two, we leave on Monday." in summary
    # The line it marked, read back with its mark, is no correction of its own: by hand
    # it took the correction's rank, and the correction gave way.
    previous = ("## Critical Context\n- User: We arrive next Friday [11 Dec 2026] by train "
                "from Brussels at 18:40. Our hotel is the Pand, we booked two nights for 240 "
                "euros. [Since changed: three, not two.] We want a boat tour on Sunday "
                "afternoon with Ewa's cousin Marta. We booked three nights now, not two, we "
                "leave on Monday.\n")
    turns = chat("What can't I eat?", "We cannot eat shellfish.", "When do we leave Ghent?",
                 "We leave Ghent on Monday.")
    summary = summarize_locally(turns, budget_tokens=100, previous_summary=previous,
                                session_date=date(2026, 12, 5))
    assert "We booked three nights now, not two, we leave on Monday." in summary


def test_an_ai_naming_a_value_the_user_took_back_before_is_marked() -> None:
    # By hand (3,072 tokens) the embedded model answered "How many nights are we
    # staying?" with the old value after the user's correction, and a later summary held
    # that and not the correction.
    wishes = " Ghent is lovely in December, with the lights and the markets." * 3
    turns = chat("Our hotel is the Pand, we booked two nights for 240 euros.",
                 "Lovely hotel." + wishes,
                 "Actually we booked three nights now, not two, so we leave on Monday.",
                 "Noted." + wishes, "How many nights are we staying?",
                 "The hotel is booked two nights for 240 euros.", "Ewa is vegetarian.",
                 "Remember, the Pand hotel by the Korenmarkt is booked two nights for 240 "
                 "euros.")
    summary = summarize_locally(turns, budget_tokens=1_000, session_date=date(2026, 12, 5))
    assert ("→ The hotel is booked two nights for 240 euros. [Since changed: three, not "
            "two.]") in summary
    assert ("by the Korenmarkt is booked two nights for 240 euros. [Since changed: three, "
            "not two.]") in summary
    # … also when the user's old line is gone from the turns (an earlier summary left
    # it out): the AI's note came after the correction.
    turns = turns[2:]
    summary = summarize_locally(turns, budget_tokens=1_000, session_date=date(2026, 12, 5))
    assert ("by the Korenmarkt is booked two nights for 240 euros. [Since changed: three, "
            "not two.]") in summary
    # Between people the other speaker's word is their own.
    people = [said("Melanie" if i % 2 else "Caroline", text) for i, text in enumerate(turns)
              for text in [str(text["content"])]]
    summary = summarize_locally(people, budget_tokens=1_000, session_date=date(2026, 12, 5))
    assert "by the Korenmarkt is booked two nights for 240 euros. [Since" not in summary


def test_an_ai_note_that_retold_a_changed_plan_is_marked_as_the_users_note_is() -> None:
    # By hand (3,072 tokens) the embedded model joined the payslips to the interview's old
    # hour and day; after the correction it answered "Tuesday" from that note.
    wishes = " I hope it goes well and you get the job." * 3
    turns = chat("The interview is on Tuesday at 10:30.", "Good luck!" + wishes,
                 "I need to bring my BIG registration number and two payslips.",
                 "You will need your BIG registration number, two payslips and a copy of "
                 "your diploma at 10:30 on Tuesday.",
                 "Actually the interview moved to Wednesday at 14:00, not Tuesday.",
                 "Noted." + wishes, "We visit the museum on Tuesday.", "Enjoy it!" + wishes)
    summary = summarize_locally(turns, budget_tokens=1_000, session_date=date(2026, 12, 4))
    assert ("copy of your diploma at 10:30 on Tuesday [8 Dec 2026]. [Since changed: "
            "Wednesday, not Tuesday.]") in summary
    # A Tuesday that shares nothing else with the interview is another plan.
    assert "We visit the museum on Tuesday [8 Dec 2026]." in summary
    assert "museum on Tuesday [8 Dec 2026]. [Since" not in summary


@pytest.mark.parametrize(("sentence", "corrects"), [
    ("Sophie will host it at her place on Biltstraat 45 instead of my flat.", True),
    ("We'll eat at home rather than the restaurant on Friday.", True),
    # A plan moved is a change without "actually": the summary's copy has lost it.
    ("The meeting moved to next Friday [11 Dec 2026] at 19:30, not Thursday.", True),
    ("I had tea instead of coffee this morning.", False),  # no thing of anyone's
    ("The meeting is on Friday at 19:30 at Sophie's place.", False),
])
def test_a_thing_put_in_the_place_of_another_is_a_correction(sentence: str,
                                                             corrects: bool) -> None:
    [note] = take_notes([sentence], speaker="User", role="user", order=1,
                        today=date(2026, 12, 5), names=())
    assert note.replaced is corrects


def test_a_change_of_place_and_a_moved_plan_outrank_other_news_in_a_small_summary() -> None:
    # By hand (3,072 tokens, a book club): "Sophie will host it … instead of my flat."
    # gave way to a bakery's discount, and the embedded model sent the club to the old
    # flat; the moved meeting, read back from the summary without its "Actually", ranked
    # as any note.
    previous = ("## Constraints & Preferences\n- User: My friend Daan is allergic to nuts, "
                "no pesto or almond cake.\n\n## Critical Context\n- User: The bakery on "
                "Twijnstraat gives us a 10 percent discount. The meeting moved to next Friday "
                "[11 Dec 2026] at 19:30, not Thursday.\n")
    turns = chat("And Sophie will host it at her place on Biltstraat 45 instead of my flat.",
                 "Next meeting at 19:30 at Sophie's house.")
    summary = summarize_locally(turns, budget_tokens=120, previous_summary=previous,
                                session_date=date(2026, 12, 5))
    assert "Sophie will host it at her place on Biltstraat 45 instead of my flat." in summary
    assert "The meeting moved to next Friday [11 Dec 2026] at 19:30, not Thursday." in summary
    assert "Daan is allergic to nuts" in summary
    assert "bakery" not in summary


def test_a_text_with_another_number_is_not_told_by_one_of_the_same_words() -> None:
    head = content_words("On day 0 I visited the museum number 0 in Lisbon with Ana.")
    assert told_in(content_words("I visited the museum in Lisbon with Ana."), head)
    assert not told_in(content_words("On day 5 I visited the museum number 5 in Lisbon "
                                     "with Ana."), head)


def test_an_ai_note_that_retells_a_correction_is_not_marked_by_it() -> None:
    # By hand (3,072 tokens) the embedded model answered the user's correction with it
    # retold, and the summary marked that "[Since changed: Sunday, not Saturday.]".
    turns = chat("The dinner is on Saturday at 19:00 at my flat on Oudegracht 112.", "Noted.",
                 "Actually the dinner moved to Sunday at 18:00, not Saturday.",
                 "We're hosting the dinner for eight friends, and the dinner moved to Sunday "
                 "at 18:00, not Saturday.",
                 "My sister Noor brings dessert, a lemon tart.", "Lovely.")
    summary = summarize_locally(turns, budget_tokens=400, session_date=date(2026, 12, 5))
    assert "eight friends, and the dinner moved to Sunday at 18:00, not Saturday." in summary
    assert "18:00, not Saturday. " + CHANGE_MARK not in summary
    # … while one that still holds the value taken back is marked.
    turns[3] = {"role": "assistant",
                "content": "We're hosting the dinner for eight friends on Saturday."}
    summary = summarize_locally(turns, budget_tokens=400, session_date=date(2026, 12, 5))
    assert ("eight friends on Saturday [12 Dec 2026]. [Since changed: Sunday, not Saturday.]"
            in summary)


def test_an_ai_note_made_after_a_correction_that_names_what_it_took_back_is_left_out() -> None:
    # By hand (3,072 tokens) the embedded model went on about the day trip the user had
    # taken back, and its note outlived the correction in the next summaries.
    previous = ("## Critical Context\n- User: We're going to Maastricht rather than the "
                "Ardennes, it's easier with the wheelchair.\n")
    turns = chat("Can you suggest a restaurant style for Sunday dinner with six people?",
                 "The Ardennes is easy with the wheelchair. We planned a day trip to the "
                 "Ardennes on Saturday.",
                 "My brother Luca arrives on Friday.", "Luca arrives on Friday by train.")
    summary = summarize_locally(turns, budget_tokens=400, previous_summary=previous,
                                session_date=date(2026, 12, 5))
    assert "Maastricht rather than the Ardennes" in summary
    assert "Ardennes is easy" not in summary and "day trip" not in summary
    # An AI note that takes the name back too stays.
    turns[1] = {"role": "assistant",
                "content": "Maastricht instead of the Ardennes is a good choice for Saturday."}
    summary = summarize_locally(turns, budget_tokens=400, previous_summary=previous,
                                session_date=date(2026, 12, 5))
    assert "Maastricht instead of the Ardennes is a good choice" in summary
