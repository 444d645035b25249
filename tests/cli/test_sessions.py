"""``mnemo sessions`` driven through the real entry point."""

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
from mnemo.sessions import SessionStore

TRANSCRIPT: list[dict[str, object]] = [
    {"role": "system", "content": "You are a build assistant."},
    {"role": "user", "content": "The nightly build fails with ENOSPC on runner-7"},
    {"role": "assistant", "content": None, "tool_calls": [{
        "id": "c1", "type": "function",
        "function": {"name": "run", "arguments": '{"cmd": "df -h /var/lib/docker"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "/dev/sda1 100% /var/lib/docker"},
    {"role": "assistant", "content": "The docker volume is full; prune old images."},
]


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


def _write_jsonl(path: Path, messages: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(m) for m in messages) + "\n", encoding="utf-8")
    return path


def test_import_then_search_then_show(tmp_path: Path, mnemo_home: Home) -> None:
    file = _write_jsonl(tmp_path / "nightly.jsonl", TRANSCRIPT)
    code, out, err = run("sessions", "import", str(file), "--title", "Nightly build")
    assert code == 0, err
    assert "imported 5 messages into session" in out
    sid = out.strip().split()[-1]

    code, out, _ = run("sessions", "search", "enospc", "--json")
    assert code == 0
    hits = json.loads(out)
    assert hits[0]["session_id"] == sid and hits[0]["role"] == "user"
    for key in ("session_id", "message_id", "role", "content", "snippet", "score"):
        assert key in hits[0]
    assert "ENOSPC" in hits[0]["content"] and ">>ENOSPC<<" in hits[0]["snippet"]

    code, out, _ = run("sessions", "search", "/var/lib/docker", "--limit", "1", "--json")
    assert len(json.loads(out)) == 1 and json.loads(out)[0]["role"] in ("tool", "assistant")

    code, out, _ = run("sessions", "search", "docker", "volume")
    assert code == 0 and sid in out and ">>volume<<" in out

    code, out, _ = run("sessions", "list")
    assert code == 0 and sid in out and "Nightly build" in out and "5 msgs" in out

    code, out, _ = run("sessions", "show", sid)
    assert code == 0
    assert "Nightly build" in out and "→ run(" in out and "prune old images" in out

    code, out, _ = run("sessions", "show", sid, "--json")
    shown = json.loads(out)
    assert shown["system_prompt"] == "You are a build assistant."
    assert len(shown["messages"]) == 5


def test_search_finds_archived_messages(mnemo_home: Home) -> None:
    with SessionStore() as store:
        sid = store.create_session(title="compacted")
        ids = store.append_messages(sid, TRANSCRIPT)
        store.archive_and_replace(sid, ids[1:4], [{"role": "user", "content": "summary"}])
    code, out, _ = run("sessions", "search", "runner-7")
    assert code == 0 and "[archived]" in out
    code, out, _ = run("sessions", "show", sid, "--active-only", "--json")
    assert [m["content"] for m in json.loads(out)["messages"]][:2] == [
        "You are a build assistant.", "summary"]


def test_malformed_import_is_one_line_and_imports_nothing(tmp_path: Path) -> None:
    file = tmp_path / "broken.jsonl"
    file.write_text(json.dumps(TRANSCRIPT[1]) + "\n" + '{"role": "user", "content": \n')
    code, out, err = run("sessions", "import", str(file))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: broken.jsonl line 2")
    code, out, _ = run("sessions", "list", "--json")
    assert json.loads(out) == []


def test_errors_and_empty_states(tmp_path: Path) -> None:
    code, out, _ = run("sessions", "list")
    assert code == 0 and "No sessions yet" in out
    code, out, _ = run("sessions", "search", "anything")
    assert code == 0 and "No matches" in out
    code, _, err = run("sessions", "show", "ghost")
    assert code == 2 and "no session 'ghost'" in err
    code, _, err = run("sessions", "import", str(tmp_path / "nope.json"))
    assert code == 2 and "does not exist" in err
    for hostile in ('"', "AND (", "🎉", "col:*"):
        code, _, err = run("sessions", "search", "--", hostile)
        assert code == 0, err
    for blank in ("", "  "):
        code, _, err = run("sessions", "search", blank)
        assert code == 2 and err.startswith("error: the query is empty") and err.count("\n") == 1


def test_delete_asks_unless_yes(tmp_path: Path) -> None:
    with SessionStore() as store:
        sid = store.create_session()
        store.append_message(sid, {"role": "user", "content": "bye"})
    code, _, _ = run("sessions", "delete", sid, input="n\n")
    assert code == 1
    code, out, _ = run("sessions", "delete", sid, "--yes")
    assert code == 0 and "1 messages" in out
    with SessionStore() as store:
        assert store.get_session(sid) is None


def test_help_texts() -> None:
    for command in ("list", "show", "search", "import", "delete"):
        code, out, _ = run("sessions", command, "--help")
        assert code == 0 and "Usage:" in out


@pytest.mark.slow
def test_installed_console_script_imports_and_searches(tmp_path: Path, mnemo_home: Home) -> None:
    script = Path(sys.executable).with_name("mnemo")
    file = _write_jsonl(tmp_path / "t.jsonl", TRANSCRIPT)
    env = {**os.environ, "MNEMO_HOME": str(mnemo_home.root)}
    done = subprocess.run([str(script), "sessions", "import", str(file)], env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([str(script), "sessions", "search", "prune images", "--json"],
                          env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)
    assert hits and hits[0]["content"] == "The docker volume is full; prune old images."
    bad = tmp_path / "bad.json"
    bad.write_text('[{"role": "user", "content": "x"}, {"role": 5}]')
    done = subprocess.run([str(script), "sessions", "import", str(bad)], env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert "index 1" in done.stderr and "Traceback" not in done.stderr


def test_a_transcript_with_a_broken_escape_imports_and_shows(
    tmp_path: Path, mnemo_home: Home
) -> None:
    """A lone surrogate (a ``\\ud800`` escape, a non-UTF-8 file name in tool output) is
    stored as U+FFFD instead of crashing the import."""
    file = tmp_path / "broken.jsonl"
    file.write_text('{"role": "user", "content": "list the folder"}\n'
                    '{"role": "tool", "tool_call_id": "c", "content": "bad\\udcffname.txt"}\n',
                    encoding="utf-8")
    code, out, err = run("sessions", "import", str(file))
    assert code == 0, err
    sid = out.strip().split()[-1]
    code, out, err = run("sessions", "show", sid, "--json")
    assert code == 0, err
    assert "bad\ufffdname.txt" in json.dumps(json.loads(out), ensure_ascii=False)
