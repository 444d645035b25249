"""Background preparation of the next compaction's summary (C17): what is certain, what
is prepared, and when a prepared summary may be swapped in.

A message is *certain* to be compacted at the next threshold once its distance from the
end of the conversation, plus the growth still needed to reach the threshold, is past the
tail's soft ceiling (C8): the head and the tail only move forward, so nothing can bring it
back. ``certain_end`` finds where the certain messages stop, conservatively (a large tool
output counts as its cleared placeholder, since step 1 may clear it before the tail is
measured; the latest user message and its turn stay out; a tool-call group is never cut).

The ``Preparer`` keeps one ``Prepared`` summary: a model's summary of the middle from the
head's end up to some message, bound to the fingerprints (position and content hash) of
every message from the first after the system prompt to the last it covers. Work is done
in ``Job``s: ``begin`` (under the lock) picks the certain messages not covered yet and the
summary to build on, ``Job.run`` calls the model without any lock (C10: the previous
summary plus the new turns only, whatever arrived while the last job ran, in one job), and
``commit`` keeps the result only if nothing it was built on changed meanwhile. Who runs
jobs and when is the runner's business (``prepare_worker.py``: a thread, or a virtual clock
in the benchmark), so this module never sleeps and never starts a thread.

``take`` is the swap side: the prepared summary is handed to the compressor only if the
fingerprints of the conversation being compressed still match, it starts where the middle
starts and ends inside it, and the compaction has no focus topic (a prepared summary has
none). Any mismatch discards it: it is never used for other messages.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mnemo.context.boundaries import (
    TAIL_SOFT_CEILING,
    align_boundary_backward,
    find_head_end,
    latest_user_index,
    system_offset,
)
from mnemo.context.engine import Summarizer
from mnemo.context.lcm_nodes import take_apart_span
from mnemo.context.markers import PRUNED_TOOL_PLACEHOLDER
from mnemo.context.model_summary import summarise_with_model
from mnemo.context.prompt import summary_budget
from mnemo.context.repair import repair_messages
from mnemo.messages import Message
from mnemo.tokens import estimate_message_tokens_rough, estimate_tokens_rough

__all__ = [
    "Job",
    "Prepared",
    "Preparer",
    "Runner",
    "certain_end",
    "describe_status",
    "fingerprints",
]

log = logging.getLogger("mnemo.context")

_PRUNE_MIN_CHARS = 200  # step 1 clears tool outputs longer than this (C6)
_CLEARED_FLOOR = estimate_tokens_rough(PRUNED_TOOL_PLACEHOLDER) + 10  # what one becomes, at least


class Runner(Protocol):
    """Runs the preparer's jobs somewhere else; ``notify`` says there may be work."""

    def notify(self) -> None: ...


def fingerprints(messages: Sequence[Message]) -> list[str]:
    """One short content hash per message; with its position it identifies the message."""
    return [hashlib.sha256(json.dumps(m, sort_keys=True, default=str).encode()).hexdigest()[:20]
            for m in messages]


def certain_end(messages: Sequence[Message], tokens: Sequence[int], head_end: int, *,
                growth: int, tail_budget: int) -> int:
    """Index just past the messages certain to be in the next compaction's middle.

    ``growth`` is how many (rough) tokens will still be added before the threshold is
    reached. ``head_end`` means "none yet".
    """
    n = len(messages)
    soft_ceiling = int(tail_budget * TAIL_SOFT_CEILING)
    after = growth  # the least the tail will hold after message i, when it is measured
    end = head_end
    for i in range(n - 1, head_end - 1, -1):
        least = _least_tokens(messages[i], tokens[i])
        if after + least > soft_ceiling and n - 1 - i >= 3:
            end = i + 1
            break
        after += least
    latest_user = latest_user_index(messages, head_end)
    if latest_user is not None and latest_user < end:
        end = latest_user  # the latest user message is always kept in the tail (C8)
    if end < n:
        end = align_boundary_backward(messages, end, head_end)
    return max(end, head_end)


def _least_tokens(message: Message, tokens: int) -> int:
    """What ``message`` may count when the tail is measured: a large tool output may have
    been cleared by step 1 first."""
    if message.get("role") == "tool" and tokens > _CLEARED_FLOOR:
        content = message.get("content")
        if not isinstance(content, str) or len(content) > _PRUNE_MIN_CHARS:
            return _CLEARED_FLOOR
    return tokens


@dataclass(frozen=True)
class Prepared:
    """A model's summary of ``messages[start:end]`` (positions in the repaired list).

    ``keys`` are the fingerprints of ``messages[first:end]`` (``first``: just past the
    system prompt), so the head is bound too: a changed head moves the middle.
    """

    first: int
    start: int
    end: int
    keys: tuple[str, ...]
    body: str
    middle_tokens: int
    calls: int

    @property
    def covered(self) -> int:
        return self.end - self.start


@dataclass
class _Snapshot:
    messages: list[Message]
    keys: list[str]
    tokens: list[int]
    first: int
    head_end: int
    certain: int


@dataclass
class Job:
    """One update of the prepared summary; ``run`` calls the model, without any lock."""

    generation: int
    base: Prepared | None
    snapshot: _Snapshot
    end: int
    summarizer: Summarizer
    window: int
    max_summary_tokens: int
    body: str = ""
    calls: int = 0
    error: str | None = None
    committed: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def covers(self) -> int:
        return self.end - self.snapshot.head_end

    def run(self) -> None:
        s = self.snapshot
        start = self.base.end if self.base is not None else s.head_end
        span = take_apart_span(s.messages[start:self.end])
        previous = self.base.body if self.base is not None else span.previous
        middle = sum(s.tokens[s.head_end:self.end])
        try:
            self.body, self.calls = summarise_with_model(
                self.summarizer, span.turns, window=self.window,
                budget=summary_budget(middle, self.max_summary_tokens),
                previous_summary=previous, focus_topic=None, extra_context="")
            if not self.body.strip():
                self.error = "the model answered nothing"
        except Exception as exc:  # logged and retried on the next turn, never raised
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.done.set()


class Preparer:
    """The prepared summary of one conversation, kept current as it grows (C17).

    ``observe`` (main thread) records the conversation after each turn; the runner asks
    ``begin`` for work and hands the finished job to ``commit``; the compressor calls
    ``take`` at the threshold. All state is guarded by one lock, never held during a
    model call.
    """

    def __init__(self, summarizer: Summarizer, *, protect_first_n: int, window: int,
                 prepare_at: float = 0.0, max_wait_s: float = 0.0,
                 runner: Runner | None = None) -> None:
        self.summarizer = summarizer
        self.protect_first_n = protect_first_n
        self.window = window
        self.prepare_at = prepare_at
        self.max_wait_s = max_wait_s
        self.runner = runner
        self.failures = 0  # background jobs that failed (each logged, retried next turn)
        self.calls = 0  # model calls made by committed or failed jobs
        self._lock = threading.Lock()
        self._generation = 0
        self._snapshot: _Snapshot | None = None
        self._prepared: Prepared | None = None
        self._job: Job | None = None
        self._failed_at: int | None = None  # the snapshot serial a failure happened on
        self._serial = 0
        self._max_summary_tokens = 0

    # -- the conversation -------------------------------------------------------------------

    def observe(self, messages: Sequence[Message], *, prompt_tokens: int, threshold: int,
                tail_budget: int, max_summary_tokens: int) -> None:
        """The conversation now (system prompt included) and the last reported prompt size."""
        work = repair_messages(messages, stubs=False).messages
        tokens = [estimate_message_tokens_rough(m) for m in work]
        estimate = sum(tokens)
        first = system_offset(work)
        head_end = find_head_end(work, self.protect_first_n)
        end = head_end
        if max(prompt_tokens, estimate) >= self.prepare_at * threshold:
            # Growth still to come, in rough tokens (what the tail is measured in): the
            # reported count runs ahead when the real tokenizer counts more than the
            # estimate, and the threshold is reached by whichever count gets there first.
            growth = threshold - estimate
            if prompt_tokens > estimate:
                growth = min(growth, int((threshold - prompt_tokens) * estimate / prompt_tokens))
            end = certain_end(work, tokens, head_end, growth=max(growth, 0),
                              tail_budget=tail_budget)
        keys = fingerprints(work)
        with self._lock:
            self._serial += 1
            self._max_summary_tokens = max_summary_tokens
            self._snapshot = _Snapshot(list(work), keys, tokens, first, head_end, end)
            if not self._matches(self._prepared, self._snapshot):
                self._discard("the conversation changed")
        if self.runner is not None:
            self.runner.notify()

    def invalidate(self, why: str) -> None:
        """Forget everything (``/new``, ``/reset``, a resume, a compaction happened)."""
        with self._lock:
            self._snapshot = None
            self._discard(why)

    def _discard(self, why: str) -> None:
        if self._prepared is not None or self._job is not None:
            log.debug("prepared summary discarded: %s", why)
        self._prepared = None
        self._job = None
        self._generation += 1
        self._failed_at = None

    @staticmethod
    def _matches(prepared: Prepared | None, snapshot: _Snapshot) -> bool:
        if prepared is None:
            return True
        return (prepared.first == snapshot.first and prepared.start == snapshot.head_end
                and tuple(snapshot.keys[prepared.first:prepared.end]) == prepared.keys)

    # -- the runner's side --------------------------------------------------------------------

    def begin(self) -> Job | None:
        """The next job, or ``None`` when the prepared summary covers all that is certain."""
        with self._lock:
            s = self._snapshot
            if s is None or self._job is not None or self._failed_at == self._serial:
                return None
            covered = self._prepared.end if self._prepared is not None else s.head_end
            if s.certain <= covered or not take_apart_span(s.messages[covered:s.certain]).turns:
                return None
            self._job = Job(self._generation, self._prepared, s, s.certain, self.summarizer,
                            self.window, self._max_summary_tokens)
            return self._job

    def commit(self, job: Job) -> None:
        """Keep what ``job`` made, unless what it was built on changed meanwhile."""
        with self._lock:
            if job.committed:
                return  # landed already (``take`` waited for it)
            job.committed = True
            self.calls += job.calls
            if self._job is job:
                self._job = None
            if job.error is not None:
                self.failures += 1
                if job.generation == self._generation:
                    self._failed_at = self._serial  # retried after the next observe
                log.warning("background summary failed (%s); retrying on the next turn",
                            job.error)
                return
            if job.generation != self._generation or self._prepared is not job.base:
                return
            s = job.snapshot
            self._prepared = Prepared(
                s.first, s.head_end, job.end, tuple(s.keys[s.first:job.end]), job.body,
                sum(s.tokens[s.head_end:job.end]), (job.base.calls if job.base else 0)
                + job.calls)

    # -- the compressor's side ------------------------------------------------------------------

    def take(self, messages: Sequence[Message], head_end: int, tail_start: int,
             focus_topic: str | None) -> Prepared | None:
        """The prepared summary if it is exactly about ``messages[head_end:…]`` (the
        repaired list being compressed) and inside its middle; else ``None``, discarded."""
        job = self._job
        if job is not None and self.max_wait_s > 0 and not focus_topic:
            job.done.wait(self.max_wait_s)  # a model update about to finish is worth it
            if job.done.is_set():
                self.commit(job)
        with self._lock:
            prepared = self._prepared
            first = system_offset(messages)
            usable = (prepared is not None and not focus_topic and prepared.first == first
                      and prepared.start == head_end and prepared.end <= tail_start
                      and tuple(fingerprints(messages[first:prepared.end])) == prepared.keys)
            self._discard("a compaction is under way")
            return prepared if usable else None

    def status(self) -> dict[str, Any]:
        """``state`` (idle / preparing / ready) and how many messages it is about."""
        with self._lock:
            job, prepared = self._job, self._prepared
            state: dict[str, Any] = {"state": "idle", "covered": 0, "preparing": 0}
            if prepared is not None:
                state.update(state="ready", covered=prepared.covered)
            if job is not None:
                state.update(state="preparing", preparing=job.covers)
            state.update(failures=self.failures, calls=self.calls)
            return state


def describe_status(status: dict[str, Any] | None) -> str:
    """The status-line text: ``preparing 12`` / ``ready, covering 40`` / ``idle``."""
    if not status:
        return ""
    if status.get("state") == "preparing":
        return f"summary: preparing {status['preparing']}"
    if status.get("state") == "ready":
        return f"summary: ready, covering {status['covered']}"
    return "summary: idle"

