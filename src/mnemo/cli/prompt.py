"""``mnemo prompt``: print the system prompt a session would start with, part by part.

The prompt goes to stdout (so it can be piped or saved); the breakdown — characters and
estimated tokens per part — and any BLOCKED context files go to stderr. ``--json``
prints everything as one JSON document instead.
"""

from __future__ import annotations

from pathlib import Path

import click

from mnemo.agent import preview_system_prompt
from mnemo.cli.common import CliState, echo_json, pass_state
from mnemo.prompt import SystemPrompt

__all__ = ["prompt"]


def _breakdown(built: SystemPrompt) -> None:
    width = max([len(p.name) for p in built.parts] + [len("total")])
    click.echo(f"{'part':<{width}}  {'chars':>7}  {'tokens':>7}", err=True)
    for part in built.parts:
        click.echo(f"{part.name:<{width}}  {part.chars:>7,}  {part.tokens:>7,}", err=True)
    click.echo(f"{'total':<{width}}  {built.chars:>7,}  {built.tokens:>7,}", err=True)
    if built.skills_count:
        click.echo(f"skills in the index: {built.skills_count}", err=True)
    for finding in built.findings:
        verdict = "allowed" if finding.allowed else "BLOCKED"
        click.echo(f"{verdict} {finding.file} line {finding.line}: {finding.pattern_id} — "
                   f"{finding.description}: {finding.excerpt}", err=True)
    if any(f.blocked for f in built.findings):
        click.echo("To accept a pattern a file only describes, list it under "
                   "security.allow_patterns in config.yaml.", err=True)
    for problem in built.skill_problems:
        click.echo(f"skill problem: {problem.path}: {problem.message}", err=True)


@click.command("prompt")
@click.option("--platform", "-p", default=None,
              help="Platform whose hint to use (cli, telegram, weixin, cron, sms, email, api "
                   "or one under 'platforms' in config.yaml). Default: 'platform' in config.")
@click.option("--model", "-m", default=None,
              help="Model name, which picks model-specific guidance. Default: the model "
                   "the config resolves to (see `mnemo models`).")
@click.option("--cwd", "cwd", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="Project folder whose context files (AGENTS.md…) are "
                                 "loaded. Default: the current directory.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the parts with chars and tokens, the totals, the findings and the "
                   "text as JSON.")
@pass_state
def prompt(state: CliState, platform: str | None, model: str | None, cwd: Path | None,
           as_json: bool) -> None:
    """Show the system prompt a new session would get, with a token count per part.

    It is built exactly as `mnemo chat` builds it (the same tools, memory providers and
    engine), without starting a session. Parts, in order: identity (SOUL.md), platform
    hint, skills index, project context files, MEMORY and USER snapshots, provider
    blocks, guidance, subscription, date. Context files with a prompt-injection finding
    are shown as BLOCKED together with the line that matched.
    """
    built = preview_system_prompt(state.config, home=state.home, cwd=cwd or Path.cwd(),
                                  platform=platform, model=model)
    if as_json:
        echo_json(built.to_dict())
        return
    click.echo(built.text)
    _breakdown(built)
