"""What a sentence of conversation is worth to a later reader (C18), without a model.

* ``is_phatic`` — text that keeps a conversation going but says nothing a reader needs
  later: greetings, thanks, compliments, agreement, "how have you been?". A sentence is
  phatic when, once its phatic phrases, interjections, the participants' names and
  function words are taken out, no content word is left — "Keep it up!", "That must have
  been awesome", "Thanks so much, Mel!", "No worries, that makes sense" (some phrases
  are taken out whole: ``_PHATIC_PHRASE``) — so a sentence that also says something
  ("Thanks, the 3 pm slot on Friday works") is not. A short reaction is phatic whatever
  its adjective ("Looks delish!", "What a lovely photo!": ``_REACTION``). Chinese the
  same way, its chit-chat taken out wherever it stands ("哈哈，谢谢你的鼓励。",
  "好的，我会记住的。": ``_CJK_PHATIC_PHRASE``); and Spanish, French, German, Italian,
  Portuguese and Dutch ("¡Muchas gracias por la ayuda!": ``other_languages.py``, which
  also reads their diets, limits and rules for the answers).
* ``salience`` — the chance that a sentence holds what a reader later asks about, per
  character of the summary: a logistic model (weights fitted on conversations, see
  ``WEIGHTS``) over named people, places and things (capitalised words inside a
  sentence, acronyms), numbers and dates, first-person facts and changes ("I started…",
  "my dog's name is…"), things done, titles in quotes, content words and words rare in
  the conversation, and whether it replies to a question; a question on its own tells
  little (its answer does), and a long sentence pays for its length.
* ``kind`` — where a sentence belongs: an ``event`` (something that happened, dated when
  it can be), a ``preference``, a ``plan`` or change, or a ``fact`` about its speaker.
* ``clean`` — leading interjections ("Wow,", "Hey Mel!", "Haha") taken off.
* ``fact_key`` / ``subject_key`` — near-identical facts share a key (the newest is kept);
  two statements about the same thing of a speaker ("my dog's name is …") share a
  subject key, so the newer one wins when they conflict.

Patterns are bounded; scoring a sentence is a few regex passes over it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import lru_cache

from mnemo.context.summary.dates import CALENDAR_WORDS, WEEKDAYS
from mnemo.context.summary.other_languages import (
    CAPITALISED_CALENDAR_WORDS,
    FOREIGN_DIET,
    FOREIGN_KNOWS_NOTHING,
    FOREIGN_LIMITATION,
    calendar_kind,
    foreign_statements,
    foreign_updates,
    foreign_value_swaps,
    foreign_values,
    is_foreign_phatic,
    is_foreign_rule,
    may_be_foreign_phatic,
)
from mnemo.context.textscan import CJK_CLASS, STOPWORDS, sentences
from mnemo.languages import FUNCTION_WORDS
from mnemo.memory.grounding import NUMBER_WORDS

__all__ = ["INTERCEPT", "PRONOUNS", "WEIGHTS", "cjk_runs", "clean", "condensed", "fact_key",
           "is_dietary", "is_foreign_correction", "is_instruction", "is_limitation",
           "is_phatic", "is_standing_rule", "kind", "knows_nothing", "named_after_not",
           "names_in", "replacements", "salience", "same_kind", "sentence_features",
           "slot_keys", "stated_values", "subject_key", "undone_in", "undone_names",
           "undone_values", "updated_things", "value_swaps", "value_word", "values_in",
           "with_value", "without_phatic_clauses"]

# Words that carry no fact in chit-chat: evaluation, feelings about the other person's
# news, agreement, small talk. A sentence made only of these (and function words) is
# phatic.
_PHATIC_WORDS = frozenset(
    """
hey hello hiya howdy bye goodbye thanks thank thx cheers welcome congrats
congratulations great awesome amazing cool wonderful nice good lovely beautiful
fantastic incredible brilliant super excellent fabulous terrific perfect sweet neat
impressive inspiring inspirational glad happy proud love loved lovin loving wow whoa yay
haha hahaha lol omg yeah yep yup yes nope okay sure absolutely totally definitely
exactly indeed agreed agree true right indeed appreciate appreciated means meant keep
kept going doing sounds sound seems seem look looks looking must been have has had feel
feels feeling felt hear heard glad excited exciting fun blast wish luck best hope hoping
take care soon catch later talk chat chatting again anytime anything new what how whats
hows something everything well also really much such truly totally pretty quite lot lots
tons always here there thing things stuff today awesome news share sharing tell telling
know knew see seeing saw nice same too think thought wonder wondering kind kindness
sweet course mean glad great keep proud super don won isn aren wasn weren didn doesn
couldn wouldn shouldn haven hasn hadn ain let sorry yummy wild encouraging mmm darn dang
gotta alright bud buddy dude pal stoked gotcha bummer boogie anyway anyways nah yea ya
bet remember forget believe interested idea talented hilarious funny cute adorable
highly recommend enjoy seriously rock rocks stunning gorgeous hyped tough almost miss
missed goodnight rooting sucks annoying understand interesting thoughtful oops fine bad
goes bravo kudos sometime maybe huge yet guys hugs understandable both noted understood
certainly gladly roger delish delicious tasty yum yummy jealous liberating savor savour
awful terrible horrible enjoyed imagine helpful supportive brave courageous liked makes
sending hug none correct
""".split()  # noqa: SIM905 - a word list reads better as text
)
# Phrases of chit-chat whose words also carry facts elsewhere ("it makes sense", "no
# worries", "enjoy your day", "thanks for the support"): taken out as phrases, so "the
# day I moved" and "a support group" keep their words.
_PHATIC_PHRASE = re.compile(
    r"\b(?:makes? (?:total |perfect )?sense|no (?:worries|worry|problem)|not a problem"
    r"|(?:don'?t|do not|no need to) worry|can'?t wait|cannot wait|sounds like a plan"
    r"|(?:i'?m |i am )?(?:gonna|going to) keep (?:it|that) up"
    r"|enjoy (?:your|the|this) (?:day|weekend|evening|night|time|trip|holiday|vacation|ride"
    # … and the embedded model's wish for the event planned: "I hope you all enjoy this
    # occasion!" stood in a party chat's summary by hand.
    r"|party|occasion|celebration|meal|dinner|stay|visit|show|concert)"
    r"|(?:have|had|having) (?:a|an|such an?) (?:great|good|nice|wonderful|fun|amazing"
    r"|awesome|lovely|fantastic) (?:day|time|weekend|evening|night|one|trip)"
    # Waiting, listening and leaving with nothing said: "Looking forward to it!", "I'm
    # all ears.", "See you around!", "You made my day!", "I'm glad it all worked out."
    r"|looking forward to (?:it|that|this|seeing you|hearing (?:from|about) (?:you|it))"
    r"|(?:i'?m |i am )?all ears|anything for a (?:friend|pal|buddy)|no way"
    r"|see (?:you|ya) around|until next time|any ?time(?= *[!.]* *$)"
    r"|(?:you|that|this|it) (?:made|make|makes) my (?:day|week|night)"
    r"|(?:everything|it|things|that|all|it all) (?:worked|works|turned) out"
    r"|(?:everything|it|things|that|all|it all) (?:went|goes|is going) (?:so |really )?(?:well"
    r"|great|fine|alright|ok|okay|smoothly)|how it (?:went|goes)"
    r"|(?:up to|been|doing|into|going on|with you|interesting|exciting|new|there) lately"
    # … and reactions whose one word is a feeling, which as the speaker's own ("I was
    # thrilled", "their words touched me") LoCoMo asks about: "No way, that's crazy!",
    # "That's rough.", "Lucky you!", "I'm touched.", "What a relief!"
    r"|that'?s (?:so |just |really )?(?:crazy|rough|fair)(?= *(?:[,!.]|$))"
    r"|(?:i'?m |i am )?(?:so |really )?thrilled for (?:you|u)|lucky (?:you|me)(?= *[!.]* *$)"
    r"|^(?:i'?m |i am )?(?:so |really |very |truly )?touched(?= *[!.]* *$)"
    r"|(?:what|such) a relief|(?:it'?s|it was|it has been|it'?s been) a (?:real )?pleasure"
    r"|(?:i )?(?:really |truly )?admire (?:that|it|this|you|your [a-z'’-]+)(?= *[!.]* *$)"
    r"|wish(?:ing|es)? (?:you|u) (?:all )?(?:the best|luck|well)"
    r"|thanks? (?:you )?(?:so much )?for (?:the|your|all the|all your) (?:support|help"
    r"|kind words|encouragement|advice|tips?|chat|talk|reminder|sympathy|offer|invite|input"
    r"|feedback|patience|understanding|info|information|update|explanation|suggestions?"
    r"|guidance|assistance|answers?|ideas|recommendations?|insights?)"
    r"|thanks? (?:you )?(?:so much )?for \w+(?:ing|in(?=['’]))(?: (?:in|up|out|by))?"
    r"|thanks? a (?:bunch|ton|million|lot)|(?:i )?(?:really )?appreciate (?:it|that|this|you"
    r"|your (?:offer|help|support|kind words))"
    r"|bon (?:voyage|app[eé]tit)|stay safe|c'?mon|(?:nice|glad|pleased|lovely|great) (?:to meet"
    r"|meeting) you|^(?:good|great|nice|amazing|awesome|excellent) (?:job|work)|fingers crossed"
    r"|fair enough|good point|(?:happy|glad) (?:i could |to )?help|my (?:pleasure|bad)"
    r"|safe travels|(?:happy|merry) (?:birthday|christmas|holidays|new year|easter|anniversary)"
    r"|sleep (?:well|tight)|hang out|(?:talking|chatting|speaking) (?:to|with) you"
    r"|keep me (?:posted|updated|in the loop)|what a (?:day|week|year|ride)|hats off"
    r"|come join us|spill the beans|(?:on )?cloud nine|wild ride"
    r"|sweet dreams|long time no (?:see|talk|chat)|never say never|catch(?:ing)? up"
    r"|(?:it'?s |it has )?been (?:a while|ages|forever|too long)"
    r"|good (?:night|morning|evening)|take it easy"
    r"|(?:talk|speak|see you)(?: to you)? (?:soon|later|tomorrow|then)"
    r"|that'?s the spirit|you deserve it|me neither|let (?:me|us) know"
    r"|(?:good|best of|the best of) luck (?:with|on|at|in|for) (?:your|the)(?: [a-z'’-]+){1,2}"
    r"|(?:^|(?<=[,!.] ))enjoy your [a-z'’-]+"
    r"|great question|hang in there|night night"
    r"|well said|bless (?:you|u|your heart)|works for me|enough about (?:me|you|that)"
    r"|^(?:good )?morning(?= *[!.]* *$)|keep up the (?:good |great |amazing |hard )?work"
    r"|(?:sweet|kind|nice|thoughtful|generous) of you to (?:say|ask|offer|share)(?: that)?"
    r"|sorry (?:for|about) (?:the|my) (?:late|slow|delayed) (?:reply|response|answer)"
    # Congratulations and pride in the other's news, which the news itself tells:
    # "Congrats on the new job!", "I'm so proud of you for taking that step!"
    r"|(?:^|(?<=[,!.] ))congrat\w* (?:on|for) (?:[a-z'’-]+ ?){1,3}(?= *[!.]* *$)"
    r"|(?:i'?m |i am )?(?:so |really |very |super |truly )*proud of (?:you|u)"
    r"(?: for (?:[a-z'’-]+ ?){1,4})?(?= *[!.]* *$)"
    # Wishes and cheers for what the listener does, which their own words tell.
    r"|(?:^|(?<=[,!.] ))have (?:so much |lots of |a lot of )?fun(?: (?:with|at|on)"
    r" (?:your|the)(?: [a-z'’-]+){1,2})?(?= *[!.]* *$)"
    r"|give it a (?:shot|try|go)|(?:btw,? )?look what i (?:got|made|found|bought)"
    r"|we'?ll (?:get there|make it|reach (?:our|my|your) goals?)"
    # An AI assistant's praise of what it was told: "Great goal!", "Good choice.",
    # "That's a good question.", "Fair point."
    r"|^(?:that'?s (?:a |an )?)?(?:good|great|nice|excellent|awesome|smart|wise|solid"
    r"|lovely|wonderful|perfect|fantastic|brilliant|fine|fair) (?:question|choice|goal|call"
    r"|pick|plan|thinking|start|progress|idea|advice|tip|suggestion|point)s?"
    r"(?= *[!.]* *$)"
    # A welcome, and a wish for someone's health, which the news itself tells: "Welcome
    # back!", "I hope he recovers quickly.", "Get well soon!"
    r"|^welcome (?:back|home)(?= *[!.]* *$)|get well soon"
    # A promise or an invitation with nothing in it, and a week described by its mood:
    # "I'll try.", "Come if you can!", "Crazy week."
    r"|^(?:i'?ll|i will) (?:try|do my best|see)(?= *[!.]* *$)|^come (?:along )?if you can"
    r"|^(?:(?:such|what) an? )?(?:crazy|busy|long|rough|hectic) (?:day|week|month|year)"
    r"(?= *[!.]* *$)"
    r"|^(?:i )?hope (?:you|he|she|they|it)(?:'ll| will)? (?:recovers?|heals?|(?:feels?"
    r"|gets?) better)(?: (?:soon|quickly|fast))?(?= *[!.]* *$)"
    r"|(?:i'?ll|i will|i'?m going to) (?:keep|bear) (?:that|this|it) in mind"
    r"|(?:oh )?my (?:god|gosh|goodness)"
    r"|i (?:can'?t|cannot|am unable to|'m unable to) (?:assist|help) (?:you )?with"
    r" (?:that|this)(?: request)?"
    # … and thanks for its time: "Thank you for your time and consideration!"
    r"|thank(?:s| you) for your (?:time|patience|consideration|understanding|attention)"
    r"(?: and (?:time|patience|consideration|understanding|attention))?"
    # An AI assistant's closing lines: "Let me know if you have any other questions or
    # need assistance with something else.", "How can I assist you today?"
    # The offer's "if" clause whatever help it names, left when its "feel free to
    # ask" went: "If you have any more questions or need assistance in planning a trip!"
    # (by hand, a note of the assistant's in every later summary).
    r"|^if you (?:have|'ve got|got) (?:any )?(?:more |other |further )?questions?"
    r"(?: or (?:need|want) (?:any )?(?:more |further |other )?(?:help|assistance)"
    r"(?: [a-z'’-]+){0,6})?(?= *(?:[,!.]|$))"
    r"|(?:if )?(?:you )?(?:have|got) (?:any )?(?:other |more |further )?questions"
    r"|(?:need|want) (?:any )?(?:more |further |other )?(?:help|assistance)"
    r"|(?:with )?(?:anything|something) else|how (?:can|may) i (?:help|assist)(?: you)?"
    r"|(?:i'?m )?(?:here|happy|glad) to (?:help|assist)|i (?:can|could) (?:help|assist)"
    r"|feel free to (?:ask|reach out|let me know|share)"
    # … and its acknowledgement of being asked: "Sure! I understand your request."
    r"|(?:i )?understand your (?:request|question|concern)s?"
    # … and the line that only opens a list: "Here's the updated schedule:", "The tool
    # returned this information as follows:", "For your information, the list of tasks
    # that need to be completed includes:" (by hand a note of its own, every list the
    # model wrote left one).
    r"|^here(?:['’]s| is| are)(?: [a-z'’-]+){1,10}(?= *: *$)"
    r"|^(?:[a-z'’,-]+ ){1,14}(?:as follows|the following|includes?)(?= *: *$)"
    r"|(?:in|with|on) (?:a |any |an )?(?:different|other|another) (?:area|topic|subject"
    r"|matter|field|task)s?"
    # … and the user's thanks for an answer: "Thanks, that helps!" (by hand, "That
    # helps!" stood among a 3,072-token chat's notes while the daughter's fear of
    # heights gave way), and the AI's hope that it did: "I hope this information helps."
    r"|(?:^|(?<=[,!.] ))(?:i )?(?:hope )?(?:that|this|it)(?: information| answer| advice)?"
    r" (?:really |definitely |totally )?help(?:s|ed)"
    r"(?: (?:a lot|a ton|so much|loads))?(?= *[!.]* *$))\b"
)
# Every word a phatic phrase is written with, with an optional apostrophe and without
# ("c'?mon": "c", "mon", "cmon"). A word that begins one of them ("make" of "makes?"),
# or begins with one of three letters or more ("wishing" of "wish(?:ing|es)?"), may
# stand in a phrase (``_in_phrase``); the phrases that take any word after them ("enjoy
# your …") are found by their anchor words instead. A test checks the shortcut against
# the phrase search itself (``tests/context/test_conversation_summary.py``).
def _phrase_words(pattern: str) -> frozenset[str]:
    bare = re.sub(r"\\[a-zA-Z]", " ", pattern)  # no "s" of "\s", no "w" of "\w"
    return frozenset(re.findall(r"[a-z]+", bare)) | frozenset(
        re.findall(r"[a-z]+", bare.replace("'?", "").replace("’?", "")))


_PHRASE_WORDS = _phrase_words(_PHATIC_PHRASE.pattern)
_PHRASE_STARTS = frozenset(w[:k] for w in _PHRASE_WORDS for k in range(1, len(w) + 1))
_LONGEST_PHRASE_WORD = max(map(len, _PHRASE_WORDS))
# " fun" with its space: "function" and "refund" are in most coding turns, and each
# would send its sentence to the phrase search.
_PHRASE_ANCHORS = ("thank", "luck", "enjoy", "congrat", "proud", " fun", "if you ", "admire")
# … and the openings of a line that only opens a list, which takes any words too.
_LIST_OPENINGS = ("here's", "here’s", "here is", "here are")
_LIST_ENDS = ("as follows", "the following", "include", "includes")


def _in_phrase(word: str) -> bool:
    """True when ``word`` may be part of a phatic phrase (see ``_PHRASE_WORDS``). Only
    its beginnings as long as a phrase word are looked up: a pasted word of 200,000
    letters cost 4.6 s, one slice of it for each length."""
    return word in _PHRASE_STARTS or any(
        word[:k] in _PHRASE_WORDS for k in range(3, min(len(word), _LONGEST_PHRASE_WORD + 1)))


# A reaction to what the other speaker showed or told, whatever its adjective: "Looks
# delish!", "That sounds special.", "Must feel liberating!", "What a lovely photo!",
# "Such a cool experience!", "That's a beautiful picture!". The words after the frame
# must be lower-case (case-sensitive), so "Looks like Paris!" or "What a day at Disney!"
# name something and are not reactions; nor is a state of the work ("It looks broken.").
_REACTION = re.compile(
    r"(?!.*\b(?i:broken|wrong|stuck|missing|failing|failed|down|slow|empty|corrupt\w*"
    r"|outdated|off|fixed|done|ready|right|(?<!of )work\w*)\b)"
    r"(?i:(?:(?:oh|aw+|wow|yum|ooh|yeah|haha)[,!]*\s+)*)(?:"
    r"(?i:(?:(?:that|it|this|they|you|she|he)(?:['’]s|\s+is|\s+are|\s+was)?\s+)?"
    r"(?:looks?|sounds?|seems?|feels?|must\s+(?:be|feel|have\s+(?:been|felt))))"
    r"(?:\s+(?:like|so|really|very|super|pretty|totally|absolutely|just|such|a|an"
    r"|(?:lot|bit|ton|kind|sort)\s+of))*"
    r"(?:\s+[a-z'’-]+){1,2}(?:\s+(?:and|&)\s+[a-z'’-]+)?"
    r"|(?i:what|such)\s+an?(?:\s+[a-z'’-]+){1,6}(?=\s*!)"
    r"|(?i:(?:that|this|it)(?:['’]s|\s+is|\s+was))(?:\s+(?:a|an|such|so|really|very))*"
    r"(?:\s+[a-z'’-]+){0,2}\s+(?:photo|picture|pic|shot|view|sight|idea|change|step|deal"
    r"|accomplishment|achievement|milestone)"
    r")\s*[!.…]*\s*",
)
_REACTION_CHARS = 60  # longer sentences say more than a reaction


# Words that are a sound, not a word: "woohoo", "yoohoo", "woah", "oof", "ugh", "sooo"
# (a letter held), however many letters each takes (``_is_sound``: up to a bound, so a
# pasted run of letters costs nothing).
_SOUND_WORD = re.compile(
    r"(?:w+h?o+h?o+|h+o+o+|y+o+h+o+|w+o+a+h*|a+w+|u+g+h+|o+o+f+|o+u+c+h+|h+m+|m+m+|y+a+y+"
    r"|y+i+k+e+s+|p+h+e+w+|e+e+k+|h+e+h+e+[he]*|\w*([a-z])\1\1\w*)"
)
_SOUND_CHARS = 16


def _is_sound(word: str) -> bool:
    return len(word) <= _SOUND_CHARS and _SOUND_WORD.fullmatch(word) is not None


_INTERJECTION = re.compile(
    r"^(?:(?:hey|hi|hello|wow|whoa|oh|ooh|aw+|ah|yeah|yep|yes|no|ok(?:ay)?|haha(?:ha)*"
    r"|lol|omg|hmm+|well|so|gosh|yay|cool|nice|great|awesome|sure|totally|definitely"
    r"|thanks|thank you|honestly|anyway|alright|by the way|btw)(?: [A-Z][a-z]{1,20})?"
    r"[!,.…]+\s*)+",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*|\d[\d,.:/-]*")
# A word without its clitic ("it's" → "it"), or a number.
_BASE_WORD = re.compile(r"[a-z]+|\d[\d,.:/-]*")
_NUMBER_WORDS = frozenset(("one", "two", "three", "four", "five", "six", "seven", "eight",
                           "nine", "ten", "eleven", "twelve", "twenty", "thirty", "forty",
                           "fifty", "hundred", "thousand", "million", "first", "second",
                           "third", "dozen", "half"))
_DATE_WORDS = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november"
    r"|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday"
    r"|tomorrow|weekend|last (?:week|month|year)|ago|\d{4})\b|\[[^\]]{4,40}\]",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset(("I", "I'm", "I've", "I'd", "I'll", "OK", "Ok", "Oh", "Wow", "Yeah",
                        "Thanks", "Hey", "Hi", "Haha", "Lol", "Omg", "Mom", "Dad"))
_CHANGE = re.compile(
    r"\b(?:i|we)(?:'ve| have| just| recently| finally)? (?:started|began|moved|switched"
    r"|changed|quit|joined|adopted|bought|got|lost|left|graduated|married|finished"
    r"|signed up|enrolled|opened|launched|created|built|made|won|became|decided|retired)\b",
    re.IGNORECASE,
)
_PLAN = re.compile(
    r"\b(?:i|we)(?:'m| am|'re| are)? (?:going to|gonna|planning|plan|hoping|hope to"
    r"|want to|would like to|thinking (?:of|about)|about to|will|'ll|intend)\b"
    r"|\bi'll\b|\bwe'll\b|\bnext (?:week|month|year|summer)\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(?:i|we) (?:really |just |absolutely )?(?:love|like|enjoy|prefer|hate|dislike"
    r"|adore|can't stand)\b|\bmy (?:favou?rite|go-to)\b|\bfavou?rite\b|\bi'm (?:a )?(?:big )?fan\b",
    re.IGNORECASE,
)
# What someone eats or must not: "Carlos is vegetarian, and I can't eat shellfish.", "I'm
# lactose intolerant" — not "Kyoto has temples that serve vegetarian cuisine".
_DIET = re.compile(
    r"\b(?:i'?m|i am|we'?re|we are|he'?s|she'?s|they'?re|is|are)\s+(?:(?:a|an|strict|also"
    r"|both|very|severely)\s+)*(?:vegetarian|vegan|pescatarian|gluten[- ]free|allergic"
    r"|(?:lactose |gluten )?intolerant|celiac|coeliac|diabetic)\b"
    # … whoever it is: "My mother doesn't eat pork" (by hand it ranked as any note, and
    # gave way in a small summary), "Luca never eats meat".
    r"|\b(?:i|we|he|she|they|(?:my|our|his|her|their) [a-z]+|(?-i:[A-Z][a-z]+))\s+"
    r"(?:can'?t|cannot|don'?t|do not|doesn'?t|does not|never|won'?t)\s+eats?\b",
    re.IGNORECASE,
)


# … and in Chinese: "卡洛斯吃素，我对贝类过敏。" (by hand it stayed a note, and gave way).
_CJK_DIET = re.compile("吃素|素食者|素食主义|过敏|不吃|不能吃|忌口|乳糖不耐|不耐受|清真|糖尿病")


def is_dietary(sentence: str) -> bool:
    """True when ``sentence`` tells what someone eats or must not eat."""
    return _DIET.search(sentence) is not None or FOREIGN_DIET.search(sentence) is not None or (
        not sentence.isascii() and _CJK_DIET.search(sentence) is not None)


# What someone cannot do or must avoid, which every suggestion has to respect as much as a
# diet: a fear ("Mia is afraid of heights, so only bouldering"), a condition, a body
# that cannot ("my dad can't walk far", "she uses a wheelchair"). By hand the fear was one
# note among others in a 3,072-token chat, and gave way to "That helps!".
_LIMITATION = re.compile(
    r"\b(?:i'?m|i am|we'?re|we are|he'?s|she'?s|they'?re|is|are|gets?|get)\s+(?:(?:very|really"
    r"|so|terribly|quite|a bit|a little|also|both)\s+)*(?:afraid|scared|terrified|frightened"
    r"|phobic) of\b|\b(?:a )?(?:fear|phobia) of\b"
    r"|\b(?:can'?t|cannot|don'?t|do not|doesn'?t|does not)"
    r"\s+(?:swim|drive|walk (?:far|long|much)|climb|ski|skate|cycle|ride|drink|fly|handle)"
    r"\b|\b(?:uses?|in) a wheelchair\b|\b(?:i'?m|i am|she'?s|she is|is) pregnant\b"
    r"|\b(?:has|have|had) (?:asthma|epilepsy|diabetes|bad knees|a bad (?:back|knee|hip)"
    r"|a heart condition|motion sickness|vertigo|a disability|claustrophobia)\b"
    r"|\bgets? (?:car ?|sea ?|motion ?|air ?)?sick\b",
    re.IGNORECASE,
)
_CJK_LIMITATION = re.compile("怕高|恐高|怕水|怕黑|害怕|不会游泳|不会开车|晕车|晕船|晕机|怀孕|轮椅"
                             "|哮喘|心脏病|腿脚不便|走不了远路")


def is_limitation(sentence: str) -> bool:
    """True when ``sentence`` tells what someone must not eat (``is_dietary``), cannot do
    or must avoid (``_LIMITATION``)."""
    return is_dietary(sentence) or _LIMITATION.search(sentence) is not None or (
        FOREIGN_LIMITATION.search(sentence) is not None) or (
        not sentence.isascii() and _CJK_LIMITATION.search(sentence) is not None)


_FIRST_PERSON_FACT = re.compile(
    r"\b(?:i'm|i am|i've|i have|i had|i was|i work|i live|i do|we have|we're|we are"
    r"|my [a-z]+(?:'s)? (?:name )?(?:is|are|was)|my (?:wife|husband|partner|kids?|son"
    r"|daughter|dog|cat|mom|dad|mother|father|sister|brother|friend|family|job|boss|team"
    r"|home|house))\b",
    re.IGNORECASE,
)
_PAST_EVENT = re.compile(
    r"\b(?:i|we|my [a-z]+|they|he|she)(?: [a-z]+ly)? (?:went|visited|saw|met|had|took"
    r"|did|ran|made|got|gave|attended|went|travel(?:l)?ed|painted|played|read|wrote|won"
    r"|finished|started|joined|moved|bought|adopted|celebrated|tried|spent|learned|found"
    r"|received|volunteered|hosted|organized|organised|signed|camped|hiked|baked|cooked)\b",
    re.IGNORECASE,
)
_SUBJECT = re.compile(r"\bmy ((?:[a-z]+ ){0,2}?[a-z]+?)(?:'s)? (?:name )?(?:is|are)\b",
                      re.IGNORECASE)


# A connective that only ties the sentence to the one before: "Oh, and I'm lactose
# intolerant" is "I'm lactose intolerant" once it stands alone in a summary.
_CONNECTIVE = re.compile(r"^(?:and|also|plus|but)\b,?\s+(?=\w)", re.IGNORECASE)


def clean(sentence: str) -> str:
    """``sentence`` without its leading interjections ("Wow,", "Hey Mel!", "Haha") and
    the connective after them ("And", "Also")."""
    stripped = _CONNECTIVE.sub("", _INTERJECTION.sub("", sentence).strip())
    if stripped == sentence.strip():
        return stripped
    return stripped[:1].upper() + stripped[1:] if stripped else ""


_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
_CJK_PHATIC = re.compile(
    r"^(?:谢谢|多谢|你好|您好|好的|没问题|太好了|太棒了|不客气|再见|是的|对|嗯|哈哈)+")


def cjk_runs(text: str) -> list[str]:
    """The runs of CJK characters in ``text``, each past a phatic opening ("你好"): what
    CJK text, written without spaces, has for words."""
    return [stripped for run in _CJK_RUN.findall(text)
            if (stripped := _CJK_PHATIC.sub("", run))]


# Chinese chit-chat, wherever it stands in a run: thanks, greetings, agreement, praise,
# cheering on, an AI assistant's closing offers ("有什么问题随时问我"). What a run has left
# without these and without function characters is its content: "哈哈，谢谢你的鼓励。",
# "哇，真厉害！", "很好，坚持下去！", "好的，我会记住的。" have none.
_CJK_PHATIC_PHRASE = re.compile(
    r"(?:谢谢|感谢|多谢)(?:你|您|大家)?(?:的)?(?:鼓励|支持|帮助|帮忙|关心|分享|夸奖|建议|提醒"
    r"|理解|耐心|信任|祝福)?|不客气|不用谢|没事|没关系|没问题|你好|您好|大家好|早上好|早安"
    r"|中午好|下午好|晚上好|晚安|再见|拜拜|回头见|下次见|明天见|好的|好吧|好啊|行啊|是的|是啊"
    r"|对啊|对的|没错|当然|确实|哎呀|天哪|我的天|[嗯哈呵嘿哇哦噢啊呀哎]+"
    r"|太(?:好吃|好玩|好看|好|棒|厉害|酷|美|可爱|有趣|有意思)了?"
    r"|真(?:的)?(?:好吃|好玩|好|棒|厉害|不错|可爱|美|漂亮|酷|有意思|有趣|好看|开心|高兴|羡慕|佩服|了不起)"
    r"|好(?:棒|厉害|可爱|酷|开心)|很好|不错|厉害|加油|坚持(?:下去|住)?|继续(?:努力|加油|保持)"
    r"|(?:恭喜|祝贺)(?:你|您)?|(?:很|非常|真)?(?:高兴|开心)(?:认识|见到|听到|听说)(?:你|您)?"
    r"|我(?:会|一定会)?记住(?:的|了)?|明白了?|知道了|了解了?|收到|辛苦了|保重|注意安全"
    r"|一路顺风|祝你(?:好运|顺利|玩得开心|一切顺利|成功)|玩得开心|听起来(?:很|真|太)?(?:棒|好"
    r"|不错|有趣|有意思)|为你(?:感到)?(?:高兴|骄傲)|你真(?:棒|厉害|好)"
    r"|(?:有什么(?:问题|需要))?随时(?:问我|告诉我|找我)|我(?:很|非常)?乐意(?:帮忙|帮助你|效劳)?"
    # An AI assistant's refusals, offers and closings (by hand, the embedded model):
    # "抱歉，但我无法协助完成这个请求。", "请问有什么我可以帮忙的吗？",
    # "希望这些建议能满足你的需求。"
    r"|(?:抱歉|对不起)|但?我(?:无法|不能)(?:协助|帮助|帮)你?(?:完成)?(?:这个|此)?(?:请求)?"
    r"|(?:请问)?有(?:什么|啥)(?:其他)?(?:我)?可以帮(?:忙|你|助你)的(?:吗)?"
    r"|很高兴(?:能)?(?:帮助|帮)(?:你|到你)?|希望(?:这些|这个)?(?:建议|回答)?能(?:满足你的需求"
    r"|帮到你|对你有(?:所)?帮助)")
# Characters that carry no fact alone: particles, pronouns, degree words.
_CJK_FUNCTION = frozenset("的了吗呢啊吧呀哦嘛啦哟喔噢嗯哈呵嘿哇"
                          "你您我他她它们也很真太都就还是这那个好又再对行嗨")
# A greeting or thanks with a name after it ("你好李明", "谢谢妈妈") says nothing more.
_CJK_VOCATIVE = re.compile(r"^(?:你好|您好|嗨|谢谢|多谢|再见|拜拜|早上好|晚安|恭喜)"
                           rf"[{CJK_CLASS}]{{1,3}}$")


def _cjk_content(text: str, names: Iterable[str]) -> list[str]:
    """The content of ``text``'s CJK runs, two characters to a word: each run without
    the participants' names and chit-chat (``_CJK_PHATIC_PHRASE``), and nothing of a run
    whose rest is function characters."""
    cjk_names = [n for n in names if not n.isascii()]
    out: list[str] = []
    for run in _CJK_RUN.findall(text):
        if _CJK_VOCATIVE.match(run):
            continue
        for name in cjk_names:
            run = run.replace(name, "")
        rest = _CJK_PHATIC_PHRASE.sub("", run)
        if any(c not in _CJK_FUNCTION for c in rest):
            out += [rest[i:i + 2] for i in range(0, len(rest), 2)]
    return out


_CLAUSE = re.compile(r"(,\s+|;\s+|[，；]\s*|\s+[-–—]+\s+)")
# An instruction or a rule given to the assistant, not a remark about life: it starts
# with an imperative, or sets a rule for what comes next.
_INSTRUCTION = re.compile(
    r"^(?:(?:and|also|so|but|please|pls)[,:]?\s+)?(?:never|always|don'?t|do not|avoid|make sure"
    r"|use|only use|please|stick to|no more than|at most|at least|must)\b"
    r"|\blet'?s (?:use|go with|switch)\b|不要|必须|总是|永远|优先|禁止|请勿|决定"
    r"|\b(?:from now on|going forward|prefer\w* \S+ (?:over|to)|instead of|we decided"
    r"|decided to|settled on|we(?:'ll| will) (?:use|go with)|switch(?:ed)? to|opted)\b"
    r"|[`/=_]|\.\w{1,4}\b",
    re.IGNORECASE,
)


def is_instruction(sentence: str) -> bool:
    """True for a rule or a decision about the work ("Never call …", "we decided to use
    …"), as opposed to a remark that happens to use the same words ("it's not always
    easy")."""
    return bool(_INSTRUCTION.search(sentence))


# A rule the user sets for how the assistant answers from now on ("please only suggest
# vegetarian recipes", "never use emojis", "from now on call me Bea"), as opposed to a
# request for one answer ("please suggest a dinner for tonight"). (A new English branch
# needs one of its words in ``_STANDING_WORDS``.)
_STANDING_RULE = re.compile(
    r"(?:^|[,;:]\s*|\b(?:so|and|but|also)\s+)(?:please\s+|pls\s+)?(?:always|never|only"
    r"|don'?t|do not|stop)\s+(?:ever\s+)?(?:use|suggest|give(?! up)|answer|reply|respond|write"
    r"|call|tell|show|recommend|speak|talk|send|include|mention|ask|add|format|list|say"
    r"|explain|translate|assume|offer|book|schedule|share|cite|swear|curse|bring"
    r"|propose|pick|choose|order)\b"
    # "… so keep that in mind", "remember that I'm vegan": what the user tells the
    # assistant to hold on to for its answers ("I'll keep that in mind" is no rule).
    r"|(?:^|[,;:]\s*|\b(?:so|and|but|also)\s+)(?:please\s+|pls\s+)?(?:(?:keep|bear) (?:that"
    r"|this|it) in mind|remember (?:that )?(?:i|i'm|my|we)\b)"
    r"|\b(?:from now on|going forward|next time you)\b"
    # "… so no whey protein please", "please no onions", "Avoid dairy in my meal plans."
    r"|(?:^|[,;:]\s*|\b(?:so|and|but|also)\s+)(?:please\s+no|no(?!\s+(?:problem|worries"
    r"|thanks|idea|way|one|need)\b)(?:\s+[a-z'’-]+){1,3},?\s+please)\b"
    r"|(?:^|[,;:]\s*|\b(?:so|and|but|also)\s+)(?:please\s+)?avoid\s+[a-z'’-]+"
    r"(?:\s+[a-z'’-]+){0,3}\s+(?:in|for|with) (?:my|our|the|any|your)\b"
    r"|\bi(?:'d| would)? (?:like|want|need|prefer) (?:you to (?:always|never|only|keep|use"
    r"|answer|reply|call|write)|(?:your |short |shorter |brief )?(?:answers|replies"
    r"|responses))\b|\b(?:keep|make) (?:your )?(?:answers|replies|responses) (?:short"
    r"|brief|concise|simple)|\bcall me (?-i:[A-Z])"
    # In Chinese: "推荐菜谱的时候请记住", "以后叫我小李", "回答不要用英文".
    r"|请记住|以后(?:请|都|要|你|回答|叫我)|从现在(?:开始|起)|(?:请|就)叫我"
    # ("特别用心" is no "别用", "只用了十分钟" no "只用").
    r"|(?:总是|永远|不要|(?<![特分区级个识类告差])别)(?:用|推荐|回答|说|写|给|提|叫)"
    r"|只(?:推荐|回答|说|写)",
    re.IGNORECASE,
)


# Each English branch of ``_STANDING_RULE`` matches one of these words (in lower case):
# an ASCII sentence with none of them sets no rule. Every user sentence is asked, and
# this search costs a tenth of the rule's, whose branches are tried at every character.
_STANDING_WORDS = re.compile(
    r"always|never|only|don|do not|stop|in mind|remember|from now on|going forward"
    r"|next time you|you to|answers|replies|responses|call me|please|avoid"
)


def is_standing_rule(sentence: str) -> bool:
    """True when ``sentence`` (the user's, to an AI assistant) sets a rule for the
    answers to come rather than asking for one (see ``_STANDING_RULE``)."""
    if sentence.isascii() and _STANDING_WORDS.search(sentence.lower()) is None:
        return is_foreign_rule(sentence)
    return _STANDING_RULE.search(sentence) is not None or is_foreign_rule(sentence)


def without_phatic_clauses(sentence: str, names: Iterable[str] = ()) -> str:
    """``sentence`` without its phatic clauses: "I made peach cobbler, it was great!"
    keeps "I made peach cobbler"."""
    # The separators' characters first: most sentences have none, and testing for
    # them costs a twentieth of the search.
    if ("," not in sentence and ";" not in sentence and "-" not in sentence
            and "–" not in sentence and "—" not in sentence
            and (sentence.isascii() or ("，" not in sentence and "；" not in sentence))
            ) or not _CLAUSE.search(sentence):
        return sentence
    parts = _CLAUSE.split(sentence)
    kept: list[str] = []
    for i in range(0, len(parts), 2):
        clause = parts[i]
        if clause and not is_phatic(clause, names):
            if kept:
                kept.append(parts[i - 1])
            kept.append(clause)
    if not kept:
        return ""
    text = "".join(kept).strip()
    if kept[0] != parts[0]:  # "By the way, my car broke down" → "My car broke down"
        text = text[:1].upper() + text[1:]
    end = sentence.rstrip()[-1:]
    return text + end if end in ".!?。！？" and not text.endswith(
        (".", "!", "?", "。", "！", "？")) else text


# Pronouns say who, not what: "She's cute!" is as phatic as "That's cute!". They are left
# out only when telling phatic text, and not in questions ("What kind are they?" asks
# for what its reply tells); the salience weights were fitted counting them.
PRONOUNS = frozenset(("she", "he", "they", "them", "her", "his", "him", "hers", "yours",
                      "ours", "theirs", "those", "these", "yourself", "myself", "himself",
                      "herself", "itself", "ourselves", "themselves"))


@lru_cache(maxsize=64)
def _skipped(names: tuple[str, ...], pronouns: bool = False) -> frozenset[str]:
    """Words that are no content: function words, phatic words, the participants' names
    and their short forms ("Mel" for Melanie); ``pronouns``: also those."""
    lowered = {n.lower() for n in names}
    return (STOPWORDS | FUNCTION_WORDS | _PHATIC_WORDS | lowered
            | (PRONOUNS if pronouns else frozenset())
            | {n[:k] for n in lowered for k in range(3, len(n))})


def _content(sentence: str, names: Iterable[str]) -> list[str]:
    skip = _skipped(tuple(names))
    # CJK has no spaces: each run of characters, without its chit-chat
    # (``_cjk_content``), counts as one content word per two characters.
    out = [] if sentence.isascii() else _cjk_content(sentence, names)
    out += [w for w in _BASE_WORD.findall(_PHATIC_PHRASE.sub(" ", sentence.lower()))
            if w not in skip and (len(w) >= 3 or w[0].isdigit())
            and not _is_sound(w)]
    return out


# The name a sentence ends on after a comma or a greeting ("Congrats, Ana!", "Bye Jon!")
# is the listener's: a chat without speakers' names (``mnemo chat``) has no other way to
# know it is one.
_GREETING = (r"hey|hi|hiya|heya|howdy|yo|hello|bye|thanks|thank you|congrats|congratulations|cheers"
             r"|(?:good )?(?:morning|afternoon|evening|night)|welcome(?: back)?"
             r"|nice to meet you|miss you|love you"
             # Replies to thanks and leave-takings say the name without a comma too:
             # "Anytime Nate!", "No problem Nate!" (LoCoMo, held out).
             r"|anytime|no problem|no worries|my pleasure|you bet|will do|you too"
             r"|take care|good luck|see you|talk soon")
# … or the names of two or more: "Good morning, Lotte and Bram!" (by hand: "Lotte and
# Bram!" was left of it, a note).
_NAME = r"[A-Z][a-z'’]{1,20}"
_NAMES = rf"{_NAME}(?:(?:,\s*|,?\s+(?:and|&)\s+){_NAME}){{0,3}}"
_VOCATIVE = re.compile(
    rf"(?:^(?i:{_GREETING})\s+|,\s*){_NAMES}(?=[!.?…\s]*$)"
    # … or a greeting's name before the rest: "Hey Mel, how are you?"
    rf"|^(?i:{_GREETING})\s+{_NAMES}(?=\s*[,!])"
)
# ``_VOCATIVE`` matches after a comma or a greeting that opens the sentence: a sentence
# with neither (most) is not searched.
_GREETING_START = re.compile(rf"(?i:{_GREETING})\s")


# A reply that says it knows nothing of a thing ("Sorry, but I don't have any information
# about your partner Bram's offer to help on the day.") tells the reader nothing, and
# answers nothing: by hand that note outranked the user's "Bram from my office offered to
# help on the day.", and "Any tips for the table setting? → I don't have enough
# information to give you tips …" stood under Resolved Questions. Not a sentence that
# goes on to tell something ("I don't have access to the timetable, but the museum opens
# at 9."), nor one that it has no access, as an AI: "As an AI assistant, I don't have
# access to your personal entry." (by hand). The name of whom it speaks to may stand
# before or after the apology ("Eva, I'm sorry, but …", left "Eva, but …" once the
# apology, a phatic clause, is gone).
_ADDRESSED = rf"(?:{_NAME}, )?"
_KNOWS_NOTHING = re.compile(
    rf"{_ADDRESSED}(?i:(?:(?:I'm |I am )?sorry|unfortunately)[,!]? )?{_ADDRESSED}(?i:but )?"
    r"(?i:as an ai(?: assistant| language model| model)?, )?I (?:"
    r"(?:(?:don't|do not|didn't|did not) (?:have|see|find|know)|have no|can't find"
    r"|cannot find|couldn't find|am not aware of|'m not aware of)"
    r" (?:(?:any|enough|much|the|specific|more) )?(?:information|info|details|data"
    r"|record|records|context|knowledge|anything)"
    r"|(?:don't|do not) have access|(?:can't|cannot) access"
    r"|(?:don't|do not) know (?:what|who|whom|where|when|which|whether|if|how|anything"
    r"|much))\b(?!.*\bbut\b)")


def knows_nothing(sentence: str) -> bool:
    """True when ``sentence`` only says that its speaker knows nothing of a thing."""
    return (_KNOWS_NOTHING.match(sentence) is not None
            or FOREIGN_KNOWS_NOTHING.match(sentence) is not None)


# A bare question for a place, a time, a person or a number ("Where?", "When?") has no
# content word, yet it asks: the reply that follows is its answer ("Downtown, on Maple
# Street."), which ``extract.py`` pairs it with.
_BARE_QUESTION = re.compile(r"(?i:(?:and |so )?(?:where|when|who|what time|how (?:many|much"
                            r"|long|old|far))(?: exactly)?\?+)")


def is_phatic(sentence: str, names: Iterable[str] = ()) -> bool:
    """True when ``sentence`` says nothing a later reader needs (see the docstring)."""
    if not sentence.isascii():
        content = _content(sentence, names)
        return not content or (may_be_foreign_phatic(content[0], sentence)
                                and is_foreign_phatic(sentence, _skipped(tuple(names))))
    if len(sentence) <= 24 and _BARE_QUESTION.fullmatch(sentence):
        return False
    if "," in sentence or _GREETING_START.match(sentence):
        sentence = _VOCATIVE.sub("", sentence)
    if len(sentence) <= _REACTION_CHARS and _REACTION.fullmatch(sentence.strip()):
        return True
    # A question about "them" asks for what the reply tells (its reply is ranked as one).
    skip = _skipped(tuple(names), not sentence.rstrip().endswith("?"))
    low = sentence.lower()
    # Word by word, to stop at the first content word: most sentences have one early,
    # and every unique sentence of a transcript is asked (four times faster than
    # collecting all the words first). A content word that no phatic phrase holds
    # settles it before the phrases are searched (the phrase search is most of the
    # cost); a phrase that takes any word ("enjoy your …") needs its anchor word.
    if not any(anchor in low for anchor in _PHRASE_ANCHORS) and not (
            low.rstrip().endswith(":") and (low.startswith(_LIST_OPENINGS)
                                            or low.rstrip(" :").endswith(_LIST_ENDS))):
        for match in _BASE_WORD.finditer(low):
            word = match.group()
            if (word not in skip and (len(word) >= 3 or word[0].isdigit())
                    and not _in_phrase(word) and not _is_sound(word)):
                # ("Gracias, muy util.": chit-chat in another language.)
                return (may_be_foreign_phatic(word, sentence)
                        and is_foreign_phatic(sentence, skip))
    for match in _BASE_WORD.finditer(_PHATIC_PHRASE.sub(" ", low)):
        word = match.group()
        if word not in skip and (len(word) >= 3 or word[0].isdigit()) and not _is_sound(word):
            return may_be_foreign_phatic(word, sentence) and is_foreign_phatic(sentence, skip)
    return True


# The weights of ``salience``: a logistic model of the chance that a sentence of
# conversation holds a word of the answer to what a reader later asks. Fitted by
# ``bench/salience_fit.py`` on the three LoCoMo dev conversations (26, 30, 41: 2,796
# notes, of which 343 hold an answer word of a question whose evidence is their message)
# and checked on the seven others, which they never saw: there, with the selection that
# came with them (local_summary._fit), answers kept by one compaction went from 1.51 to
# 1.88 times a random summary at 8k, and from 1.28 to 1.48 at 32k
# (``conversation_retention_bench.py --data locomo10.json``). Features whose sign
# changed between fits on different conversations ("plan", "preference") were left out.
INTERCEPT = -3.95
WEIGHTS = {
    "named": 1.09,  # capitalised words inside the sentence (at most 4)
    "numbers": 0.19,  # (at most 3)
    "dates": 0.06,  # date words or resolved dates (at most 2)
    "content": 0.25,  # content words (at most 10)
    "change": 0.26,  # "I started …", "we moved …"
    "first_person": 0.38,  # "I'm …", "my sister is …"
    "past": 0.78,  # something done: "we went …", "I painted …"
    "quoted": 0.13,  # a title in quotes
    "question": -0.20,
    "length": -1.35,  # in units of 160 characters
    "rare": 0.30,  # words rare in the conversation (``notes.rare_words``, at most 5)
    "reply": 1.03,  # it replies to the other speaker's question
}
_LINE_CHARS = 10  # what a line costs besides its text (bullet, label share)
_SCALE = 800.0  # chance per character → the weights local_summary.py adds to a note


def sentence_features(sentence: str, names: Iterable[str] = ()) -> dict[str, float] | None:
    """The features of ``WEIGHTS`` that the sentence decides alone (not ``rare`` nor
    ``reply``); None when it has no content word."""
    content = _content(sentence, names)
    if not content:
        return None
    words = _WORD.findall(sentence)
    named = sum(1 for i, w in enumerate(words) if i > 0 and (
        (w[0].isupper() and w not in _NOT_NAMES) or (w.isupper() and len(w) > 1)))
    numbers = sum(1 for w in words if w[0].isdigit() or w.lower() in _NUMBER_WORDS)
    return {"named": min(named, 4), "numbers": min(numbers, 3),
            "dates": min(len(_DATE_WORDS.findall(sentence)), 2),
            "content": min(len(content), 10),
            "change": float(bool(_CHANGE.search(sentence))),
            "first_person": float(bool(_FIRST_PERSON_FACT.search(sentence))),
            "past": float(bool(_PAST_EVENT.search(sentence))),
            "quoted": float('"' in sentence or "“" in sentence),
            "question": float(sentence.rstrip().endswith(("?", "？"))),
            "length": len(sentence) / 160}


@lru_cache(maxsize=65_536)
def _own_logit(sentence: str, names: tuple[str, ...]) -> float | None:
    features = sentence_features(sentence, names)
    if features is None:
        return None
    return INTERCEPT + sum(WEIGHTS[name] * value for name, value in features.items())


def salience(sentence: str, names: Iterable[str] = (), *, rare: float = 0.0,
             reply: bool = False) -> float:
    """How much ``sentence`` tells a later reader, per character of the summary (see
    the docstring and ``WEIGHTS``): ``rare``, its words rare in the conversation;
    ``reply``, it answers the other speaker's question."""
    logit = _own_logit(sentence, tuple(names))
    if logit is None:
        return 0.0
    logit += WEIGHTS["rare"] * min(rare, 5.0) + WEIGHTS["reply"] * reply
    chance = 1.0 / (1.0 + math.exp(-logit))
    return _SCALE * chance / (len(sentence) + _LINE_CHARS)


# The same kinds in Chinese: "我很喜欢爬山", "我们打算下个月去日本", "我们也搬到上海了",
# "上周一开始上班", "我三天前刚买了一台相机".
_CJK_PREFERENCE = re.compile(
    r"我们?(?:很|真|非常|最|特别|也|还|一直|都)*(?:喜欢|爱吃|爱喝|爱看|爱玩|讨厌|偏爱|最爱)"
    r"|最喜欢|不喜欢")
_CJK_PLAN = re.compile(
    r"我们?(?:也|还)?(?:打算|计划|准备|想要|将要|要去|会去)|下(?:周|个月|个星期)|明年")
_CJK_EVENT = re.compile(
    r"我们?[^，。！？；,.!?;]{0,8}?(?:搬到|搬去|开始|换了|买了|去了|参加了|完成了|结婚了"
    r"|辞职|加入了|领养了|毕业了|赢了|跑了|学会了)|上(?:周|个月|个星期)|昨天|前天|去年"
    r"|(?:[一二两三四五六七八九十]{1,3}|\d{1,2})(?:天|周|年|个月|个星期)(?:以|之)?前")


def kind(sentence: str) -> str:
    """``event``, ``preference``, ``plan`` or ``fact`` (see the docstring)."""
    if not sentence.isascii() and (found := _cjk_kind(sentence)):
        return found
    if _PREFERENCE.search(sentence) or _DIET.search(sentence):
        return "preference"
    if _PLAN.search(sentence) and not _PAST_EVENT.search(sentence):
        return "plan"
    if _CHANGE.search(sentence) or _PAST_EVENT.search(sentence):
        return "event"
    return "fact"


def _cjk_kind(sentence: str) -> str | None:
    if _CJK_PREFERENCE.search(sentence) or _CJK_DIET.search(sentence):
        return "preference"
    past = _CJK_EVENT.search(sentence)
    if _CJK_PLAN.search(sentence) and not past:
        return "plan"
    return "event" if past else None


def fact_key(sentence: str) -> str:
    """Near-identical sentences share this key: their content words, in order, stemmed
    (and their runs of CJK characters)."""
    if sentence.isascii():  # lowered first, the same words: one ``lower()``, not one a word
        return " ".join([w[:5] for w in _WORD.findall(sentence.lower()) if w not in STOPWORDS])
    # CJK runs are kept whole: without them every sentence in Chinese had the same empty
    # key, and a speaker's newest one replaced all the others (seen by hand).
    return " ".join([*cjk_runs(sentence), *(w.lower()[:5] for w in _WORD.findall(sentence)
                                            if w.lower() not in STOPWORDS)])


# Where a speaker lives and works now: a newer statement of either replaces an older one
# ("I live in Leeds" gives way to "we live in York now"), and a move replaces where one
# lived without being replaced by it ("we moved to York last week" keeps its date when
# "I live in York" follows). A place is a capitalised word.
_HOME_NOW = re.compile(
    r"\b(?:i|we)(?:'m| am|'re| are)?(?: now| currently| still)? (?:live|living|based"
    r"|settled) in (?-i:[A-Z])",
    re.IGNORECASE)
_MOVED = re.compile(
    r"\b(?:i|we)(?:'ve| have)?(?: just| recently| finally)? (?:moved|relocated) (?:back )?"
    r"to (?-i:[A-Z])", re.IGNORECASE)
_JOB_NOW = re.compile(
    r"\bi(?:'m| am)?(?: now| currently| still)? (?:work|working) (?:as|at|for) (?:a |an "
    r"|the )?(?-i:[A-Z])?"
    r"|\bi(?:'m| am) (?:a|an) (?!(?:member|regular|fan|guest|volunteer|customer|patient"
    r"|visitor)\b)[a-z]+(?: [a-z]+)? at (?-i:[A-Z])", re.IGNORECASE)
# The same in Chinese: "我住在西湖区", "我们也搬到上海了", "我现在在上海的一家银行工作",
# "我在杭州做软件工程师" (a job's title ends as titles do: "我在家做饭" is no job).
_CJK_HOME_NOW = re.compile(r"我们?(?:现在|目前|也|还|一直)*(?:住在|定居在|生活在)")
_CJK_MOVED = re.compile(r"我们?(?:也|已经|刚|刚刚|最近|终于)*(?:搬到|搬去|搬家到)")
_CJK_JOB_NOW = re.compile(
    r"我(?:现在|目前|已经|也|还)*在[^，。！？；,.!?;]{1,20}?(?:工作|上班"
    r"|(?:做|当)[^，。！？；,.!?;]{0,8}?(?:师|员|生|家|工|者|官|经理|老板))")


def slot_keys(sentence: str) -> tuple[str, ...]:
    """The keys of what ``sentence`` says about where its speaker lives or works now:
    ``slot home`` / ``slot job`` for a current state, ``+slot home`` for a move, which
    replaces the state without being replaced by it (``notes.latest_notes``)."""
    if not sentence.isascii() and "我" in sentence and (cjk := _cjk_slot_keys(sentence)):
        return cjk
    low = sentence.lower()
    # The patterns' verbs first: most sentences have none (a tenth of the search's cost).
    home = "liv" in low or "moved" in low or "based" in low or "settled" in low or (
        "relocated" in low)
    job = "work" in low or " at " in low
    if not (home or job):
        return ()
    keys: list[str] = []
    if home and _MOVED.search(sentence):
        keys.append("+slot home")
    elif home and _HOME_NOW.search(sentence):
        keys.append("slot home")
    if job and _JOB_NOW.search(sentence):
        keys.append("slot job")
    return tuple(keys)


# A correction of something its speaker said before names what no longer holds: "it's
# Porto now, not Lisbon", "Porto instead of Lisbon", "we're not going to Lisbon any
# more". By hand (3,072 tokens) the summary kept "we're going to Lisbon in May" beside
# "we changed the trip: it's Porto now, not Lisbon", and the embedded model answered
# "Lisbon" to "Where are we going in May?". Only with a word that says it changed: "Sam,
# not Tomas, cooked" takes nothing back.
#
# A plan moved is changed too: "The meeting moved to Friday at 19:30, not Thursday." (by
# hand, the summary's copy of "Actually the meeting moved …" had lost its "Actually", and
# with it its rank as a correction at the next compaction.)
_CHANGE_CUE = re.compile(r"\b(?:now|instead|actually|any ?more|no longer|changed|switched"
                         r"|rather than|moved|postponed|rescheduled|pushed back|brought"
                         r" forward)\b", re.IGNORECASE)
_UNDONE = re.compile(r"\b(?:not|instead of|rather than|no longer)(?: (?:going|moving|flying))?"
                     r"(?: (?:in|to|at|on|with|for|from|the))? ((?-i:[A-Z])[\w'-]+)",
                     re.IGNORECASE)


def undone_names(sentence: str) -> tuple[str, ...]:
    """The names (lower-cased) a correction says no longer hold, or none (see above)."""
    low = sentence.lower()
    if "not" not in low and "instead" not in low and "rather" not in low and (
            "longer" not in low):
        return ()
    if not _CHANGE_CUE.search(sentence):
        return ()
    return named_after_not(sentence)


# A correction takes back an amount, a day or a month as well: "We'll stay 10 days
# instead of 12.", "My meeting with the landlord moved from Tuesday to Thursday.", "It's
# 2,500 euros now, not 3,000." A written trip chat's summary kept "How long will you
# stay? → Twelve days." beside "We'll stay 10 days instead of 12." A bare "not" needs the
# change cue ("not 100% sure" takes nothing back); "instead of", "rather than" and "moved
# from … to" are cues themselves.
_VALUE = (r"\d[\d,.:]*(?:st|nd|rd|th| ?[ap]m)?|one|two|three|four|five|six|seven|eight|nine"
          r"|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|monday|tuesday|wednesday"
          r"|thursday|friday|saturday|sunday|january|february|march|april|may|june|july"
          r"|august|september|october|november|december")
_UNDONE_VALUE = re.compile(
    rf"\b(?:instead of|rather than)\s+(?:(?:the|on|at|in|for|by)\s+)?({_VALUE})\b"
    rf"|\b(?:moved|changed|switched|pushed|postponed|rescheduled|shifted)\b(?:\s+[\w']+){{0,4}}?"
    rf"\s+from\s+(?:(?:the|on|at)\s+)?({_VALUE})\s+to\b"
    rf"|\b(?:not|no longer)\s+(?:(?:the|on|at|in|for|by)\s+)?({_VALUE})\b(?![%\w])",
    re.IGNORECASE)


def undone_values(sentence: str) -> tuple[str, ...]:
    """The amounts, days and months (``value_word``) a correction says no longer hold."""
    return tuple(old for old, _, _ in value_swaps(sentence))


def value_swaps(sentence: str) -> tuple[tuple[str, str, str], ...]:
    """What a correction takes back and puts in its place: (the value taken back, as
    ``value_word``; as written; the value said in its place as written, or ""). "We land
    on October 5th instead of the 3rd." gives ("3", "3rd", "5th"), "moved from Tuesday to
    Thursday" ("tuesday", "Tuesday", "Thursday"), "now 3500 euros, not 4000" ("4000",
    "4000", "3500"): the new value is the nearest of the same kind (a number, a day, a
    month) before it, or after "to"."""
    return _english_swaps(sentence) or _foreign_swaps(sentence)


def is_foreign_correction(sentence: str) -> bool:
    """Whether ``value_swaps`` reads ``sentence`` as a correction in one of the other
    languages (``other_languages.foreign_value_swaps``), not in English."""
    return not _english_swaps(sentence) and bool(_foreign_swaps(sentence))


def _foreign_swaps(sentence: str) -> tuple[tuple[str, str, str], ...]:
    """``value_swaps`` of a correction in Spanish, French, German, Italian, Portuguese
    or Dutch (``other_languages.foreign_value_swaps``)."""
    return tuple((value_word(old), old, new) for old, new in foreign_value_swaps(sentence))


def _english_swaps(sentence: str) -> tuple[tuple[str, str, str], ...]:
    low = sentence.lower()
    if "instead" not in low and "rather" not in low and "from" not in low and (
            "not" not in low and "longer" not in low):
        return ()
    found: list[tuple[str, str, str]] = []
    for match in _UNDONE_VALUE.finditer(sentence):
        if match.group(3) and not _CHANGE_CUE.search(sentence):
            continue
        group = next(i for i in (1, 2, 3) if match.group(i))
        written = match.group(group)
        old = value_word(written)
        if group == 2:  # "from X to Y": Y follows
            after = _VALUE_WORD.search(sentence, match.end())
            new = after.group() if after and _value_kind(after.group()) == _value_kind(
                written) else ""
        else:
            before = [m.group() for m in _VALUE_WORD.finditer(sentence, 0, match.start())
                      if _value_kind(m.group()) == _value_kind(written)
                      and value_word(m.group()) != old]
            new = before[-1] if before else ""
        found.append((old, written, new))
    return tuple(found)


def _value_kind(written: str) -> str:
    word = written.lower()
    return "day" if word in WEEKDAYS or calendar_kind(word) == "day" else "number" if (
        word[:1].isdigit() or word in NUMBER_WORDS or word == "one") else "month"


def value_word(word: str) -> str:
    """An amount, day or month in one spelling: lower-cased, digits for a number word
    ("Twelve" is "12"), no trailing punctuation ("3,000." is "3,000")."""
    word = word.lower().rstrip(".,:;")
    number = _LEADING_NUMBER.match(word)  # "3rd", "7 pm": the number
    return number.group().rstrip(".,:") if number else NUMBER_WORDS.get(word, word)


_LEADING_NUMBER = re.compile(r"\d[\d,.:]*")
_VALUE_WORD = re.compile(rf"\b(?:{_VALUE})\b(?!%)", re.IGNORECASE)


# What a sentence says a thing is, costs or comes to: "Our budget is 18,000 euros", "a
# budget of 18,000 euros", "the work starts on Monday the 14th", "My dentist appointment
# is on Tuesday the 8th at 10:00". A later sentence of the same speaker that says the
# thing is something else *now* corrects the older one without naming what it took
# back: "Correction: the budget is 21,000 euros now, …". By hand (3,072 tokens) such a
# correction ranked as ordinary news, gave way in a small summary to the line it
# corrected, and the embedded model answered "18,000 euros". The thing is the word
# before the verb, up to two words after the determiner; bounded.
# A value as these statements write it: a currency sign, the value, the word after it
# (its unit, when it is one: "18,000 euros", "3 nights").
_VALUE_AND_UNIT = rf"([€$£]\s?)?\b({_VALUE})\b(?!%|\s+of\b)(?:\s*([a-z]+))?"
# The verbs that say what a thing is, costs, or when it happens ("the movers come on
# Friday the 15th now": by hand, a correction), and the words between them and a value.
_STATING = (r"(?:is|are|was|were|will be|would be|costs?|came to|comes? to|went (?:up|down)"
            r" to|has gone (?:up|down) to|rose to|fell to|dropped to|leaves|starts|begins"
            r"|lands|comes?|arrives?|(?:is|are|will be) (?:coming|arriving)"
            r"|(?:has |have )?changed to)")
_BEFORE_VALUE = r"(?:(?:now|only|about|around|roughly|just|still|at|on)\s+){0,2}"
# A thing moved to another day or hour: "the Adyen interview moved to Thursday the 10th
# at 11:00" (by hand), a word of change of its own; of a day, date, month or hour only
# ("our family moved to Utrecht in 2019" moves no number).
_MOVING = (r"(?P<moved>(?:was |has been |has |is |got )?(?:moved|rescheduled|postponed"
           r"|pushed back|brought forward) (?:to|until))")
_STATED = re.compile(
    r"\b(?:the|our|my|his|her|their|your|its|a|an|each|every|this|that|these|those)\s+"
    r"(?:(new|total|final|whole|overall)\s+)?(?:[a-z][a-z'-]*\s+){0,2}?"
    rf"([a-z][a-z'-]{{2,}})\s+(?:{_STATING}|of|{_MOVING})\s+{_BEFORE_VALUE}"
    + _VALUE_AND_UNIT, re.IGNORECASE)
# What someone has on a day or at an hour: "I have an interview with Adyen on Wednesday
# the 9th at 14:00" (by hand: the line the move above had to take back).
_HAVING = re.compile(
    r"\b(?:i|we|he|she|they)\s+(?:have|had|'ve got|’ve got|have got)\s+"
    r"(?:a|an|my|our|his|her|their)\s+(?:[a-z][a-z'-]*\s+){0,2}?([a-z][a-z'-]{2,})\s+"
    r"(?:with\s+(?:[\w.&'’-]+\s+){1,3}?)?(?:on|at)\s+" + _VALUE_AND_UNIT, re.IGNORECASE)
_CALENDAR_KINDS = frozenset(("day", "date", "month", "time"))
# A later clause about the sentence's subject, by its pronoun: "The movers are Van Dijk
# Verhuizingen and they come on Thursday the 14th at 8:00." (by hand: the line a
# correction of the movers' day had to take back).
_SUBJECT = re.compile(
    r"^\W*(?:[A-Za-z][\w ]{0,30}:\s+)?(?:the|our|my|his|her|their|your)\s+"
    r"(?:[a-z][a-z'-]*\s+){0,2}?([a-z][a-z'-]{2,})\s+(?:is|are|was|were|will|would|has"
    r"|have|had|comes?|arrives?|starts?|begins?|leaves?|costs?)\b", re.IGNORECASE)
_BY_PRONOUN = re.compile(rf"(?:[,;]|\band|\bbut)\s+(?:they|it)\s+(?:will\s+)?{_STATING}\s+"
                         + _BEFORE_VALUE + _VALUE_AND_UNIT, re.IGNORECASE)
# A verb of ``_STATED`` (or ``_COUNTED``) and a value after it: what any sentence they
# match holds, and a search that costs a fraction of their own (half of a coding
# transcript's sentences say "now", and none of them states a value). Its verbs are
# matched in lower case, as they are written inside a sentence: case-blind, the search
# cost three times as much.
_VERB_VALUE = re.compile(
    r"\b(?:is|are|was|were|be|costs?|to|until|leaves|starts|begins|lands|comes?|arrives?"
    r"|coming|arriving|of|have|had|invited|booked|ordered|bought|need|expect|got|sold)\s+"
    + _BEFORE_VALUE + rf"[€$£]?\s?(?:\d|(?i:{_VALUE})\b)")
# How many of a thing someone has, invited or booked: "We invited 120 guests", "we
# booked three nights now" — the thing is the noun after the number.
_COUNTED = re.compile(
    r"\b(?:i|we|they|he|she)\s+(?:now\s+)?(?:have|had|invited|booked|ordered|bought|need"
    r"|expect|got|sold)\s+(?:now\s+|about\s+|around\s+|only\s+)?"
    rf"(\d[\d,.]*|{'|'.join(sorted(_NUMBER_WORDS, key=len, reverse=True))})\s+(?:more\s+)?"
    r"([a-z][a-z'-]{2,})", re.IGNORECASE)
# The thing's other values in the rest of its clause ("… on Tuesday the 8th at 10:00").
_MORE_VALUES = re.compile(_VALUE_AND_UNIT, re.IGNORECASE)
_CLAUSE_END = re.compile(r";|:\s|,?\s(?:and|but|while|so)\s", re.IGNORECASE)
# The words that say a statement of what a thing is, is new: "now", "Correction:", "it
# went up to …".
_UPDATE_CUE = re.compile(r"\b(?:now|actually|correction|update[ds]?|changed|revised"
                         r"|change of plans?|moved|rescheduled|postponed|pushed back"
                         r"|brought forward"
                         r"|increased|decreased|raised|lowered|went (?:up|down)|gone (?:up|down)"
                         r"|rose|fell|dropped)\b", re.IGNORECASE)
# A word after a number that is no unit of it ("21,000 now", "3 and 5").
_NO_UNIT = frozenset(("now", "and", "or", "for", "in", "on", "at", "the", "a", "an", "to",
                      "including", "with", "per", "each", "but", "so", "not", "instead",
                      "rather", "this", "that", "which", "after", "before", "by", "from"))
# Money of any currency is one unit: a model's memory entry writes "Budget: $18,000."
# for the user's "18,000 euros" (seen by hand), and it is the same budget.
_CURRENCY = frozenset(("€", "$", "£", "eur", "euro", "euros", "usd", "dollar", "dollars",
                       "gbp", "pound", "pounds", "bucks", "quid", "francs", "kronor",
                       "zloty", "yen", "yuan", "rupees"))
# A thing's value as a label gives it, at the start of a line or text: "Budget: $18,000."
_LABELLED = re.compile(r"^\s*([A-Za-z][a-z'-]{2,}):\s+(?:(?:about|around|now)\s+)?"
                       + _VALUE_AND_UNIT, re.IGNORECASE | re.MULTILINE)


def stated_values(sentence: str) -> tuple[tuple[str, str, str, str], ...]:
    """What ``sentence`` says things are (see ``_STATED``): (the thing, lower-cased
    without a plural's "s"; the value's kind — ``day``, ``month``, ``date`` (the 8th),
    ``time``, or ``number`` and its unit, "number night", money as "number money"; the
    value as ``value_word``; as written). A thing's first value, then the others in the
    rest of its clause."""
    found: list[tuple[str, str, str, str]] = []
    stated: list[tuple[str, re.Match[str]]] = [
        (match.group(2), match) for match in _STATED.finditer(sentence)]
    if " they " in sentence or " it " in sentence:
        subject = _SUBJECT.match(sentence)
        if subject is not None:
            stated += [(subject.group(1), match) for match in _BY_PRONOUN.finditer(sentence)]
            stated.sort(key=lambda found: found[1].start())
    if " have " in sentence or " had " in sentence or "ve got " in sentence:
        stated += [(match.group(1), match) for match in _HAVING.finditer(sentence)]
        stated.sort(key=lambda found: found[1].start())
    for at, (thing, match) in enumerate(stated):
        sign, written, after = match.groups()[-3:]
        thing = _thing(thing)
        # (A move, or what someone has on a day, says when: its other numbers are not.)
        when = match.re is _HAVING or bool(match.groupdict().get("moved"))
        values: list[tuple[str | None, str, str | None]] = [(sign, written, after)]
        end = stated[at + 1][1].start() if at + 1 < len(stated) else len(sentence)
        clause = _CLAUSE_END.search(sentence, match.end(), end)
        values += [(more[1], more[2], more[3]) for more in _MORE_VALUES.finditer(
            sentence, match.end(), clause.start() if clause else end)]
        for sign, written, after in values:
            kind = _stated_kind(sign, written, after)
            if not when or kind in _CALENDAR_KINDS:
                found.append((thing, kind, value_word(written), written))
    for counted in _COUNTED.finditer(sentence):
        written, thing = counted.groups()
        found.append((_thing(thing), "number", value_word(written), written))
    if ":" in sentence:
        for label in _LABELLED.finditer(sentence):
            thing, sign, written, after = label.groups()
            found.append((_thing(thing), _stated_kind(sign, written, after),
                          value_word(written), written))
    if not found:  # in one of the other languages, perhaps
        found = [(_thing(thing), kind or _stated_kind(sign, written, after),
                  value_word(written), written)
                 for thing, kind, sign, written, after in foreign_statements(sentence)]
    return tuple(found)


def _stated_kind(sign: str | None, written: str, after: str | None) -> str:
    """The kind of a value ``stated_values`` found, written ``written`` after the
    currency sign ``sign`` and before the word ``after``."""
    word = written.lower()
    if word in WEEKDAYS:
        return "day"
    if _value_kind(written) == "month":
        return "month"
    if ":" in word or word.endswith(("am", "pm")):
        return "time"
    if word.endswith(("st", "nd", "rd", "th")):
        return "date"
    unit = "" if sign is None else "money"
    if not unit and after and after.lower() not in _NO_UNIT:
        unit = "money" if after.lower() in _CURRENCY else after.lower()
    return f"number {unit[:-1] if unit.endswith('s') else unit}".rstrip()


def _thing(word: str) -> str:
    """A thing ``_STATED`` names, lower-cased, without a plural's "s"."""
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def updated_things(sentence: str) -> tuple[str, ...]:
    """The things ``sentence`` says are something else now, by a word of change
    (``_UPDATE_CUE``) beside what it says they are (``stated_values``), or as "new"
    ("Our new budget is 21,000 euros."); an older statement of another value of the same
    kind no longer holds."""
    # Most sentences state nothing: the cheaper searches first.
    if not _VERB_VALUE.search(sentence) and not (":" in sentence
                                                 and _LABELLED.search(sentence)):
        return _foreign_updated(sentence)
    if _UPDATE_CUE.search(sentence):
        return tuple(dict.fromkeys(thing for thing, _, _, _ in stated_values(sentence)))
    if "new " not in sentence.lower():
        return _foreign_updated(sentence)
    return tuple(dict.fromkeys(_thing(match.group(2)) for match in _STATED.finditer(sentence)
                               if (match.group(1) or "").lower() == "new"))


def _foreign_updated(sentence: str) -> tuple[str, ...]:
    """``updated_things`` in one of the other languages (``foreign_updates``)."""
    return tuple(map(_thing, foreign_updates(sentence)))


def same_kind(kind: str, other: str) -> bool:
    """Whether values of ``kind`` and ``other`` (``stated_values``) can be one thing's:
    the same kind, and for numbers the same unit or one without any."""
    if kind == other:
        return True
    return (kind.startswith("number") and other.startswith("number")
            and (kind == "number" or other == "number"))


def values_in(text: str) -> frozenset[str]:
    """The amounts, days and months ``text`` names (``value_word``), which a later
    correction can take back (``undone_values``)."""
    found = {value_word(m.group()) for m in _VALUE_WORD.finditer(text)}
    # (The other languages' days and months, and an hour as they write it: "21h".)
    found.update(value_word(word) for word in foreign_values(text)
                 if not word[0].isdigit() or "h" in word.lower())
    return frozenset(found)


def with_value(text: str, old: str, new: str) -> str:
    """``text`` with its first value that is ``old`` (``value_word``) written as ``new``:
    "Our budget is about 4000 euros." with 4000 as 3500."""
    for match in _VALUE_WORD.finditer(text):
        if value_word(match.group()) == old:
            return text[:match.start()] + new + text[match.end():]
    return text


def names_in(text: str) -> frozenset[str]:
    """The capitalised words inside the sentences of ``text`` (lower-cased), not the one
    opening a sentence, a line's label or an answer ("User: …", "… → Twelve days."), nor
    "I", a day or a month: the names it holds."""
    found: set[str] = set()
    for match in _CAPITALISED.finditer(text):
        before = text[:match.start()].rstrip()
        word = match.group().lower()
        if (not before or before[-1] in _OPENS_A_SENTENCE or word == "i"
                or word.startswith(("i'", "i’")) or _VALUE_WORD.fullmatch(word)
                or word in CAPITALISED_CALENDAR_WORDS):
            continue
        found.add(word)
    return frozenset(found)


_OPENS_A_SENTENCE = frozenset(".?!:;→-–—\"“(")


def undone_in(text: str) -> frozenset[str]:
    """The names (lower-cased) any sentence of ``text`` takes back (``undone_names``)."""
    return frozenset(name for sentence in sentences(text) for name in undone_names(sentence))


_CAPITALISED = re.compile(r"\b[A-Z][\w'-]+")


def replacements(sentence: str) -> tuple[tuple[str, str], ...]:
    """What a correction puts in the place of each name it takes back: (the name taken
    back, lower-cased; the name said before its "not", as written). "Actually Ravi
    moved: he lives in Glasgow now, not Manchester." gives ("manchester", "Glasgow");
    a name taken back with none before it ("we're not going to Lisbon any more") gives
    nothing. The sentence's first word is no name (it is capitalised anyway)."""
    if not undone_names(sentence):
        return ()
    found: list[tuple[str, str]] = []
    for match in _UNDONE.finditer(sentence):
        old = match.group(1)
        before = [m.group() for m in _CAPITALISED.finditer(sentence, 0, match.start())
                  if m.start() > 0 and m.group() != old
                  and m.group().replace("’", "'").partition("'")[0] != "I"]
        if old != "I" and before:
            found.append((old.lower(), before[-1]))
    return tuple(found)


def named_after_not(sentence: str) -> tuple[str, ...]:
    """The names (lower-cased) ``sentence`` puts after "not", "instead of", "rather than"
    or "no longer", whether or not it says anything changed: ``undone_names`` without
    the change cue, for a text that is known to correct ("Ravi lives in Glasgow, not
    Manchester." as a memory entry after the user's correction). A day or a month is
    a value, not a name (``undone_values``): a line that named it is marked as changed,
    not dropped — by hand (3,072 tokens) "Actually the exam moved to Friday the 18th,
    not Thursday." took "My driving exam is next Thursday at 9 in Amersfoort." out of
    the summary, and the place and the hour with it."""
    return tuple(low for name in _UNDONE.findall(sentence)
                 if name != "I" and (low := name.lower()) not in CALENDAR_WORDS)


def _cjk_slot_keys(sentence: str) -> tuple[str, ...]:
    keys: list[str] = []
    if _CJK_MOVED.search(sentence):
        keys.append("+slot home")
    elif _CJK_HOME_NOW.search(sentence):
        keys.append("slot home")
    if _CJK_JOB_NOW.search(sentence):
        keys.append("slot job")
    return tuple(keys)


def subject_key(sentence: str) -> str | None:
    """What a "my … is" statement is about ("dog's name"), so a newer one replaces it."""
    match = _SUBJECT.search(sentence)
    return match.group(1).lower() if match else None


_FILLER = re.compile(
    r"\b(?:really|just|very|actually|totally|pretty|quite|super|kinda|kind of|sort of"
    r"|basically|literally|definitely|honestly|truly|absolutely|such(?! as\b)"
    r"|even(?! (?:if|though|when|number|numbers)\b)"
    # Not where the word belongs to a phrase: "my longest run so far" had become "my
    # longest run far".
    r"|so(?! (?:far|that|much|many|long)\b))\s+(?=\w)",
    re.IGNORECASE,
)


def condensed(sentence: str) -> str:
    """``sentence`` without filler words ("really", "so", "just", …): the same facts in
    fewer characters, for notes of conversation."""
    shorter = _FILLER.sub("", sentence)
    if sentence[:1].isupper() and shorter[:1].islower():  # "So you'll …" → "You'll …"
        return shorter[:1].upper() + shorter[1:]
    return shorter
