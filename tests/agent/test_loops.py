"""A reply that loops is ended where the loop began (``mnemo.agent.loops``).

The agent-level tests use scripted model replies (``StreamingScriptedClient``).
"""

from __future__ import annotations

from mnemo.agent.loops import LOOP_CHARS, LoopWatch, loop_start
from mnemo.agent.replies import ModelCaller
from mnemo.messages import Message
from support.streaming_client import StreamingScriptedClient

# By hand, the embedded model's answer to "What's my daughter's name and how old is she
# turning?" (its three paragraphs, then the same three twice more).
FIRST = ("My daughter's name is Alina. She turns seven next Saturday, so we're planning a "
         "party.\n\nThe cake was initially made in 1956 and has since undergone many "
         "refinements and improvements.\n\nYou've mentioned that My wife Kersti is baking "
         "the cake herself, she's a pastry chef. We invited twelve kids from Alina's class.")
AGAIN = ("\n\nThe cake was initially made in 1956 and has since undergone many refinements "
         "and improvements.\n\nYou've mentioned that My wife Kersti is baking the cake "
         "herself, she's a pastry chef. We invited twelve kids from Alina's class.")
LOOPING = FIRST + AGAIN + AGAIN


def test_a_reply_that_says_its_paragraphs_again_loops_from_the_first_repeat() -> None:
    cut = loop_start(LOOPING)
    assert cut is not None
    assert LOOPING[:cut].rstrip() == FIRST


def test_a_sentence_said_again_is_no_loop() -> None:
    reply = FIRST + "\n\nAs I said: she turns seven next Saturday, so we're planning a party."
    assert len(reply) > 2 * LOOP_CHARS  # long enough to be looked at
    assert loop_start(reply) is None
    assert loop_start(FIRST) is None


def test_repeated_code_in_a_fence_is_no_loop() -> None:
    body = ("    result = dict(order)\n    result['total'] = order['total'] + 1\n"
            "    result['updated'] = True\n    log.info('order %s updated', order['id'])\n"
            "    return dict(result)\n")
    code = f"def a(order):\n{body}\ndef b(order):\n{body}"
    assert len(body) > LOOP_CHARS
    assert loop_start(f"Here are both:\n\n{code}") is not None  # out of a fence: a loop
    assert loop_start(f"Here are both:\n\n```python\n{code}```\n") is None


def test_a_reply_to_a_request_for_repetition_is_no_loop() -> None:
    line = "I will not chew gum in class, and I will listen to the teacher.\n"
    assert loop_start(line * 10) is not None
    assert loop_start(line * 10, asked="Write that line ten times, please.") is None


def test_no_part_of_the_repeat_is_streamed_and_the_watch_says_stop() -> None:
    shown: list[str] = []
    watch = LoopWatch(shown.append)
    for start in range(0, len(LOOPING), 7):
        watch.feed(LOOPING[start:start + 7])
        if watch.stopped():
            break
    watch.finish()
    assert watch.stopped()
    assert "".join(shown).rstrip() == FIRST


def test_a_reply_without_a_loop_is_streamed_whole() -> None:
    shown: list[str] = []
    watch = LoopWatch(shown.append)
    for word in FIRST.split(" "):
        watch.feed(word + " ")
    assert not watch.stopped()
    watch.finish()
    assert "".join(shown) == FIRST + " "


def test_a_short_reply_streams_as_it_comes() -> None:
    shown: list[str] = []
    watch = LoopWatch(shown.append)
    watch.feed("Alina is turning seven.")
    watch.feed(" The party is at 2 pm.")
    assert shown == ["Alina is turning seven.", " The party is at 2 pm."]


def _ask(client: StreamingScriptedClient, streamed: list[str]) -> str:
    caller = ModelCaller(client)
    caller.on_text = streamed.append
    request: list[Message] = [{"role": "user", "content": "What's my daughter's name?"}]
    return caller.complete(request, None, asked="What's my daughter's name?").text


def test_the_agent_keeps_and_shows_a_looping_reply_up_to_its_loop() -> None:
    client = StreamingScriptedClient([LOOPING])
    streamed: list[str] = []
    assert _ask(client, streamed) == FIRST
    assert "".join(streamed).strip() == FIRST


def test_without_streaming_the_reply_is_ended_where_it_loops_too() -> None:
    client = StreamingScriptedClient([LOOPING])
    client.supports_streaming = False
    caller = ModelCaller(client)
    request: list[Message] = [{"role": "user", "content": "What's my daughter's name?"}]
    assert caller.complete(request, None).text == FIRST
