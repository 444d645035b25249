"""``mnemo storage``: where sessions and memory live, and moving them to PostgreSQL.

``status`` describes the configured backend (``storage.url`` / ``MNEMO_STORAGE_URL``);
``migrate --to URL`` copies this home's ``state.db`` and memory files into a PostgreSQL
database without changing the home (see docs/storage.md).
"""

from __future__ import annotations

import sys

import click

from mnemo.cli.common import CliState, echo_json, fail, pass_state
from mnemo.storage.factory import open_pg
from mnemo.storage.migrate import migrate_home
from mnemo.storage.pg import redact_url
from mnemo.storage.status import storage_status

__all__ = ["storage"]


@click.group()
def storage() -> None:
    """Show where sessions and memory are stored; copy a home into PostgreSQL."""


@storage.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@pass_state
def status(state: CliState, as_json: bool) -> None:
    """Backend, location, schema version, counts and (PostgreSQL) round-trip latency."""
    info = storage_status(state.config, state.home)
    if as_json:
        echo_json(info.to_dict())
        return
    click.echo(f"backend         {info.backend}")
    click.echo(f"location        {info.location}")
    if info.namespace is not None:
        click.echo(f"namespace       {info.namespace}")
    click.echo(f"schema version  {info.schema_version}")
    click.echo(f"sessions        {info.sessions:,}")
    click.echo(f"messages        {info.messages:,}")
    for target, usage in info.memory.items():
        click.echo(f"{target + ' store':<15} {usage}")
    if info.latency_ms is not None:
        click.echo(f"latency         {info.latency_ms} ms per round trip")


@storage.command()
@click.option("--to", "url", required=True, metavar="URL",
              help="The PostgreSQL database to copy into (postgresql://user:pass@host/db).")
@click.option("--namespace", default=None,
              help="Memory namespace to fill (default: storage.namespace, else 'default').")
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary.")
@pass_state
def migrate(state: CliState, url: str, namespace: str | None, quiet: bool) -> None:
    """Copy this home's sessions and memory into PostgreSQL (the home is left as it is).

    Safe to run again: what was copied is skipped, an interrupted run resumes where it
    stopped. Point the home at the database afterwards with storage.url in config.yaml
    or MNEMO_STORAGE_URL.
    """
    if not url.startswith(("postgresql://", "postgres://")):
        fail("--to must be a postgresql:// URL", code=2)
    ns = namespace or state.config.storage.namespace
    db = open_pg(url)
    try:
        def progress(line: str) -> None:
            if not quiet:
                click.echo(line)
                sys.stdout.flush()  # a watcher sees each committed session at once

        report = migrate_home(state.home, db, namespace=ns, progress=progress)
    finally:
        db.close()
    click.echo(f"copied {report.copied} sessions, {report.skipped} already there, "
               f"{len(report.conflicts)} left alone → {redact_url(url)} (namespace {ns!r})")
    for conflict in report.conflicts:
        click.echo(f"  left alone: {conflict}")
    click.echo(f"verified: home {report.source_sessions} sessions / {report.source_messages} "
               f"messages; PostgreSQL {report.target_sessions} / {report.target_messages}"
               + ("" if report.verified else " — MISMATCH, run the migration again"))
    if not report.verified:
        sys.exit(1)
