"""Fit the weights of the conversation summary's salience (SPEC C18) on LoCoMo, and check
them on conversations they were not fitted on.

    python bench/salience_fit.py [--data DIR|locomo10.json] [--fit 26,30,41]
        [--check 42,43,44,47,48,49,50] [--budget 6000]

Every note the local summariser takes from a conversation (``extract_facts``, the
conversation as ``conversation_retention_bench`` builds it) is a row: the features of
``salience.WEIGHTS`` (``sentence_features``, how rare its words are in the
conversation, whether it replies to a question) and a label — it holds an answer word
of a question whose evidence is its message. (An answer is kept when all its words are
in the context; a note with one of them is most often what completes it — the rest are
in other notes or the turns kept. Labels of "at least half the words" or "all of them"
ranked worse on the conversations the weights never saw.) A logistic regression
(L2, strength 1, the intercept not penalised; Newton's method, no libraries) is fitted
on the ``--fit`` conversations and prints the weights to put in ``salience.py``.

Then, for the ``--fit`` and ``--check`` conversations, what ranking by each set of
weights is worth to a summary: the notes taken by chance per character until
``--budget`` characters are used, and how many labelled notes that holds — for the
fitted weights and for the ones ``salience.py`` has now. The check conversations are
the honest figure: the weights never saw them. The dev three are in
``../shared/data/locomo``; the others are in LoCoMo's ``data/locomo10.json``
(snap-research/locomo; CC BY-NC 4.0, evaluation only, never copied here).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from conversation_retention_bench import (
    DEFAULT_DATA,
    conversation_of,
    read_conversations_or_exit,
    words,
)
from mnemo.context.extract import extract_facts
from mnemo.context.summary.notes import rare_words
from mnemo.context.summary.salience import INTERCEPT, WEIGHTS, sentence_features

FEATURES = tuple(WEIGHTS)
_LINE_CHARS = 10  # as salience.py counts a line


@dataclass(frozen=True)
class Row:
    conversation: str
    features: tuple[float, ...]
    label: int
    chars: int


def rows_of(name: str, data: dict[str, object]) -> list[Row]:
    """The notes of one conversation as rows (see the module docstring)."""
    conv = conversation_of(name, data, every_question=True)  # type: ignore[arg-type]
    facts = extract_facts(conv.messages)
    names = tuple(facts.participants.values())
    answers: dict[int, list[frozenset[str]]] = {}
    for question in conv.questions:
        for place in question.evidence:
            answers.setdefault(place, []).append(question.answer_words)
    rows = []
    for note, rare in zip(facts.notes, rare_words(facts.notes), strict=True):
        own = sentence_features(note.text, names)
        if own is None:
            continue
        values = {**own, "rare": min(rare, 5.0), "reply": float(note.order in facts.replies)}
        held = words(note.text)
        label = any(answer & held for answer in answers.get(note.order, []))
        rows.append(Row(name, tuple(values[f] for f in FEATURES), int(label), len(note.text)))
    return rows


def fit(rows: list[Row], strength: float = 1.0, steps: int = 25) -> list[float]:
    """Weights (intercept first) of an L2 logistic regression, by Newton's method."""
    size = len(FEATURES) + 1
    weights = [0.0] * size
    for _ in range(steps):
        gradient = [strength * w if i else 0.0 for i, w in enumerate(weights)]
        hessian = [[strength if i == j and i else 0.0 for j in range(size)] for i in range(size)]
        for row in rows:
            x = (1.0, *row.features)
            chance = 1.0 / (1.0 + math.exp(-sum(w * v for w, v in zip(weights, x, strict=True))))
            spread = chance * (1.0 - chance)
            for i in range(size):
                gradient[i] += (chance - row.label) * x[i]
                for j in range(i, size):
                    hessian[i][j] += spread * x[i] * x[j]
        for i in range(size):
            for j in range(i):
                hessian[i][j] = hessian[j][i]
        step = _solve(hessian, gradient)
        weights = [w - s for w, s in zip(weights, step, strict=True)]
        if max(abs(s) for s in step) < 1e-6:
            break
    return weights


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """``matrix⁻¹ · vector`` by Gaussian elimination with partial pivoting."""
    size = len(vector)
    rows = [[*matrix[i], vector[i]] for i in range(size)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(size):
            if r != col and rows[r][col]:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=True)]
    return [rows[i][size] / rows[i][i] for i in range(size)]


def held(rows: list[Row], weights: list[float], budget: int) -> int:
    """Labelled notes among those a summary of ``budget`` characters would take, ranked
    by chance per character (each conversation on its own)."""
    total = 0
    for name in dict.fromkeys(r.conversation for r in rows):
        mine = [r for r in rows if r.conversation == name]

        def value(row: Row) -> float:
            logit = weights[0] + sum(w * v for w, v in zip(weights[1:], row.features,
                                                           strict=True))
            return 1.0 / (1.0 + math.exp(-logit)) / (row.chars + _LINE_CHARS)

        used = 0
        for row in sorted(mine, key=value, reverse=True):
            if used + row.chars + _LINE_CHARS <= budget:
                used += row.chars + _LINE_CHARS
                total += row.label
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--fit", default="26,30,41")
    parser.add_argument("--check", default="", help="conversations to check the weights on")
    parser.add_argument("--budget", type=int, default=6_000)
    args = parser.parse_args()
    fit_names = [n for n in args.fit.split(",") if n]
    check_names = [n for n in args.check.split(",") if n]
    found = read_conversations_or_exit(args.data, fit_names + check_names)
    if len(found) < len(fit_names) + len(check_names):
        print(f"LoCoMo conversations not found in {args.data}; skipping")
        return 0
    rows = {name: rows_of(name, data) for name, data in found.items()}
    train = [r for n in fit_names for r in rows[n]]
    fitted = fit(train)
    print(f"fitted on {', '.join(fit_names)}: {len(train)} notes, "
          f"{sum(r.label for r in train)} holding an answer")
    print(f"INTERCEPT = {fitted[0]:.2f}")
    for name, weight in zip(FEATURES, fitted[1:], strict=True):
        print(f"    {name!r}: {weight:.2f},")
    now = [INTERCEPT, *WEIGHTS.values()]
    print(f"\nlabelled notes in {args.budget:,} characters, ranked by chance per character")
    print(f"{'conversations':<28} {'notes':>6} {'labelled':>8} {'fitted':>7} {'now':>5}")
    for label, names in (("fit: " + ",".join(fit_names), fit_names),
                         ("check: " + ",".join(check_names), check_names)):
        if not names:
            continue
        mine = [r for n in names for r in rows[n]]
        print(f"{label:<28} {len(mine):>6} {sum(r.label for r in mine):>8} "
              f"{held(mine, fitted, args.budget):>7} {held(mine, now, args.budget):>5}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
