"""``mnemo compress FILE`` driven through the real entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mnemo.cli import compress as compress_module
from mnemo.cli.common import CliState
from mnemo.cli.main import cli
from mnemo.context import SUMMARY_PREFIX
from mnemo.home import Home


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def _transcript(turns: int = 30) -> list[dict]:
    messages: list[dict] = [{"role": "system", "content": "You are a coding agent."}]
    for t in range(turns):
        cid = f"call_{t}"
        messages += [
            {"role": "user", "content": f"Turn {t}: fix src/mod_{t}.py, and never touch CI."},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": cid, "type": "function",
                 "function": {"name": "read_file", "arguments": json.dumps(
                     {"path": f"src/mod_{t}.py"})}}]},
            {"role": "tool", "tool_call_id": cid, "content": "def f():\n    pass\n" * 80},
            {"role": "assistant", "content": f"Fixed src/mod_{t}.py."},
        ]
    return messages


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in _transcript()), encoding="utf-8")
    return path


def test_prints_before_and_after(jsonl: Path) -> None:
    original = jsonl.read_text(encoding="utf-8")
    code, out, err = run("compress", str(jsonl), "--context-length", "8000")
    assert code == 0, err
    first, second = out.splitlines()[:2]
    assert first.startswith(f"{jsonl}: 121 → ") and "tokens (context length 8,000)" in first
    assert second.startswith("summary: local summariser, ~")
    assert jsonl.read_text(encoding="utf-8") == original  # the input is never changed


def test_json_output_has_the_documented_keys(jsonl: Path) -> None:
    code, out, _ = run("compress", str(jsonl), "--context-length", "8000", "--json")
    assert code == 0
    data = json.loads(out)
    assert list(data) == ["messages_before", "messages_after", "tokens_before", "tokens_after",
                          "summary", "tokens_estimated", "fits", "truncated", "messages"]
    assert data["fits"] is True and data["truncated"] == 0
    assert data["messages_before"] == 121
    assert data["messages_after"] == len(data["messages"]) < 121
    assert data["tokens_after"] < data["tokens_before"]
    assert data["summary"].startswith("## Goal")
    assert any(str(m.get("content", "")).startswith(SUMMARY_PREFIX) for m in data["messages"])


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_out_writes_the_compressed_messages(jsonl: Path, tmp_path: Path, suffix: str) -> None:
    target = tmp_path / f"small{suffix}"
    code, out, _ = run("compress", str(jsonl), "--context-length", "8000", "--out",
                       str(target))
    assert code == 0 and f"wrote {target}" in out
    text = target.read_text(encoding="utf-8")
    messages = ([json.loads(line) for line in text.splitlines()] if suffix == ".jsonl"
                else json.loads(text))
    assert messages[0]["role"] == "system" and len(messages) < 121


def test_focus_reaches_the_summary(jsonl: Path) -> None:
    code, out, _ = run("compress", str(jsonl), "--context-length", "8000", "--focus",
                       "mod_5", "--json")
    assert code == 0
    assert "Focus of this compaction: mod_5" in json.loads(out)["summary"]


def test_config_settings_are_used(mnemo_home: Home, jsonl: Path) -> None:
    mnemo_home.config_file.write_text(
        "model:\n  name: test-model\n  context_length: 8000\ncontext:\n  protect_first_n: 9\n",
        encoding="utf-8")
    code, out, _ = run("compress", str(jsonl), "--json")
    assert code == 0
    messages = json.loads(out)["messages"]
    # The head is the system message + 9 messages; the summary comes right after it.
    assert [m["role"] for m in messages[1:10]] == [m["role"] for m in _transcript()[1:10]]
    assert messages[9] == _transcript()[9]
    assert str(messages[10]["content"]).startswith(SUMMARY_PREFIX)


def test_short_transcript_reports_why_nothing_happened(tmp_path: Path) -> None:
    path = tmp_path / "short.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    code, out, _ = run("compress", str(path))
    assert code == 0
    assert "1 → 1 messages" in out and "no summary: nothing to summarise" in out


def test_reads_standard_input() -> None:
    text = "".join(json.dumps(m) + "\n" for m in _transcript())
    code, out, _ = run("compress", "-", "--context-length", "8000", stdin=text)
    assert code == 0 and out.startswith("<stdin>: 121 → ")


@pytest.mark.parametrize(("content", "expected"), [
    ('{"role": "user", "content": "a"}\nnot json\n', "bad.jsonl line 2: not valid JSON"),
    ('[{"role": "user", "content": "a"}, {"role": "wizard"}]',
     "bad.jsonl message at index 1: role 'wizard'"),
])
def test_malformed_transcript_is_one_line_error(tmp_path: Path, content: str,
                                                expected: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    code, _, err = run("compress", str(path))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0]


def test_missing_and_undecodable_files(tmp_path: Path) -> None:
    code, _, err = run("compress", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "no such file" in err
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe\x00bad")
    code, _, err = run("compress", str(binary))
    assert code == 2 and "not UTF-8" in err and len(err.strip().splitlines()) == 1


def test_summariser_follows_the_config(mnemo_home: Home) -> None:
    state = CliState(home=mnemo_home)
    assert compress_module._summarizer_for(state) is None  # local model: local summariser
    mnemo_home.config_file.write_text("auxiliary: {base_url: 'http://127.0.0.1:9/v1'}\n",
                                      encoding="utf-8")
    assert callable(compress_module._summarizer_for(CliState(home=mnemo_home)))


def test_help_explains_the_options() -> None:
    code, out, _ = run("compress", "--help")
    assert code == 0
    for option in ("--context-length", "--focus", "--json", "--out"):
        assert option in out


def test_installed_console_script(jsonl: Path, mnemo_home: Home) -> None:
    script = Path(sys.executable).parent / "mnemo"
    env = {**os.environ, "MNEMO_HOME": str(mnemo_home.root)}
    done = subprocess.run([str(script), "compress", str(jsonl), "--context-length", "8000",
                           "--json"], capture_output=True, text=True, env=env, check=False,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["messages_before"] == 121


def _pastes(size: int) -> list[dict]:
    log = "\n".join(f"2026-11-30 15:23:{i % 60:02d},123 INFO id=0x{i:08x} took {i} ms"
                    for i in range(size // 50))
    return [{"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "look at this\n" + log},
            {"role": "assistant", "content": "I see."},
            {"role": "user", "content": "and this\n" + log}]


def test_a_result_over_the_context_length_is_cut_to_fit(tmp_path: Path) -> None:
    """C19: nothing to summarise (two pastes in head and tail), so the pastes are cut."""
    path = tmp_path / "pastes.json"
    path.write_text(json.dumps(_pastes(100_000)), encoding="utf-8")
    code, out, err = run("compress", str(path), "--context-length", "4000", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["fits"] is True and data["truncated"] == 2
    assert data["tokens_estimated"] <= 4000
    kept = data["messages"][-1]["content"]
    assert kept.startswith("and this\n2026-11-30") and "characters cut here" in kept
    assert kept.endswith("ms")  # the tail of the paste is kept too


def test_a_result_that_cannot_fit_says_so_and_exits_non_zero(tmp_path: Path) -> None:
    path = tmp_path / "pastes.json"
    path.write_text(json.dumps(_pastes(20_000)), encoding="utf-8")
    code, _out, err = run("compress", str(path), "--context-length", "50")
    assert code == 1
    assert "still larger than the context length (50)" in err
    assert "raise --context-length" in err
