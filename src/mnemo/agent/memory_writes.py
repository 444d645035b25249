"""The model's memory writes, checked before they are stored (SPEC M9).

``MemoryWrites`` stands between the agent's tool dispatch and the memory tool: a write
made by the model (``add``, ``replace``, every entry of a ``batch``) must be grounded in
what the user or a tool said in the live conversation (``mnemo.memory.grounding``); an
``add`` is moved to the store its text belongs in; and the same fact added twice is
stored once (small models repeat a call within a turn). Refusals come back as the tool's
own error shape, count towards the memory tool's loop breaker, and are counted here for
the status line. Writes a user makes through the CLI never pass through this module.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mnemo.context.markers import is_summary_message, own_text
from mnemo.context.summary.notes import (
    Change,
    text_stems,
    updated_value,
    updated_values,
    updates_in,
    value_changes,
)
from mnemo.context.summary.salience import (
    is_instruction,
    is_phatic,
    named_after_not,
    replacements,
    stated_values,
    undone_in,
    undone_values,
    value_word,
    values_in,
    with_value,
)
from mnemo.context.textscan import one_line, sentences
from mnemo.memory import MemoryManager, MemoryStore
from mnemo.memory.entries import TARGETS
from mnemo.memory.grounding import (
    Evidence,
    GroundingMode,
    asked_only,
    check_grounding,
    corrected_entry,
    names_in,
    near_duplicate,
    refusal_message,
    route_target,
    split_grounded,
    suggested_entry,
)
from mnemo.memory.tool import MAX_FAILED_CALLS_PER_TURN
from mnemo.messages import Message, content_text, tool_calls_of
from mnemo.prompt.small_window import MEMORY_EXAMPLE_ENTRY

__all__ = ["MemoryWrites"]

log = logging.getLogger("mnemo.agent")


@dataclass(frozen=True)
class _Trim:
    """An add to run with only its grounded sentences."""

    kept: str
    dropped: str


def _only_questions(text: str) -> bool:
    """True when every sentence of ``text`` asks: the user's question saved as a fact.
    By hand the embedded model saved "Where do I work now, and what am I allergic to?"
    (every word the user's, so grounded) instead of answering it."""
    parts = sentences(text)
    return bool(parts) and all(_asks(part) for part in parts)


def _asks(sentence: str) -> bool:
    """Whether ``sentence`` is a question, a stop the model put after its mark too (by
    hand: "¿Qué puedes hacer?.")."""
    return sentence.rstrip(" .…").endswith(("?", "？"))


def _without_questions(text: str) -> tuple[str, str]:
    """``text``'s statements, and its questions and chit-chat, when it has both ("", ""
    when not): by hand the embedded model saved "Hola, soy Lucía y prefiero respuestas
    cortas. ¿Qué puedes hacer?" — the user's whole message — and the question stood in
    USER.md for every later session."""
    parts = sentences(text)
    left = [part for part in parts if _asks(part) or _says_nothing(part)]
    if not left or len(left) == len(parts):
        return "", ""
    return (" ".join(part for part in parts if part not in left), " ".join(left))


def _says_nothing(text: str) -> bool:
    """True when ``text`` is chit-chat with no fact in it ("thank you.", "Great!"), and
    no rule for the assistant either: by hand the embedded model saved "thank you." for
    "My name is Li and I'm learning Japanese. How do I say thank you?" (the user's own
    words, so grounded), and it would have stood in every later session's USER.md."""
    return bool(text.strip()) and is_phatic(text) and not is_instruction(text)


# An entry that opens with someone it does not name: memory is read in later sessions,
# where "she" is nobody (by hand the embedded model saved "She bakes the cake herself."
# from "My wife Kersti is baking the cake herself").
_UNNAMED_OPENING = re.compile(r"\s*(He|She|They|His|Her|Their|Him|Them)\b")


def _no_fact(text: str) -> str:
    """Why ``text`` is no fact to keep (the end of the refusal), or "" when it may be one."""
    if _only_questions(text):
        return "is a question, and memory keeps facts. Answer the user's question in words."
    if _says_nothing(text):
        return ("tells nothing to remember (a greeting, thanks or praise), and memory keeps "
                "facts. Answer the user in words.")
    unnamed = _UNNAMED_OPENING.match(text)
    if unnamed:
        return (f"opens with {unnamed.group(1)!r}, who is nobody in a later session. Say "
                "who it is, by name or as the user called them, and call memory again.")
    return ""


# The small prompt's worked example, as evidence: what an entry copied from it.
_EXAMPLE = Evidence([MEMORY_EXAMPLE_ENTRY])


def _not_copied_from_the_example(dropped: str) -> str:
    """The sentences of ``dropped`` (an entry's ungrounded part) that do not copy the
    small prompt's worked example. A copy is left out without a word: by hand the
    embedded model saved "Name: Tomas. Prefer tabs.", was told "the rest ('Prefer
    tabs.') was not said by the user", and spent the turn trying to replace that note,
    then answered the user with it."""
    return split_grounded(dropped, _EXAMPLE)[1]


class MemoryWrites:
    """Grounding, routing and de-duplication of the model's memory writes."""

    def __init__(self, memory: MemoryStore, mode: GroundingMode) -> None:
        self.memory = memory
        self.mode: GroundingMode = mode
        self.refused = 0  # ungrounded writes refused in this process
        # The entry the last refusal offered in the user's own words (``_as_intended``).
        self.offered = ""

    def handle(self, args: dict[str, Any], messages: Sequence[Message],
               manager: MemoryManager, earlier: Sequence[Message] = ()) -> tuple[str, bool]:
        """The tool's answer to the model's memory call ``args``, and whether the write was
        refused as ungrounded. A write that says what nobody said is refused; an ``add``
        part of which was said keeps only that part; one that only repeats a saved fact
        is answered "Already saved" (small models echo the last tool result into the next
        add); the rest is routed and run. ``earlier``: this session's messages no longer
        in the live ``messages`` (the agent gives the user's, compacted or cut, as the
        archive keeps them): what the user said there was said in this conversation all
        the same — by hand, in a
        3,072-token window, "I'm allergic to peanuts, so keep that in mind when you
        suggest recipes." was compacted before the model got to save it, and its save,
        in the user's own words, was refused as "things nobody said"."""
        intended = _without_repeats(_as_intended(args, self.memory, self.offered))
        notes = ([] if intended.get("action") == args.get("action") else
                 [_OFFER_TAKEN if intended.get("content") == self.offered != args.get(
                     "content") else _ADDED_INSTEAD])
        verdict = self._check(intended, [*earlier, *messages])
        if isinstance(verdict, _Trim):
            intended = {**intended, "content": verdict.kept}
            told = _not_copied_from_the_example(verdict.dropped)
            if told:
                notes.append(f"Saved only {verdict.kept!r}: the rest ({told!r}) was not "
                             "said by the user, so it was left out.")
        elif verdict is not None:
            return verdict
        if intended.get("action") == "add":
            facts, asked = _without_questions(str(intended.get("content") or ""))
            if asked:
                intended = {**intended, "content": facts}
                notes.append(f"Saved only {facts!r}: {asked!r} asks or tells nothing, and "
                             "memory keeps facts.")
        return self._run(intended, args.get("target"), manager, notes,
                         _latest_said(messages)), False

    def _check(self, args: dict[str, Any], messages: Sequence[Message]
               ) -> tuple[str, bool] | _Trim | None:
        """Grounding: None when the write may run as it is; a ``_Trim`` when an add may
        run with only its grounded sentences; else the tool's answer and whether it is a
        refusal."""
        if (self.mode == "off" or args.get("action") not in ("add", "replace", "batch")
                or self.memory.failed_calls_this_turn >= MAX_FAILED_CALLS_PER_TURN):
            return None  # past the loop breaker's limit the tool itself says stop
        texts = [str(args.get("content") or "")]
        for operation in args.get("operations") or []:
            if isinstance(operation, dict):
                texts.append(str(operation.get("content") or ""))
        for text in texts:
            why = _no_fact(text)
            if why:
                self.refused += 1
                self.memory.failed_calls_this_turn += 1
                return json.dumps({"success": False, "error": (
                    f"Not saved: {one_line(text, 120)!r} {why}")}, ensure_ascii=False), True
        for text in texts:
            update = _outdated_by(text, messages)
            if update is not None:
                self.refused += 1
                self.memory.failed_calls_this_turn += 1
                newer = self.suggested_correction(update, text)
                fix = f"save {one_line(newer, 160)!r} instead" if newer else (
                    "save the new value")
                return json.dumps({"success": False, "error": (
                    f"Not saved: {one_line(text, 120)!r} gives the old value; the user "
                    f"said {one_line(update, 120)!r}, so {fix}.")}, ensure_ascii=False), True
        evidence = Evidence(self._evidence_texts(args, messages))
        for text in texts:
            question = asked_only(text, evidence)
            if question is not None:
                self.refused += 1
                self.memory.failed_calls_this_turn += 1
                return json.dumps({"success": False, "error": (
                    f"Not saved: {one_line(text, 120)!r} only retells the user's question "
                    f"{one_line(question, 120)!r}, and memory keeps facts. Answer the "
                    "question in words.")}, ensure_ascii=False), True
            verdict = check_grounding(text, evidence, self.mode)
            if verdict.grounded:
                continue
            kept, dropped = (split_grounded(text, evidence, self.mode)
                             if args.get("action") == "add" else ("", ""))
            # Nor is what was said of it a question retold: by hand "Cook tonight. Always
            # make sure not to add peanuts." was kept as "Cook tonight.".
            kept = " ".join(part for part in sentences(kept)
                            if asked_only(part, evidence) is None)
            # What was said of it may be only the chit-chat: by hand "Thank you! It was a
            # pleasure working for you." was kept as "Thank you!".
            if kept and not _says_nothing(kept):
                saved = self._saved_already(kept)
                if saved is not None:
                    rest = (" (the rest of the entry was not said by the user)"
                            if _not_copied_from_the_example(dropped) else "")
                    return json.dumps({"success": True, "note": (
                        f"Already saved as {saved!r}; nothing added{rest}.")},
                        ensure_ascii=False), False
                self.refused += 1  # the part nobody said was refused
                log.info("memory write trimmed to its grounded part (%s): %d unsupported "
                         "word(s) left out", self.mode, len(verdict.unsupported))
                return _Trim(kept, dropped)
            self.refused += 1
            self.memory.failed_calls_this_turn += 1  # the M6 loop breaker counts these too
            log.info("memory write refused as ungrounded (%s): %d unsupported word(s)",
                     self.mode, len(verdict.unsupported))
            # Small models retry with the same words unless shown better ones.
            suggestion = suggested_entry(text, evidence) or _last_request(messages)
            self.offered = suggestion or ""
            return json.dumps({"success": False,
                               "error": refusal_message(verdict, suggestion)},
                              ensure_ascii=False), True
        return None

    def _run(self, args: dict[str, Any], asked_target: Any, manager: MemoryManager,
             notes: list[str], said: str = "") -> str:
        """Run a checked call: routed to the right store, a repeated fact not stored
        again, a correction of a saved entry made its replace (``said``: the user's
        latest message, which may take back a name or a value)."""
        routed = _route(args, self.memory)
        if routed.get("action") == "add" and routed.get("target") in TARGETS:
            content = str(routed.get("content") or "")
            entries = self.memory.entries_for(routed["target"])
            same = near_duplicate(content, entries)
            if same is not None:
                return json.dumps({"success": True, "note": f"Already saved as {same!r}; "
                                   "nothing added."}, ensure_ascii=False)
            new = _not_saved_yet(content, entries)
            if not new:
                return json.dumps({"success": True, "note": "Already saved, sentence by "
                                   "sentence; nothing added."}, ensure_ascii=False)
            if new != content:
                notes.append("Left out what was already saved; added only "
                             f"{one_line(new, 120)!r}.")
                routed = {**routed, "content": new}
        routed = self._as_correction(routed, said, notes)
        result = manager.handle_tool_call("memory", routed)
        if routed.get("target") != asked_target and routed.get("action") == "add":
            notes.append(f"Saved under target {routed['target']!r}: facts about the user go "
                         "to 'user', facts about the environment and your own notes to "
                         "'memory'.")
        elif routed.get("target") != asked_target:
            notes.append(f"The entry was in target {routed['target']!r}; changed there.")
        return _with_note(result, " ".join(notes)) if notes else result

    def _as_correction(self, args: dict[str, Any], said: str,
                       notes: list[str]) -> dict[str, Any]:
        """``args``, made the replace of the entry it corrects when ``said``, the user's
        latest message, took back what that entry says: an add, or a replace whose
        ``old_text`` matches nothing. By hand the user said "Actually Ravi moved: he
        lives in Glasgow now, not Manchester.", the embedded model added "My brother
        Ravi now lives in Glasgow now." beside "My brother Ravi lives in Manchester.",
        and answered "Where does my brother live?" with Manchester, from the memory
        block. The same for an amount, a day or a month ("our budget is now 3500
        euros, not 4000": ``_value_corrected``)."""
        target, action = args.get("target"), args.get("action")
        taken_back = tuple(undone_in(said))
        changes = value_changes(said)
        updating = bool(updates_in(said))
        if not (taken_back or changes or updating) or target not in TARGETS or action not in (
                "add", "replace"):
            return args
        entries = self.memory.entries_for(target)
        old_text = str(args.get("old_text") or "").strip()
        if action == "replace" and old_text and any(old_text in e for e in entries):
            return args  # the model named the entry itself
        content = str(args.get("content") or "")
        negated = [name for sentence in sentences(content) for name in named_after_not(sentence)]
        stale = corrected_entry(content, taken_back, entries, negated) if taken_back else None
        if stale is None and taken_back and action == "replace":
            # The turn's reminder named the entry to replace (``stale_entries``); a small
            # model given it wrote the new fact as old_text ("My brother Ravi lives in
            # Glasgow.", by hand) and the replace missed.
            named = [entry for entry in entries if _naming(entry, set(taken_back))]
            if len(named) == 1 and not _naming(content, set(taken_back)):
                stale = named[0]
        if stale is None:
            stale = _value_corrected(content, changes, entries)
        if stale is None and updating:
            stale = _update_corrected(content, said, entries)
        if stale is None:
            return args
        notes[:] = [note for note in notes if note != _ADDED_INSTEAD]
        notes.append(f"The user took back what {stale!r} said, so this entry replaced it.")
        return {**args, "action": "replace", "old_text": stale}

    def _saved_already(self, claim: str) -> str | None:
        """The saved entry, in either store, that already says ``claim``, if any."""
        if not claim:
            return None
        for target in TARGETS:
            same = near_duplicate(claim, self.memory.entries_for(target))
            if same is not None:
                return same
        return None

    def _evidence_texts(self, args: dict[str, Any], messages: Sequence[Message]) -> list[str]:
        """What the user and the tools (other than memory itself) said in the live
        conversation, plus the entry a replace rewrites: the evidence for a write."""
        texts: list[str] = []
        # Call id -> the tool's name, from every message first: an archived result comes
        # before a call still live (a window cut archives the result's original), and a
        # memory refusal read as a tool's words once made its own quoted words evidence
        # (by hand: "Slice 1/3 of a banana", refused twice, then saved).
        tool_of_call = {str(c.get("id")): str(c["function"].get("name"))
                        for message in messages if message.get("role") == "assistant"
                        for c in tool_calls_of(message)}
        for message in messages:
            role = message.get("role")
            if role == "user":
                # A summary retells; a turn merged into one (C12 c) is what the user said.
                texts.append(own_text(message))
            elif role == "tool":
                tool = tool_of_call.get(str(message.get("tool_call_id")), "")
                if tool == "session_search":
                    texts += _said_in_search(content_text(message))
                elif tool != "memory":  # the tool's own result is no evidence for itself
                    texts.append(content_text(message))
        target = args.get("target")
        if args.get("action") == "replace" and args.get("old_text") and target in TARGETS:
            texts += [entry for entry in self.memory.entries_for(target)
                      if str(args["old_text"]) in entry]
        return texts + self._corrected_copies(messages)

    def stale_entries(self, text: str) -> list[tuple[str, str]]:
        """The saved entries (either store: target, entry) that ``text``, the user's
        message, says no longer hold: they name what it takes back ("…, not
        Manchester"), other than after a "not" of their own, or the amount, day or month
        it takes back, about the same thing ("our budget is now 3500 euros, not 4000":
        "Our budget is about 4000 euros.", not "I swim 4000 m a week."), or they say a
        thing is what the message says it is not any more ("Correction: the budget is
        21,000 euros now": "Budget: $18,000." — ``updated_value``)."""
        taken = set(undone_in(text))
        changes = value_changes(text)
        updating = bool(updates_in(text))
        if not taken and not changes and not updating:
            return []
        return [(target, entry) for target in TARGETS
                for entry in self.memory.entries_for(target)
                if (taken and _naming(entry, taken))
                or any(_holds_value(entry, change, old)
                       for change in changes for old, _, _ in change.swaps)
                or (updating and updated_value(entry, text) is not None)]

    @staticmethod
    def suggested_correction(text: str, entry: str) -> str | None:
        """``entry`` as ``text``, the user's correction, leaves it: the name said in the
        place of the one taken back ("My brother Ravi lives in Glasgow." after "Actually
        Ravi moved: he lives in Glasgow now, not Manchester."); None when ``text`` puts
        no name in its place ("we're not going to Lisbon any more"). A value the same way:
        "Our budget is about 3500 euros." after "our budget is now 3500 euros, not
        4000"."""
        for sentence in sentences(text):
            for old, new in replacements(sentence):
                if _naming(entry, {old}):
                    return re.sub(rf"\b{re.escape(old)}\b", new, entry, flags=re.IGNORECASE)
        for change in value_changes(text):
            for old, _, new in change.swaps:
                if new and _holds_value(entry, change, old):
                    return with_value(entry, old, new)
        updated = updated_values(entry, text)
        for value, _, new in updated:  # a day and its date change together
            entry = with_value(entry, value, new)
        return entry if updated else None

    def _corrected_copies(self, messages: Sequence[Message]) -> list[str]:
        """Each saved entry the user's latest message corrects, with the name it put in
        the place of the one taken back: the user said that what memory held of
        Manchester now holds of Glasgow, so "My brother Ravi lives in Glasgow." is what
        they said. Without it strict grounding refuses the right rewrite of "…going to
        Lisbon in May.": "Porto" was said only in "it's Porto now, not Lisbon", not
        beside "learning" or "May"."""
        said = _latest_said(messages)
        return [copy for _, entry in self.stale_entries(said)
                if (copy := self.suggested_correction(said, entry))]


# What a session_search result quotes of what was said: the words of past users and tool
# results. Its assistant messages are left out, so a past reply's invention cannot be
# saved as a fact by being found again (M9).
_SAID_KEYS = ("content", "snippet")
_USER_KEYS = ("title", "first_request")  # a session's title is its first request


def _said_in_search(text: str) -> list[str]:
    """The user and tool words quoted in a ``session_search`` result (its JSON text)."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    said: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, list):
            for item in value:
                walk(item)
        if not isinstance(value, dict):
            return
        role = value.get("role")
        keys = _USER_KEYS + (_SAID_KEYS if role in ("user", "tool") else ())
        said.extend(str(value[k]) for k in keys if isinstance(value.get(k), str))
        for item in value.values():
            walk(item)

    walk(data)
    return said


_ADDED_INSTEAD = "There was nothing to replace, so the content was added as a new entry."
_OFFER_TAKEN = ("There was nothing to replace, so the entry offered in the user's own words "
                "was added.")


def _not_saved_yet(content: str, entries: Sequence[str]) -> str:
    """``content`` without its sentences that saved entries already say ("" when each
    one does). By hand the embedded model added "My brother Ravi now lives in Glasgow
    now. I am Priya. I now teach maths at a school in Bristol.": two saved entries run
    together."""
    parts = sentences(content)
    if len(parts) < 2:
        return content
    new = [part for part in parts if near_duplicate(part, entries) is None]
    return content if len(new) == len(parts) else " ".join(new)


def _latest_said(messages: Sequence[Message]) -> str:
    """What the user said in their latest message with words, or ""."""
    for message in reversed(messages):
        if message.get("role") == "user" and (said := own_text(message)):
            return said
    return ""


def _outdated_by(text: str, messages: Sequence[Message]) -> str | None:
    """The user's newest update of a thing ``text`` states ("Correction: the budget is
    21,000 euros now", ``updates_in``) when it gives the thing another value: by hand
    (3,072 tokens) the embedded model made the suggested replace "Budget: $21,000. New
    oven." and, turns later, replaced it back with "Budget: $18,000. New oven.", which
    the user had said before, so grounding let it through. The user's words are read
    newest first, in their messages and in a summary's "User:" lines; the newest word
    on the thing decides. None when there is no such update."""
    things = {thing for thing, _, _, _ in stated_values(text)}
    if not things:
        return None
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        for said in reversed(_users_words(message)):
            if any(thing in things for thing, _, _, _ in updates_in(said)):
                return said if updated_values(text, said) else None
    return None


def _users_words(message: Message) -> list[str]:
    """What the user said in ``message``, oldest first: for a summary message, its
    "User:" lines, then the turn merged into it."""
    if not is_summary_message(message):
        return [content_text(message)]
    lines = [line.split("User: ", 1)[1] for line in content_text(message).splitlines()
             if line.startswith(("- User: ", "User: "))]
    return [*lines, own_text(message)]


def _holds_value(entry: str, change: Change, old: str) -> bool:
    """True when ``entry`` names ``old``, a value ``change`` takes back, as holding (not
    only as taken back itself: "3500 euros, not 4000") and is about the same thing: it
    shares a word with the correction besides the values ("My daughter turns 12 in May."
    holds nothing "we'll stay 10 days instead of 12" takes back). By hand the entry "Our
    budget is about 4000 euros" outlived "Actually our budget is now 3500 euros, not
    4000.", and every later session would have read it."""
    return (old in values_in(entry) and bool(change.about & text_stems(entry))
            and not any(old in undone_values(part) for part in sentences(entry)))


def _value_corrected(content: str, changes: Sequence[Change],
                     entries: Sequence[str]) -> str | None:
    """The one entry that ``content``, a write in the turn of ``changes``, corrects: the
    entry holds a value taken back, and ``content`` puts the new value in its place
    about the same thing without holding the old one. An unrelated fact saved in that
    turn replaces nothing: it names no new value of the same thing."""
    told = values_in(content)
    for change in changes:
        for old, _, new in change.swaps:
            if (not new or value_word(new) not in told or not change.about & text_stems(content)
                    or _holds_value(content, change, old)):
                continue
            held = [entry for entry in entries if _holds_value(entry, change, old)]
            if len(held) == 1:
                return held[0]
    return None


def _update_corrected(content: str, said: str, entries: Sequence[str]) -> str | None:
    """The one entry that ``content``, a write in the turn of ``said``, corrects when
    ``said`` says a thing is another value now (``updated_value``): the entry states the
    thing's old value, ``content`` states the thing and not the old value. "The budget is
    21,000 euros now." replaces "Budget: $18,000. New oven."; "The oven is 1,200 euros."
    replaces nothing."""
    things = {thing for thing, _, _, _ in stated_values(content)}
    if not things or updated_value(content, said) is not None:
        return None
    held = [entry for entry in entries if updated_value(entry, said) is not None
            and things & {thing for thing, _, _, _ in stated_values(entry)}]
    return held[0] if len(held) == 1 else None


def _naming(entry: str, names: set[str]) -> bool:
    """True when ``entry`` names one of ``names`` (lower-cased) as holding: not only
    after a "not" of its own ("Ravi lives in Glasgow, not Manchester")."""
    return bool(names & names_in(entry) - set(named_after_not(entry)))


_SUGGESTED_MAX = 200  # a longer message is no entry to offer


def _last_request(messages: Sequence[Message]) -> str | None:
    """The user's latest message when it is short enough to be an entry: offered when the
    refused entry shares no word with anything said (small models copy the prompt's worked
    example, "Name: Sam. Prefers tabs.", and then loop on it)."""
    for message in reversed(messages):
        if message.get("role") == "user" and (said := own_text(message)):
            text = " ".join(said.split())
            return text if len(text) <= _SUGGESTED_MAX else None
    return None


def _as_intended(args: dict[str, Any], memory: MemoryStore,
                 offered: str = "") -> dict[str, Any]:
    """``args``, with a replace that has nothing to replace made the add it means: its
    ``old_text`` is empty, or its store is empty and no entry anywhere holds that text.
    Small models reach for replace to save a new fact, and a refusal only makes them
    loop; where there are entries, a replace that misses stays an error to correct.
    When that ``old_text`` is the entry a refusal just ``offered``, the model took the
    offer and put it in the wrong field: the offer is what is added. By hand, on some
    days' prompts, the embedded model answered "Not saved: … for example with content
    \"I'm Ana and I like short answers.\"" with a replace of exactly that text by its
    refused words, three times, and nothing was saved."""
    if args.get("action") != "replace" or not str(args.get("content") or "").strip():
        return args
    old_text = str(args.get("old_text") or "").strip()
    target = args.get("target")
    if old_text and (target not in TARGETS or memory.entries_for(target) or any(
            old_text in entry for t in TARGETS for entry in memory.entries_for(t))):
        return args
    added = {**{k: v for k, v in args.items() if k != "old_text"}, "action": "add"}
    return {**added, "content": offered} if old_text and old_text == offered else added


def _without_repeats(args: dict[str, Any]) -> dict[str, Any]:
    """``args`` with a sentence its ``content`` says again, word for word, said once: by
    hand the embedded model saved "We are planning a party, with Alina turning seven next
    Saturday at 2 pm." three times over as one entry."""
    content = args.get("content")
    if args.get("action") not in ("add", "replace") or not isinstance(content, str):
        return args
    parts = sentences(content)
    once = list(dict.fromkeys(parts))
    if len(once) == len(parts):
        return args
    return {**args, "content": " ".join(once)}


def _route(args: dict[str, Any], memory: MemoryStore) -> dict[str, Any]:
    """``args`` with an add's target moved to the store its text belongs in, and a replace
    or remove moved to the store that holds the entry it names when the one given does
    not (an add may have been moved there a moment ago)."""
    target = args.get("target")
    if target not in TARGETS:
        return args
    if args.get("action") == "add":
        moved = route_target(str(args.get("content") or ""), str(target))
        return args if moved == target else {**args, "target": moved}
    old_text = str(args.get("old_text") or "").strip()
    if args.get("action") not in ("replace", "remove") or not old_text:
        return args
    holds = [t for t in TARGETS if any(old_text in e for e in memory.entries_for(t))]
    return {**args, "target": holds[0]} if holds and target not in holds else args


def _with_note(result: str, note: str) -> str:
    try:
        data = json.loads(result)
    except ValueError:
        return result
    if not isinstance(data, dict) or not data.get("success"):
        return result
    joined = f"{data['note']} {note}" if data.get("note") else note
    return json.dumps({**data, "note": joined}, ensure_ascii=False)
