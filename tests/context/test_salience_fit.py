"""``bench/salience_fit.py`` fits the weights of the conversation summary's salience: its
logistic regression recovers known weights from data drawn with them."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from salience_fit import FEATURES, Row, fit


def test_the_fit_recovers_the_weights_the_data_was_drawn_with() -> None:
    draw = random.Random(7)
    truth = [0.5] + [draw.uniform(-0.8, 0.8) for _ in FEATURES]
    rows = []
    for _ in range(6_000):
        x = tuple(draw.choice((0.0, 1.0)) if draw.random() < 0.5 else draw.uniform(0, 2)
                  for _ in FEATURES)
        logit = truth[0] + sum(w * v for w, v in zip(truth[1:], x, strict=True))
        label = int(draw.random() < 1 / (1 + math.exp(-logit)))
        rows.append(Row("synthetic", x, label, 60))
    fitted = fit(rows, strength=0.01)
    assert max(abs(f - t) for f, t in zip(fitted, truth, strict=True)) < 0.35
