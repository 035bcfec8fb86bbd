"""Opening the second side of a comparison: a file under the data root (``?compare=NAME`` or the
picker), an upload, or the session's own what-if against its file.

Like the first file: the name is checked by ``app.loading.resolve_in_root``, the file is opened
by ``app.shared.SharedProfiles.open`` and the comparison computed (``CompareData.warm``) in a load
worker (``app.open_flow.SessionOpener.run``), never on the session's event loop; the result is adopted on the loop under the document lock. A failed load shows its one-line
error and keeps everything that was open (the first file, its edits, any comparison).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

from tilescope.app.loading import PathRefused, check_upload_size, resolve_in_root
from tilescope.app.open_flow import SessionOpener
from tilescope.app.state import error_text
from tilescope.derived.compare_data import CompareData
from tilescope.derived.opening import OpenedProfile, Source
from tilescope.fleet.discover import recognise_file
from tilescope.models.errors import TilescopeError

PICKER_LIMIT = 2000  # files listed in the picker (a data root may hold many)


def data_root_files(root: str | Path, limit: int = PICKER_LIMIT) -> list[str]:
    """Names (relative, ``/``-separated) of the planner outputs under ``root`` that
    ``resolve_in_root`` accepts, sorted; hidden files and folders skipped; at most ``limit``.
    A planner output is recognised by its content, whatever its name (the compiler's
    ``{scope}-{pid}-{serial}.json``, ``placement-{pid}.json``, ``tile-{tile}-{hash}.json``), by
    the test ``tilescope batch`` uses (``fleet.discover.recognise_file``: the first 64 KiB of each
    regular file, never the whole file); anything else (other JSON, other files, FIFOs) is left out."""
    base = Path(root)
    found: list[str] = []
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            relative = (Path(folder) / name).relative_to(base).as_posix()
            try:
                path = resolve_in_root(base, relative)
            except PathRefused:
                continue
            if recognise_file(path) is None:
                continue
            found.append(relative)
            if len(found) >= limit:
                return sorted(found)
    return sorted(found)


def _profile_only(opened, name: str) -> OpenedProfile:
    if not isinstance(opened, OpenedProfile):
        raise TilescopeError(f"{name}: a search state, not a memory profile: there is nothing to compare")
    return opened


class CompareOpener:
    """Opens B for one session, through the session's opener (``app.open_flow.SessionOpener``:
    its load workers, its document lock)."""

    def __init__(self, opener: SessionOpener):
        self.opener, self.state, self.shared, self.data_root = opener, opener.state, opener.shared, opener.data_root
        self.named: str | None = None  # the data-root file of the last comparison opened (None: an upload, the what-if)

    def files(self) -> list[str]:
        return data_root_files(self.data_root)

    def compared_name(self) -> str | None:
        """The data-root file the open profile is compared with, for the URL's ``compare=`` (None:
        not comparing, or comparing with an upload or the what-if)."""
        compare = self.state.compare
        if compare is None or compare.mode != "file":
            return None
        return compare.b_name if compare.b_name == self.named else None

    async def open_name(self, name: str) -> bool:
        """Compare the current plan with the file ``name`` under the data root."""
        try:
            path = resolve_in_root(self.data_root, name)
        except PathRefused as exc:
            await self._fail(f"compare: {exc}")
            return False
        return await self._run(
            lambda current, progress: CompareData.against_file(
                current,
                _profile_only(self.shared.open(Source.of_path(path, name), progress, prepare=False), name).base,
                other_name=name,
            ).warm(),
            named=name,
        )

    async def open_upload(self, data: bytes, name: str) -> bool:
        name = Path(name).name
        try:
            check_upload_size(len(data))
        except TilescopeError as exc:
            await self._fail(f"compare: {exc}")
            return False
        return await self._run(
            lambda current, progress: CompareData.against_file(
                current,
                _profile_only(self.shared.open(Source.of_bytes(data, name), progress, prepare=False), name).base,
                other_name=name,
            ).warm()
        )

    async def compare_whatif(self) -> bool:
        """Compare the file's plan (A) with the session's what-if plan (B)."""
        if not self.state.edits:
            await self._fail("compare: no what-if edits to compare with the file")
            return False
        return await self._run(
            lambda current, progress: CompareData.whatif_against_file(current, self.state.source).warm()
        )

    async def _fail(self, message: str) -> None:
        await self.opener.in_session(partial(self.state.fail, message))

    async def _run(self, job: Callable, named: str | None = None) -> bool:
        """``job(current PlanData, progress) -> CompareData`` in a load worker, adopted on the loop
        (``named``: the data-root file it compares with, for the URL's ``compare=``)."""
        state, in_session = self.state, self.opener.in_session
        current = state.data  # read on the loop: the worker gets an immutable snapshot
        if current is None:
            await self._fail("compare: no memory profile is open")
            return False
        await in_session(state.begin_load)
        try:
            compare = await self.opener.run(job, current)
        except Exception as exc:  # bad input or anything else: say it, keep what is open
            await self._fail(_compare_error(exc))
            return False

        def adopt() -> None:
            self.named = named  # (first: the page writes the URL when state.compare changes)
            state.adopt_compare(compare)

        await in_session(adopt)
        return True


def _compare_error(exc: BaseException) -> str:
    return f"compare: {error_text(exc)}"
