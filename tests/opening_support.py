"""Opening a file into a session in a test, synchronously, as the app's opener does in its load
worker (``app.open_flow.SessionOpener``): ``derived.opening.open_file``, then ``state.adopt``; on
failure the session keeps what is open and says why (``state.error``)."""

from __future__ import annotations

from pathlib import Path

from tilescope.app.state import SessionState
from tilescope.derived.opening import Source, open_file


def open_into(state: SessionState, what: str | Path | bytes, name: str | None = None) -> bool:
    """Open ``what`` (a path, or an upload's bytes named ``name``) into ``state``; whether it opened."""
    source = Source.of_bytes(what, name or "upload.json") if isinstance(what, bytes) else Source.of_path(what, name)
    state.begin_load()
    try:
        opened = open_file(source, state.report_progress)
    except Exception as exc:  # a bad file never takes the session down
        state.fail(exc)
        return False
    state.adopt(opened, name)
    return True
