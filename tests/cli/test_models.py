"""``mnemo models``: which model is used, where it lives, and whether it answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mnemo.cli.main import cli
from mnemo.home import Home
from mnemo.llm import resolve as resolve_module
from support.fake_openai import FakeOpenAIServer, chat_reply, error_reply


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def write_config(home: Home, text: str) -> None:
    home.config_file.write_text(text, encoding="utf-8")


def test_endpoint_choice_is_shown_and_checked(mnemo_home: Home,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_API_KEY", "sk-test")
    with FakeOpenAIServer() as server:
        server.queue(chat_reply("ok", usage=(9, 1)))
        write_config(mnemo_home, f"model:\n  name: served\n  base_url: {server.base_url}\n"
                                 "  context_length: 32000\n")
        code, out, _ = run("models", "--check")
        assert code == 0, out
        assert "main model: served (openai)" in out
        assert server.base_url in out and "$MNEMO_API_KEY" in out and "32,000 tokens" in out
        assert "auxiliary model: served" in out and "[same as main]" in out
        assert "answers (" in out
        assert len(server.requests) == 1  # the same model is asked once, not per role
        assert server.requests[0].body["max_tokens"] == 8


def test_json_report_and_failed_check_exit_1(mnemo_home: Home) -> None:
    with FakeOpenAIServer() as server:
        server.queue(error_reply(401, "bad key"))
        write_config(mnemo_home, f"model:\n  base_url: {server.base_url}\n")
        code, out, _ = run("models", "--check", "--json")
    assert code == 1
    report = json.loads(out)
    assert report["main"]["kind"] == "endpoint"
    assert report["main"]["check"]["ok"] is False
    assert "refused the credentials" in report["main"]["check"]["error"]
    assert "sk-" not in out  # keys are never printed


def test_local_choice_without_starting_anything(mnemo_home: Home,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resolve_module, "local_runtime_installed", lambda: True)
    monkeypatch.setattr(resolve_module, "local_weights_installed", lambda: True)
    code, out, _ = run("models")
    assert code == 0
    assert "main model: qwen2.5-coder-0.5b-instruct (local)" in out
    assert str(mnemo_home.models_dir) in out and "assembled on first use" in out
    assert not mnemo_home.models_dir.exists()


def test_no_model_names_both_ways_and_exits_1(mnemo_home: Home,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resolve_module, "local_runtime_installed", lambda: False)
    code, out, _ = run("models")
    assert code == 1
    assert "main model: none" in out and 'pip install "mnemo[local]"' in out


def test_missing_key_is_reported(mnemo_home: Home) -> None:
    write_config(mnemo_home, "model:\n  name: gpt-4o-mini\n")
    code, out, _ = run("models")
    assert code == 1 and "no API key found" in out


def test_console_script_runs(mnemo_home: Home) -> None:
    exe = Path(sys.executable).with_name("mnemo")
    with FakeOpenAIServer() as server:
        write_config(mnemo_home, f"model:\n  name: served\n  base_url: {server.base_url}\n")
        done = subprocess.run([str(exe), "models", "--json"], capture_output=True, text=True,
                              timeout=60, check=False,
                              env={**os.environ, "MNEMO_HOME": str(mnemo_home.root)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["main"]["model"] == "served"
    assert "--check" in subprocess.run([str(exe), "models", "--help"], capture_output=True,
                                       text=True, timeout=60, check=False).stdout
