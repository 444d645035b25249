"""A model's summary completed by the local summariser, in the room the model left (C17).

The embedded model prepares summaries in the background with its answer capped (about
512 tokens: a turn that arrives meanwhile waits at most that long), while the summary
budget is 2,000 tokens or more (C9). A 0.5B model also keeps few of the facts a
conversation was about: on LoCoMo conversation 30 in an 8k window its summary held the
answers to 6 questions, the local summariser's to 19, the two together (below) to 20
(``bench/conversation_retention_bench.py``). ``completed`` keeps the lines the model
wrote and adds, under the same headings, the local summariser's lines for the same turns
that say something the model's lines do not, until the budget is spent: the model's
summary is still the summary (C17), and the room its cap left holds what the local
reading ranks highest instead of nothing. A rule the user set for the assistant that the
previous summary held and the model's merge left out is put back first, whatever the
room: no later turn says it again.

Where the room is small — a small window, or a middle of a few short messages — the
whole summary takes, besides its headings, at most what the previous summary said and
half of the turns (as the local summariser's notes of a conversation do), and the
model's lines at most half of that, its most important ones: seen by hand in a
3,072-token window, the model had written 339 tokens ("The Pixel is a popular toy", "has
since adopted it at the same time") for 257 tokens of turns that said where the user's
brother plays the cello.

The model's lines are tidied first (``_tidied``): by hand in an 8k window the 0.5B model
wrote the same two sentences under five headings, line fragments without a word of
content ("near the"), and a paraphrase of the template's own hint ("[A to-do list of
what is left…"). A line that repeats one of its earlier lines (or a piece of one), or
that tells nothing, or that restates a hint, is left out: the room is the local lines'
instead. So is a line of the summary the model went on from that it copied only so far
(by hand in a 3,072-token window: "Last Fri [27 Nov 2026] I started pottery", "… on Sunday
[6 Dec"): the local lines carry that line whole, and the model's next rewrite does not
copy the stump again. The same model copies the previous summary's long lines wrapped
over several lines: the parser joins a wrapped item back into one
(``summary/wrapped.py``), and a summary it joined is printed anew. Last, a line must be
grounded in the turns and the summary they go on from, as a memory write is (M9): by
hand the model wrote 'Replace "Pune" with "Bristol".' and "File paths:
/path/to/user/file.txt.", which nobody had said (``_grounded``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from mnemo.context.local_summary import (
    TOOL_COUNT,
    marks_empty,
    parse_summary_sections,
    render_sections,
    summarize_locally,
)
from mnemo.context.prompt import (
    PROGRESS_SUBSECTIONS,
    SUMMARY_TEMPLATE,
    TEMPLATE_SECTIONS,
    truncate_for_summary,
)
from mnemo.context.pruning import calls_by_id
from mnemo.context.summary.notes import content_words, told_in
from mnemo.context.summary.salience import is_standing_rule, undone_names
from mnemo.context.summary.wrapped import DANGLING, unwrapped
from mnemo.memory.grounding import Evidence, check_grounding
from mnemo.memory.tool import MEMORY_SCHEMA
from mnemo.messages import Message, content_text
from mnemo.tokens import estimate_tokens_rough

__all__ = ["MIN_ROOM_TOKENS", "completed", "with_rules_kept"]

_RULES = "Constraints & Preferences"
_TOOLS = "Tools & Patterns"
# Under Relevant Files a model line must name a file, with a path or an extension: by
# hand the 0.5B model wrote "File paths: Leeds, Headingley." for where the user lives.
_FILES = "Relevant Files"
_PATH_LIKE = re.compile(r"[\w.~-]/[\w.-]|\\|\b\w[\w-]*\.[A-Za-z][\w]{0,7}\b(?!\.? [A-Z])")
_PENDING, _CRITICAL = "Pending User Asks", "Critical Context"
# A model line under Pending User Asks that tells rather than asks: by hand the 0.5B
# model put the user's "I run about 35 km a week, on Tuesdays, Thursdays and Sundays."
# there, which the next reader would take for a request still open.
_TOLD = re.compile(r"(?:I|I'm|I've|My|We|We're|Our)(?=\s)(?!\s+(?:want|would|need|asked"
                   r"|wonder|wish|hope)\b)")
# A model's way of saying a section is empty, as the template asks.
_NONE_LINE = re.compile(r"^[ \t]*[-*][ \t]*\(none\)[ \t]*(?:\n|$)", re.MULTILINE)
# Less room than this is not worth a local reading: a short line.
MIN_ROOM_TOKENS = 24
_REPLACED_SHARE = 0.5  # of what it replaces, a completed summary takes at most this
# Template order, sub-sections in place of Progress.
_ORDER = tuple(key for section in TEMPLATE_SECTIONS for key in (
    [f"Progress/{sub}" for sub in PROGRESS_SUBSECTIONS] if section == "Progress"
    else [section]))
# The content words of each of the template's bracketed hints ("[Completed work, with
# its results]"): a model line that restates one is no summary of the turns.
_HINTS = (*(content_words(hint) for hint in re.findall(r"\[([^\]]+)\]", SUMMARY_TEMPLATE)),
          # and the headings' words: by hand a model line was "[ ] relevant".
          content_words(" ".join((*TEMPLATE_SECTIONS, *PROGRESS_SUBSECTIONS))))


def completed(model_body: str, turns: Sequence[Message], *, budget_tokens: int,
              previous_summary: str | None = None, extra_context: str = "",
              session_date: date | None = None, model_previous: str = "") -> str:
    """``model_body`` (a summary of ``turns`` after ``previous_summary``) with the local
    summariser's new lines for the same turns (and the memory providers'
    ``extra_context``) added under their headings, the whole within ``budget_tokens``;
    besides the headings it takes at most what the previous summary said and half of the
    turns, the model's lines at most half of that (see the module docstring).
    ``model_body`` unchanged when there is no room to share, but for the user's rules
    ``previous_summary`` held, which are put back whatever the room
    (``with_rules_kept``). ``model_previous``: the summary the model was given to go on
    from, when not ``previous_summary`` (its own earlier answer: ``prepare.py``)."""
    # A small window's summary says nothing under an empty heading, as the local one
    # does (``with_rules_kept`` takes the model's "(none)" lines out).
    marked = marks_empty(budget_tokens)
    empty = estimate_tokens_rough(render_sections({}, marked=marked))
    found = _sections(model_body)
    # What was said, for the model's lines to be grounded in: the turns (their speakers'
    # names too) and the summary they go on from — not the model's own earlier answer.
    # Each turn as far as the model was shown it (``truncate_for_summary``): a long tool
    # output costs no more to index than that (at the swap this is on the compaction's
    # path).
    said = Evidence([previous_summary or "", *(
        f"{t.get('name') or ''}: {truncate_for_summary(content_text(t))}"
        for t in _said_turns(turns))]) if turns else None
    mine = _tidied(found, _squeezed(f"{previous_summary or ''}\n{model_previous}"), said,
                   _taken_back(previous_summary, turns))
    if mine != found or unwrapped(model_body) != model_body.strip():
        model_body = render_sections(mine, marked=marked)
    if not turns:
        return model_body
    # A summary must shrink what it replaces: besides its headings it takes at most half
    # of the turns, as the local summariser's notes of a conversation do, and what the
    # previous summary said. Measured as printed: every heading, "(none)" under the
    # empty ones where the summary says it. (Counting the previous summary at half too,
    # a live chat's summary halved at every compaction: by hand, 3,072 tokens, the dog's
    # name, the change of plan and the night shifts were each gone one compaction after
    # they were summarised.)
    carried = sum(estimate_tokens_rough(f"- {line}\n") for lines in parse_summary_sections(
        previous_summary or "").values() for line in lines)
    replaced = sum(estimate_tokens_rough(content_text(t)) for t in turns)
    limit = min(budget_tokens, empty + carried
                + int(replaced * _REPLACED_SHARE))
    half = empty + (limit - empty) // 2
    if limit - empty < MIN_ROOM_TOKENS:
        return with_rules_kept(model_body, previous_summary, budget_tokens)
    printed = render_sections(mine, marked=marked)
    cut = estimate_tokens_rough(printed) > half
    if cut:
        # The model's most important lines, as the local summariser ranks the lines of
        # a previous summary (see the module docstring).
        printed = summarize_locally([], budget_tokens=half, previous_summary=printed,
                                    marked=marked)
        mine = parse_summary_sections(printed)
    room = limit - estimate_tokens_rough(printed)
    if room < MIN_ROOM_TOKENS:
        return with_rules_kept(printed if cut else model_body, previous_summary,
                                budget_tokens)
    known = content_words(" ".join(line for lines in mine.values() for line in lines))
    # The headings are printed once: the local summary's template is not extra room.
    # Notes the model's lines tell already are left out there (``known_words``); other
    # lines (a path, a command, a question and its answer) here.
    local = parse_summary_sections(summarize_locally(
        turns, budget_tokens=room + empty, previous_summary=previous_summary,
        extra_context=extra_context, session_date=session_date, known_words=known,
        marked=marked))  # the room above counts the template as printed here
    # A rule the user set for the assistant stays one, though the model's lines mention
    # its words elsewhere (seen by hand: the 0.5B model put "please only suggest
    # vegetarian recipes" into its Goal); only a rule the model kept tells it.
    rules = content_words(" ".join(mine.get(_RULES, [])))
    added: list[tuple[str, str]] = []
    for key in _ORDER:
        for line in local.get(key, []):
            words = content_words(line)
            told = rules if key == _RULES and is_standing_rule(line) else known
            if words and not told_in(words, told):
                added.append((key, line))
                known |= words
    merged = {key: list(lines) for key, lines in mine.items()}
    for key, line in added:
        merged.setdefault(key, []).append(line)
    text = render_sections(merged, marked=marked)
    # The local summary was fitted to the room; headings the model left empty, now
    # filled, can still tip it over: the last lines added go first.
    while added and estimate_tokens_rough(text) > limit:
        key, line = added.pop()
        merged[key].remove(line)
        text = render_sections(merged, marked=marked)
    # A tool the local lines count gives way there: they count the calls of the turns and
    # the summaries before; the model guesses ("Memory ×41" beside "memory ×9", by hand).
    counted = {m.group(1).lower() for key, line in added
               if key == _TOOLS and (m := TOOL_COUNT.match(line))}
    guessed = [line for line in mine.get(_TOOLS, [])
               if (m := TOOL_COUNT.match(line.strip("[]"))) and m.group(1).lower() in counted]
    if guessed:
        merged[_TOOLS] = [line for line in merged[_TOOLS] if line not in guessed]
        text = render_sections(merged, marked=marked)
    return with_rules_kept(text if added or cut else model_body, previous_summary,
                            budget_tokens)


def with_rules_kept(text: str, previous_summary: str | None, budget_tokens: int) -> str:
    """``text`` with the rules the user set for the assistant in ``previous_summary``
    that it no longer holds word for word put back first under their heading, in place
    of the model's versions of them, within ``budget_tokens``. They are what every
    later answer must follow, and no later turn says them again: seen by hand in a
    3,072-token window, "I'm allergic to peanuts, keep that in mind when you suggest
    recipes." held by four summaries in a row was left out of the next one, whose model
    lines ("File paths: Leeds, Headingley.") had taken the little room there was.
    Within a small budget (``marks_empty``) the "(none)" lines are taken out."""
    marked = marks_empty(budget_tokens)
    if not marked:
        # A small window's summary says nothing under an empty heading, as the local
        # one does: by hand (3,072 tokens) a model summary kept nine "(none)" lines.
        text = _NONE_LINE.sub("", text)
    if not previous_summary:
        return text
    rules = [line for line in parse_summary_sections(previous_summary).get(_RULES, [])
             if is_standing_rule(line)]
    if not rules:
        return text
    sections = parse_summary_sections(text)
    lines = sections.get(_RULES, [])
    missing = [rule for rule in rules if not any(_holds(line, rule) for line in lines)]
    if not missing:
        return text
    # The model's versions of a missing rule give way to it: by hand one came back as
    # "User: I'm allergic to peanuts, keep that in mind when you say ```json {" — most of
    # its words, and not the rule.
    versions = [content_words(rule) for rule in missing]
    sections[_RULES] = [*missing, *(line for line in lines if not any(
        told_in(content_words(line), words) for words in versions))]
    kept = render_sections(sections, marked=marked)
    if estimate_tokens_rough(kept) <= budget_tokens:
        return kept
    # No room for the rules beside every line: the lines are ranked as a previous
    # summary's are — a rule above every note — until the budget is spent (by hand, in a
    # 3,072-token window, the rule held by ten summaries was left out of the eleventh
    # for want of 2 tokens, and never came back).
    fitted = summarize_locally([], budget_tokens=budget_tokens, previous_summary=kept,
                               marked=marked)
    held = parse_summary_sections(fitted).get(_RULES, [])
    if all(any(_holds(line, rule) for line in held) for rule in missing):
        return fitted
    return text


# A summary line's speaker label ("User: ", "Tomas: ").
_LABEL = re.compile(r"^[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}: ")


def _holds(line: str, rule: str) -> bool:
    """True when ``line`` holds ``rule`` word for word (spaces, case, its speaker's label
    and its closing stop aside)."""
    said = _squeezed(_LABEL.sub("", rule)).lower().rstrip(".!")
    return said in _squeezed(line).lower()


def _sections(text: str) -> dict[str, list[str]]:
    """The items of a summary by section, what it wrote outside any heading first under
    Critical Context."""
    found = parse_summary_sections(text)
    if "Other" in found:
        found["Critical Context"] = [*found.pop("Other"), *found.get("Critical Context", [])]
    return found


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def _taken_back(previous_summary: str | None, turns: Sequence[Message]) -> frozenset[str]:
    """The names taken back ("it's Porto now, not Lisbon": ``salience.undone_names``) by
    a line of the previous summary (its sections are in no order of time) or by a turn
    of the user's, where no later turn of theirs names them again without taking them
    back."""
    undone = {name for lines in parse_summary_sections(previous_summary or "").values()
              for line in lines for name in undone_names(line)}
    for turn in turns:
        if turn.get("role") == "user":
            text = content_text(turn)
            names = undone_names(text)
            undone = (undone - content_words(text)) | set(names)
    return frozenset(undone)


def _tidied(sections: dict[str, list[str]], previous: str = "",
            said: Evidence | None = None,
            taken_back: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """``sections`` of a model's summary without the lines that tell nothing new: a
    repeat or a piece of an earlier line (in template order: all its content words are
    that line's), a line without a content word, one that restates a hint of the
    template or is a piece of one broken over lines ("perform]"; see the module
    docstring), a line of the ``previous`` summary (spaces squeezed) cut off in the
    middle of a sentence — the local lines carry that one whole — and, given what was
    ``said``, a line that says what was not (``_grounded``), or one that retells what
    the memory tool answered (``_TOOL_NOTE``), or one that names what the user took
    back (``taken_back``) without taking it back itself (by hand: "… recipes for
    beagles in Lisbon." after "it's Porto now, not Lisbon").
    A line that ends on a word no sentence ends on loses it ("… yesterday and")."""
    kept: dict[str, list[str]] = {}
    earlier: list[frozenset[str]] = []
    for key in sorted(sections, key=lambda k: _ORDER.index(k) if k in _ORDER else len(_ORDER)):
        for line in sections[key]:
            words = content_words(line)
            if (not words or any(words <= other for other in earlier)
                    or any(told_in(words, hint) for hint in _HINTS)
                    or (line.count("[") != line.count("]") and len(words) <= 2)
                    or _cut_from(line, previous)
                    or (key == _FILES and not _PATH_LIKE.search(line))
                    or _TOOL_NOTE.search(line)
                    or (taken_back & words and not undone_names(line))
                    or (said is not None and not _grounded(line, said))):
                continue
            earlier.append(words)
            told = key == _PENDING and _TOLD.match(line) and not line.rstrip().endswith("?")
            # (Under Pending User Asks, something the user told is no ask.)
            kept.setdefault(_CRITICAL if told else key, []).append(_without_dangling(line))
    return kept

# What the agent's memory tool answers a call ("Entry added.", "Already saved as …;
# nothing added.", "Not saved: …"): the memory holds what it saved, and a summary line
# that retells the answer tells nothing of the conversation. By hand the embedded
# model's merge wrote "The user has already saved as 'Name: Tomas.'." under Done and
# "The error message "Already saved as 'Name: Tomas.'; nothing" under Critical Context
# (and "The user has already saved the user's name as 'Name: Tomas.'." under
# Constraints & Preferences).
_TOOL_NOTE = re.compile(r"(?i)\b(?:already saved (?:[\w '’]{0,30} )?as ['\"]|nothing added"
                        r"|entry added|not saved:|was not said by the user|memory keeps only)")


# A model line is kept when it is grounded in the turns and the summary they go on from
# as a memory write is (M9, ``memory.grounding``: names and numbers said exactly, no
# stance turned round), with at least this share of its other words said. By hand in a
# 3,072-token window the 0.5B model wrote 'Replace "Pune" with "Bristol".', "File paths:
# /path/to/user/file.txt." and "### Goal", and the completed summary gave them the room
# of where the user works and who her husband is.
_MODEL_LINE_SUPPORT = 0.75
_MEMORY_TOOL = str(MEMORY_SCHEMA["name"])


def _said_turns(turns: Sequence[Message]) -> list[Message]:
    """``turns`` without the memory tool's results: they speak to the model ("Not saved:
    the entry says things nobody in this conversation said ('Samanne', 'tabs'). Memory
    keeps only facts the user or a tool stated. …"), and what they quote is what nobody
    said. By hand (3,072 tokens) the model's summary held "The user wants to replace
    their name with tabs in a conversation." and "They are using a tool called memory
    to keep track of facts …", both grounded in such results, and the next summaries
    kept them as the user's preferences. What memory saved is the user's words, which
    the turns hold; memory writes are grounded the same way (``agent.memory_writes``)."""
    calls = calls_by_id(turns)
    return [t for t in turns if t.get("role") != "tool" or getattr(
        calls.get(str(t.get("tool_call_id"))), "name", "") != _MEMORY_TOOL]


def _grounded(line: str, said: Evidence) -> bool:
    verdict = check_grounding(line, said, "lenient")
    return verdict.grounded and verdict.support >= _MODEL_LINE_SUPPORT


# A model that rewrites the previous summary with a few new turns may copy a line only
# so far (seen by hand, the 0.5B model in a 3,072-token window: "Last Fri [27 Nov 2026] I
# started pottery", and "… on Sunday [6 Dec" with its bracket left open), and the next
# rewrite copies the stump. Shorter pieces than this are left to the other rules.
_MIN_CUT_CHARS = 12


def _cut_from(line: str, previous: str) -> bool:
    """True when ``line`` is a piece of ``previous`` cut inside a sentence: the text there
    goes on with a letter, a digit or a bracket's inside after it ("… I started pottery"
    of "… I started pottery classes", or "… my partnerLot" of "… my partner Lotte"), or
    it starts in lower case inside one ("sister Rita is …" of "My sister Rita is …")."""
    piece = _squeezed(line).lstrip("[").strip()
    if len(piece) < _MIN_CUT_CHARS or not previous:
        return False
    open_end = piece[-1] not in ".!?…)]\"'”’" and not piece.endswith((":", ";"))
    at = previous.find(piece)
    while at >= 0:
        after = previous[at + len(piece):at + len(piece) + 2]
        before = previous[max(0, at - 2):at]
        if open_end and (after[:1].isalnum() or (after[:1] == " " and after[1:2].isalnum())):
            return True
        if piece[0].islower() and (before[-1:].isalnum() or (
                before[-1:] == " " and before[:1].isalnum())):
            return True
        at = previous.find(piece, at + 1)
    # … or so far with two words run together where it stopped: by hand (3,072 tokens)
    # "… on March 14th with my partnerLot" of "… with my partner Lotte.", which every
    # later summary carried.
    if open_end and previous.find(piece) < 0:
        flat, flat_piece = previous.replace(" ", ""), piece.replace(" ", "")
        at = flat.find(flat_piece)
        while at >= 0:
            if flat[at + len(flat_piece):at + len(flat_piece) + 1].isalnum():
                return True
            at = flat.find(flat_piece, at + 1)
    return False


def _without_dangling(line: str) -> str:
    """``line`` without the words it was cut after (a model's token cap: "… yesterday
    and"; ``wrapped.DANGLING``)."""
    words = line.rstrip(" ,;:-–—").split(" ")
    while len(words) > 1 and words[-1].lower() in DANGLING:
        words.pop()
    return " ".join(words).rstrip(" ,;:-–—") if len(words) > 1 else line
