"""The upload box: Panel's ``FileDropper`` with its size cap enforced on the server, not only in
the browser, and abandoned uploads let go of.

Panel's ``FileDropper`` receives a file as ``upload_event``s of one chunk each (``chunk``,
``total_chunks``, ``name``, ``data``; the browser sends ``ceil((size + 1) / chunk_size)`` chunks)
and appends every chunk to a per-name buffer until the last arrives; only then is the size known
to the app. Its ``max_file_size`` is checked by the browser alone. So a client that is not the
browser widget (a script speaking Bokeh's websocket protocol) could make the server buffer a file
of any size, and an upload that stops half-way stays buffered for as long as the session lives.

``CappedFileDropper`` checks each chunk as it arrives (``_process_event``) and refuses the upload
— dropping what it buffered, ignoring its later chunks — as soon as:

- its first chunk declares more chunks than a file of ``max_bytes`` needs;
- a chunk is larger than the chunk size the widget asked for, arrives out of order, or changes
  the declared count;
- the bytes received pass ``max_bytes``.

One upload is buffered at a time (a new first chunk replaces an unfinished upload), so a session
buffers at most ``max_bytes``. All the sessions of a server process together buffer at most
``SERVER_UPLOADS.limit`` bytes (``TILESCOPE_UPLOADS_MAX_BYTES``, 400 MiB): a chunk that would pass
it refuses its upload ("the server is receiving … of other uploads; try again when they finish"),
so many sessions cannot each hold an upload just under the cap. An upload silent for
``idle_timeout`` seconds is dropped, and everything buffered is dropped when the session ends. Each
refusal is one line in ``refused``.

Dropping the bytes is not enough for the server's memory to go down. Panel hands most chunks to
the widget through a next-tick callback that sits in a reference cycle with Bokeh's
``NextTickCallback`` — so each chunk's bytes wait for Python's cyclic garbage collector, which
counts objects, not bytes, and may not run for a long time (an abandoned upload's 150 MB stayed
until its session closed) — and glibc keeps freed space in its heap (40 refused chunks left the
server 128–200 MB above its baseline). So after a drop, once the chunks stop coming (0.5 s without
one), the cycles are collected and the heap's free pages handed back (``gc.collect`` and
``malloc_trim``), at most once every ``TRIM_EVERY_S`` seconds per upload box.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import sys
import threading
import time
from dataclasses import dataclass, field

import panel as pn
import param

from tilescope.app.loading import DEFAULT_UPLOAD_TIMEOUT_S, MAX_UPLOAD_BYTES, upload_timeout, uploads_max_bytes
from tilescope.models.errors import one_line
from tilescope.models.format import fmt_bytes

CHUNK_BYTES = 10_000_000  # Panel's default chunk size; fixed when the widget is made (a client may not raise it)
TRIM_AFTER_S = 0.5  # quiet time after a dropped upload's last chunk before memory is handed back
TRIM_EVERY_S = 5.0  # a full collection takes tens of ms on the event loop: not on every chunk of a flood


def return_freed_memory() -> None:
    """Collect reference cycles, then hand the C heap's free pages back to the system (glibc's
    ``malloc_trim``; elsewhere the collection only)."""
    gc.collect()
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        pass


class UploadBudget:
    """The bytes every session's unfinished upload holds, against one limit for the server process.

    Not session state: a count of a shared resource, as the load pool's threads are (taken and given
    back on the event loop; the lock keeps it right if a chunk is ever handled on another thread)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.held = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        with self._lock:
            if self.held + n > self.limit:
                return False
            self.held += n
            return True

    def give_back(self, n: int) -> None:
        with self._lock:
            self.held = max(self.held - n, 0)


SERVER_UPLOADS = UploadBudget(uploads_max_bytes())


@dataclass
class _Incoming:
    """The upload being received: its chunks so far."""

    name: str
    total_chunks: int
    kind: str
    chunks: list = field(default_factory=list)
    received: int = 0
    timer: asyncio.TimerHandle | None = None

    @property
    def next_chunk(self) -> int:
        return len(self.chunks) + 1


class CappedFileDropper(pn.widgets.FileDropper):
    """``FileDropper`` whose cap holds on the server (module doc)."""

    max_bytes = param.Integer(
        default=MAX_UPLOAD_BYTES,
        bounds=(1, None),
        constant=True,
        doc="largest upload accepted, checked chunk by chunk on the server",
    )
    idle_timeout = param.Number(
        default=DEFAULT_UPLOAD_TIMEOUT_S,
        bounds=(0, None),
        doc="seconds without a chunk after which an unfinished upload is dropped",
    )
    refused = param.String(default="", doc="why the last upload was refused (one line); set anew for each refusal")

    _rename = {
        **pn.widgets.FileDropper._rename,
        "max_bytes": None,
        "idle_timeout": None,
        "refused": None,
    }  # server-side only

    def __init__(self, **params):
        cap = params.get("max_bytes", MAX_UPLOAD_BYTES)
        params.setdefault(
            "max_file_size", f"{cap // (1024 * 1024)}MB" if cap >= 1024 * 1024 else f"{max(cap // 1024, 1)}KB"
        )
        params.setdefault("idle_timeout", upload_timeout())
        params.setdefault("chunk_size", CHUNK_BYTES)
        super().__init__(**params)
        self._chunk_bytes = int(self.chunk_size)  # what the browser is told to send; later changes are not believed
        self._budget = SERVER_UPLOADS
        self._incoming: _Incoming | None = None
        self._trim: asyncio.TimerHandle | None = None
        self._trimmed_at = float("-inf")
        self._sessions_watched: set[int] = set()

    @property
    def buffered_bytes(self) -> int:
        """Bytes held for the unfinished upload (0 when none)."""
        return self._incoming.received if self._incoming is not None else 0

    def _get_model(self, doc, root=None, parent=None, comm=None):
        model = super()._get_model(doc, root, parent, comm)
        if doc is not None and doc.session_context is not None and id(doc) not in self._sessions_watched:
            self._sessions_watched.add(id(doc))
            doc.on_session_destroyed(self._on_session_destroyed)
        return model

    def _on_session_destroyed(self, session_context) -> None:
        """The session is gone: let go of everything received (no watcher to tell); hand memory back
        only if something was held (a collection per closed session would cost every session)."""
        held = self.buffered_bytes or self.value or self._file_buffer or self._trim is not None
        self._drop()
        self._file_buffer.clear()
        self.value.clear()
        self.mime_type.clear()
        if self._trim is not None:
            self._trim.cancel()
            self._trim = None
        if held:
            return_freed_memory()

    # ------------------------------------------------------------------ chunks

    def _process_event(self, event) -> None:
        if event.event_name != "upload_event":
            super()._process_event(event)
            return
        data = event.data if isinstance(event.data, dict) else {}
        payload = data.get("data")
        try:
            chunk, total, name = int(data["chunk"]), int(data["total_chunks"]), str(data["name"])
        except (KeyError, TypeError, ValueError):
            self._refuse("refused upload: a chunk without its number, count or name")
            return
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            self._refuse(f"refused upload of {name}: chunk {chunk:,} holds no bytes")
            return
        if chunk == 1:
            self._drop()
            most = -(-(self.max_bytes + 1) // self._chunk_bytes)  # what the browser sends for a file of max_bytes
            if not 1 <= total <= most:
                self._refuse(
                    f"refused upload of {name}: {total:,} chunks of {self._chunk_bytes:,} bytes would pass the "
                    f"{self._cap_text()} upload limit"
                )
                return
            self._incoming = _Incoming(name, total, str(data.get("type") or ""))
        incoming = self._incoming
        if incoming is None or incoming.name != name:
            self._trim_later()  # a chunk of an upload already refused or dropped (or never begun): nothing to keep
            return
        if chunk != incoming.next_chunk or total != incoming.total_chunks:
            self._refuse(
                f"refused upload of {name}: chunk {chunk:,} of {total:,} arrived where chunk "
                f"{incoming.next_chunk:,} of {incoming.total_chunks:,} was expected"
            )
            return
        if len(payload) > self._chunk_bytes:
            self._refuse(
                f"refused upload of {name}: a chunk of {len(payload):,} bytes, over the {self._chunk_bytes:,} asked for"
            )
            return
        if incoming.received + len(payload) > self.max_bytes:
            self._refuse(
                f"refused upload of {name}: more than {self.max_bytes:,} bytes, over the {self._cap_text()} upload limit"
            )
            return
        if not self._budget.take(len(payload)):
            others = self._budget.held - incoming.received
            self._refuse(
                f"refused upload of {name}: the server is receiving {fmt_bytes(others)} of other uploads, and all "
                f"uploads together may hold {fmt_bytes(self._budget.limit)}; try again when they finish"
            )
            return
        incoming.chunks.append(bytes(payload))
        incoming.received += len(payload)
        if chunk < total:
            self._arm_timer(incoming)
            return
        self._finish(incoming)

    def _finish(self, incoming: _Incoming) -> None:
        """The last chunk: hand the file over as ``value``, as ``FileDropper`` does."""
        self._incoming = None
        self._cancel_timer(incoming)
        self._budget.give_back(incoming.received)  # no longer an unfinished upload: the load's bounds take over
        data = b"".join(incoming.chunks)
        incoming.chunks.clear()
        content: bytes | str = data
        if incoming.kind.startswith("text/"):
            try:
                content = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
        self.value[incoming.name] = content
        self.mime_type[incoming.name] = incoming.kind
        self.param.trigger("mime_type", "value")
        self._trim_later()  # the chunks' copies wait in reference cycles (module doc)

    # ------------------------------------------------------------------ dropping

    def _refuse(self, message: str) -> None:
        self._drop()
        self._trim_later()
        self.refused = ""
        self.refused = one_line(message)

    def _trim_later(self) -> None:
        """Hand memory back once the chunks of a dropped upload stop coming."""
        if self._trim is not None:
            self._trim.cancel()
        wait = max(TRIM_AFTER_S, self._trimmed_at + TRIM_EVERY_S - time.monotonic())
        try:
            self._trim = asyncio.get_running_loop().call_later(wait, self._trim_now)
        except RuntimeError:  # no event loop (a test driving the widget directly)
            self._trim_now()

    def _trim_now(self) -> None:
        self._trim = None
        self._trimmed_at = time.monotonic()
        return_freed_memory()

    def _drop(self) -> None:
        incoming, self._incoming = self._incoming, None
        if incoming is not None:
            self._cancel_timer(incoming)
            incoming.chunks.clear()
            self._budget.give_back(incoming.received)
            incoming.received = 0

    def _arm_timer(self, incoming: _Incoming) -> None:
        self._cancel_timer(incoming)
        if not self.idle_timeout:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a test driving the widget directly): the session's end still drops it
            return
        incoming.timer = loop.call_later(self.idle_timeout, self._expire, incoming)

    @staticmethod
    def _cancel_timer(incoming: _Incoming) -> None:
        if incoming.timer is not None:
            incoming.timer.cancel()
            incoming.timer = None

    def _expire(self, incoming: _Incoming) -> None:
        if self._incoming is not incoming:
            return
        self._refuse(
            f"upload of {incoming.name} dropped: nothing arrived for {self.idle_timeout:g} s after chunk "
            f"{len(incoming.chunks):,} of {incoming.total_chunks:,}"
        )

    def _cap_text(self) -> str:
        return (
            f"{self.max_bytes // (1024 * 1024)} MB"
            if self.max_bytes % (1024 * 1024) == 0
            else f"{self.max_bytes:,}-byte"
        )
