"""C1 and C2: the engine interface, and choosing an engine by name.

Plugin folders are real folders in the test's own ``$MNEMO_HOME``; entry points are
replaced by fakes where a broken one is needed.
"""

from __future__ import annotations

import json
import sys
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

import mnemo.plugins as plugins_module
from mnemo.config import MnemoConfig
from mnemo.context import (
    ContextCompressor,
    ContextEngine,
    available_engines,
    create_engine,
    default_context_length,
    load_engine_class,
)
from mnemo.context import registry as registry_module
from mnemo.context.engine import usage_tokens
from mnemo.errors import ConfigError
from mnemo.home import Home

_PLUGIN = textwrap.dedent('''
    from mnemo.context import ContextEngine
    from .helper import GREETING

    class KeepEverything(ContextEngine):
        """Never compresses: a test double."""

        greeting = GREETING

        @property
        def name(self):
            return "keeper"

        def update_from_response(self, usage):
            self.last_prompt_tokens = usage.get("prompt_tokens", 0)

        def should_compress(self, prompt_tokens=None):
            return False

        def compress(self, messages, current_tokens=None, focus_topic=None):
            return [dict(m) for m in messages]

    ENGINE = KeepEverything
''')


def _plugin(home: Home, name: str, body: str, helper: str = "GREETING = 'hi'\n") -> Path:
    folder = home.plugins_dir / "context_engine" / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(body)
    (folder / "helper.py").write_text(helper)
    return folder


def _config(engine: str, **context: Any) -> MnemoConfig:
    return MnemoConfig.model_validate({"context": {"engine": engine, **context}})


def test_listing_imports_nothing() -> None:
    sys.modules.pop("mnemo.context.lcm", None)
    engines = available_engines()
    assert {"compressor", "lcm"} <= set(engines)
    assert engines["lcm"].target == "mnemo.context.lcm:LosslessContextEngine"
    assert "mnemo.context.lcm" not in sys.modules


def test_default_config_builds_the_compressor_from_config(mnemo_home: Home) -> None:
    config = MnemoConfig.model_validate({
        "model": {"name": "gpt-x", "context_length": 64_000},
        "auxiliary": {"context_length": 16_000},
        "context": {"threshold_percent": 0.7, "protect_first_n": 5, "quiet_mode": True},
    })
    engine = create_engine(config, home=mnemo_home)
    assert isinstance(engine, ContextCompressor)
    assert engine.context_length == 64_000 and engine.model == "gpt-x"
    assert engine.threshold_tokens == 44_800 and engine.protect_first_n == 5
    assert engine.summary_context_length == 16_000 and engine.quiet is True
    assert engine.summarizer is None
    summarize = json.dumps
    other = create_engine(config, home=mnemo_home, summarizer=summarize, context_length=9_000,
                          model="m2")
    assert isinstance(other, ContextCompressor)
    assert (other.context_length, other.model, other.summarizer) == (9_000, "m2", summarize)
    assert isinstance(create_engine(_config("  "), home=mnemo_home), ContextCompressor)


def test_unknown_engine_lists_the_engines(mnemo_home: Home) -> None:
    with pytest.raises(ConfigError) as info:
        create_engine(_config("nope"), home=mnemo_home)
    message = str(info.value)
    assert "unknown context engine 'nope'" in message
    assert "compressor" in message and "lcm" in message
    assert info.value.key == "context.engine"


def test_a_broken_entry_point_is_a_clear_error(monkeypatch: pytest.MonkeyPatch,
                                               mnemo_home: Home) -> None:
    fakes = [EntryPoint("broken", "mnemo_no_such_module:Engine", registry_module.ENTRY_POINT_GROUP),
             EntryPoint("notengine", "json:dumps", registry_module.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(plugins_module, "entry_points", lambda group: fakes)
    assert set(available_engines(mnemo_home)) == {"broken", "compressor", "lcm", "notengine"}
    with pytest.raises(ConfigError, match=r"'broken' \(mnemo_no_such_module:Engine\) could not "
                                          r"be loaded \(ModuleNotFoundError"):
        load_engine_class("broken", home=mnemo_home)
    with pytest.raises(ConfigError, match="not a ContextEngine subclass"):
        load_engine_class("notengine", home=mnemo_home)
    # The built-in engines do not depend on package metadata.
    assert load_engine_class("compressor", home=mnemo_home) is ContextCompressor
    from mnemo.context.lcm import LosslessContextEngine
    assert load_engine_class("lcm", home=mnemo_home) is LosslessContextEngine


def test_folder_plugin_is_loaded_with_its_own_modules(mnemo_home: Home) -> None:
    _plugin(mnemo_home, "keeper", _PLUGIN)
    assert available_engines(mnemo_home)["keeper"].source == "plugin folder"
    engine = create_engine(_config("keeper"), home=mnemo_home, context_length=5_000)
    assert engine.name == "keeper" and engine.context_length == 5_000
    assert engine.greeting == "hi"  # type: ignore[attr-defined]
    messages = [{"role": "user", "content": "x"}]
    assert engine.compress(messages) == messages  # type: ignore[arg-type]
    # The default optional hooks.
    assert engine.get_tool_schemas() == []
    assert "no tool" in json.loads(engine.handle_tool_call("grep", {}))["error"]
    assert engine.get_status()["engine"] == "keeper"
    assert engine.should_compress_preflight(messages) is False  # type: ignore[arg-type]


def test_folder_plugin_single_class_without_engine_constant(mnemo_home: Home) -> None:
    _plugin(mnemo_home, "solo", _PLUGIN.replace("ENGINE = KeepEverything", ""))
    assert load_engine_class("solo", home=mnemo_home).__name__ == "KeepEverything"


@pytest.mark.parametrize(("body", "message"), [
    ("raise RuntimeError('plugin bug')", "could not be loaded.*RuntimeError: plugin bug"),
    ("def (:\n", "could not be loaded.*SyntaxError"),
    ("X = 1\n", "defines 0 ContextEngine classes; set ENGINE"),
    ("ENGINE = 42\n", "not a ContextEngine subclass"),
    ("from mnemo.context import ContextEngine\nclass Half(ContextEngine):\n    pass\n"
     "ENGINE = Half\n", "does not implement compress"),
])
def test_broken_folder_plugins_name_themselves(mnemo_home: Home, body: str,
                                               message: str) -> None:
    _plugin(mnemo_home, "bad", body)
    with pytest.raises(ConfigError, match=message) as info:
        create_engine(_config("bad"), home=mnemo_home)
    assert "'bad'" in str(info.value)


def test_a_folder_cannot_shadow_an_installed_engine(mnemo_home: Home,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    _plugin(mnemo_home, "compressor", "raise RuntimeError('never imported')")
    assert load_engine_class("compressor", home=mnemo_home) is ContextCompressor
    assert "is ignored" in caplog.text


def test_default_context_length() -> None:
    assert default_context_length(MnemoConfig()) == 8_192  # the embedded local model
    named = MnemoConfig.model_validate({"model": {"name": "gpt-4o"}})
    assert default_context_length(named) == 128_000
    exact = MnemoConfig.model_validate({"model": {"name": "m", "context_length": 32_768}})
    assert default_context_length(exact) == 32_768


def test_usage_tokens_reads_both_api_shapes() -> None:
    assert usage_tokens({"prompt_tokens": 10, "completion_tokens": 2}) == (10, 2)
    assert usage_tokens({"input_tokens": 5, "cache_creation_input_tokens": 3,
                         "output_tokens": 1}) == (8, 1)
    assert usage_tokens(None) == (0, 0)
    assert usage_tokens({"prompt_tokens": "?"}) == (0, 0)


def test_minimal_engine_gets_default_hooks() -> None:
    class Tiny(ContextEngine):
        @property
        def name(self) -> str:
            return "tiny"

        def update_from_response(self, usage: Any) -> None:
            self.last_prompt_tokens = usage_tokens(usage)[0]

        def should_compress(self, prompt_tokens: int | None = None) -> bool:
            return False

        def compress(self, messages: Any, current_tokens: int | None = None,
                     focus_topic: str | None = None) -> list[Any]:
            return list(messages)

    engine = Tiny.from_config(MnemoConfig(), home=Home(), context_length=1_000, model="m")
    assert engine.context_length == 1_000
    engine.on_session_start("s1")
    engine.on_session_end("s1", [])
    engine.compression_count = 3
    engine.on_session_reset()
    assert engine.compression_count == 0 and engine.pre_compress_hook is None
