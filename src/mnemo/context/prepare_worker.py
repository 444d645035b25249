"""Who runs the background preparer's jobs (C17): a thread, or a virtual clock.

``ThreadRunner`` is what a live session uses. It starts a daemon thread when told there
may be work and lets it end when there is none, so an idle session holds no thread. Before
every job it waits on the ``TurnGate``: while a turn is under way, from the user's message
to the answer, nothing new is sent to the summariser, so with the embedded model (one
server, one slot) the turn goes first, its later calls too: a summary sent between a tool
round and the next call would be served before that call. ``gated`` wraps the summariser
so the same holds between the chunks of a job. Only a compaction that chose to wait for
a finishing update (``compression.max_wait_s``) lets that job's calls through
(``let_through``); no new job begins meanwhile (one begun then raced the compaction for
what was ready, and the test of prepared compactions got 31–37 of 45 instead of 44 of 47).

``VirtualRunner`` runs the same jobs on a virtual clock: a job's model calls are made at
once (the summariser is scripted), but its result lands only when the clock has moved on
by the latency given per call. The benchmark and the tests use it to replay hours of
think time and slow summarisers without sleeping.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from mnemo.context.engine import Summarizer
from mnemo.context.prepare import Job, Preparer
from mnemo.errors import CallStoppedError

__all__ = ["ThreadRunner", "TurnGate", "VirtualClock", "VirtualRunner", "gated"]

log = logging.getLogger("mnemo.context")


class TurnGate:
    """Closed while a turn runs; background work waits for it to open."""

    def __init__(self) -> None:
        # ``_open``: a job's calls may go on (no turn, or one that lends the gate);
        # ``_idle``: a new job may begin (no turn at all: a turn that waits for one job
        # to finish does not want another begun meanwhile).
        self._open = threading.Event()
        self._open.set()
        self._idle = threading.Event()
        self._idle.set()
        self._lock = threading.Lock()
        # Turns (and their model calls) under way, and waits that let background work
        # through meanwhile.
        self._held = {"turns": 0, "lent": 0}
        self._ended = False

    def _settle(self) -> None:
        turn = self._held["turns"] and not self._ended
        for event, shut in ((self._open, turn and not self._held["lent"]), (self._idle, turn)):
            if shut:
                event.clear()
            else:
                event.set()

    def end(self) -> None:
        """For good: the session is over. ``busy`` from now on (a summary running stops,
        ``make_summarizer``'s ``stop``), and no one waits at the gate any more: the worker
        is let go to find no work, and ``gated`` calls raise ``CallStoppedError``."""
        with self._lock:
            self._ended = True
            self._settle()

    @property
    def ended(self) -> bool:
        return self._ended

    @contextmanager
    def turn_call(self) -> Iterator[None]:
        """Around a turn, and around each of its model calls (it nests)."""
        with self._counted("turns"):
            yield

    @contextmanager
    def let_through(self) -> Iterator[None]:
        """Open, inside a turn, while it waits for background work to finish: the calls
        of a job under way go on; no new job begins (``wait_idle``)."""
        with self._counted("lent"):
            yield

    @contextmanager
    def _counted(self, kind: str) -> Iterator[None]:
        """One more ``kind`` (``turns`` or ``lent``) under way for the block."""
        self._add(kind, 1)
        try:
            yield
        finally:
            self._add(kind, -1)

    def _add(self, kind: str, step: int) -> None:
        with self._lock:
            self._held[kind] += step
            self._settle()

    @property
    def busy(self) -> bool:
        return self._ended or not self._open.is_set()

    def wait_open(self, timeout: float | None = None) -> bool:
        """Until a job's next call may go (see ``let_through``)."""
        return self._open.wait(timeout)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Until a new job may begin: no turn under way, or the session ended."""
        return self._idle.wait(timeout)


def gated(summarizer: Summarizer, gate: TurnGate) -> Summarizer:
    """``summarizer`` that waits, before each call, until no turn runs; once the gate has
    ended it raises ``CallStoppedError`` instead."""
    def call(prompt: str) -> str:
        gate.wait_open()
        if gate.ended:
            raise CallStoppedError("the session has ended")
        return summarizer(prompt)
    return call


class ThreadRunner:
    """Runs a preparer's jobs on a daemon thread that lives only while there is work."""

    def __init__(self, preparer: Preparer, gate: TurnGate | None = None) -> None:
        self.preparer = preparer
        self.gate = gate or TurnGate()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def notify(self) -> None:
        with self._lock:
            self._wake.set()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="mnemo-prepare",
                                                daemon=True)
                self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the worker to run out of work (tests, and the end of a session)."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _work(self) -> None:
        while True:
            self._wake.clear()
            self.gate.wait_idle()  # a turn goes first
            # Once the session is over nothing more is begun (a job would only be
            # stopped, and begun again, until the session's end forgets it).
            job = None if self.gate.ended else self.preparer.begin()
            if job is None:
                with self._lock:
                    if self._wake.is_set() and not self.gate.ended:
                        continue  # new work came in while the last job was being looked up
                    self._thread = None
                    return
            try:
                job.run()
            finally:
                self.preparer.commit(job)


class VirtualClock:
    """A clock that only moves when told to."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


class VirtualRunner:
    """Runs a preparer's jobs on ``clock``; each model call takes ``latency`` seconds."""

    def __init__(self, preparer: Preparer, clock: VirtualClock, latency: float,
                 on_job: Callable[[Job], None] | None = None) -> None:
        self.preparer = preparer
        self.clock = clock
        self.latency = latency
        self.on_job = on_job
        self.current: Job | None = None
        self.finish = 0.0

    def notify(self) -> None:
        if self.current is None:
            self._start(self.clock.now)

    def advance(self, to: float) -> None:
        """Move the clock to ``to``, landing every job that finishes on the way."""
        while self.current is not None and self.finish <= to:
            job, at = self.current, self.finish
            self.current = None
            self.clock.now = at
            self.preparer.commit(job)
            self._start(at)
        self.clock.now = max(self.clock.now, to)

    def _start(self, at: float) -> None:
        job = self.preparer.begin()
        if job is None:
            return
        job.run()
        if self.on_job is not None:
            self.on_job(job)
        self.current = job
        self.finish = at + self.latency * max(job.calls, 1)
