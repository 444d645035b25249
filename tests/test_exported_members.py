"""``mnemo.__all__`` is sorted, complete and honest."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import mnemo


def _isort_key(name: str) -> tuple[int, str]:
    # Ruff's order for __all__: CONSTANTS, then Classes, then functions.
    kind = 0 if name.isupper() else 1 if name[0].isupper() else 2
    return kind, name


def test_all_is_sorted_and_unique() -> None:
    assert mnemo.__all__ == sorted(set(mnemo.__all__), key=_isort_key)


def test_every_exported_name_exists_and_is_public() -> None:
    for name in mnemo.__all__:
        member = getattr(mnemo, name)
        module = getattr(member, "__module__", None)
        if module is not None:  # classes and functions say where they live
            assert module.startswith("mnemo."), (name, module)


def test_every_public_attribute_is_exported() -> None:
    public = {name for name in vars(mnemo) if not name.startswith("_")}
    subpackages = {name for name in public
                   if isinstance(getattr(mnemo, name), types.ModuleType)}
    assert public - subpackages == set(mnemo.__all__)


def test_import_reads_nothing_from_the_environment(tmp_path: object) -> None:
    # Importing must not touch $MNEMO_HOME: point it at a path that cannot exist.
    code = ("import os; os.environ['MNEMO_HOME']='/proc/nonexistent/x'; import mnemo; "
            "import mnemo.cli.main; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.stdout.strip() == "ok", done.stderr
    importlib.reload(mnemo)
