"""What a load may cost the app's server, without a browser (the served versions:
tests/test_app_robust_server.py):

- the app's limits (``app.loading.parse_app_args``): ``--args`` options, else environment
  variables, else the defaults; a bad value is one line;
- only regular files are opened, refused with the CLI's own one-line message before a byte is read
  (a FIFO keeps the bytes a writer put in it); a file under the data root over the size cap is
  refused unread, one outside it (``--args PATH``) is not capped;
- the load pool (``app.load_pool``): loads truly blocked in ``read`` on a pipe are reported as timed
  out while another load opens the sample; the blocked threads are replaced, so the pool never runs
  out, and come back or exit when their read returns; a long parse is stopped at its next progress
  report; past ``max_stuck`` the pool shrinks and says why;
- the upload box (``app.widgets.upload.CappedFileDropper``) checks each chunk as it arrives: a
  declared size over the cap is refused at the first chunk, a lying client when its bytes pass
  the cap, and an abandoned upload is dropped after its timeout or when the session ends.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest
from async_support import run_on_own_loop

from tilescope import cli
from tilescope.app.load_pool import LoadPool, LoadTimedOut
from tilescope.app.loading import (
    DEFAULT_LOAD_TIMEOUT_S,
    DEFAULT_LOAD_WORKERS,
    DEFAULT_MAX_FILE_BYTES,
    MAX_UPLOAD_BYTES,
    check_file,
    parse_app_args,
    upload_timeout,
)
from tilescope.app.shared import SharedProfiles
from tilescope.app.widgets.upload import CHUNK_BYTES, CappedFileDropper
from tilescope.derived.opening import OpenedProfile, Source, open_file
from tilescope.models.errors import InputError, TilescopeError

sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))
from make_app_corpus import SPECIAL_FILES, make_special_files

# ----------------------------------------------------------------------------- options


def test_limits_come_from_args_then_environment_then_defaults():
    plain = parse_app_args([], environ={})
    assert (plain.max_file_bytes, plain.load_timeout, plain.load_workers) == (
        DEFAULT_MAX_FILE_BYTES,
        DEFAULT_LOAD_TIMEOUT_S,
        DEFAULT_LOAD_WORKERS,
    )
    assert DEFAULT_MAX_FILE_BYTES == 2**30 and DEFAULT_LOAD_TIMEOUT_S == 120 and DEFAULT_LOAD_WORKERS == 4
    env = {"TILESCOPE_MAX_FILE_BYTES": "500M", "TILESCOPE_LOAD_TIMEOUT": "30", "TILESCOPE_LOAD_WORKERS": "2"}
    from_env = parse_app_args([], environ=env)
    assert (from_env.max_file_bytes, from_env.load_timeout, from_env.load_workers) == (500_000_000, 30.0, 2)
    given = parse_app_args(
        ["x.json", "--max-file-bytes", "2GiB", "--load-timeout", "7.5", "--load-workers", "3"], environ=env
    )
    assert (given.max_file_bytes, given.load_timeout, given.load_workers) == (2 * 2**30, 7.5, 3)
    assert given.file == Path("x.json")
    assert upload_timeout({}) == 60 and upload_timeout({"TILESCOPE_UPLOAD_TIMEOUT": "3"}) == 3


@pytest.mark.parametrize(
    "argv, env, words",
    [
        (["--max-file-bytes", "lots"], {}, "app argument --max-file-bytes: expected a size in bytes"),
        (["--max-file-bytes", "0"], {}, "of at least 1"),
        (["--load-timeout", "-1"], {}, "app argument --load-timeout: expected a number of seconds above 0"),
        (["--load-timeout", "inf"], {}, "above 0"),
        (["--load-workers", "0"], {}, "app argument --load-workers: expected a whole number of workers from 1 to 64"),
        ([], {"TILESCOPE_LOAD_WORKERS": "many"}, "TILESCOPE_LOAD_WORKERS: expected a whole number"),
    ],
)
def test_a_bad_limit_is_one_line_naming_where_it_came_from(argv, env, words):
    with pytest.raises(TilescopeError) as refused:
        parse_app_args(argv, environ=env)
    assert words in str(refused.value) and "\n" not in str(refused.value)


# ----------------------------------------------------------------------------- special files and the cap


@pytest.fixture
def special_root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    made = make_special_files(root)
    return root, made


def test_special_files_are_refused_with_the_clis_message_before_a_read(special_root, capsys):
    root, made = special_root
    shared = SharedProfiles(data_root=root)
    for name, (what, words) in SPECIAL_FILES.items():
        if (
            name not in made or name == "zero-link.json"
        ):  # (the symlink is refused by the name check: tests/test_app_paths.py)
            continue
        started = time.perf_counter()
        with pytest.raises(InputError) as refused:
            shared.open(Source.of_path(root / name, name))
        assert time.perf_counter() - started < 2.0, what
        message = str(refused.value)
        assert message.startswith(f"{name}: ") and all(w in message for w in words), (what, message)
        assert cli.main(["check", str(root / name)]) == 2  # the CLI's line is the same, naming the path it was given
        assert capsys.readouterr().err == f"tilescope: {root / name}{message[len(name) :]}\n"
    if "zero.json" not in made:
        pytest.skip("no right to mknod here: the device case was not run")


def test_a_fifo_keeps_what_its_writer_put_in(special_root):
    root, _ = special_root
    fd = os.open(root / "fifo.json", os.O_RDWR | os.O_NONBLOCK)  # both ends: a writer that is there
    try:
        os.write(fd, b'{"version": 1}')
        with pytest.raises(InputError, match="a FIFO"):
            SharedProfiles(data_root=root).open(Source.of_path(root / "fifo.json", "fifo.json"))
        assert os.read(fd, 100) == b'{"version": 1}'  # nothing was read from it
    finally:
        os.close(fd)


def test_the_size_cap_holds_under_the_data_root_only(tmp_path, sample_path):
    root = tmp_path / "root"
    root.mkdir()
    inside = root / "vit.json"
    shutil.copyfile(sample_path, inside)
    size = inside.stat().st_size
    check_file(inside, "vit.json", size)  # exactly the cap is accepted
    shared = SharedProfiles(data_root=root, max_file_bytes=size - 1)
    with pytest.raises(InputError) as refused:
        shared.open(Source.of_path(inside, "vit.json"))
    assert str(refused.value) == (
        f"vit.json: refused: {size:,} bytes is over the {size - 1:,}-byte limit for a file under the "
        "data root (--args --max-file-bytes N, or TILESCOPE_MAX_FILE_BYTES, raises it)"
    )
    assert shared.loads == 0
    assert isinstance(shared.open(Source.of_path(sample_path, "sample")), OpenedProfile)  # outside the root: not capped
    # A 4 GiB sparse file under the root: refused at once, nothing of it read (RSS does not grow by it).
    sparse = root / "sparse.json"
    with open(sparse, "wb") as handle:
        handle.truncate(4 * 2**30)
    started = time.perf_counter()
    with pytest.raises(InputError, match="4,294,967,296 bytes is over"):
        SharedProfiles(data_root=root).open(Source.of_path(sparse, "sparse.json"))
    assert time.perf_counter() - started < 1.0


# ----------------------------------------------------------------------------- the load pool


run = run_on_own_loop


def blocked_read(fd: int):
    """A job stuck in a real system call: ``read`` on a pipe nobody writes to (until the test does)."""

    def job(progress):
        progress("reading", 0.0)
        return os.read(fd, 1)

    return job


def wait_until_none_stuck(pool: LoadPool, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while pool.stats()["stuck"] and time.monotonic() < deadline:
        time.sleep(0.05)


def test_blocked_loads_give_up_their_workers_and_never_starve_another(sample_path, capsys):
    """Ten loads blocked in ``read`` (real threads in a real system call) on a pool of 2: each is
    found blocked after ``stall`` and its worker replaced; the sample, asked for after them, opens;
    the ten are reported as timed out; their threads exit when their reads return."""
    pool = LoadPool(
        workers=2, time_limit=60, stall=0.3, name="blocked-test"
    )  # (its own threads: other tests leave the process-wide pool running)
    pipes = [os.pipe() for _ in range(10)]
    try:

        async def scenario():
            started = time.perf_counter()
            await pool.run(open_file, sample_path)
            usual = time.perf_counter() - started
            # The blocked loads' limit: 8 s, or longer on a machine so busy that the sample alone is slow.
            limit = round(max(8.0, 10 * usual))
            blocked = [
                asyncio.ensure_future(pool.run(blocked_read(r), time_limit=limit, label=f"blocked {k}"))
                for k, (r, _) in enumerate(pipes)
            ]
            await asyncio.sleep(0.05)
            started = time.perf_counter()
            opened = await pool.run(open_file, sample_path)
            during = time.perf_counter() - started
            # it did not wait for the blocked loads' time limit: none of them has ended yet
            ended_before = [b.done() for b in blocked]
            outcomes = await asyncio.gather(*blocked, return_exceptions=True)
            return usual, during, opened, outcomes, limit, ended_before

        usual, during, opened, outcomes, limit, ended_before = run(scenario())
        stats = pool.stats()
        assert isinstance(opened, OpenedProfile)
        assert all(isinstance(o, LoadTimedOut) for o in outcomes), outcomes
        messages = {str(o) for o in outcomes}
        assert (
            f"blocked 0: the load took longer than the {limit:g} s limit per load and was given up"
            " (the limit is --args --load-timeout SECONDS)" in messages
        )
        # every blocked load that started was written off, and the pool still has its 2 workers
        assert stats["workers"] == 2 and stats["stuck"] == stats["busy"] == 10 and stats["written_off"] == 10
        assert stats["threads_started"] == 2 + 10
        with capsys.disabled():
            print(
                f"\nload pool (2 workers, stall 0.3 s): the sample opened in {usual * 1000:.0f} ms alone, {during * 1000:.0f} ms "
                f"asked for after 10 loads blocked in read ({during / usual:.1f}×); {stats['threads_started']} threads started"
            )
        assert not any(ended_before)  # it did not wait for the blocked loads' time limit
    finally:
        for _r, w in pipes:
            os.write(w, b"x")  # the reads return: the written-off threads exit
        wait_until_none_stuck(pool)
        for r, w in pipes:
            os.close(r)
            os.close(w)
    stats = pool.stats()
    assert stats["stuck"] == 0 and stats["busy"] == 0 and stats["workers"] == 2
    alive = [t for t in threading.enumerate() if t.name.startswith("blocked-test-")]
    assert len(alive) == 2, [t.name for t in alive]  # only the pool's own two remain
    pool.close()


def test_a_blocked_load_that_comes_back_in_time_still_delivers():
    pool = LoadPool(workers=1, time_limit=10, stall=0.3)
    r, w = os.pipe()
    try:

        async def scenario():
            blocked = asyncio.ensure_future(pool.run(blocked_read(r)))
            await asyncio.sleep(0.8)  # found blocked, written off, replaced
            meanwhile = await pool.run(lambda progress: "served meanwhile")
            os.write(w, b"y")
            return meanwhile, await blocked

        assert run(scenario()) == ("served meanwhile", b"y")
        wait_until_none_stuck(pool)
        assert pool.stats()["written_off"] == 1 and pool.stats()["workers"] == 1
    finally:
        os.close(r)
        os.close(w)
    pool.close()


def test_a_long_parse_keeps_its_worker_until_its_time_limit():
    """A job using CPU without reporting is not blocked (no replacement); past its limit it is
    stopped at its next progress report."""
    pool = LoadPool(workers=1, time_limit=1.0, stall=0.2)
    reports = []

    def long_parse(progress):
        for k in range(10_000):
            deadline = time.thread_time() + 0.4  # 0.4 s of CPU between reports: longer than stall
            while time.thread_time() < deadline:
                pass
            progress("values", k / 10_000)
            reports.append(k)
        return "finished"

    with pytest.raises(LoadTimedOut, match="took longer than the 1 s limit"):
        run(pool.run(long_parse))
    assert pool.stats()["written_off"] == 0
    # Past its limit its worker is written off until the job stops at its next report (0.4 s of
    # CPU later: seconds on a busy machine), then rejoins the pool.
    wait_until_none_stuck(pool, seconds=120)
    seen = len(reports)
    time.sleep(0.5)
    assert len(reports) == seen < 10  # it stopped: no report since
    assert pool.stats()["stuck"] == 0 and pool.stats()["workers"] == 1
    assert run(pool.run(lambda progress: "next", time_limit=5)) == "next"
    pool.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the run state is read from Linux's /proc")
def test_a_runnable_thread_is_alive_and_a_thread_in_a_read_is_not():
    """The pool's sign of life beside CPU time: a thread waiting for a core (run state R) is not
    blocked, one asleep in a read is. Checked against the kernel's own view of each thread."""
    from tilescope.app.load_pool import _runnable

    r, w = os.pipe()
    stop = threading.Event()
    spinning = threading.Thread(target=lambda: [None for _ in iter(stop.is_set, True)], daemon=True)
    reading = threading.Thread(target=os.read, args=(r, 1), daemon=True)
    spinning.start()
    reading.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # wait until the reader is in its read (state S)
            with open(f"/proc/self/task/{reading.native_id}/stat", "rb") as stat:
                if stat.read().rpartition(b")")[2].split()[0] == b"S":
                    break
            time.sleep(0.01)
        assert not _runnable(reading.native_id)
        # the spinning thread is R whenever it runs or waits for a core; it may be caught releasing the GIL
        assert any(_runnable(spinning.native_id) for _ in range(200))
        assert not _runnable(None) and not _runnable(2**31 - 1)  # no such thread
    finally:
        stop.set()
        os.write(w, b"x")
        spinning.join(10)
        reading.join(10)
        os.close(r)
        os.close(w)


def test_past_max_stuck_the_pool_shrinks_and_says_why():
    pool = LoadPool(workers=1, time_limit=0.3, max_stuck=1, stall=10)
    pipes = [os.pipe() for _ in range(2)]
    try:

        async def scenario():
            first = await asyncio.gather(pool.run(blocked_read(pipes[0][0])), return_exceptions=True)
            second = await asyncio.gather(pool.run(blocked_read(pipes[1][0])), return_exceptions=True)
            waited = await asyncio.gather(pool.run(lambda progress: "never run"), return_exceptions=True)
            return first[0], second[0], waited[0]

        first, second, waited = run(scenario())
        assert "took longer" in str(first) and "took longer" in str(second)
        assert isinstance(waited, LoadTimedOut)
        assert "waited 0.3 s for one of the server's 1 load workers" in str(
            waited
        ) and "2 loads are blocked on I/O" in str(waited)
        assert pool.stats()["workers"] == 0  # 1 replacement started, then no more
    finally:
        for _r, w in pipes:
            os.write(w, b"x")
        wait_until_none_stuck(pool)
    assert pool.stats()["workers"] == 1  # one came back and rejoined; the other exited
    assert run(pool.run(lambda progress: "again", time_limit=5)) == "again"
    pool.close()


def test_a_jobs_own_error_comes_back_as_it_is(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "timeline": 7}')
    pool = LoadPool(workers=1, time_limit=10)
    with pytest.raises(InputError) as refused:
        run(pool.run(functools.partial(open_file, Source.of_path(bad, "bad.json"))))
    assert str(refused.value).startswith("bad.json: at $")
    pool.close()


# ----------------------------------------------------------------------------- uploads


def chunk_event(widget, chunk: int, total: int, data: bytes, name: str = "up.json"):
    from panel.models.file_dropper import UploadEvent

    return UploadEvent(
        widget._models_model(),
        data={"chunk": chunk, "total_chunks": total, "name": name, "data": data, "type": "application/json"},
    )


@pytest.fixture
def dropper():
    widget = CappedFileDropper(max_bytes=50_000, chunk_size=20_000, idle_timeout=0)
    widget._models_model = lambda: widget.get_root()  # a real Bokeh model for the events to name
    refusals = []
    widget.param.watch(lambda e: refusals.append(e.new) if e.new else None, "refused")
    widget.refusals = refusals
    return widget


def test_an_upload_within_the_cap_arrives_whole(dropper):
    parts = [b"a" * 20_000, b"b" * 20_000, b"c" * 10_000]
    for k, part in enumerate(parts, start=1):
        dropper._process_event(chunk_event(dropper, k, 3, part))
    assert dropper.value == {"up.json": b"".join(parts)} and dropper.refusals == [] and dropper.buffered_bytes == 0


def test_a_declared_size_over_the_cap_is_refused_at_the_first_chunk():
    widget = CappedFileDropper(idle_timeout=0)  # the real 200 MB cap
    widget._models_model = lambda: widget.get_root()
    refusals = []
    widget.param.watch(lambda e: refusals.append(e.new) if e.new else None, "refused")
    most = -(-(MAX_UPLOAD_BYTES + 1) // CHUNK_BYTES)  # what the browser sends for a file of exactly the cap
    assert most == 21
    widget._process_event(chunk_event(widget, 1, 1000, b"x" * 1000))
    assert widget.buffered_bytes == 0 and refusals == [
        f"refused upload of up.json: 1,000 chunks of {CHUNK_BYTES:,} bytes would pass the 200 MB upload limit"
    ]
    for k in range(2, 41):  # the rest of the abandoned upload: ignored, nothing kept
        widget._process_event(chunk_event(widget, k, 1000, b"x" * 1000))
    assert widget.buffered_bytes == 0 and len(refusals) == 1
    widget._process_event(chunk_event(widget, 1, most, b"x" * 1000))  # a file that may be within the cap is taken
    assert widget.buffered_bytes == 1000 and len(refusals) == 1


@pytest.mark.parametrize(
    "events, words",
    [
        ([(1, 3, 20_000), (2, 3, 20_000), (3, 3, 20_000)], "more than 50,000 bytes, over the"),  # 3 full chunks: 60,000
        ([(1, 3, 100), (3, 3, 100)], "chunk 3 of 3 arrived where chunk 2 of 3 was expected"),
        ([(1, 3, 100), (2, 4, 100)], "chunk 2 of 4 arrived where chunk 2 of 3 was expected"),
        ([(1, 1, 20_001)], "a chunk of 20,001 bytes, over the 20,000 asked for"),
        ([(1, 4, 100)], "4 chunks of 20,000 bytes would pass the 50,000-byte upload limit"),
    ],
)
def test_a_lying_client_is_refused_and_its_bytes_dropped(dropper, events, words):
    for chunk, total, size in events:
        dropper._process_event(chunk_event(dropper, chunk, total, b"z" * size))
    assert len(dropper.refusals) == 1 and words in dropper.refusals[0], dropper.refusals
    assert dropper.buffered_bytes == 0 and dropper.value == {}


def test_an_abandoned_upload_is_dropped_after_its_timeout_and_at_the_sessions_end(dropper):
    async def scenario():
        dropper.idle_timeout = 0.2
        dropper._process_event(chunk_event(dropper, 1, 3, b"q" * 10_000))
        held = dropper.buffered_bytes
        await asyncio.sleep(0.5)
        return held

    assert run_on_own_loop(scenario()) == 10_000
    assert dropper.buffered_bytes == 0
    assert dropper.refusals == ["upload of up.json dropped: nothing arrived for 0.2 s after chunk 1 of 3"]
    dropper.idle_timeout = 0
    dropper._process_event(chunk_event(dropper, 1, 3, b"q" * 10_000))
    assert dropper.buffered_bytes == 10_000
    dropper._on_session_destroyed(None)
    assert dropper.buffered_bytes == 0


def test_sessions_waiting_on_a_blocked_load_of_the_same_file_give_up_their_workers(tmp_path, sample_path, monkeypatch):
    """Four sessions open one file whose first load blocks in ``read``: the three waiting for it are
    idle too, so their workers are handed on as the blocked one's is, and another file opens."""
    import tilescope.app.shared as shared_module

    copy = tmp_path / "same.json"
    shutil.copyfile(sample_path, copy)
    r, w = os.pipe()
    real_open = shared_module.open_file
    first = []

    def open_blocking_once(source, progress=None, **options):
        if not first:
            first.append(source.path)
            os.read(r, 1)  # the first load of the file blocks in a real read
        return real_open(source, progress, **options)

    monkeypatch.setattr(shared_module, "open_file", open_blocking_once)
    shared = SharedProfiles()
    pool = LoadPool(workers=2, time_limit=20, stall=0.3)
    try:

        async def scenario():
            same = [
                asyncio.ensure_future(pool.run(functools.partial(shared.open, Source.of_path(copy, f"s{k}"))))
                for k in range(4)
            ]
            await asyncio.sleep(0.1)
            started = time.perf_counter()
            other = await pool.run(functools.partial(shared.open, Source.of_path(sample_path, "other")), time_limit=60)
            waited = time.perf_counter() - started
            os.write(w, b"x")
            return waited, other, await asyncio.gather(*same)

        waited, other, same = run(scenario())
        # The first load stays blocked until ``other`` has opened (the write comes after it), so
        # ``other`` opening at all shows it did not wait for the blocked load; ``waited`` is printed.
        assert isinstance(other, OpenedProfile), other
        print(f"the other file opened in {waited:.2f} s beside four blocked loads of one file")
        assert all(o is same[0] for o in same) and shared.loads == 2  # the file once, the other once
        assert pool.stats()["written_off"] >= 2
    finally:
        os.close(r)
        os.close(w)
        wait_until_none_stuck(pool)
        pool.close()


def test_all_sessions_unfinished_uploads_share_one_server_cap():
    """Three sessions' upload boxes against a server cap of 60,000 bytes: a chunk that would pass
    it refuses its upload (and lets go of what that upload held); a finished or dropped upload gives
    its bytes back."""
    from tilescope.app.widgets.upload import SERVER_UPLOADS, UploadBudget

    assert (
        CappedFileDropper()._budget is SERVER_UPLOADS and SERVER_UPLOADS.limit == 2 * MAX_UPLOAD_BYTES
    )  # one per process
    budget = UploadBudget(60_000)
    boxes = []
    for _ in range(3):
        widget = CappedFileDropper(max_bytes=50_000, chunk_size=20_000, idle_timeout=0)
        widget._models_model = lambda widget=widget: widget.get_root()
        widget._budget = budget
        widget.refusals = []
        widget.param.watch(lambda e, widget=widget: widget.refusals.append(e.new) if e.new else None, "refused")
        boxes.append(widget)
    one, two, three = boxes
    for k in (1, 2):
        one._process_event(chunk_event(one, k, 3, b"a" * 20_000))
    two._process_event(chunk_event(two, 1, 3, b"b" * 20_000))
    assert budget.held == 60_000 and one.buffered_bytes == 40_000 and two.buffered_bytes == 20_000
    three._process_event(chunk_event(three, 1, 2, b"c" * 100))
    assert three.refusals == [
        "refused upload of up.json: the server is receiving 60,000 B (58.6 KiB) of other uploads, "
        "and all uploads together may hold 60,000 B (58.6 KiB); try again when they finish"
    ]
    assert three.buffered_bytes == 0 and budget.held == 60_000
    two._process_event(
        chunk_event(two, 2, 3, b"b" * 20_000)
    )  # its own second chunk passes the server's cap: it is dropped
    assert len(two.refusals) == 1 and "the server is receiving 40,000 B" in two.refusals[0]
    assert two.buffered_bytes == 0 and budget.held == 40_000
    one._process_event(chunk_event(one, 3, 3, b"a" * 5_000))  # finished: handed over, no longer held
    assert one.value == {"up.json": b"a" * 45_000} and budget.held == 0
    three._process_event(chunk_event(three, 1, 2, b"c" * 20_000))
    assert budget.held == 20_000
    three._on_session_destroyed(None)
    assert budget.held == 0 and three.buffered_bytes == 0


def test_the_server_cap_is_a_size_from_the_environment():
    from tilescope.app.loading import uploads_max_bytes

    assert uploads_max_bytes({}) == 400 * 1024 * 1024
    assert uploads_max_bytes({"TILESCOPE_UPLOADS_MAX_BYTES": "1GiB"}) == 1 << 30
    with pytest.raises(TilescopeError, match="TILESCOPE_UPLOADS_MAX_BYTES"):
        uploads_max_bytes({"TILESCOPE_UPLOADS_MAX_BYTES": "lots"})
