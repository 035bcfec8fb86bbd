"""The local worker processes of ``tilescope batch`` (without ``--scheduler``): N processes started
from the batch's own process, each running one task at a time (``fleet.task.normalise_task``).

Why not a Dask ``LocalCluster``: measured on the 2 cores of the development machine (load
average 7-8), a LocalCluster of 1 worker took 3.75 s to start and 1.26 s to stop, of 2 workers
6.06 s and 1.11 s (each worker a fresh interpreter importing Dask and tilescope under a nanny),
while a batch's own work is ~0.08 s of CPU per 2-7 MB profile and the client's part of it
(listing, committing, the results: ~0.4 KB per file) well under 1 % of that. Here a worker is
forked from the batch's process, which has already imported the task's modules: starting one
costs milliseconds and imports nothing.

- **Start method**: ``fork`` when this process runs no other Python thread (the command line; the
  native threads of OpenBLAS, jemalloc and Arrow reset themselves across a fork); otherwise
  (tilescope called from a threaded program) a ``forkserver`` that imports the task once, so no
  lock held by another thread is inherited.
- **A worker that dies** (killed, out of memory) while running a task is replaced, and the task is
  run again; a task whose workers die ``ALLOWED_FAILURES`` times is given up with ``WorkerDied``
  (the driver then splits a task of several files, as for Dask's ``KilledWorker``).
- Workers are named ``tilescope-work`` (``ps``, ``top``), ignore SIGINT (Ctrl-C is the batch's to handle: it commits what finished and stops
  them), and leave when the batch's process is gone.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

ALLOWED_FAILURES = 3  # as Dask's distributed.scheduler.allowed-failures
PARENT_CHECK_SECONDS = 1.0
STOP_SECONDS = 5.0
PRELOAD = ["tilescope.fleet.task"]
PROCESS_NAME = b"tilescope-work"  # what ps, top and psutil show for a worker (Linux: 15 bytes at most)


class WorkerDied(Exception):
    """Every worker that ran the task died while running it (``ALLOWED_FAILURES`` times)."""


def start_method() -> str:
    """``fork`` when this process runs only its main Python thread, else ``forkserver``."""
    return "fork" if threading.active_count() == 1 else "forkserver"


def _name_process(name: bytes) -> None:
    """The process's name as the system shows it (Linux ``prctl(PR_SET_NAME)``; elsewhere nothing)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(15, name, 0, 0, 0)  # 15: PR_SET_NAME
    except (OSError, AttributeError):
        pass


def _serve(conn: Connection, inherited: list[Connection], initializer: Callable | None) -> None:
    """A worker: run each ``(token, function, args)`` received and send back ``(token, ok, value)``;
    asked to leave (None), send back the CPU seconds it used. It leaves by itself when its parent
    (the batch's process, or the forkserver, which leaves with the batch) is gone."""
    parent = os.getppid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _name_process(PROCESS_NAME)
    for other in inherited:  # (fork) the batch's ends of the other workers' pipes: not ours to hold
        other.close()
    if initializer is not None:
        initializer()
    while True:
        try:
            while not conn.poll(PARENT_CHECK_SECONDS):
                if os.getppid() != parent:
                    return
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            times = os.times()
            _send(conn, times.user + times.system)
            return
        token, function, args = message
        try:
            reply = (token, True, function(*args))
        except Exception as exc:
            reply = (token, False, exc)
        if not _send(conn, reply):
            return


def _send(conn: Connection, message: Any) -> bool:
    """Send ``message``, or in its place the error that pickling it raised; False when the batch's
    end of the pipe is gone (the batch ended: the worker leaves)."""
    try:
        conn.send(message)
    except OSError:
        return False
    except Exception as exc:  # a result or an exception that does not pickle
        return _send(conn, (message[0], False, RuntimeError(f"{type(exc).__name__}: {exc}")))
    return True


@dataclass
class _Worker:
    process: Any
    conn: Connection
    running: tuple | None = None  # (token, function, args)


@dataclass
class LocalWorkers:
    """``workers`` processes; ``submit`` tasks, then iterate ``completed()`` for ``(token, ok,
    value)`` (``value``: the result, or the exception; ``WorkerDied``). More tasks may be submitted
    while iterating. Use as a context manager: the workers are stopped on leaving it."""

    workers: int
    initializer: Callable | None = None  # run first in each worker process
    method: str = field(default_factory=start_method)
    _queue: deque = field(default_factory=deque)
    _pool: list[_Worker] = field(default_factory=list)
    _deaths: dict[Any, int] = field(default_factory=dict)
    started: int = 0  # worker processes started, replacements included
    cpu_seconds: list[float] = field(default_factory=list)  # of each worker that left when asked (``stop``)

    def __post_init__(self) -> None:
        self._context: Any = multiprocessing.get_context(self.method)  # (its Process, Pipe)
        if self.method == "forkserver":
            self._context.set_forkserver_preload(PRELOAD)

    def __enter__(self) -> LocalWorkers:
        for _ in range(self.workers):
            self._pool.append(self._start())
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def _start(self) -> _Worker:
        ours, theirs = self._context.Pipe()
        inherited = [w.conn for w in self._pool] if self.method == "fork" else []
        process = self._context.Process(
            target=_serve, args=(theirs, inherited, self.initializer), name="tilescope-batch-worker", daemon=True
        )
        process.start()
        theirs.close()
        self.started += 1
        return _Worker(process, ours)

    def pids(self) -> list[int]:
        return [w.process.pid for w in self._pool]

    def submit(self, token: Any, function: Callable, *args: Any) -> None:
        self._queue.append((token, function, args))

    def _dispatch(self) -> None:
        for worker in self._pool:
            if worker.running is None and self._queue:
                worker.running = self._queue.popleft()
                try:
                    worker.conn.send(worker.running)
                except OSError:  # the worker is gone: its sentinel says so next (``_died``)
                    pass

    def completed(self) -> Iterator[tuple[Any, bool, Any]]:
        while True:
            self._dispatch()
            busy = [w for w in self._pool if w.running is not None]
            if not busy:
                return
            ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy]))
            for worker in busy:
                if worker.conn in ready:
                    try:
                        token, ok, value = worker.conn.recv()
                    except (EOFError, OSError):  # died while sending: as a death below
                        pass
                    else:
                        worker.running = None
                        yield token, ok, value
                        continue
                if worker.process.sentinel in ready or worker.conn in ready:
                    yield from self._died(worker)

    def _died(self, worker: _Worker) -> Iterator[tuple[Any, bool, Any]]:
        """Replace a dead worker; run its task again, or give the task up."""
        task = worker.running
        worker.process.join(STOP_SECONDS)
        if worker.process.is_alive():  # (its pipe closed, yet still running: not a worker any more)
            worker.process.kill()
            worker.process.join()
        worker.conn.close()
        self._pool[self._pool.index(worker)] = self._start()
        if task is None:
            return
        token = task[0]
        self._deaths[token] = self._deaths.get(token, 0) + 1
        if self._deaths[token] < ALLOWED_FAILURES:
            self._queue.appendleft(task)
            return
        code = worker.process.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        yield token, False, WorkerDied(f"its worker died {self._deaths[token]} times running it (last: {how})")

    def stop(self) -> None:
        """Ask idle workers to leave; stop the others (a task cut short writes only to staging)."""
        for worker in self._pool:
            try:
                if worker.running is None:
                    worker.conn.send(None)
                else:
                    worker.process.terminate()
            except OSError:
                worker.process.terminate()
        for worker in self._pool:
            try:
                if worker.running is None and worker.conn.poll(STOP_SECONDS):
                    self.cpu_seconds.append(worker.conn.recv())
            except (EOFError, OSError):
                pass
            worker.process.join(STOP_SECONDS)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        self._pool.clear()
