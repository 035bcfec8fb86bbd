"""``tilescope batch`` on Dask: one task per planner output (``fleet.task``), on a
``LocalCluster`` of worker processes on 127.0.0.1 by default or on an existing cluster by
scheduler address. Workers read the input files and write their partitions into the dataset
themselves, so DIR and DATASET must be at the same paths on every worker (a shared filesystem);
the driver only lists DIR, holds the dataset's lock and collects one small row per file.

Files gone from DIR keep their rows (a dataset is a record of what was normalised; a nightly
folder deleted from disk stays queryable); a batch reports them as ``gone``.
"""
from __future__ import annotations

import logging
import os
import uuid
from datetime import datetime, timezone
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from tilescope.loaders.cache import content_key
from tilescope.models.errors import InputError, TilescopeError

from .discover import find_planner_outputs
from .layout import Dataset, path_key
from .task import FAILED, LOADED, SKIPPED, empty_row, normalise_into_dataset
from .writer import commit_profile

CONNECT_TIMEOUT = "10s"
WORKER_WAIT_SECONDS = 60

OnResult = Callable[[int, int, dict], None]


@dataclass
class BatchReport:
    directory: str
    dataset: str
    batch_id: str  # in the profiles rows this batch wrote
    results: list[dict] = field(default_factory=list)  # one summary per file found, by path
    gone: list[str] = field(default_factory=list)  # rows kept for files no longer under the directory
    other_json: list[str] = field(default_factory=list)
    reconciled: dict = field(default_factory=dict)

    def _with(self, status: str) -> list[dict]:
        return [r for r in self.results if r["status"] == status]

    @property
    def processed(self) -> list[dict]:
        return self._with(LOADED)

    @property
    def failed(self) -> list[dict]:
        return self._with(FAILED)

    @property
    def skipped(self) -> list[dict]:
        return self._with(SKIPPED)

    @property
    def skipped_failures(self) -> list[dict]:
        return [r for r in self.skipped if r["error"] is not None]

    def as_json(self) -> dict:
        return {
            "directory": self.directory,
            "dataset": self.dataset,
            "batch_id": self.batch_id,
            "files": len(self.results),
            "processed": len(self.processed),
            "skipped": len(self.skipped),
            "failed": len(self.failed),
            "failures": [{"path": r["path"], "error": r["error"]} for r in self.failed],
            "skipped_failures": [{"path": r["path"], "error": r["error"]} for r in self.skipped_failures],
            "gone": self.gone,
            "other_json": len(self.other_json),
            "reconciled": self.reconciled,
        }


@contextmanager
def dask_client(scheduler: str | None, workers: int) -> Iterator:
    """A client of the cluster at ``scheduler``, or of a new LocalCluster of ``workers`` processes
    (one thread each: a task is CPU-bound Python) listening on 127.0.0.1 only, without dashboard."""
    from distributed import Client, LocalCluster

    if scheduler is None:
        with LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
            # No dashboard; the scheduler's HTTP routes (health, metrics) on a free loopback port
            # rather than 8787, which another cluster on the machine may hold.
            dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.CRITICAL,  # a worker's death is reported by the batch, per file
        ) as cluster, Client(cluster) as client:
            yield client
        return
    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, ValueError, TypeError) as exc:
        raise TilescopeError(f"cannot reach the Dask scheduler at {scheduler}: {' '.join(str(exc).split())}") from None
    with client:
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
        except TimeoutError:
            raise TilescopeError(f"the Dask scheduler at {scheduler} has no workers (waited {WORKER_WAIT_SECONDS} s)") from None
        yield client


def _task_failure(dataset: Dataset, root: str, path: str, batch_id: str, exc: BaseException) -> dict:
    """A file whose task raised instead of returning: its worker died each time it ran it
    (``KilledWorker``: e.g. out of memory on that file), or the worker could not run the task at
    all (tilescope missing there, DATASET not writable). Only the first is the file's own failure
    and is recorded as its row, so the file is not retried forever; the others fail this run
    and leave the dataset as it was, to be tried again."""
    from distributed import KilledWorker

    previous = dataset.read_row(path)
    if previous is not None and previous["batch_id"] == batch_id:  # committed before its worker died
        return {"status": FAILED if previous["error"] else LOADED, **previous}
    text = " ".join(str(exc).split()) or "no message"
    error = f"{path}: the task failed on its worker ({type(exc).__name__}: {text})"
    try:
        content_hash = content_key(os.path.join(root, *path.split("/")))
    except InputError:
        content_hash = None
    row = empty_row(batch_id, path, content_hash, None, error, 0.0)
    if isinstance(exc, KilledWorker):
        try:
            commit_profile(dataset, row, None)
        except OSError:
            pass  # not recorded: the file is tried again by the next batch
    return {"status": FAILED, **row}


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def run_batch(
    directory: str | Path,
    dataset_root: str | Path,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    retry_failed: bool = False,
    on_result: OnResult | None = None,
) -> BatchReport:
    """Normalise every planner output under ``directory`` into the dataset at ``dataset_root``.
    ``on_result(done, total, summary)`` is called in the driver as each file completes."""
    root = os.path.abspath(directory)
    found = find_planner_outputs(root, exclude=dataset_root)
    dataset = Dataset.create_or_open(os.path.abspath(dataset_root))
    report = BatchReport(root, str(dataset.root), uuid.uuid4().hex, other_json=found.other_json)
    with dataset.locked():
        dataset.write_batch_record(report.batch_id, root, datetime.now(timezone.utc).isoformat())
        report.reconciled = dataset.reconcile()
        known = set(dataset.rows().column("path").to_pylist())
        report.gone = sorted(known - set(found.paths))
        if not found.paths:
            return report
        # Largest first: the long tasks start early and the small ones fill in around them.
        order = sorted(found.paths, key=lambda p: -_size(os.path.join(root, *p.split("/"))))
        n_workers = max(1, min(workers or os.cpu_count() or 1, len(order)))
        batch_id = report.batch_id
        with dask_client(scheduler, n_workers) as client:
            from distributed import as_completed

            futures = {
                client.submit(
                    normalise_into_dataset, root, path, str(dataset.root), batch_id, retry_failed,
                    key=f"tilescope-batch-{batch_id[:8]}-{path_key(path)}", pure=False,
                ): path
                for path in order
            }
            for done, future in enumerate(as_completed(futures), 1):
                path = futures[future]
                try:
                    summary = future.result()
                except Exception as exc:  # noqa: BLE001 - KilledWorker and the like: the batch goes on
                    summary = _task_failure(dataset, root, path, batch_id, exc)
                future.release()
                report.results.append(summary)
                if on_result is not None:
                    on_result(done, len(order), summary)
    report.results.sort(key=lambda r: r["path"])
    return report
