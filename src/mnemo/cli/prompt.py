"""``mnemo prompt``: print the system prompt a session would start with, part by part.

The prompt goes to stdout (so it can be piped or saved); the breakdown — characters and
estimated tokens per part — and any BLOCKED context files go to stderr. ``--json``
prints everything as one JSON document instead.
"""

from __future__ import annotations

from pathlib import Path

import click

from mnemo.cli.common import CliState, echo_json, pass_state
from mnemo.memory import MemoryStore
from mnemo.prompt import SystemPrompt, build_system_prompt

__all__ = ["DEFAULT_TOOLS", "prompt"]

# The core tools an agent session has (SPEC A1); guidance blocks follow the tools.
DEFAULT_TOOLS = ("memory", "session_search", "skill_view")


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
              help="Model name, which picks model-specific guidance. Default: model.name.")
@click.option("--cwd", "cwd", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="Project folder whose context files (AGENTS.md…) are "
                                 "loaded. Default: the current directory.")
@click.option("--tools", default=",".join(DEFAULT_TOOLS), show_default=True,
              help="Comma-separated tool names the agent has; guidance follows them. "
                   "Pass '' for none.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the parts with chars and tokens, the totals, the findings and the "
                   "text as JSON.")
@pass_state
def prompt(state: CliState, platform: str | None, model: str | None, cwd: Path | None,
           tools: str, as_json: bool) -> None:
    """Show the system prompt a new session would get, with a token count per part.

    Parts, in order: identity (SOUL.md), platform hint, skills index, project context
    files, MEMORY and USER snapshots, guidance, subscription, date. Context files with a
    prompt-injection finding are shown as BLOCKED together with the line that matched.
    """
    config = state.config
    store = MemoryStore(
        state.home.memories_dir,
        memory_char_limit=config.memory.memory_char_limit,
        user_char_limit=config.memory.user_char_limit,
        overflow=config.memory.overflow,
    )
    store.load_from_disk()
    built = build_system_prompt(
        config=config,
        memory=store,
        cwd=cwd if cwd is not None else Path.cwd(),
        platform=platform,
        model=model if model is not None else config.model.name,
        tool_names=[t.strip() for t in tools.split(",") if t.strip()],
        home=state.home,
    )
    if as_json:
        echo_json(built.to_dict())
        return
    click.echo(built.text)
    _breakdown(built)
