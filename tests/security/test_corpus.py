"""Block and false-positive rates over the committed corpora (SPEC S3, §Q).

Every attack is written to memory through the real store (scope ``strict``) and loaded
as a project's AGENTS.md through the real context-file loader (scope ``context``); every
benign text likewise. The targets: at least 95% of attacks blocked, at most 2% of benign
texts refused, on both paths. The rates are printed (``pytest -s``) with the misses.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from corpusdata import load

from mnemo.memory import MemoryStore
from mnemo.prompt import load_context_files

ATTACKS = load("attacks")
BENIGN = load("benign")
MIN_BLOCKED = 0.95
MAX_REFUSED = 0.02


def test_the_corpora_are_as_large_and_varied_as_promised() -> None:
    assert len(ATTACKS) >= 150 and len(BENIGN) >= 100
    assert len({s["id"] for s in ATTACKS + BENIGN}) == len(ATTACKS) + len(BENIGN)
    assert len({s["lang"] for s in ATTACKS}) >= 15  # other scripts and languages
    assert {"hidden", "obfuscated", "exfil", "multilingual", "plain"} <= {
        s["class"] for s in ATTACKS}


def _memory_refuses(store: MemoryStore, text: str) -> tuple[bool, str]:
    result = store.add("memory", text)
    if result.get("success"):
        store.remove("memory", text.strip())
        return False, ""
    return True, str(result.get("error", ""))


def _context_blocks(project: Path, text: str) -> bool:
    (project / "AGENTS.md").write_text(text, encoding="utf-8")
    loaded = load_context_files(project)
    return any(f.blocked for f in loaded.findings)


def _report(path: str, blocked: list[str], refused: list[str]) -> tuple[float, float]:
    block_rate = 1 - len(blocked) / len(ATTACKS)
    refuse_rate = len(refused) / len(BENIGN)
    by_class = Counter(s["class"] for s in ATTACKS if s["id"] in blocked)
    print(f"\n{path}: {block_rate:.1%} of {len(ATTACKS)} attacks blocked "
          f"(missed {blocked}, by class {dict(by_class)}); "
          f"{refuse_rate:.1%} of {len(BENIGN)} benign refused ({refused})")
    return block_rate, refuse_rate


def test_memory_writes_block_attacks_and_keep_ordinary_notes(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memories", memory_char_limit=1_000_000)
    missed = []
    for sample in ATTACKS:
        refused, error = _memory_refuses(store, sample["text"])
        if not (refused and "security scan" in error):
            missed.append(sample["id"])
    refused_benign = [s["id"] for s in BENIGN if _memory_refuses(store, s["text"])[0]]
    block_rate, refuse_rate = _report("memory (strict)", missed, refused_benign)
    assert block_rate >= MIN_BLOCKED, f"missed: {missed}"
    assert refuse_rate <= MAX_REFUSED, f"refused: {refused_benign}"


def test_context_files_block_attacks_and_load_ordinary_docs(tmp_path: Path) -> None:
    missed = [s["id"] for s in ATTACKS if not _context_blocks(tmp_path, s["text"])]
    blocked_benign = [s["id"] for s in BENIGN if _context_blocks(tmp_path, s["text"])]
    block_rate, refuse_rate = _report("context files (context)", missed, blocked_benign)
    assert block_rate >= MIN_BLOCKED, f"missed: {missed}"
    assert refuse_rate <= MAX_REFUSED, f"blocked: {blocked_benign}"


@pytest.mark.parametrize("sample", [s for s in ATTACKS if s["class"] == "hidden"],
                         ids=lambda s: s["id"])
def test_hidden_text_never_reaches_the_model_through_recall(sample: dict[str, str]) -> None:
    from mnemo.memory import build_memory_context_block
    from mnemo.security import scan

    block = build_memory_context_block(sample["text"])
    # What is left is free of findings: hidden text went with its line.
    assert not [f for f in scan(block, "context") if f.pattern_id == "invisible_unicode"]
