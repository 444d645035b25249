"""Hostile configs and broken memory files through the real CLI (issue 14, classes 5–6;
issue 11, item 4): real files in a real home, ``mnemo`` run as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mnemo.home import Home
from mnemo.memory.entries import ENTRY_DELIMITER, parse_entries

MNEMO = str(Path(sys.executable).with_name("mnemo"))
KEY = "sk-proj-Zx81Qa7Lm3Rt9Vb2Kc5Np0Ws"


def mnemo(home: Home, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MNEMO_HOME": str(home.root)}
    return subprocess.run([MNEMO, *args], capture_output=True, text=True, env=env,
                          timeout=timeout, check=False, cwd=home.root)


def doctor(home: Home) -> dict[str, dict[str, str]]:
    done = mnemo(home, "doctor", "--skip-model", "--json")
    return {c["name"]: c for c in json.loads(done.stdout)}


# -- config (class 5) ----------------------------------------------------------------------

BOMB = (
    "memory:\n  providers:\n    foo:\n      a: &a [lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(f"      {n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n"
              for p, n in zip("abcdefgh", "bcdefghi", strict=True)))


def test_a_yaml_alias_bomb_is_refused_in_one_line(mnemo_home: Home) -> None:
    mnemo_home.config_file.write_text(BOMB, encoding="utf-8")
    done = mnemo(mnemo_home, "memory", "show", timeout=30)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "alias bomb" in done.stderr
    check = doctor(mnemo_home)["config.yaml"]
    assert check["verdict"] == "fail" and "alias" in check["detail"]


@pytest.mark.parametrize("text", ["a: " + "[" * 5000 + "]" * 5000 + "\n",
                                  "a: &x [1]\n" + "".join(f"k{i}: *x\n" for i in range(200))])
def test_deep_nesting_and_many_aliases_are_refused(mnemo_home: Home, text: str) -> None:
    mnemo_home.config_file.write_text(text, encoding="utf-8")
    done = mnemo(mnemo_home, "memory", "show")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "refused" in done.stderr and "Traceback" not in done.stderr


def test_config_errors_quote_short_excerpts_and_never_keys(mnemo_home: Home) -> None:
    mnemo_home.config_file.write_text(f"model:\n  timeout: {KEY}\n", encoding="utf-8")
    done = mnemo(mnemo_home, "memory", "show")
    assert done.returncode == 2 and KEY not in done.stderr
    assert "looks like a secret key (not shown)" in done.stderr
    long_value = "x" * 5000
    mnemo_home.config_file.write_text(f"model:\n  timeout: {long_value}\n", encoding="utf-8")
    done = mnemo(mnemo_home, "memory", "show")
    assert done.returncode == 2 and len(done.stderr) < 400 and "5,000 chars" in done.stderr
    mnemo_home.config_file.write_text(f"platform: {KEY}\n", encoding="utf-8")
    done = mnemo(mnemo_home, "memory", "show")
    assert done.returncode == 2 and KEY not in done.stderr and "platform" in done.stderr


def test_a_key_in_base_url_is_masked_everywhere(mnemo_home: Home) -> None:
    url = f"http://bob:{KEY}@127.0.0.1:9/v1?api_key=hunter2hunter2&x=1"
    mnemo_home.config_file.write_text(
        f'model:\n  name: m\n  base_url: "{url}"\n  max_retries: 0\n  timeout: 5\n',
        encoding="utf-8")
    outputs = [mnemo(mnemo_home, *args) for args in
               (["chat", "--once", "hi"], ["doctor"], ["models"], ["models", "--json"])]
    assert outputs[0].returncode == 1 and "cannot reach http://bob:***@127.0.0.1" in \
        outputs[0].stderr
    assert "api_key=***" in outputs[2].stdout
    log = mnemo_home.log_file.read_text(encoding="utf-8") if mnemo_home.log_file.exists() else ""
    for text in [log, *(o.stdout + o.stderr for o in outputs)]:
        assert KEY not in text and "hunter2" not in text


def test_doctor_names_line_and_column_of_a_yaml_syntax_error(mnemo_home: Home) -> None:
    mnemo_home.config_file.write_text("model:\n  name: x\n   bad: [1\n", encoding="utf-8")
    check = doctor(mnemo_home)["config.yaml"]
    assert check["verdict"] == "fail" and "line 3, column" in check["detail"]
    assert check["fix"].startswith("fix the YAML syntax at line 3, column")
    mnemo_home.config_file.write_text("model:\n  nme: x\n", encoding="utf-8")
    check = doctor(mnemo_home)["config.yaml"]
    assert check["fix"].startswith("fix model.nme in")


# -- memory files (class 6) ----------------------------------------------------------------


def test_an_oversized_memory_file_loads_what_fits_and_says_so(mnemo_home: Home) -> None:
    mnemo_home.memories_dir.mkdir(parents=True)
    entries = [f"fact {i}: " + "detail " * 19 + "end" for i in range(400)]  # ~60k chars
    path = mnemo_home.memories_dir / "USER.md"
    path.write_text(ENTRY_DELIMITER.join(entries), encoding="utf-8")
    before = path.read_bytes()
    done = mnemo(mnemo_home, "prompt")
    assert done.returncode == 0, done.stderr
    assert entries[0] in done.stdout and entries[-1] not in done.stdout
    assert "entries left out: USER.md is over its limit" in done.stdout
    check = doctor(mnemo_home)["USER.md"]
    assert check["verdict"] == "warn" and "over its 1,375-char limit" in check["detail"]
    assert "nothing was deleted" in check["detail"] and "mnemo memory edit" in check["fix"]
    assert path.read_bytes() == before


def test_chat_warns_about_an_oversized_file(mnemo_home: Home) -> None:
    from mnemo.config import load_config
    from mnemo.memory import MemoryStore

    mnemo_home.memories_dir.mkdir(parents=True)
    (mnemo_home.memories_dir / "MEMORY.md").write_text("x" * 50_000, encoding="utf-8")
    store = MemoryStore.from_config(load_config(mnemo_home), mnemo_home)
    block = store.format_for_system_prompt("memory") or ""
    assert "x" * 3000 not in block and len(block) < 1000
    assert store.notices and "left out of the prompt" in store.notices[0]


def test_a_symlinked_memory_file_is_followed_and_stays_a_link(mnemo_home: Home,
                                                              tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "USER.md"
    real.write_text("Name: Ana", encoding="utf-8")
    mnemo_home.memories_dir.mkdir(parents=True)
    link = mnemo_home.memories_dir / "USER.md"
    link.symlink_to(real)
    done = mnemo(mnemo_home, "memory", "add", "-t", "user", "Likes short answers")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and link.resolve() == real
    assert parse_entries(real.read_text(encoding="utf-8")) == ["Name: Ana",
                                                                "Likes short answers"]
    assert "symlink to" in doctor(mnemo_home)["USER.md"]["detail"]


def test_a_symlink_into_a_missing_folder_is_refused(mnemo_home: Home, tmp_path: Path) -> None:
    mnemo_home.memories_dir.mkdir(parents=True)
    link = mnemo_home.memories_dir / "MEMORY.md"
    link.symlink_to(tmp_path / "gone" / "MEMORY.md")
    done = mnemo(mnemo_home, "memory", "add", "a note")
    assert done.returncode == 1 and "whose folder does not exist" in done.stderr
    assert link.is_symlink()
    loop = mnemo_home.memories_dir / "USER.md"
    loop.symlink_to(loop)
    done = mnemo(mnemo_home, "memory", "add", "-t", "user", "a note")
    assert done.returncode == 1 and "symlink" in done.stderr and loop.is_symlink()


def test_a_non_utf8_file_keeps_the_agent_usable(mnemo_home: Home) -> None:
    mnemo_home.memories_dir.mkdir(parents=True)
    path = mnemo_home.memories_dir / "USER.md"
    path.write_bytes(b"Name: Jos\xe9\n\xa7\nLikes tea")
    done = mnemo(mnemo_home, "prompt")
    assert done.returncode == 0 and "Likes tea" in done.stdout
    check = doctor(mnemo_home)["USER.md"]
    assert check["verdict"] == "fail" and "not valid UTF-8 (byte 9, line 1)" in check["detail"]
    assert "iconv" in check["fix"] and "chmod" not in check["fix"]
    assert path.read_bytes() == b"Name: Jos\xe9\n\xa7\nLikes tea"


# -- CLI errors for people (issue 11, item 4) ------------------------------------------------


def test_memory_cli_errors_name_commands_not_tool_actions(mnemo_home: Home) -> None:
    assert mnemo(mnemo_home, "memory", "add", "x" * 1500).returncode == 0
    over = mnemo(mnemo_home, "memory", "add", "y" * 1500)
    empty = mnemo(mnemo_home, "memory", "replace", "xxx", " ")
    for done in (over, empty):
        assert done.returncode == 1
        assert "batch" not in done.stderr and "action=" not in done.stderr
    assert "mnemo memory edit" in over.stderr and "mnemo memory remove" in empty.stderr


def test_skills_cli_errors_have_no_prompt_markup(mnemo_home: Home) -> None:
    for args in (["skills", "view", ""], ["skills", "view", "nope"]):
        done = mnemo(mnemo_home, *args)
        assert done.returncode == 2 and "<available_skills>" not in done.stderr
        assert "carry on" not in done.stderr
