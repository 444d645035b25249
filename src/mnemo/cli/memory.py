"""``mnemo memory``: look at and change MEMORY.md and USER.md from the terminal.

The commands call the same store operations the model's tool does, so the same rules
(limits, duplicate handling, the security scan, locking) apply to a human.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from mnemo.cli.common import CliState, echo_json, fail, pass_state
from mnemo.fileio import is_read_only
from mnemo.memory import TARGETS, MemoryStore, Target
from mnemo.memory.store import Result
from mnemo.storage.factory import open_memory_store

__all__ = ["memory"]

_target_option = click.option(
    "--target", "-t", type=click.Choice(TARGETS), default="memory", show_default=True,
    help="memory = the agent's notes (MEMORY.md); user = the user profile (USER.md).",
)


def open_store(state: CliState) -> MemoryStore:
    return open_memory_store(state.config, state.home)


# The store words its errors for the model, which has the memory tool's actions; a person
# at the terminal has the commands of this group instead.
_MODEL_TO_CLI = (
    ("(a batch can do both and the add in one call)",
     "(`mnemo memory edit` does both at once)"),
    ("merge related entries with replace", "merge related entries with `mnemo memory replace`"),
    ("to delete an entry use action=remove", "to delete an entry use `mnemo memory remove`"),
    ("use memory(action=remove)", "use `mnemo memory remove`"),
)


def for_people(error: str) -> str:
    """A store error reworded for the terminal (commands instead of tool actions)."""
    for model_words, cli_words in _MODEL_TO_CLI:
        error = error.replace(model_words, cli_words)
    return error


def _report(result: Result, as_json: bool) -> None:
    if as_json:
        echo_json(result)
        if not result.get("success"):
            sys.exit(1)
        return
    if not result.get("success"):
        fail(for_people(str(result.get("error"))))
    click.echo(f"{result.get('message', 'ok')} [{result.get('usage', '')}]")


@click.group()
def memory() -> None:
    """Show and edit the curated memory (MEMORY.md, USER.md)."""


@memory.command()
@click.option("--target", "-t", type=click.Choice(TARGETS), default=None,
              help="Show only this store (default: both).")
@click.option("--json", "as_json", is_flag=True, help="Print the read result as JSON.")
@pass_state
def show(state: CliState, target: Target | None, as_json: bool) -> None:
    """Print the entries of the memory stores as they are on disk now."""
    store = open_store(state)
    targets: tuple[Target, ...] = (target,) if target else TARGETS
    results = {t: store.read(t) for t in targets}
    if as_json:
        echo_json(results[target] if target else results)
        return
    for t, result in results.items():
        if result.get("warning"):
            click.echo(f"warning: {result['warning']}", err=True)
        path = store.path_for(t)
        click.echo(f"{t} — {path} [{result['usage']}]")
        if not result["entries"]:
            click.echo("  (empty)")
        for number, entry in enumerate(result["entries"], start=1):
            first, *rest = entry.split("\n")
            click.echo(f"  {number}. {first}")
            for line in rest:
                click.echo(f"     {line}")
        if t != targets[-1]:
            click.echo()


@memory.command()
@_target_option
@click.argument("text")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_state
def add(state: CliState, target: Target, text: str, as_json: bool) -> None:
    """Add TEXT as a new entry."""
    _report(open_store(state).add(target, text), as_json)


@memory.command()
@_target_option
@click.argument("old")
@click.argument("new")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_state
def replace(state: CliState, target: Target, old: str, new: str, as_json: bool) -> None:
    """Replace the one entry containing OLD with NEW."""
    _report(open_store(state).replace(target, old, new), as_json)


@memory.command()
@_target_option
@click.argument("old")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_state
def remove(state: CliState, target: Target, old: str, as_json: bool) -> None:
    """Remove the one entry containing OLD."""
    _report(open_store(state).remove(target, old), as_json)


@memory.command()
@_target_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_state
def edit(state: CliState, target: Target, as_json: bool) -> None:
    """Edit a store in $EDITOR; the result is checked, then written atomically.

    Entries are separated by a line holding only §. If the edited text breaks a rule
    (a threat pattern, the size limit, a malformed delimiter) nothing is written and your
    edit is kept in a file whose path is printed.
    """
    store = open_store(state)
    path = store.path_for(target)
    if is_read_only(path):
        fail(f"{path} is read-only, so an edit could not be saved; run `chmod u+w {path}` "
             "first")
    original = store.raw_text(target)
    with tempfile.NamedTemporaryFile("w", suffix=f".{path.name}", delete=False,
                                     encoding="utf-8") as handle:
        handle.write(original)
        scratch = Path(handle.name)
    click.edit(filename=str(scratch))
    edited = scratch.read_text(encoding="utf-8")
    result: dict[str, Any] = store.rewrite(target, edited, expected=original)
    if result.get("success"):
        scratch.unlink()
    else:
        result["error"] = f"{result['error']} Your edit is kept in {scratch}."
    _report(result, as_json)


@memory.command(name="export")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@pass_state
def export_cmd(state: CliState, directory: Path) -> None:
    """Write MEMORY.md and USER.md (Hermes format: entries between § lines) to DIRECTORY.

    Works the same whether memory lives in the home or in PostgreSQL; existing files in
    DIRECTORY are replaced.
    """
    from mnemo.memory.transfer import export_memory

    for line in export_memory(open_store(state), directory):
        click.echo(line)


@memory.command(name="import")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--replace", is_flag=True,
              help="Make each store equal the file (default: add the file's new entries).")
@pass_state
def import_cmd(state: CliState, directory: Path, replace: bool) -> None:
    """Load MEMORY.md and USER.md from DIRECTORY into the current memory.

    Every entry passes the same checks as a model's write (security scan, size limit);
    a store whose file breaks one is left unchanged and the reason printed.
    """
    from mnemo.memory.transfer import import_memory

    results = import_memory(open_store(state), directory, replace=replace)
    for target, result in results.items():
        if result.get("success"):
            click.echo(f"{target}: {result.get('message')} [{result.get('usage')}]")
        else:
            click.echo(f"{target}: not imported — {result.get('error')}", err=True)
    if not all(r.get("success") for r in results.values()):
        sys.exit(1)


@memory.command()
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@pass_state
def providers(state: CliState, as_json: bool) -> None:
    """List installed memory providers, whether each can run here, and which is selected.

    Select one with `memory: {provider: NAME}` in config.yaml; add your own as a package
    with a `mnemo.memory_providers` entry point or a folder in $MNEMO_HOME/plugins/memory/.
    """
    from mnemo.memory.plugins import list_providers

    rows = list_providers(state.config, state.home)
    if as_json:
        echo_json([row.__dict__ for row in rows])
        return
    click.echo("built-in  memory + user stores (always on unless disabled in config)")
    for row in rows:
        mark = "*" if row.selected else " "
        status = "available" if row.available else "unavailable"
        line = f"{mark} {row.name:<12} {status:<12} {row.source}"
        click.echo(line + (f" — {row.problem}" if row.problem else ""))
    selected = state.config.memory.provider
    if selected and not any(row.selected for row in rows):
        click.echo(f"memory.provider is {selected!r}, which is not installed: install it, or "
                   "set memory.provider to one of the names above")
    elif not selected:
        click.echo("(no external provider selected; set memory.provider in config.yaml)")
