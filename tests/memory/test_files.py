"""Memory files as users leave them (issue 14, class 6): symlinks, wrong encodings, giants."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemo.memory import MemoryStore
from mnemo.memory.entries import ENTRY_DELIMITER, parse_entries
from mnemo.memory.files import fit_entries, read_memory_file, write_path


def test_a_write_through_a_symlink_replaces_the_target_atomically(tmp_path: Path) -> None:
    elsewhere = tmp_path / "sync"
    elsewhere.mkdir()
    real = elsewhere / "MEMORY.md"
    real.write_text("first", encoding="utf-8")
    memories = tmp_path / "memories"
    memories.mkdir()
    (memories / "MEMORY.md").symlink_to(real)
    inode = real.stat().st_ino
    store = MemoryStore(memories)
    assert store.add("memory", "second")["success"] is True
    assert (memories / "MEMORY.md").is_symlink()
    assert parse_entries(real.read_text(encoding="utf-8")) == ["first", "second"]
    assert real.stat().st_ino != inode  # a new file renamed into place, not an in-place edit
    assert not list(elsewhere.glob(".mem_*"))  # no temp file left behind
    assert (elsewhere / "MEMORY.md.lock").exists()  # the lock sits with the real file


def test_a_dangling_link_into_an_existing_folder_is_created_there(tmp_path: Path) -> None:
    (tmp_path / "memories").mkdir()
    link = tmp_path / "memories" / "USER.md"
    link.symlink_to(tmp_path / "USER-real.md")
    assert write_path(link) == tmp_path / "USER-real.md"
    assert MemoryStore(tmp_path / "memories").add("user", "Name: Ana")["success"] is True
    assert link.is_symlink() and (tmp_path / "USER-real.md").read_text() == "Name: Ana"


def test_a_non_utf8_file_is_read_only_until_edited_and_the_edit_keeps_a_backup(
        tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    raw = b"Caf\xe9 opens at 8\n\xa7\nsecond"
    path.write_bytes(raw)
    read = read_memory_file(path)
    assert read.text.startswith("Caf\ufffd") and read.encoding_problem
    assert "(byte 3, line 1)" in read.encoding_problem
    store = MemoryStore(tmp_path)
    store.load_from_disk()
    assert store.notices and "not valid UTF-8" in store.notices[0]
    for result in (store.add("memory", "x"), store.remove("memory", "second"),
                   store.batch("memory", [{"action": "add", "content": "y"}])):
        assert result["success"] is False and "Nothing was written" in result["error"]
    assert path.read_bytes() == raw
    fixed = store.rewrite("memory", "Café opens at 8\n§\nsecond")
    assert fixed["success"] is True
    backups = list(tmp_path.glob("MEMORY.md.bak.*"))
    assert len(backups) == 1 and backups[0].read_bytes() == raw
    assert path.read_text(encoding="utf-8").startswith("Café")


@pytest.mark.parametrize("limit", [100, 500])
def test_fit_entries_keeps_file_order_and_the_limit(limit: int) -> None:
    entries = [f"e{i} " + "x" * (i * 7 % 90) for i in range(60)]
    kept, left = fit_entries(entries, limit)
    assert len(ENTRY_DELIMITER.join(kept)) <= limit
    assert sorted(kept + left, key=entries.index) == entries
    assert kept == [e for e in entries if e in kept]  # order kept
    assert left  # this file does not fit


def test_an_oversized_store_renders_a_bounded_block(tmp_path: Path) -> None:
    (tmp_path / "USER.md").write_text(ENTRY_DELIMITER.join(
        f"fact {i}" for i in range(20_000)), encoding="utf-8")
    store = MemoryStore(tmp_path, user_char_limit=200)
    block = store.format_for_system_prompt("user") or ""
    assert "fact 0" in block and "fact 19999" not in block and len(block) < 600
    assert "more entries left out: USER.md is over its limit" in block
    assert "nothing was deleted" in store.notices[0]
    assert len(parse_entries((tmp_path / "USER.md").read_text(encoding="utf-8"))) == 20_000
