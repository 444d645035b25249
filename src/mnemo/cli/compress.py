"""``mnemo compress FILE``: compress a saved transcript once and show what it saved.

The transcript is a JSON list of chat messages, an object with a ``"messages"`` list, or
JSONL (one message per line). It goes through the same ``ContextCompressor`` the agent
uses, configured from ``config.yaml`` (``context.*``), so this is also the way to see what
compression would do to a real conversation before relying on it.

The result never exceeds ``--context-length`` silently (C19): when the summary is not
enough, oversized messages are cut (head and tail kept, a marker between); if even that
cannot bring it under, the result is still written but the command says so and exits 1.
Sizes here are counted by the shape-aware estimate, which is closer to a real tokenizer
on logs and JSON than the 4-characters rule the summary report uses.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from mnemo.agent import summarizer_for
from mnemo.cli.common import CliState, echo_json, fail, pass_state
from mnemo.context import ContextCompressor, default_context_length
from mnemo.context.fit import Fit, fit_request
from mnemo.context.window import RequestMeter
from mnemo.errors import UsageError
from mnemo.fileio import atomic_write_text
from mnemo.messages import Message
from mnemo.transcripts import parse_transcript

__all__ = ["compress"]


def _summarizer_for(state: CliState) -> Callable[[str], str] | None:
    """The summariser ``mnemo compress`` uses; ``None`` means the local summariser.

    The same rule as the agent's (``mnemo.agent.summarizer_for``): a configured auxiliary
    or remote main model summarises, the embedded local model does not.
    """
    return summarizer_for(state.config, state.home)


@click.command("compress")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--context-length", type=click.IntRange(min=1), default=None, metavar="N",
              help="The model window in tokens to compress for (default: model.context_length "
                   "from config.yaml, else the configured model's usual window).")
@click.option("--focus", default=None, metavar="TOPIC",
              help="Keep everything about TOPIC in full detail; summarise the rest harder "
                   "(like /compact TOPIC).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the counts, the summary and the compressed messages as JSON.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Write the compressed messages to FILE (JSONL if it ends in .jsonl, "
                   "else a JSON list).")
@pass_state
def compress(state: CliState, file: str, context_length: int | None, focus: str | None,
             as_json: bool, out: str | None) -> None:
    """Compress the transcript FILE once and report before/after sizes.

    FILE is a JSON list of chat messages, an object with a "messages" list, or JSONL with
    one message per line ("-" reads standard input). The input file is never changed;
    use --out to save the result. Summary token counts are the rough estimate (4
    characters per token plus 10 per message). A result that would still be larger than
    the context length gets its oversized messages cut (head and tail kept); if it still
    does not fit, the command says so and exits with status 1.
    """
    source = "<stdin>" if file == "-" else file
    messages = parse_transcript(_read(file), source=source)
    config = state.config
    engine = ContextCompressor.from_config(
        config, home=state.home, summarizer=_summarizer_for(state),
        context_length=context_length or default_context_length(config),
        model=config.model.name)
    result = engine.compress(messages, focus_topic=focus)
    report = engine.last_report
    assert report is not None  # compress always leaves a report
    fit = fit_request(result, budget=engine.context_length, meter=RequestMeter(),
                      allow_drop=False, kept_in=f"the original transcript {source}")
    result = fit.messages
    if out:
        _write(Path(out), result)
    if as_json:
        echo_json({
            "messages_before": report.messages_before,
            "messages_after": report.messages_after,
            "tokens_before": report.tokens_before,
            "tokens_after": report.tokens_after,
            "summary": report.summary,
            "tokens_estimated": fit.tokens,
            "fits": fit.fits,
            "truncated": len(fit.cuts),
            "messages": result,
        })
        _fail_unless_fits(fit, engine.context_length)
        return
    click.echo(f"{source}: {report.messages_before:,} → {report.messages_after:,} messages, "
               f"~{report.tokens_before:,} → ~{report.tokens_after:,} tokens "
               f"(context length {engine.context_length:,})")
    if report.summary is not None:
        how = ("local summariser (the model failed)" if report.fallback
               else "model" if report.summarizer == "model" else "local summariser")
        click.echo(f"summary: {how}, ~{len(report.summary) // 4:,} tokens; "
                   f"{len(report.removed):,} messages summarised, "
                   f"{len(report.pruned):,} old tool outputs cleared")
    else:
        click.echo(f"no summary: {report.skipped_reason}"
                   + (f"; {len(report.pruned):,} old tool outputs cleared"
                      if report.pruned else ""))
    if fit.changed:
        click.echo(fit.describe())
    if out:
        click.echo(f"wrote {out}")
    _fail_unless_fits(fit, engine.context_length)


def _fail_unless_fits(fit: Fit, context_length: int) -> None:
    if not fit.fits:
        fail(f"the result (~{fit.tokens:,} tokens) is still larger than the context length "
             f"({context_length:,}) with every oversized message cut to its head and tail; "
             "raise --context-length or shorten the system message")


def _read(file: str) -> str:
    if file == "-":
        return sys.stdin.read()
    try:
        return Path(file).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{file}: no such file; give the path of a JSON or JSONL "
                         "transcript") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{file}: not UTF-8 text (byte {exc.start}); save the transcript "
                         "as UTF-8 JSON or JSONL") from None
    except OSError as exc:
        raise UsageError(f"{file}: cannot be read ({exc.strerror})") from None


def _write(path: Path, messages: list[Message]) -> None:
    if path.suffix == ".jsonl":
        text = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)
    else:
        text = json.dumps(messages, ensure_ascii=False, indent=2) + "\n"
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise UsageError(f"{path}: cannot be written ({exc.strerror}); choose another "
                         "--out path") from None
