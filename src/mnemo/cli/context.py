"""``mnemo context``: what the model would see now, part by part, in tokens.

It builds the session's system prompt for the current directory and config exactly as
``mnemo chat`` would (without calling a model) and puts it next to the context window:
each part and its tokens, memory usage, the context files and any BLOCKED ones with their
line and pattern, the skills, and how much of the compaction threshold the prompt takes
before the first message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from mnemo.agent import preview_system_prompt
from mnemo.agent.setup import context_window
from mnemo.cli.common import CliState, echo_json, pass_state
from mnemo.errors import MnemoError
from mnemo.llm import resolve_model_choice
from mnemo.memory import TARGETS
from mnemo.prompt.context_files import find_context_files
from mnemo.storage.factory import open_memory_store

__all__ = ["context", "context_report"]


def context_report(state: CliState, cwd: Path, platform: str | None) -> dict[str, Any]:
    """Everything ``mnemo context`` shows, as data."""
    config = state.config
    try:
        choice = resolve_model_choice(config, home=state.home)
        model, window, model_note = choice.model, choice.context_length, choice.reason
    except MnemoError as exc:
        model, window, model_note = config.model.name, None, str(exc)
    window = window or context_window(config, state.home)
    threshold = int(window * config.context.threshold_percent)
    store = open_memory_store(config, state.home)
    prompt = preview_system_prompt(config, home=state.home, cwd=cwd, platform=platform,
                                   model=model)
    memory = {t: store.read(t)["usage"] for t in TARGETS}
    kind, paths = find_context_files(cwd)
    return {
        "cwd": str(cwd),
        "model": model,
        "model_note": model_note,
        "context_length": window,
        "threshold_tokens": threshold,
        "engine": config.context.engine,
        "system_prompt_tokens": prompt.tokens,
        "threshold_share": round(prompt.tokens / threshold, 4) if threshold else None,
        "parts": [{"name": p.name, "chars": p.chars, "tokens": p.tokens} for p in prompt.parts],
        "memory": {
            "memory": {"enabled": config.memory.memory_enabled, "usage": memory["memory"]},
            "user": {"enabled": config.memory.user_profile_enabled, "usage": memory["user"]},
            "provider": config.memory.provider or None,
        },
        "context_files": {"kind": kind or None, "files": [str(p) for p in paths]},
        "findings": [f.to_dict() for f in prompt.findings],
        "skills_count": prompt.skills_count,
        "skill_problems": [p.to_dict() for p in prompt.skill_problems],
        "preparation": _preparation(config),
    }


def _preparation(config: Any) -> dict[str, Any]:
    """Background preparation of the next summary (C17) as configured; no session runs
    here, so its state is ``idle`` (``mnemo chat`` shows the live one on its status line
    and in ``/context``)."""
    comp = config.compression
    enabled = bool(comp.enabled and comp.background and config.context.engine == "compressor")
    return {"enabled": enabled, "prepare_at": comp.prepare_at, "max_wait_s": comp.max_wait_s,
            "state": "idle" if enabled else "off", "covered": 0, "preparing": 0}


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--platform", help="Platform to build the prompt for (default: config).")
@click.option("--cwd", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=None, help="Directory whose context files count (default: here).")
@pass_state
def context(state: CliState, as_json: bool, platform: str | None, cwd: Path | None) -> None:
    """Show what the model would see now: prompt parts, memory, context files, tokens."""
    report = context_report(state, cwd or Path.cwd(), platform)
    if as_json:
        echo_json(report)
        return
    click.echo(f"model      {report['model'] or '(none)'} — {report['model_note']}")
    click.echo(f"window     {report['context_length']:,} tokens; compaction at "
               f"{report['threshold_tokens']:,} ({report['engine']} engine)")
    click.echo("\nsystem prompt")
    for part in report["parts"]:
        click.echo(f"  {part['name']:<26} {part['tokens']:>7,} tokens")
    share = report["threshold_share"] or 0
    click.echo(f"  {'total':<26} {report['system_prompt_tokens']:>7,} tokens "
               f"({share:.0%} of the threshold before the first message)")
    click.echo("\nmemory")
    for target, info in report["memory"].items():
        if target == "provider":
            click.echo(f"  external provider: {info or 'none'}")
        else:
            state_text = info["usage"] if info["enabled"] else "disabled"
            click.echo(f"  {target:<6} {state_text}")
    click.echo("\ncontext files")
    files = report["context_files"]
    if not files["files"]:
        click.echo("  (none found here)")
    for path in files["files"]:
        click.echo(f"  {path} ({files['kind']})")
    for finding in report["findings"]:
        verdict = "BLOCKED" if finding["blocked"] else "allowed"
        click.echo(f"  {verdict} {finding['file']} line {finding['line']}: "
                   f"{finding['pattern_id']} — {finding['excerpt']}")
    prep = report["preparation"]
    click.echo("\nsummaries  " + ("prepared in the background (compression.background), "
                                  f"from {prep['prepare_at']:.0%} of the threshold; "
                                  f"waits up to {prep['max_wait_s']:g} s at the swap"
                                  if prep["enabled"] else "made at the threshold (synchronous)"))
    click.echo(f"\nskills     {report['skills_count']} available"
               + (f", {len(report['skill_problems'])} with problems"
                  if report["skill_problems"] else ""))
