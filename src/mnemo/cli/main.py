"""The ``mnemo`` command: the root group, global options and error handling.

Each command group lives in its own module and is attached here. Every ``MnemoError`` a
command raises becomes one line on stderr (exit 1; 2 for usage and config mistakes);
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import logging
import sys
import traceback
from typing import Any

import click

from mnemo.cli.common import CliState
from mnemo.errors import MnemoError, UsageError
from mnemo.home import Home
from mnemo.logs import configure_file_logging

__all__ = ["cli", "main"]


class _Root(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MnemoError as exc:
            state = ctx.find_object(CliState)
            if state is not None and state.debug:
                traceback.print_exc()
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2 if isinstance(exc, UsageError) else 1)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except OSError as exc:  # a file or folder we could not use: say which, in one line
            state = ctx.find_object(CliState)
            if state is not None and state.debug:
                traceback.print_exc()
            where = f": {exc.filename}" if exc.filename else ""
            click.echo(f"error: {exc.strerror or exc}{where}; check that it exists and that "
                       "you may read and write it", err=True)
            ctx.exit(1)


@click.group(cls=_Root, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--home", type=click.Path(file_okay=False), envvar="MNEMO_HOME",
              help="mnemo's home folder (default: $MNEMO_HOME or ~/.mnemo).")
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logging.")
@click.version_option(package_name="mnemo")
@click.pass_context
def cli(ctx: click.Context, home: str | None, debug: bool) -> None:
    """mnemo: memory that lasts across sessions and a context window that never overflows.

    Files live in the home folder (config.yaml, memories/, state.db, skills/, logs/).
    """
    if debug:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    state = CliState(home=Home(home), debug=debug)
    if state.home.root.exists():
        # Every command's events go to the agent log the debugging guide greps.
        configure_file_logging(state.home)
    ctx.obj = state


def _register() -> None:
    from mnemo.cli import chat as chat_cmd
    from mnemo.cli import compress as compress_cmd
    from mnemo.cli import context as context_cmd
    from mnemo.cli import doctor as doctor_cmd
    from mnemo.cli import mcp as mcp_cmd
    from mnemo.cli import memory
    from mnemo.cli import models as models_cmd
    from mnemo.cli import prompt as prompt_cmd
    from mnemo.cli import sessions as sessions_cmd
    from mnemo.cli import skills as skills_cmd
    from mnemo.cli import storage as storage_cmd

    cli.add_command(chat_cmd.chat)
    cli.add_command(compress_cmd.compress)
    cli.add_command(context_cmd.context)
    cli.add_command(doctor_cmd.doctor)
    cli.add_command(mcp_cmd.mcp)
    cli.add_command(memory.memory)
    cli.add_command(models_cmd.models)
    cli.add_command(prompt_cmd.prompt)
    cli.add_command(sessions_cmd.sessions)
    cli.add_command(skills_cmd.skills)
    cli.add_command(storage_cmd.storage)


_register()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="mnemo")
