"""``mnemo sessions``: list, read, search and import the conversations in ``state.db``.

The commands use the same ``SessionStore`` and the same search the model's
``session_search`` tool uses, so what a user finds here is what the agent can find.
"""

from __future__ import annotations

from pathlib import Path

import click

from mnemo.cli.common import CliState, echo_json, pass_state
from mnemo.errors import UsageError
from mnemo.sessions import SessionStore
from mnemo.sessions.query import limits_note
from mnemo.sessions.records import StoredMessage, iso_time
from mnemo.sessions.transcript import import_transcript
from mnemo.storage.factory import open_session_store

__all__ = ["sessions"]

_WIDTH = 100


def _open(state: CliState) -> SessionStore:
    return open_session_store(state.config, state.home)


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _when(timestamp: float | None) -> str:
    stamp = iso_time(timestamp)
    return stamp.replace("T", " ").replace("+00:00", "Z") if stamp else "-"


@click.group()
def sessions() -> None:
    """List, read, search and import past conversations (state.db)."""


@sessions.command("list")
@click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many sessions to show.")
@click.option("--source", default=None, help="Only sessions from this source (cli, import…).")
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON.")
@pass_state
def list_(state: CliState, limit: int, source: str | None, as_json: bool) -> None:
    """Show the latest sessions, newest first."""
    with _open(state) as store:
        found = store.list_sessions(limit, source=source)
    if as_json:
        echo_json([s.to_dict() for s in found])
        return
    if not found:
        click.echo("No sessions yet. Chat with `mnemo chat` or import one with "
                   "`mnemo sessions import FILE`.")
        return
    for s in found:
        label = s.title or _one_line(s.preview, 60) or "(untitled)"
        archived = f", {s.archived_count} archived" if s.archived_count else ""
        click.echo(f"{s.id}  {_when(s.started_at)}  {s.message_count:>5} msgs{archived}  "
                   f"[{s.source}]  {_one_line(label, 60)}")


def _render(message: StoredMessage) -> str:
    flags = " [archived]" if message.compacted else ""
    who = f"{message.role}:{message.name}" if message.name else message.role
    lines = [f"#{message.id} {who} · {_when(message.timestamp)}{flags}"]
    text = message.text
    if text:
        lines.extend(f"  {line}" for line in text.splitlines())
    for call in message.tool_calls or []:
        function = call.get("function") or {}
        lines.append(f"  → {function.get('name', '')}({function.get('arguments', '')})")
    return "\n".join(lines)


@sessions.command()
@click.argument("session_id")
@click.option("--active-only", is_flag=True,
              help="Leave out the messages compaction archived (show the live context).")
@click.option("--offset", type=click.IntRange(min=0), default=0, help="Skip this many messages.")
@click.option("--limit", "-n", type=click.IntRange(min=1), default=None,
              help="Show at most this many messages (default: all).")
@click.option("--json", "as_json", is_flag=True, help="Print the session and messages as JSON.")
@pass_state
def show(state: CliState, session_id: str, active_only: bool, offset: int, limit: int | None,
         as_json: bool) -> None:
    """Print one session: its details and its messages in order (archived ones included)."""
    with _open(state) as store:
        info = store.get_session(session_id)
        if info is None:
            raise UsageError(f"no session {session_id!r}; see `mnemo sessions list` for ids.")
        messages = store.read_session(session_id, offset=offset, limit=limit,
                                      include_archived=not active_only)
    if as_json:
        echo_json({**info.to_dict(), "system_prompt": info.system_prompt,
                   "messages": [m.to_dict() for m in messages]})
        return
    click.echo(f"session {info.id}  [{info.source}]  {info.title or ''}".rstrip())
    click.echo(f"started {_when(info.started_at)}  ended {_when(info.ended_at)}  "
               f"model {info.model or '-'}  tokens {info.prompt_tokens}+"
               f"{info.completion_tokens}  messages {info.message_count} "
               f"({info.archived_count} archived)")
    for message in messages:
        click.echo()
        click.echo(_render(message))


@sessions.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="How many matching messages to show.")
@click.option("--session", "session_id", default=None, help="Search only this session.")
@click.option("--role", multiple=True,
              help="Only messages of this role (user, assistant, tool…); repeatable.")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON list of hits (session_id, message_id, role, content, "
                   "snippet, score, …).")
@pass_state
def search(state: CliState, query: tuple[str, ...], limit: int, session_id: str | None,
           role: tuple[str, ...], as_json: bool) -> None:
    """Find past messages by keywords (archived ones and tool outputs included).

    Any text works: quotes, operators and punctuation are searched as plain words.
    Chinese, Japanese and Korean text is matched inside words. Put `--` before a query
    that starts with a dash: mnemo sessions search -- -Xmx2g
    """
    text = " ".join(query)
    if not text.strip():
        raise UsageError("the query is empty; give keywords to search for: "
                         "mnemo sessions search staging port")
    with _open(state) as store:
        hits = store.search(text, limit=limit, session_id=session_id, role=role or None)
    note = limits_note(text)
    if note:
        click.echo(f"note: {note}", err=True)
    if as_json:
        echo_json([h.to_dict() for h in hits])
        return
    if not hits:
        click.echo("No matches. Try fewer or other keywords.")
        return
    for hit in hits:
        flags = " [archived]" if hit.compacted else ""
        if not hit.matched:
            flags += " [next to a match]"
        click.echo(f"{hit.session_id}  #{hit.message_id} {hit.role} · {_when(hit.timestamp)}"
                   f" · score {hit.score:.3g}{flags}")
        click.echo(f"  {_one_line(hit.snippet, _WIDTH)}")


@sessions.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--title", "-t", default=None, help="Title of the new session (default: file name).")
@click.option("--json", "as_json", is_flag=True, help="Print the new session id as JSON.")
@pass_state
def import_(state: CliState, file: Path, title: str | None, as_json: bool) -> None:
    """Import a transcript as one new session.

    FILE is a JSON list of chat messages ({"role": ..., "content": ...}), a JSON object
    with a "messages" list, or JSON Lines (one message per line). A malformed file
    imports nothing and the error names the bad line or message.
    """
    with _open(state) as store:
        session_id, count = import_transcript(store, file, title=title)
    if as_json:
        echo_json({"session_id": session_id, "messages": count})
        return
    click.echo(f"imported {count} messages into session {session_id}")


@sessions.command()
@click.argument("session_id")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@pass_state
def delete(state: CliState, session_id: str, yes: bool) -> None:
    """Delete a session and all its messages for good (compaction never does this)."""
    with _open(state) as store:
        if store.get_session(session_id) is None:
            raise UsageError(f"no session {session_id!r}; see `mnemo sessions list` for ids.")
        if not yes:
            click.confirm(f"Delete session {session_id} and all its messages?", abort=True)
        count = store.delete_session(session_id)
    click.echo(f"deleted session {session_id} ({count} messages)")


@sessions.command()
@click.option("--force", is_flag=True,
              help="Rebuild even when SQLite finds nothing wrong with the file.")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@pass_state
def repair(state: CliState, force: bool, as_json: bool) -> None:
    """Rescue a damaged state.db: keep it aside, salvage what reads, start a fresh archive.

    The damaged file is moved (never deleted) to state.db.damaged-<time>; every session
    and message that can still be read is copied into a new state.db. A healthy file is
    left alone unless --force.
    """
    from mnemo.sessions.repair import repair_database

    report = repair_database(state.home.state_db, force=force)
    if as_json:
        echo_json({"path": str(report.path),
                   "moved_to": str(report.moved_to) if report.moved_to else None,
                   "copied": report.copied, "lost": report.lost,
                   "readable": report.readable})
        return
    click.echo(report.describe())
