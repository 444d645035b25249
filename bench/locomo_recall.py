"""Recall of LoCoMo evidence turns through the session search (SPEC Q, D2).

Each LoCoMo conversation is imported into its own ``SessionStore`` (one stored session per
LoCoMo session, one message per turn, the turn's ``dia_id`` kept as ``external_id``,
speaker A as ``user`` and B as ``assistant``, each with the speaker's ``name``). Then, for
every answerable question (categories 1–4) with evidence, the question text is searched
and we report recall@5 / recall@10: the share of questions with at least one evidence
turn among the first 5 / 10 results. ``all@10`` is the share of all evidence turns found
in the first 10 (the multi-hop questions need several).

Rows: ``reference`` re-creates the figure in the data README (a plain SQLite FTS5 BM25
search, question words minus stop words, OR-joined, turns indexed as ``speaker: text``,
no stemming); then ``SessionStore.search`` with its ranking steps switched on one by one
(``SearchTuning``), ending with the defaults, which is what ``session_search`` uses.

The defaults were chosen on these same conversations, so the pooled table flatters them.
A second table reports each conversation on its own (leave one conversation out, nothing
re-tuned): the defaults against the plain BM25 baselines, per held-out conversation, so
a gain that only one conversation carries shows up.

    .venv/bin/python bench/locomo_recall.py [--data DIR] [--no-captions]

The data is read from ``/work/shared/data/locomo`` (licence CC BY-NC 4.0: evaluation only,
never copied into this repository); the benchmark skips with a message when it is absent.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mnemo.sessions import SearchTuning, SessionStore
from mnemo.sessions.query import STOP_WORDS, fts_quote

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10)


@dataclass(frozen=True)
class Turn:
    session: int
    dia_id: str
    speaker: str
    text: str


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]


@dataclass
class Conversation:
    name: str
    speakers: tuple[str, str]
    sessions: dict[int, tuple[float, list[Turn]]]
    questions: list[Question]


def _parse_date(raw: str) -> float:
    try:
        return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").timestamp()
    except ValueError:
        return 0.0


def load_conversation(path: Path, *, captions: bool) -> Conversation:
    data = json.loads(path.read_text(encoding="utf-8"))
    sessions: dict[int, tuple[float, list[Turn]]] = {}
    for key, value in data.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if not match or not isinstance(value, list):
            continue
        number = int(match.group(1))
        turns = []
        for turn in value:
            text = str(turn.get("text", ""))
            if captions and turn.get("blip_caption"):
                text += f" [shares an image: {turn['blip_caption']}]"
            turns.append(Turn(number, str(turn["dia_id"]), str(turn["speaker"]), text))
        sessions[number] = (_parse_date(str(data.get(f"{key}_date_time", ""))), turns)
    questions = []
    for qa in data.get("qa", []):
        evidence = frozenset(
            e.strip() for raw in qa.get("evidence", []) for e in re.split(r"[;,\s]+", raw)
            if re.fullmatch(r"D\d+:\d+", e.strip())
        )
        if qa.get("category") in CATEGORIES and evidence:
            questions.append(Question(str(qa["question"]), int(qa["category"]), evidence))
    return Conversation(path.stem, (data["speaker_a"], data["speaker_b"]),
                        dict(sorted(sessions.items())), questions)


def import_conversation(store: SessionStore, conv: Conversation) -> int:
    count = 0
    for number, (started, turns) in conv.sessions.items():
        sid = store.create_session(source="locomo", title=f"{conv.name} session {number}",
                                   started_at=started or None)
        messages: list[dict[str, Any]] = [
            {"role": "user" if t.speaker == conv.speakers[0] else "assistant",
             "name": t.speaker, "content": t.text}
            for t in turns
        ]
        store.append_messages(
            sid, messages,
            timestamps=[(started or time.time()) + i for i in range(len(turns))],
            external_ids=[t.dia_id for t in turns],
        )
        count += len(turns)
    return count


class Reference:
    """The README's plain BM25 search: unicode61 words, stop words dropped, OR-joined."""

    def __init__(self, conv: Conversation) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(body, dia_id UNINDEXED)")
        self.db.executemany(
            "INSERT INTO t(body, dia_id) VALUES (?, ?)",
            [(f"{t.speaker}: {t.text}", t.dia_id)
             for _, turns in conv.sessions.values() for t in turns],
        )

    def search(self, question: str, k: int) -> list[str]:
        words = [w.casefold() for w in re.findall(r"[^\W_]+", question)]
        words = [w for w in words if w not in STOP_WORDS] or words
        if not words:
            return []
        query = " OR ".join(fts_quote(w) for w in dict.fromkeys(words))
        return [r[0] for r in self.db.execute(
            "SELECT dia_id FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?", (query, k))]


@dataclass
class Tally:
    hits: dict[int, dict[int, int]]  # k -> category -> questions with an evidence hit
    found: dict[int, int]  # k -> evidence turns found
    totals: dict[int, int]  # category -> questions
    evidence: int = 0
    seconds: float = 0.0
    queries: int = 0

    @classmethod
    def new(cls) -> Tally:
        return cls({k: defaultdict(int) for k in KS}, dict.fromkeys(KS, 0), defaultdict(int))

    def add(self, question: Question, ranked: list[str]) -> None:
        self.totals[question.category] += 1
        self.evidence += len(question.evidence)
        for k in KS:
            top = set(ranked[:k])
            if top & question.evidence:
                self.hits[k][question.category] += 1
            self.found[k] += len(top & question.evidence)

    def recall(self, k: int, category: int | None = None) -> float:
        if category is None:
            return sum(self.hits[k].values()) / max(1, sum(self.totals.values()))
        return self.hits[k][category] / max(1, self.totals[category])


REFERENCE = "reference (README method)"
VARIANTS: list[tuple[str, SearchTuning]] = [
    ("store: porter, plain OR BM25", SearchTuning(prefix=False, rescore=False)),
    ("  + prefix matching", SearchTuning(rescore=False)),
    ("  + term coverage", SearchTuning(neighbour=0.0, reply=0.0)),
    ("  + adjacent-match bonus", SearchTuning(reply=0.0)),
    ("  + reply expansion (default)", SearchTuning()),
]


def run(data: Path, *, captions: bool) -> int:
    files = sorted(data.glob("*.json"))
    if not files:
        print(f"skipped: no LoCoMo files in {data} (see its README for where they come from)")
        return 0
    convs = [load_conversation(f, captions=captions) for f in files]
    tallies: dict[str, Tally] = {REFERENCE: Tally.new()}
    tallies.update({name: Tally.new() for name, _ in VARIANTS})
    per_conv: dict[str, dict[str, Tally]] = {
        c.name: {name: Tally.new() for name in tallies} for c in convs}
    turns = 0
    with tempfile.TemporaryDirectory() as tmp:
        for conv in convs:
            reference = Reference(conv)
            for q in conv.questions:
                start = time.perf_counter()
                ranked = reference.search(q.text, max(KS))
                tallies[REFERENCE].seconds += time.perf_counter() - start
                tallies[REFERENCE].add(q, ranked)
                per_conv[conv.name][REFERENCE].add(q, ranked)
            store = SessionStore(Path(tmp) / f"{conv.name}.db")
            turns += import_conversation(store, conv)
            for name, tuning in VARIANTS:
                store.search_tuning = tuning
                tally = tallies[name]
                for q in conv.questions:
                    start = time.perf_counter()
                    hits = store.search(q.text, limit=max(KS))
                    tally.seconds += time.perf_counter() - start
                    tally.queries += 1
                    tally.add(q, [h.external_id or "" for h in hits])
                    per_conv[conv.name][name].add(q, [h.external_id or "" for h in hits])
            store.close()
    questions = sum(len(c.questions) for c in convs)
    print(f"LoCoMo recall: {len(convs)} conversations, {turns} turns, {questions} questions "
          f"with evidence (categories 1-4), image captions {'on' if captions else 'off'}\n")
    header = (f"{'search':34} {'R@5':>6} {'R@10':>6} {'all@10':>7}  "
              + " ".join(f"{CATEGORIES[c][:11]:>11}" for c in CATEGORIES) + f" {'ms/q':>6}")
    print(header)
    print("-" * len(header))
    for name, tally in tallies.items():
        per_cat = " ".join(
            f"{100 * tally.recall(5, c):5.1f}/{100 * tally.recall(10, c):4.1f}"[:11].rjust(11)
            for c in CATEGORIES
        )
        ms = 1000 * tally.seconds / max(1, questions)
        print(f"{name:34} {100 * tally.recall(5):5.1f}% {100 * tally.recall(10):5.1f}% "
              f"{100 * tally.found[10] / max(1, tally.evidence):6.1f}%  {per_cat} {ms:6.2f}")
    counts = ", ".join(f"{CATEGORIES[c]} {n}" for c, n in sorted(
        next(iter(tallies.values())).totals.items()))
    print(f"\nper category: R@5/R@10 in %; questions: {counts}")
    print_held_out(per_conv)
    return 0


def print_held_out(per_conv: dict[str, dict[str, Tally]]) -> None:
    """Each conversation alone: the defaults against the plain BM25 baselines."""
    plain, default = VARIANTS[0][0], VARIANTS[-1][0]
    columns = ((REFERENCE, "reference"), (plain, "porter BM25"), (default, "default"))
    print("\nleave one conversation out (SearchTuning defaults were picked on all three; "
          "nothing re-tuned):\nR@5/R@10 in % per held-out conversation\n")
    header = (f"{'conversation':>12} {'questions':>9}  "
              + "  ".join(f"{label:>11}" for _, label in columns)
              + f"  {'default - reference':>19}  {'default - porter':>16}")
    print(header)
    print("-" * len(header))
    for conv, tallies in per_conv.items():
        cells = "  ".join(
            f"{100 * tallies[n].recall(5):5.1f}/{100 * tallies[n].recall(10):5.1f}"
            for n, _ in columns)
        gains = [
            f"{100 * (tallies[default].recall(5) - tallies[base].recall(5)):+5.1f}/"
            f"{100 * (tallies[default].recall(10) - tallies[base].recall(10)):+5.1f}"
            for base in (REFERENCE, plain)]
        questions = sum(tallies[REFERENCE].totals.values())
        print(f"{conv:>12} {questions:>9}  {cells}  {gains[0]:>19}  {gains[1]:>16}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help=f"folder with the LoCoMo *.json files (default {DEFAULT_DATA})")
    parser.add_argument("--no-captions", action="store_true",
                        help="leave out the captions of shared images (the README's setup)")
    args = parser.parse_args()
    return run(args.data, captions=not args.no_captions)


if __name__ == "__main__":
    sys.exit(main())
