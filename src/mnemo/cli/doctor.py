"""``mnemo doctor``: the seed's debugging guide as checks, each with a verdict and a fix.

Memory not persisting, compression misbehaving, context files blocked, a model that does
not answer: each symptom of the guide becomes a check that says what it found and, when
something is wrong, the command that fixes it. The exit code is 1 when any check fails.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import stat
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import click

from mnemo.cli.common import CliState, echo_json, pass_state
from mnemo.config import MnemoConfig, load_config
from mnemo.config.secrets import mask_urls_in
from mnemo.errors import ConfigError, DatabaseDamagedError, MnemoError
from mnemo.fileio import is_read_only, lock_path_for
from mnemo.home import Home
from mnemo.memory import TARGETS, MemoryStore
from mnemo.memory.entries import FILENAMES, parse_entries, round_trips, usage_of
from mnemo.memory.files import fit_entries, left_out_notice, read_memory_file, write_path
from mnemo.security import scan

__all__ = ["Check", "doctor", "run_checks"]

Verdict = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class Check:
    name: str
    verdict: Verdict
    detail: str
    fix: str = ""


def _home_checks(home: Home) -> list[Check]:
    root = home.root
    if not root.exists():
        return [Check("home folder", "warn", f"{root} does not exist yet",
                      "it is created on the first write (e.g. `mnemo memory add ...`)")]
    if not os.access(root, os.W_OK) or not root.stat().st_mode & stat.S_IWUSR:
        return [Check("home folder", "fail", f"{root} is not writable",
                      f"chmod u+w {root}")]
    return [Check("home folder", "ok", f"{root} exists and is writable")]


def _config_check(home: Home) -> tuple[Check, MnemoConfig]:
    try:
        config = load_config(home)
    except ConfigError as exc:
        if exc.line is not None:
            fix = (f"fix the YAML syntax at line {exc.line}, column {exc.column} of "
                   f"{home.config_file}")
        elif exc.key:
            fix = f"fix {exc.key} in {home.config_file} (see docs/config.md)"
        else:
            fix = f"rewrite {home.config_file} as a plain mapping (see docs/config.md)"
        return (Check("config.yaml", "fail", str(exc),
                      fix + "; until then the defaults are used"), MnemoConfig())
    except MnemoError as exc:
        return (Check("config.yaml", "fail", str(exc),
                      f"check {home.config_file} (see docs/config.md)"), MnemoConfig())
    where = home.config_file if home.config_file.exists() else "no file, defaults"
    return Check("config.yaml", "ok", f"valid ({where})"), config


def _memory_checks(home: Home, config: MnemoConfig) -> list[Check]:
    checks: list[Check] = []
    mem = config.memory
    if not (mem.memory_enabled and mem.user_profile_enabled):
        off = [n for n, on in (("memory_enabled", mem.memory_enabled),
                               ("user_profile_enabled", mem.user_profile_enabled)) if not on]
        checks.append(Check("memory enabled", "warn", f"{', '.join(off)} is false",
                            "set memory." + off[0] + ": true in config.yaml to use that store"))
    else:
        checks.append(Check("memory enabled", "ok", "both stores are enabled"))
    store = MemoryStore.from_config(config, home)
    folder = home.memories_dir
    if folder.exists() and not folder.stat().st_mode & stat.S_IWUSR:
        checks.append(Check("memories folder", "fail", f"{folder} is not writable",
                            f"chmod 755 {folder}"))
    for target in TARGETS:
        checks.append(_memory_file_check(store, target))
        checks.append(_lock_check(store.path_for(target)))
    return checks


def _memory_file_check(store: MemoryStore, target: Literal["memory", "user"]) -> Check:
    path = store.path_for(target)
    name = FILENAMES[target]
    if not path.exists() and not path.is_symlink():
        return Check(name, "ok", "not created yet (the first write creates it)")
    try:
        write_path(path)
        read = read_memory_file(path)
    except MnemoError as exc:
        return Check(name, "fail", str(exc), f"ls -l {path}; fix or replace the file")
    if read.encoding_problem:
        return Check(name, "fail", read.encoding_problem.split(", so ")[0] + "; memory "
                     "writes to it are refused", read.encoding_problem.split("read-only. ")[-1])
    if is_read_only(path):
        return Check(name, "fail", "is read-only, so memory writes are refused",
                     f"chmod 644 {path}")
    raw = read.text
    entries = parse_entries(raw)
    limit = store.limits[target]
    if usage_of(entries) > limit:
        _, left = fit_entries(entries, limit)
        notice = left_out_notice(target, usage_of(entries), left, limit)
        detail, _, fix = notice.partition("; nothing was deleted. ")
        return Check(name, "warn", detail + "; nothing was deleted", fix)
    usage = store.read(target)["usage"]
    blocked = [e for e in entries if scan(e, "strict")]
    if blocked:
        count = f"{len(blocked)} entr{'y is' if len(blocked) == 1 else 'ies are'}"
        return Check(name, "warn", f"{count} BLOCKED from the prompt by the threat scan",
                     f"look at them with `mnemo memory show --target {target}` and remove them")
    if raw and not round_trips(raw):
        return Check(name, "warn", "was edited by hand into a shape a rewrite would change "
                     "(replace/remove will back it up and refuse)",
                     f"normalise it with `mnemo memory edit --target {target}`")
    link = f" (symlink to {path.resolve()})" if path.is_symlink() else ""
    return Check(name, "ok", f"{len(entries)} entries, {usage}{link}")


def _lock_check(path: Path) -> Check:
    lock = lock_path_for(path)
    name = f"{lock.name}"
    if not lock.exists():
        return Check(name, "ok", "no lock file (none needed until the first write)")
    try:
        with open(lock, "a") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    except BlockingIOError:
        return Check(name, "warn", "held by a running mnemo process right now",
                     "wait for it to finish; a lock never outlives its process")
    except OSError as exc:
        return Check(name, "fail", f"cannot be opened ({exc})", f"chmod 644 {lock}")
    return Check(name, "ok", "free (flock locks die with their process, so a leftover "
                 "lock file never blocks)")


def _plugin_checks(home: Home, config: MnemoConfig) -> list[Check]:
    from mnemo.context import load_engine_class
    from mnemo.memory.plugins import load_provider

    checks: list[Check] = []
    engine = config.context.engine or "compressor"
    try:
        load_engine_class(engine, home=home)
        checks.append(Check("context engine", "ok", f"{engine!r} loads"))
    except MnemoError as exc:
        checks.append(Check("context engine", "fail", str(exc),
                            "set context.engine to an installed engine (compressor, lcm)"))
    name = config.memory.provider
    if not name:
        checks.append(Check("memory provider", "ok", "none selected (built-in memory only)"))
        return checks
    try:
        provider = load_provider(name, home)
        if not provider.is_available():
            checks.append(Check("memory provider", "warn", f"{name!r} is not available here",
                                f"check memory.providers.{name} and its API key"))
            return checks
        provider.initialize("doctor", home=home, config=config,
                            settings=config.memory.providers.get(name, {}))
        provider.shutdown()
    except (MnemoError, ValueError, TypeError, KeyError) as exc:
        checks.append(Check("memory provider", "fail", f"{name!r}: {exc}",
                            f"fix memory.providers.{name} or memory.provider in config.yaml"))
        return checks
    checks.append(Check("memory provider", "ok", f"{name!r} starts"))
    return checks


def _database_check(home: Home) -> Check:
    path = home.state_db
    repair = ("run `mnemo sessions repair` (the damaged file is kept aside, what can be "
              "read is copied into a fresh archive)")
    try:
        from mnemo.sessions import SessionStore
        from mnemo.sessions.repair import integrity_problem

        with SessionStore(path) as store:
            mode = store.journal_mode()
            count = store.count_messages()
        problem = integrity_problem(path)
        probe = sqlite3.connect(":memory:")
        try:
            probe.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
        finally:
            probe.close()
    except DatabaseDamagedError as exc:
        return Check("state.db", "fail", str(exc), repair)
    except sqlite3.OperationalError as exc:
        return Check("state.db", "fail", f"this SQLite lacks FTS5 with trigrams ({exc})",
                     "use a Python built with SQLite 3.34 or newer")
    except OSError as exc:
        return Check("state.db", "fail", f"cannot be used: {exc}",
                     f"check that {path.parent} exists and you may write to it")
    except (MnemoError, sqlite3.Error) as exc:
        return Check("state.db", "fail", f"cannot be used: {exc}",
                     f"check free disk space and the permissions of {path} and its folder")
    if problem:
        return Check("state.db", "fail", f"is damaged ({problem})", repair)
    return Check("state.db", "ok", f"opens in {mode} mode with FTS5; {count:,} messages stored")


def _storage_check(home: Home, config: MnemoConfig) -> list[Check]:
    """The PostgreSQL database, when storage.url (or MNEMO_STORAGE_URL) names one."""
    from mnemo.storage.factory import storage_url
    from mnemo.storage.status import storage_status

    try:
        if not storage_url(config):
            return []
        info = storage_status(config, home)
    except MnemoError as exc:
        return [Check("postgresql", "fail", str(exc),
                      "check storage.url / MNEMO_STORAGE_URL and that the server runs; "
                      "see docs/storage.md")]
    return [Check("postgresql", "ok",
                  f"{info.location} schema v{info.schema_version}, {info.sessions:,} sessions, "
                  f"{info.messages:,} messages, namespace {info.namespace!r}, "
                  f"{info.latency_ms} ms per round trip")]


def _context_files_check(home: Home, config: MnemoConfig, cwd: Path) -> Check:
    from mnemo.prompt.context_files import load_context_files

    loaded = load_context_files(cwd, max_chars=config.context_file_max_chars,
                                allow_patterns=config.security.allow_patterns)
    if not loaded.files:
        return Check("context files", "ok", f"none in {cwd}")
    blocked = [f for f in loaded.findings if f.blocked]
    names = ", ".join(p.name for p in loaded.files)
    if blocked:
        first = blocked[0]
        return Check("context files", "warn",
                     f"BLOCKED {first.file} line {first.line}: {first.pattern_id} "
                     f"({len(blocked)} finding(s) in {names})",
                     f"if the text is legitimate, allow it: security.allow_patterns: "
                     f"{{{first.file}: [{first.pattern_id}]}}")
    return Check("context files", "ok", f"{names} loaded, nothing blocked")


def _logs_check(home: Home) -> Check:
    logs = home.logs_dir
    if logs.exists() and not logs.stat().st_mode & stat.S_IWUSR:
        return Check("logs", "fail", f"{logs} is not writable", f"chmod 755 {logs}")
    return Check("logs", "ok", f"{home.log_file} (grep compress|summary|cooldown|BLOCKED)")


def _model_check(home: Home, config: MnemoConfig) -> Check:
    from mnemo.llm import client_for_choice, resolve_model_choice

    try:
        choice = resolve_model_choice(config, home=home)
        client = client_for_choice(choice, home=home)
        start = time.perf_counter()
        reply = client.complete([{"role": "user", "content": "Reply with the word OK."}],
                                max_tokens=8, temperature=0.0)
        elapsed = time.perf_counter() - start
    except MnemoError as exc:
        return Check("model", "fail", str(exc), "see `mnemo models` and docs/llm.md")
    return Check("model", "ok", f"{choice.model} answered in {elapsed:.1f} s "
                 f"({reply.usage.prompt_tokens} prompt tokens)")


def run_checks(home: Home, cwd: Path, *, model: bool = True) -> list[Check]:
    """Every check, in the order of the debugging guide."""
    checks = _home_checks(home)
    config_check, config = _config_check(home)
    checks.append(config_check)
    steps: list[Callable[[], Check | list[Check]]] = [
        lambda: _memory_checks(home, config),
        lambda: _plugin_checks(home, config),
        lambda: _database_check(home),
        lambda: _storage_check(home, config),
        lambda: _context_files_check(home, config, cwd),
        lambda: _logs_check(home),
    ]
    if model:
        steps.append(lambda: _model_check(home, config))
    for step in steps:
        outcome = step()
        checks.extend(outcome if isinstance(outcome, list) else [outcome])
    return checks


_MARKS = {"ok": ("ok", "green"), "warn": ("warn", "yellow"), "fail": ("FAIL", "red")}


@click.command()
@click.option("--skip-model", is_flag=True, help="Do not call the model.")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@pass_state
def doctor(state: CliState, skip_model: bool, as_json: bool) -> None:
    """Check the home folder, config, memory files, locks, state.db, context files and model.

    Every line says what was found; a problem comes with the command that fixes it.
    Exits with 1 when a check fails.
    """
    # A key in a base_url (userinfo or query) never reaches the screen.
    checks = [Check(c.name, c.verdict, mask_urls_in(c.detail), mask_urls_in(c.fix))
              for c in run_checks(state.home, Path.cwd(), model=not skip_model)]
    if as_json:
        echo_json([asdict(c) for c in checks])
    else:
        for check in checks:
            label, colour = _MARKS[check.verdict]
            click.echo(f"{click.style(f'[{label:>4}]', fg=colour)} {check.name}: {check.detail}")
            if check.fix and check.verdict != "ok":
                click.echo(f"       fix: {check.fix}")
    if any(c.verdict == "fail" for c in checks):
        raise SystemExit(1)
