"""Background preparation of the next compaction's summary (C17): which messages will be
compacted, what is prepared for them, and when a prepared summary may be swapped in.

A message is *certain* to be compacted at the next threshold once its distance from the
end, plus the growth still needed to reach the threshold, is past the tail's soft
ceiling (C8): the head and the tail only move forward. ``certain_end`` runs steps 1 and 3
ahead to find where those messages stop — large tool outputs measured as step 1 will
leave them, the latest user message kept out, a tool-call group never cut. It predicts
twice: *sure* (the growth counts at the rate the conversation is measured) and *likely*
(the newest growth counts in full, as a large new output would).

The ``Preparer`` keeps *checkpoints*: model summaries of the middle from the head's end
up to some message, each bound to the fingerprints (position and content hash) of every
message from the first after the system prompt to the last it covers. Work is done in
``Job``s: ``begin`` (under the lock) picks the base checkpoint and the messages to add
(the sure part first, then the likely part), ``Job.run`` calls the model without any lock
(C10: the base summary plus the new turns only — whatever arrived while the last job
ran goes in one job), and ``commit`` keeps the result unless what it was built on
changed meanwhile. Who runs jobs and when is the runner's business
(``prepare_worker.py``: a thread, or a virtual clock), so this module never sleeps and
never starts a thread.

``take`` is the swap side: the furthest checkpoint whose messages are all unchanged, that
starts where the middle starts and ends inside it, and only without a focus topic.
Everything is discarded then, used or not: a checkpoint is never used for other messages.
The one exception is the job under way that extends the checkpoint swapped in: it keeps
running, and ``adopt`` binds its result to the compacted list (the new summary and the
turns kept after it, ``prepare_predict.rebind``) or drops it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from mnemo.context.boundaries import (
    find_head_end,
    system_offset,
)
from mnemo.context.completed_summary import completed
from mnemo.context.engine import Summarizer
from mnemo.context.lcm_nodes import take_apart_span
from mnemo.context.metered import MessageCounter
from mnemo.context.model_summary import summarise_with_model
from mnemo.context.prepare_predict import certain_end, fingerprints, rebind, rekey
from mnemo.context.prompt import summary_budget
from mnemo.context.repair import repair_messages
from mnemo.context.summary.dates import middle_date
from mnemo.errors import CallStoppedError
from mnemo.messages import Message
from mnemo.tokens import estimate_message_tokens_rough

__all__ = [
    "Job",
    "Prepared",
    "Preparer",
    "Runner",
    "Swap",
    "certain_end",
    "describe_status",
    "fingerprints",
]

log = logging.getLogger("mnemo.context")

_MAX_CHECKPOINTS = 16  # summaries kept between two compactions (each a few KB)


class Runner(Protocol):
    """Runs the preparer's jobs somewhere else; ``notify`` says there may be work."""

    def notify(self) -> None: ...


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
    # The model's own summary when ``body`` is it completed by the local summariser
    # (``completed_summary.py``): the next update goes on from what the model wrote.
    model_body: str = ""

    @property
    def covered(self) -> int:
        return self.end - self.start

    @property
    def model_base(self) -> str:
        """What the model's next update starts from."""
        return self.model_body or self.body


@dataclass(frozen=True)
class Swap:
    """What the compressor swaps in at the threshold: the prepared summary, or ``None``
    when the first one is still being made (the local summariser then does it all)."""

    prepared: Prepared | None


@dataclass(frozen=True)
class Adopted:
    """A job carried over a compaction: its result will cover ``after[start:end]``."""

    job: Job
    generation: int
    first: int
    start: int
    end: int
    keys: tuple[str, ...]


@dataclass
class _Snapshot:
    messages: list[Message]
    keys: list[str]
    tokens: list[int]
    first: int
    head_end: int
    certain: int  # the end of the messages surely in the next middle (a safe prediction)
    likely: int  # the end of those likely to be (>= certain)


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
    complete: bool = False  # fill the room the model's summary leaves (completed_summary)
    body: str = ""
    model_body: str = ""  # the model's answer, when ``body`` completes it
    calls: int = 0
    error: str | None = None
    stopped: bool = False  # its call was stopped for a turn (``CallStoppedError``)
    committed: bool = False
    keys: tuple[str, ...] = ()  # of the snapshot; rebound by ``Preparer.carry_over``
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def covers(self) -> int:
        return self.end - self.snapshot.head_end

    def run(self) -> None:
        s = self.snapshot
        start = self.base.end if self.base is not None else s.head_end
        span = take_apart_span(s.messages[start:self.end])
        previous = self.base.model_base if self.base is not None else span.previous
        budget = summary_budget(sum(s.tokens[s.head_end:self.end]), self.max_summary_tokens)
        try:
            self.body, self.calls = summarise_with_model(
                self.summarizer, span.turns, window=self.window, budget=budget,
                previous_summary=previous, focus_topic=None, extra_context="")
            if not self.body.strip():
                self.error = "the model answered nothing"
            elif self.complete:
                self.model_body, self.body = self.body, self._completed(self.body, budget,
                                                                         previous or "")
        except CallStoppedError:
            self.stopped = True  # begun again once the turn has answered
        except Exception as exc:  # logged and retried on the next turn, never raised
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.done.set()

    def _completed(self, body: str, budget: int, model_previous: str) -> str:
        """``body`` completed by the local summariser's reading of the whole middle so
        far (most of it read for the last update already: the reader's cache); ``body``
        itself should that fail — the model's work is not thrown away for it."""
        s = self.snapshot
        whole = take_apart_span(s.messages[s.head_end:self.end])
        try:
            return completed(body, whole.turns, budget_tokens=budget,
                             previous_summary=whole.previous,
                             session_date=middle_date(s.messages, s.first, s.head_end),
                             model_previous=model_previous)
        except Exception as exc:
            log.warning("background summary not completed (%s: %s); the model's as it is",
                        type(exc).__name__, exc)
            return body


class Preparer:
    """The prepared summary of one conversation, kept current as it grows (C17).

    ``observe`` (main thread) records the conversation after each turn; the runner asks
    ``begin`` for work and hands the finished job to ``commit``; the compressor calls
    ``take`` at the threshold. Every committed job leaves a *checkpoint* (a summary up
    to some message); the swap uses the latest one that ends inside the middle, so a
    prediction that reached too far costs a model call, never a wrong summary. All state
    is guarded by one lock, never held during a model call.
    """

    def __init__(self, summarizer: Summarizer, *, protect_first_n: int, window: int,
                 prepare_at: float = 0.5, max_wait_s: float = 0.0,
                 runner: Runner | None = None, count: MessageCounter | None = None,
                 complete: bool = False) -> None:
        self.summarizer = summarizer
        self.complete = complete  # see ``Job.complete``
        # Tokens of a message as the compressor sizes its tail (the window guard's count
        # when the agent gave one), so the prediction measures what the cut will measure.
        self.count: MessageCounter = count or estimate_message_tokens_rough
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
        self._checkpoints: list[Prepared] = []  # by ``end``, each built on the one before
        self._job: Job | None = None
        # A job extending the checkpoint a compaction just swapped in: ``take`` keeps it
        # running (``_carry``), ``adopt`` rebinds it to the compacted list (``_adopted``).
        self._carry: Job | None = None
        self._adopted: Adopted | None = None
        self._failed_at: int | None = None  # the snapshot serial a failure happened on
        self._serial = 0
        self._max_summary_tokens = 0

    # -- the conversation -------------------------------------------------------------------

    def observe(self, messages: Sequence[Message], *, prompt_tokens: int, threshold: int,
                tail_budget: int, max_summary_tokens: int) -> None:
        """The conversation now (system prompt included) and the last reported prompt size."""
        work = repair_messages(messages, stubs=False).messages
        tokens = [self.count(m) for m in work]
        estimate = sum(tokens)
        first = system_offset(work)
        head_end = find_head_end(work, self.protect_first_n)
        end = likely = head_end
        # The reported size of the last request (everything before the last assistant
        # message) minus its estimate is what the estimate does not see (tool schemas,
        # a tokenizer that counts more); the threshold is reached by whichever count
        # gets there first.
        last = max((i for i, m in enumerate(work) if m.get("role") == "assistant"),
                   default=len(work))
        unseen = max(0, prompt_tokens - sum(tokens[:last])) if prompt_tokens else 0
        if estimate + unseen >= self.prepare_at * threshold:
            growth = threshold - estimate - unseen  # counted as the tail is measured
            end = certain_end(work, tokens, head_end, growth=max(growth, 0),
                              tail_budget=tail_budget, count=self.count)
            likely = certain_end(work, tokens, head_end, growth=max(growth, 0),
                                 tail_budget=tail_budget, likely=True, count=self.count)
        keys = fingerprints(work)
        with self._lock:
            self._serial += 1
            self._max_summary_tokens = max_summary_tokens
            self._snapshot = _Snapshot(list(work), keys, tokens, first, head_end, end,
                                       max(end, likely))
            kept = [c for c in self._checkpoints if c.first == first and c.start == head_end
                    and tuple(keys[first:c.end]) == c.keys]
            a = self._adopted
            if len(kept) < len(self._checkpoints) or (a is not None and (
                    a.first != first or a.start != head_end
                    or tuple(keys[first:a.end]) != a.keys)):
                # A checkpoint stands for exactly the messages it covers: one of them
                # changed (an edit, another session, a rewrite), so it goes, with the
                # job built on it (or carried over a compaction on them).
                self._discard("the conversation changed", keep=kept)
        if self.runner is not None:
            self.runner.notify()

    def invalidate(self, why: str) -> None:
        """Forget everything (``/new``, ``/reset``, a resume, a compaction happened)."""
        with self._lock:
            self._snapshot = None
            self._discard(why)

    def _discard(self, why: str, keep: Sequence[Prepared] = ()) -> None:
        if self._checkpoints or self._job is not None:
            log.debug("prepared summary discarded: %s", why)
        self._checkpoints = list(keep)
        self._job = self._carry = self._adopted = None
        self._generation += 1
        self._failed_at = None

    @property
    def _latest(self) -> Prepared | None:
        return self._checkpoints[-1] if self._checkpoints else None

    # -- the runner's side --------------------------------------------------------------------

    def begin(self) -> Job | None:
        """The next job, or ``None`` when the prepared summary covers all that is certain."""
        with self._lock:
            s = self._snapshot
            if s is None or self._job is not None or self._failed_at == self._serial:
                return None
            # Build on the furthest checkpoint that is not past the likely end; secure
            # what is sure first (a checkpoint the swap can use), then reach for what
            # is likely (one close to where the middle will end).
            base = max((c for c in self._checkpoints if c.end <= s.likely),
                       key=lambda c: c.end, default=None)
            covered = base.end if base is not None else s.head_end
            target = s.certain if covered < s.certain else s.likely
            if target <= covered or not take_apart_span(s.messages[covered:target]).turns:
                return None
            self._job = Job(self._generation, base, s, target, self.summarizer,
                            self.window, self._max_summary_tokens, self.complete,
                            keys=tuple(s.keys))
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
            adopted, self._adopted = self._adopted, (
                None if self._adopted is not None and self._adopted.job is job else self._adopted)
            if job.stopped:
                log.info("background summary stopped so that a turn goes first; it starts "
                         "again after the turn")
                return
            if job.error is not None:
                self.failures += 1
                if job.generation == self._generation:
                    self._failed_at = self._serial  # retried after the next observe
                log.warning("background summary failed (%s); retrying on the next turn",
                            job.error)
                return
            if adopted is not None and adopted.job is job:
                if adopted.generation == self._generation:
                    self._keep(Prepared(adopted.first, adopted.start, adopted.end,
                                        adopted.keys, job.body, 0, job.calls,
                                        job.model_body))
                return
            if job.generation != self._generation or (
                    job.base is not None and not any(c is job.base for c in self._checkpoints)):
                return
            s = job.snapshot
            made = Prepared(s.first, s.head_end, job.end, job.keys[s.first:job.end], job.body,
                            sum(s.tokens[s.head_end:job.end]),
                            (job.base.calls if job.base else 0) + job.calls, job.model_body)
            self._keep(made)

    def _keep(self, made: Prepared) -> None:
        kept = [c for c in self._checkpoints if c.end != made.end]
        self._checkpoints = sorted([*kept, made], key=lambda c: c.end)[-_MAX_CHECKPOINTS:]

    # -- the compressor's side ------------------------------------------------------------------

    def take(self, messages: Sequence[Message], head_end: int, tail_start: int,
             focus_topic: str | None) -> Swap | None:
        """What to swap in for the middle ``messages[head_end:tail_start]`` (the repaired
        list being compressed), or ``None``: nothing was under way, summarise as before.

        A checkpoint counts only if every message it covers is unchanged and inside the
        middle, and there is no focus topic; all are discarded either way.
        """
        job = self._job
        if job is not None and self.max_wait_s > 0 and not focus_topic:
            job.done.wait(self.max_wait_s)  # a model update about to finish is worth it
            if job.done.is_set():
                self.commit(job)
        with self._lock:
            usable = self._usable(messages, head_end, tail_start)
            under_way = self._under_way()
            job = self._job
            self._discard("a compaction is under way")
            if (job is not None and usable is not None and job.base is usable
                    and not focus_topic):
                # It extends what is swapped in: ``adopt`` may rebind it to the result.
                self._job = self._carry = job
        if focus_topic or not (usable or under_way):
            return None
        return Swap(usable)

    def peek(self, messages: Sequence[Message], head_end: int, tail_start: int
             ) -> Prepared | None:
        """What ``take`` would swap in now; nothing is discarded."""
        with self._lock:
            return self._usable(messages, head_end, tail_start)

    def adopt(self, before: Sequence[Message], after: Sequence[Message] | None,
              origins: Sequence[int | None], tail_start: int) -> None:
        """The compaction that called ``take`` is done: ``after`` (``None``: it did not
        swap the prepared summary in unchanged) is the compacted list, ``origins`` the
        index in ``before`` each message came from. The job kept running then summarises
        the swapped-in summary plus the turns after it, which stay as they were: its
        result is bound to those messages of ``after`` (``rebind``), or dropped."""
        with self._lock:
            job, self._carry = self._carry, None
            if job is None or self._job is not job or job.committed:
                return
            bound = None if after is None else rebind(
                before, after, origins, tail_start, job.end, job.keys)
            if bound is None:
                self._job = None
                return
            first, start, end, keys = bound
            self._adopted = Adopted(job, self._generation, first, start, end, keys)

    def _usable(self, messages: Sequence[Message], head_end: int, tail_start: int
                ) -> Prepared | None:
        """The furthest checkpoint whose messages are all unchanged and inside the middle
        ``messages[head_end:tail_start]`` (under the lock)."""
        first = system_offset(messages)
        keys = tuple(fingerprints(messages[first:tail_start]))
        usable = [c for c in self._checkpoints
                  if c.first == first and c.start == head_end and c.end <= tail_start
                  and keys[:c.end - first] == c.keys]
        return usable[-1] if usable else None

    def _under_way(self) -> bool:
        """Preparation was due: something was certain before the threshold (a compaction
        then folds locally, never waits; only when nothing was certain at all — one huge
        output jumped past both marks — does it summarise as before). Under the lock."""
        snap = self._snapshot
        return (bool(self._checkpoints) or self._job is not None
                or (snap is not None and snap.certain > snap.head_end))

    def carry_over(self, before: Sequence[Message], after: Sequence[Message]) -> None:
        """A compaction cleared old tool outputs (step 1) and summarised nothing: the
        checkpoints, made from those outputs in full, still stand for the same messages,
        so they (and the job under way) are bound to the cleared versions. Anything else
        that differs discards them."""
        with self._lock:
            kept: list[Prepared] = []
            for c in self._checkpoints:
                keys = rekey(before, after, c.first, c.end, c.keys)
                if keys is None:
                    break
                kept.append(replace(c, keys=keys))
            job, adopted = self._job, self._adopted
            if len(kept) < len(self._checkpoints):
                self._discard("a compaction changed the prepared messages", keep=kept)
                return
            self._checkpoints = kept
            if adopted is not None:
                keys = rekey(before, after, adopted.first, adopted.end, adopted.keys)
                if keys is None:
                    self._discard("a compaction changed the messages being prepared",
                                  keep=kept)
                else:
                    self._adopted = replace(adopted, keys=keys)
                return
            if job is not None:
                s = job.snapshot
                keys = rekey(before, after, s.first, job.end, job.keys[s.first:job.end])
                if keys is None:
                    self._discard("a compaction changed the messages being prepared",
                                  keep=kept)
                    return
                job.keys = (*s.keys[:s.first], *keys)
                if job.base is not None:
                    job.base = next((c for c in kept if c.end == job.base.end), None)

    def status(self) -> dict[str, Any]:
        """``state`` (idle / preparing / ready) and how many messages it is about."""
        with self._lock:
            job, latest = self._job, self._latest
            state: dict[str, Any] = {"state": "idle", "covered": 0, "preparing": 0}
            if latest is not None:
                state.update(state="ready", covered=latest.covered)
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

