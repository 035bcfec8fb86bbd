"""The server's load workers: a few threads that open files for every session, each load with a
time limit, so that no load — blocked on I/O, or just long — can hold up another session's.

Why not ``loop.run_in_executor(None, ...)``: Python's default executor is shared with everything
else in the process and has ``min(32, cores + 4)`` threads (6 here); seven loads blocked on a file
that never answered took every one of them, and from then on every new session of every user
waited at "loading…".

How it works (``LoadPool``):

- N worker threads (``--args --load-workers``, default 4; daemon threads, so a blocked one never
  holds up the server's exit) take loads from one queue, first come first served. The queue keeps
  the number of loads in memory at once at N however many sessions open large files together.
- **Time limit** (``--args --load-timeout``, default 120 s), counted from the moment the load was
  asked for: past it the session is told the load failed (``LoadTimedOut``, one line). A load
  still queued is dropped (a worker never starts a load whose time is up). A running one is told
  to stop: the progress callback the pool hands the job raises ``LoadCancelled`` at its next call
  (the loaders report every 1 MiB hashed and every batch of values and live lists parsed).
- **Blocked loads give up their worker.** A job blocked in a system call (a read from a file
  system that does not answer) cannot be stopped, and would hold its worker until its read
  returns. So while a load runs, the session waiting for it checks every 0.25 s whether it made
  progress: a new progress report (the same report repeated, as a load waiting for another
  session's load of the same file sends, is not one), or CPU time used by its thread
  (``time.pthread_getcpuclockid``), or its thread being runnable (Linux's run state ``R``: on a
  machine whose cores are busy a parse can wait longer than ``stall`` for a core without being
  blocked; a load repeating its report, i.e. waiting for another load, does not count this way).
  A load with none of these for ``stall`` seconds (default 1 s) is blocked: its thread is **written
  off and a replacement worker started at once**, so the pool always has N workers taking loads.
  The blocked load keeps its chance: if its read returns within its time limit, its result still
  reaches its session. A written-off thread that comes back rejoins the pool if the pool is short
  of workers, else it exits. A long parse uses CPU the whole time, so it keeps its worker (a
  parse is not blocked, and replacing it would only put more large loads in memory at once).
- At most ``max_stuck`` threads are written off at once (16): past that no replacement is started
  and the pool's capacity shrinks until some come back — a bound on the threads a hung file
  system can cost. A load that then waits past its limit is refused saying how many are stuck.

One ``LoadPool`` per server process (``load_pool()``, kept in Panel's process-wide
``pn.state.cache`` beside ``app.shared.SharedProfiles``); none at module level.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from tilescope.models.errors import TilescopeError

Progress = Callable[[str, float], None]
CACHE_KEY = "tilescope.load_pool"
DEFAULT_WORKERS = 4  # loads are mostly CPU: more than a few on 2 cores only share the same cores
DEFAULT_TIME_LIMIT_S = 120.0  # a 1 GB profile takes ~20 s here on first open; several queued behind it still fit
DEFAULT_STALL_S = 1.0  # no progress report and no CPU for this long: blocked, give its worker to the next load
MAX_STUCK = 16
CHECK_S = 0.25  # how often a waiting session looks at its load


def _runnable(native_id: int | None) -> bool:
    """Whether the thread is running or waiting for a CPU (Linux's state ``R``), not asleep or in I/O."""
    if native_id is None:
        return False
    try:
        with open(f"/proc/self/task/{native_id}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:  # no /proc (not Linux), or the thread has just ended
        return False
    return bool(fields) and fields[0] == b"R"


class LoadTimedOut(TilescopeError):
    """A load that did not finish within its time limit (one line, for the session's error bar)."""


class LoadCancelled(Exception):
    """Raised inside a job that passed its time limit (from its progress callback): stop here."""


def _thread_cpu_clock() -> int | None:
    """The CPU-time clock of the calling thread, where the platform has one."""
    try:
        return time.pthread_getcpuclockid(threading.get_ident())
    except (AttributeError, OSError):
        return None


class _Load:
    """One load: the job, its deadline, its signs of life, and where its outcome goes."""

    def __init__(self, job: Callable[..., Any], args: tuple, progress: Progress | None, loop, time_limit: float):
        self.job: Callable[..., Any] | None = job  # (None once expired before it started)
        self.args, self.user_progress, self.loop = args, progress, loop
        self.future: asyncio.Future = loop.create_future()
        self.deadline = time.monotonic() + time_limit
        self.thread: threading.Thread | None = None  # the worker running it, while it runs
        self.started = False
        self.expired = False  # past its time limit: never started, stopped, or its result dropped
        self.written_off = False  # found blocked: its thread no longer counts as a worker
        self.cpu_clock: int | None = None
        self.native_id: int | None = None  # the kernel's id of its thread, for its run state
        self.cpu_seen = 0.0
        self.active_at = 0.0  # when it last reported progress or used CPU
        self.last_report: tuple | None = None
        self.waiting = False  # its last report repeated the one before: it waits for another load

    def progress(self, stage: str, fraction: float) -> None:
        if self.expired:
            raise LoadCancelled(stage)
        if (stage, fraction) != self.last_report:  # the same report again (a wait) is no sign of life
            self.last_report, self.waiting = (stage, fraction), False
            self.active_at = time.monotonic()
        else:
            self.waiting = True
        # Nor is the CPU the wait's own polling used: on a loaded machine one wake-up can take more
        # than idle_for's 0.1 ms, and the wait looked alive.
        if self.waiting and self.cpu_clock is not None:
            try:
                self.cpu_seen = time.clock_gettime(self.cpu_clock)
            except OSError:
                pass
        if self.user_progress is not None:
            self.user_progress(stage, fraction)

    def idle_for(self, now: float) -> float:
        """Seconds since it last reported progress or used CPU (progress alone where threads have no CPU clock)."""
        if self.cpu_clock is not None:
            try:
                cpu = time.clock_gettime(self.cpu_clock)
            except OSError:  # its thread has just ended
                return 0.0
            if cpu > self.cpu_seen + 1e-4:
                self.cpu_seen, self.active_at = cpu, now
            elif not self.waiting and _runnable(self.native_id):
                # Waiting for a core, not for I/O: with both cores busy a parse can get no CPU for
                # longer than ``stall`` and is not blocked.
                self.active_at = now
        return now - self.active_at

    def settle(self, result: Any, error: BaseException | None) -> None:
        """Hand the outcome to the waiting coroutine, on its loop (nothing if it gave up)."""

        def deliver() -> None:  # on the loop, like the expiry: a load given up is never delivered
            if self.expired or self.future.done():
                return
            if error is not None:
                self.future.set_exception(error)
            else:
                self.future.set_result(result)

        try:
            self.loop.call_soon_threadsafe(deliver)
        except RuntimeError:  # the loop is closed (the server is stopping)
            pass


class LoadPool:
    """N worker threads taking loads from one queue; see the module doc."""

    def __init__(
        self,
        workers: int = DEFAULT_WORKERS,
        time_limit: float = DEFAULT_TIME_LIMIT_S,
        *,
        stall: float = DEFAULT_STALL_S,
        max_stuck: int = MAX_STUCK,
        name: str = "tilescope-load",
    ):
        if workers < 1:
            raise ValueError("a load pool needs at least one worker")
        if not time_limit > 0 or not stall > 0:
            raise ValueError("a load's time limit and stall time must be positive")
        self.size, self.time_limit, self.stall, self.max_stuck = (
            int(workers),
            float(time_limit),
            float(stall),
            int(max_stuck),
        )
        self._name = name
        self._queue: queue.SimpleQueue[_Load | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._workers: set[threading.Thread] = set()  # counted as the pool's capacity
        self._stuck: set[threading.Thread] = set()  # written off: blocked in a load
        self._busy = 0
        self._started = 0  # threads ever started (replacements included)
        self.timed_out = 0  # loads reported as timed out
        self.written_off = 0  # loads found blocked
        with self._lock:
            for _ in range(self.size):
                self._start_worker()

    # ------------------------------------------------------------------ running a load

    async def run(
        self,
        job: Callable[..., Any],
        *args: Any,
        progress: Progress | None = None,
        time_limit: float | None = None,
        label: str = "",
    ) -> Any:
        """``job(*args, progress)`` in a worker; its result, or its exception. Past the time limit:
        ``LoadTimedOut`` naming ``label`` (the job is told to stop)."""
        limit = self.time_limit if time_limit is None else float(time_limit)
        load = _Load(job, args, progress, asyncio.get_running_loop(), limit)
        self._queue.put(load)
        try:
            while True:
                remaining = load.deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                try:
                    return await asyncio.wait_for(asyncio.shield(load.future), min(remaining, CHECK_S))
                except TimeoutError:
                    if load.deadline - time.monotonic() > 0:
                        self._check_blocked(load)
        except TimeoutError:
            started = self._expire(load)
            self.timed_out += 1
            message = self._timeout_message(limit, started)
            raise LoadTimedOut(f"{label}: {message}" if label else message) from None
        except asyncio.CancelledError:  # the session went away: do not leave the load running for nobody
            self._expire(load)
            raise

    def _timeout_message(self, limit: float, started: bool) -> str:
        setting = "--args --load-timeout SECONDS"
        if started:
            return f"the load took longer than the {limit:g} s limit per load and was given up (the limit is {setting})"
        with self._lock:
            stuck = len(self._stuck)
        cause = f"; {stuck} load{'s are' if stuck != 1 else ' is'} blocked on I/O" if stuck else ""
        return (
            f"the load waited {limit:g} s for one of the server's {self.size} load workers and was given up"
            f"{cause} (the limit is {setting})"
        )

    def _check_blocked(self, load: _Load) -> None:
        """Write off the worker of a running load that shows no sign of life for ``stall`` s."""
        with self._lock:
            if not load.started or load.written_off or load.thread not in self._workers:
                return
            if load.idle_for(time.monotonic()) < self.stall:
                return
            load.written_off = True
            self.written_off += 1
            self._write_off(load.thread)

    def _expire(self, load: _Load) -> bool:
        """Mark ``load`` past its limit; write off its worker if it is running. Whether it had started."""
        with self._lock:
            load.expired = True
            if not load.started:  # still queued: let go of what it holds (an upload's bytes) now
                load.job, load.args, load.user_progress = None, (), None
            elif load.thread is not None and load.thread in self._workers:
                self._write_off(load.thread)
            return load.started

    def _write_off(self, thread: threading.Thread) -> None:  # (holding the lock)
        self._workers.discard(thread)
        self._stuck.add(thread)
        if len(self._stuck) <= self.max_stuck:
            self._start_worker()

    # ------------------------------------------------------------------ the workers

    def _start_worker(self) -> None:  # (holding the lock)
        self._started += 1
        thread = threading.Thread(target=self._work, name=f"{self._name}-{self._started}", daemon=True)
        self._workers.add(thread)
        thread.start()

    def _work(self) -> None:
        me = threading.current_thread()
        clock = _thread_cpu_clock()
        while True:
            load = self._queue.get()
            if load is None:  # close()
                return
            with self._lock:
                if load.expired or time.monotonic() >= load.deadline:  # its time is up before it began
                    continue
                load.thread, load.started, load.cpu_clock, load.native_id = me, True, clock, me.native_id
                load.cpu_seen = time.clock_gettime(clock) if clock is not None else 0.0
                load.active_at = time.monotonic()
                self._busy += 1
            result, error = None, None
            job = load.job
            assert job is not None  # (let go only while queued and expired: skipped above)
            try:
                result = job(*load.args, load.progress)
            except BaseException as exc:  # handed to the session, which says it in one line
                error = exc
            with self._lock:
                load.thread = None
                self._busy -= 1
                leaving = me in self._stuck
                if leaving:
                    self._stuck.discard(me)
                    if len(self._workers) < self.size:  # back from a blocked load and the pool is short
                        self._workers.add(me)
                        leaving = False
            load.settle(result, error)
            del load, result, error  # a finished load's result is its session's; nothing here keeps it
            if leaving:
                return

    # ------------------------------------------------------------------ for tests, benchmarks and shutdown

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "workers": len(self._workers),
                "busy": self._busy,
                "stuck": len(self._stuck),
                "threads_started": self._started,
                "timed_out": self.timed_out,
                "written_off": self.written_off,
            }

    def close(self) -> None:
        """Let the workers exit once the queue is drained (a written-off one when it comes back)."""
        with self._lock:
            n = len(self._workers) + len(self._stuck)
        for _ in range(n):
            self._queue.put(None)


def load_pool(workers: int = DEFAULT_WORKERS, time_limit: float = DEFAULT_TIME_LIMIT_S) -> LoadPool:
    """This server process's ``LoadPool`` (created, with these figures, by the first session that asks)."""
    import panel as pn

    pool = pn.state.cache.get(CACHE_KEY)
    if not isinstance(pool, LoadPool):
        pool = pn.state.cache[CACHE_KEY] = LoadPool(workers, time_limit)
    return pool
