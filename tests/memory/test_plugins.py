"""Provider discovery (SPEC P4): entry points, plugin folders, selection by name."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from mnemo.cli.main import cli
from mnemo.config import MnemoConfig
from mnemo.errors import ConfigError, UsageError
from mnemo.home import Home
from mnemo.memory import MemoryStore
from mnemo.memory.plugins import create_memory_manager, installed_providers, load_provider

PROVIDER_SOURCE = textwrap.dedent("""
    from mnemo.memory import MemoryProvider

    class {cls}(MemoryProvider):
        name = "{name}"
        started = None

        def is_available(self):
            return {available}

        def initialize(self, session_id, **kwargs):
            type(self).started = (session_id, kwargs.get("settings"))

        def get_tool_schemas(self):
            return []

        def prefetch(self, query):
            return "{name} recalls " + query
""")


def make_folder_plugin(home: Home, name: str, available: bool = True) -> Path:
    folder = home.plugins_dir / "memory" / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(
        PROVIDER_SOURCE.format(cls="FolderProvider", name=name, available=available),
        encoding="utf-8")
    return folder


@pytest.fixture
def entry_point_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A tiny installed distribution with a mnemo.memory_providers entry point."""
    site = tmp_path / "site"
    pkg = site / "tinyprov"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        PROVIDER_SOURCE.format(cls="TinyProvider", name="tiny", available=True),
        encoding="utf-8")
    info = site / "tinyprov-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinyprov\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[mnemo.memory_providers]\ntiny = tinyprov:TinyProvider\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    yield "tiny"
    sys.modules.pop("tinyprov", None)


def test_builtin_recall_is_registered_through_the_entry_point(mnemo_home: Home) -> None:
    spec = installed_providers(mnemo_home)["recall"]
    assert spec.source == "entry point"


def test_folder_and_entry_point_providers_are_both_found(mnemo_home: Home,
                                                         entry_point_dist: str) -> None:
    make_folder_plugin(mnemo_home, "notes")
    found = installed_providers(mnemo_home)
    assert {"recall", "tiny", "notes"} <= set(found)
    assert found["notes"].source == "plugin folder"
    assert load_provider("tiny", mnemo_home).prefetch("x") == "tiny recalls x"
    assert load_provider("notes", mnemo_home).prefetch("y") == "notes recalls y"


def test_unknown_provider_lists_the_installed_ones(mnemo_home: Home) -> None:
    with pytest.raises(UsageError, match=r"unknown memory provider 'honcho'.*installed: recall"):
        load_provider("honcho", mnemo_home)


def test_broken_folder_plugin_is_a_clear_error(mnemo_home: Home) -> None:
    folder = mnemo_home.plugins_dir / "memory" / "broken"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"'broken' \(.*/plugins/memory/broken\) could not be "
                                         r"loaded \(RuntimeError: boom\)"):
        load_provider("broken", mnemo_home)
    # listing still works and names the problem
    code = CliRunner().invoke(cli, ["memory", "providers"])
    assert code.exit_code == 0 and "boom" in code.stdout


def test_config_selects_the_provider_and_passes_its_settings(mnemo_home: Home,
                                                             tmp_path: Path) -> None:
    make_folder_plugin(mnemo_home, "notes")
    config = MnemoConfig.model_validate(
        {"memory": {"provider": "notes", "providers": {"notes": {"depth": 3}}}})
    manager = create_memory_manager(config, store=MemoryStore(tmp_path), session_id="s9",
                                    home=mnemo_home)
    assert [p.name for p in manager.providers] == ["builtin", "notes"]
    started = type(manager.providers[1]).started  # type: ignore[attr-defined]
    assert started == ("s9", {"depth": 3})
    assert manager.prefetch_all("deploy") == "notes recalls deploy"


def test_unavailable_provider_is_skipped_with_a_warning(mnemo_home: Home, tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    make_folder_plugin(mnemo_home, "keyless", available=False)
    config = MnemoConfig.model_validate({"memory": {"provider": "keyless"}})
    manager = create_memory_manager(config, store=MemoryStore(tmp_path), session_id="s",
                                    home=mnemo_home)
    assert [p.name for p in manager.providers] == ["builtin"]
    assert "not available" in caplog.text


def test_cli_lists_providers_with_availability(mnemo_home: Home) -> None:
    make_folder_plugin(mnemo_home, "keyless", available=False)
    mnemo_home.config_file.write_text("memory: {provider: recall}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["memory", "providers"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert any(line.startswith("* recall") and "available" in line for line in lines)
    assert any("keyless" in line and "unavailable" in line for line in lines)


def test_unknown_selected_provider_is_an_error(mnemo_home: Home, tmp_path: Path) -> None:
    config = MnemoConfig.model_validate({"memory": {"provider": "nope"}})
    with pytest.raises(UsageError, match="installed: recall"):
        create_memory_manager(config, store=MemoryStore(tmp_path), session_id="s",
                              home=mnemo_home)


def test_a_typo_in_provider_settings_is_a_config_error(mnemo_home: Home,
                                                        tmp_path: Path) -> None:
    config = MnemoConfig.model_validate(
        {"memory": {"provider": "recall", "providers": {"recall": {"max_hit": 2}}}})
    with pytest.raises(ConfigError, match=r"memory\.providers\.recall: .*max_hits") as info:
        create_memory_manager(config, store=MemoryStore(tmp_path), session_id="s",
                              home=mnemo_home)
    assert info.value.key == "memory.providers.recall"


def test_providers_lists_a_selected_name_that_is_not_installed(mnemo_home: Home) -> None:
    mnemo_home.config_file.write_text("memory: {provider: honcho}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["memory", "providers"])
    assert result.exit_code == 0
    assert "memory.provider is 'honcho', which is not installed" in result.stdout
