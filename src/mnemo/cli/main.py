"""The ``mnemo`` command: the root group, global options and error handling.

Each command group lives in its own module and is attached here. Every ``MnemoError`` a
command raises becomes one line on stderr (exit 1; 2 for usage and config mistakes);
``--debug`` shows the traceback instead. A closed output pipe (``mnemo … | head``) ends
the command quietly with exit 0: the reader had all it wanted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import traceback
from typing import Any

import click

from mnemo.cli.common import CliState
from mnemo.config.secrets import mask_urls_in
from mnemo.errors import MnemoError, UsageError
from mnemo.home import Home
from mnemo.logs import LOG_FORMAT, MaskingFormatter, configure_file_logging

__all__ = ["cli", "main"]


class _Root(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MnemoError as exc:
            state = ctx.find_object(CliState)
            if state is not None and state.debug:
                traceback.print_exc()
            click.echo(f"error: {mask_urls_in(str(exc))}", err=True)
            ctx.exit(2 if isinstance(exc, UsageError) else 1)
        except BrokenPipeError:
            _quiet_closed_pipe()
            ctx.exit(0)
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


def _quiet_closed_pipe() -> None:
    """The reader of our output went away (``mnemo … | head``): stop without a word.

    stdout is pointed at /dev/null so the interpreter's last flush cannot fail again
    and print "Exception ignored … BrokenPipeError".
    """
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


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
        for handler in logging.getLogger().handlers:  # keys in URLs stay masked here too
            handler.setFormatter(MaskingFormatter(LOG_FORMAT))
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
    try:
        cli(prog_name="mnemo")
    except BrokenPipeError:  # raised by a flush after the command itself had finished
        _quiet_closed_pipe()
        sys.exit(0)
