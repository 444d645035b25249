"""Loading the committed attack and benign corpora (``tests/security/corpus/*.jsonl``).

Each line is one text with an ``id``, a ``class`` (what kind of attack, or what kind of
ordinary document) and a ``lang``. The corpora are data, shared by the rate test and
``bench/scanner_bench.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

CORPUS_DIR = Path(__file__).parent / "corpus"



def load(name: str) -> list[dict[str, str]]:
    """The samples of ``attacks`` or ``benign``, in file order."""
    path = CORPUS_DIR / f"{name}.jsonl"
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
