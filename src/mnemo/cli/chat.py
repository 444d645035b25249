"""``mnemo chat``: a terminal conversation with memory that lasts and a context that fits.

Interactive by default (line editing and history through readline); ``--once MESSAGE``
runs one turn and exits, for scripts and cron. This module only reads input, prints, and
turns slash commands into ``Agent`` calls; the agent does the work.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from mnemo.agent import Agent, Compaction, TurnResult, build_agent
from mnemo.cli.chat_stream import StreamView
from mnemo.cli.common import CliState, echo_json, pass_state
from mnemo.context.markers import CALL_FAILED, without_agent_notices
from mnemo.context.prepare import describe_status
from mnemo.errors import MnemoError, ProviderError, UsageError
from mnemo.memory import TARGETS
from mnemo.sessions.tool import session_search

__all__ = ["chat"]

HELP = """\
/compact [focus]   compact the conversation now (keep FOCUS in detail)
/new               end this session (saving memory first) and start a new one
/reset             end this session without the memory flush and start a new one
/memory            show what is in MEMORY.md and USER.md now
/context           what the model sees: prompt parts, tokens, compactions
/sessions QUERY    search past sessions
/help              this list
/exit              leave (Ctrl-D works too)"""


def _dim(text: str) -> str:
    return click.style(text, dim=True)


_view = StreamView()


def _on_event(event: str, details: dict[str, Any]) -> None:
    if event in ("tool", "compaction", "retry"):
        _view.break_line()
    if event == "retry":  # what was shown of the last reply is replaced by the next
        # Said of the text above, which stays on screen: by hand, a wrong answer (the
        # old interview day) followed by "asked the model again" read as one of two
        # answers, not as one set aside.
        click.echo(_dim(f"  ↻ the reply above is set aside ({details['why']}); asked the "
                        "model again:"), err=True)
    if event == "tool":
        action = details.get("arguments", {}).get("action")
        label = f"{details['name']}({action})" if action else str(details["name"])
        click.echo(_dim(f"  · {label}{_tool_mark(details)}"), err=True)
    elif event == "compaction":
        compaction: Compaction = details["compaction"]
        click.echo(_dim(f"  ⟳ {compaction.describe()}"), err=True)


def _tool_mark(details: dict[str, Any]) -> str:
    """How a tool call ended, after its name: nothing when it did what it was asked."""
    if details.get("refused"):  # a memory write grounding (M9) refused, in part or whole
        return " — saved in part (the rest refused)" if details.get("ok") else (
            " — refused: nothing saved")
    return "" if details.get("ok") else " — failed"


def _start(agent: Agent) -> None:
    """Start the session, then the model (saying so when it takes a while).

    The session first: a bad --resume id or provider setting fails at once, not after
    the local model has spent seconds loading.
    """
    prompt = agent.start()
    for notice in [*agent.notices, *agent.memory.notices]:
        click.echo(click.style(f"warning: {notice}", fg="yellow"), err=True)
    start = getattr(agent.client, "start", None)  # the local model starts a server
    if callable(start) and not getattr(agent.client, "running", False):
        assembles = getattr(agent.client, "needs_assembly", lambda: False)()
        click.echo(_dim("starting the local model (assembling the model file first, once)…"
                        if assembles else "starting the local model…"), err=True)
        start()
    for finding in prompt.findings:
        if finding.blocked:
            click.echo(click.style(
                f"BLOCKED {finding.file} line {finding.line}: {finding.pattern_id} — "
                f"{finding.excerpt} (not loaded; allow it with security.allow_patterns)",
                fg="yellow"), err=True)


def _open_agent(state: CliState, resume: str | None, platform: str | None,
                stream: bool) -> Agent:
    agent = build_agent(state.config, home=state.home, cwd=Path.cwd(), platform=platform,
                        resume_session_id=resume)
    agent.on_event = _on_event
    if stream:  # answers appear as they are generated (when the client can stream)
        agent.caller.on_text = _view.text
        agent.caller.on_progress = _view.progress
    return agent


def _show_answer(agent: Agent, result: TurnResult) -> None:
    """The answer: already on screen when it was streamed, printed whole otherwise — or
    when it is not what the last reply streamed: a notice in its place, after the reply
    was held back (a repeat) or shown whole and then judged no answer (by hand the
    embedded model's retold "How much is the van?" stood on screen as the answer, the
    notice that replaced it in the session unprinted)."""
    if agent.caller.streams and _view.printed:
        _view.end_turn()
        # (Not the reply itself again when the agent only trimmed it: a copied hint cut.)
        if result.text.strip() and (not agent.caller.partial_text.strip()
                                    or not without_agent_notices(result.text)):
            click.echo(result.text)
    elif result.text:
        click.echo(result.text)


def _answered(agent: Agent) -> bool:
    """The model answered at least once in the live session."""
    return any(m.get("role") == "assistant"
               and not str(m.get("content") or "").startswith(f"[{CALL_FAILED}")
               for m in agent.messages)


def _forget_unanswered(state: CliState, session_id: str | None, answered: bool) -> None:
    """Delete a session in which the model never answered (it failed to start, or every
    turn failed): a failed first turn must not leave an empty session in the list."""
    if session_id is None or answered:
        return
    from mnemo.sessions import SessionStore

    with SessionStore(state.home.state_db) as store:
        store.delete_session(session_id)


def _last_session(state: CliState) -> str:
    from mnemo.storage.factory import open_session_store

    with open_session_store(state.config, state.home) as store:
        recent = store.recent_sessions(1)
    if not recent:
        raise MnemoError("there is no earlier session to continue; start one with `mnemo chat`")
    return recent[0].id


@click.command()
@click.option("--once", "message", metavar="MESSAGE",
              help="Run one turn with MESSAGE, print the answer and exit.")
@click.option("--json", "as_json", is_flag=True, help="With --once: print the turn as JSON.")
@click.option("--resume", metavar="SESSION_ID", help="Continue a stored session.")
@click.option("--continue", "continue_last", is_flag=True,
              help="Continue the most recent session.")
@click.option("--platform", help="Platform whose conventions the prompt uses (default: config).")
@click.option("--no-stream", is_flag=True,
              help="Print each answer whole when it is complete, not as it is generated.")
@pass_state
def chat(state: CliState, message: str | None, as_json: bool, resume: str | None,
         continue_last: bool, platform: str | None, no_stream: bool) -> None:
    """Talk to the configured model (or the embedded local model) with lasting memory.

    Type /help in the conversation for the slash commands. The conversation is stored in
    state.db; `mnemo sessions list` shows it later, `--resume ID` continues it.
    """
    if as_json and message is None:
        raise UsageError("--json goes with --once MESSAGE (the interactive chat prints text)")
    if message is not None and not message.strip():
        raise UsageError("--once needs a message, and this one is empty: "
                         "mnemo chat --once \"What did we decide yesterday?\"")
    if continue_last and resume:
        raise UsageError("use either --continue (the latest session) or --resume ID, not both")
    if continue_last:
        resume = _last_session(state)
    agent = _open_agent(state, resume, platform, stream=not (no_stream or as_json))
    session_id: str | None = None
    try:
        _start(agent)
        session_id = agent.session_id
        if message is not None:
            _once(agent, message, as_json)
        else:
            _interactive(state, agent)
    finally:
        session_id, answered = agent.session_id or session_id, _answered(agent)
        with contextlib.suppress(MnemoError):
            agent.close()
        if resume is None:  # a resumed session was answered before
            _forget_unanswered(state, session_id, answered)


def _once(agent: Agent, message: str, as_json: bool) -> None:
    _view.start_turn()
    try:
        result = agent.run_turn(message)
    finally:
        _view.break_line()
    if as_json:
        echo_json({
            "session_id": agent.session_id,
            "text": result.text,
            "model": agent.client.model,
            "model_calls": result.model_calls,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "tools": [run.name for run in result.tool_runs],
            "compactions": [c.describe() for c in result.compactions],
            "status": agent.status(),
        })
        return
    _show_answer(agent, result)
    click.echo(_dim(f"[{agent.status_line()}]"), err=True)


def _setup_readline(state: CliState) -> Callable[[], None]:
    """Line editing and a history file; returns the function that saves the history."""
    try:
        import readline
    except ImportError:  # pragma: no cover - Windows without pyreadline
        return lambda: None
    history = state.home.root / ".chat_history"
    with contextlib.suppress(OSError):
        readline.read_history_file(history)
    readline.set_history_length(1000)

    def save() -> None:
        with contextlib.suppress(OSError):
            readline.write_history_file(history)

    return save


def _interactive(state: CliState, agent: Agent) -> None:
    save_history = _setup_readline(state)
    status = agent.status()
    click.echo(f"mnemo chat — model {status['model']}, session {status['session_id']}. "
               "Type /help for commands, /exit to leave.")
    try:
        while True:
            try:
                line = input("you> ").strip()
            except EOFError:
                click.echo()
                break
            except KeyboardInterrupt:
                click.echo()
                continue
            if not line:
                continue
            if line.startswith("/"):
                if not _command(state, agent, line):
                    break
                continue
            _turn(agent, line)
    finally:
        save_history()
        if agent.messages:
            click.echo(_dim("ending the session…"), err=True)


def _turn(agent: Agent, line: str) -> None:
    _view.start_turn()
    try:
        result: TurnResult = agent.run_turn(line)
    except ProviderError as exc:
        _view.break_line()
        click.echo(click.style(f"error: {exc}", fg="red"), err=True)
        click.echo(_dim("(the conversation is kept; send your message again when the model "
                        "is back, or /exit)"), err=True)
        return
    except KeyboardInterrupt:
        _view.break_line()
        click.echo(_dim("interrupted — the model stopped; what it wrote so far is kept"),
                   err=True)
        return
    _show_answer(agent, result)
    click.echo(_dim(f"[{agent.status_line()}]"), err=True)


def _command(state: CliState, agent: Agent, line: str) -> bool:
    """Run a slash command; False means leave."""
    name, _, arg = line.partition(" ")
    arg = arg.strip()
    if name in ("/exit", "/quit"):
        return False
    if name == "/help":
        click.echo(HELP)
    elif name == "/compact":
        try:
            click.echo(agent.compact(arg or None).describe())
        except ProviderError as exc:
            click.echo(click.style(f"error: {exc}", fg="red"), err=True)
    elif name in ("/new", "/reset"):
        ending, answered = agent.session_id, _answered(agent)
        agent.new_session(flush=name == "/new")
        _forget_unanswered(state, ending, answered)
        _start(agent)
        click.echo(f"new session {agent.session_id}")
    elif name == "/memory":
        for target in TARGETS:
            result = agent.memory.read(target)
            click.echo(f"{target} [{result['usage']}]")
            for number, entry in enumerate(result["entries"], start=1):
                click.echo(f"  {number}. " + entry.replace("\n", "\n     "))
    elif name == "/context":
        _show_context(agent)
    elif name == "/sessions":
        if not arg:
            click.echo("usage: /sessions QUERY")
        else:
            data = json.loads(session_search(arg, store=agent.sessions, limit=5,
                                             current_session_id=agent.session_id))
            _print_search(data)
            if agent.messages:
                click.echo(_dim("(this session's live conversation is not searched — it is "
                                "on screen; its compacted parts are)"))
    else:
        click.echo(f"unknown command {name}; type /help")
    return True


def _show_context(agent: Agent) -> None:
    prompt = agent.system_prompt
    if prompt is not None:
        for part in prompt.parts:
            click.echo(f"  {part.name:<24} {part.tokens:>7,} tokens")
        click.echo(f"  {'system prompt':<24} {prompt.tokens:>7,} tokens")
    s = agent.status()
    click.echo(f"  conversation: {s['messages']} messages; last prompt {s['prompt_tokens']:,} "
               f"tokens; threshold {s['threshold_tokens']:,} of {s['context_length']:,}; "
               f"compactions {s['compactions']}")
    if s["paused"]:
        click.echo(f"  auto-compaction paused: {s['paused_reason']}")
    if s.get("preparation"):
        click.echo(f"  next {describe_status(s['preparation'])}")


def _print_search(data: dict[str, Any]) -> None:
    if not data.get("success"):
        click.echo(f"error: {data.get('error')}", err=True)
        return
    results = data.get("results") or []
    if not results:
        click.echo("no matches")
    for group in results:
        click.echo(f"session {group.get('session_id')} {group.get('title') or ''}".rstrip())
        for match in group.get("matches", []):
            snippet = " ".join(str(match.get("snippet") or match.get("content", "")).split())
            click.echo(f"  #{match.get('message_id')} {match.get('role')}: {snippet[:160]}")
    sys.stdout.flush()
