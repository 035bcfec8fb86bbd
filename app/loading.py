"""Which file a session opens: ``panel serve app --args`` options, the ``?file=`` URL parameter (a
name under the data root, never outside it), and what a load may cost: the upload size cap, the
size cap for files under the data root, the time limit per load and the number of load workers
(``app.load_pool``). Opening it is ``tilescope.derived.opening``. No Panel here: ``app.main``
wires these to the page.

Each limit is an ``--args`` option, else an environment variable (so ``tilescope serve`` passes it
on unchanged), else its default:

=========================  ===========================  ======================  ==================
``--args`` option          environment variable         default                 what it bounds
=========================  ===========================  ======================  ==================
``--max-file-bytes N``     ``TILESCOPE_MAX_FILE_BYTES``  1 GiB (``1GiB``)        a file under the data root
``--load-timeout S``       ``TILESCOPE_LOAD_TIMEOUT``    120 s                   one load, queue included
``--load-workers N``       ``TILESCOPE_LOAD_WORKERS``    4                       loads running at once
(none)                     ``TILESCOPE_UPLOAD_TIMEOUT``  60 s                    an upload's silence between chunks
(none)                     ``TILESCOPE_UPLOADS_MAX_BYTES`` 400 MiB (``400MiB``)  unfinished uploads of all sessions
=========================  ===========================  ======================  ==================

Sizes are written as ``tilescope cache`` takes them (``500M``, ``2G``, ``1GiB``, or bytes).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tilescope import samples
from tilescope.loaders.json_input import open_input
from tilescope.models.errors import TilescopeError
from tilescope.models.files import FileAccessError
from tilescope.models.format import SIZE_EXAMPLES, parse_size

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_ROOT = samples.sample_dir()
DEFAULT_FILE = samples.MEMORY_PROFILE
# Uploads travel through the browser's websocket as one message and are parsed in memory: 200 MB
# covers the largest synthetic profiles (tens of thousands of steps) with room to spare. Larger
# files are refused with a message; open them from disk with ``--args PATH`` instead.
MAX_UPLOAD_BYTES = 200 * 1024 * 1024
# A file under the data root is read whole into memory and parsed (about 1.3× its size at the peak,
# README "Performance"): 1 GiB covers the largest profiles measured; a larger one is refused before a
# byte of it is read. The file named by ``--args PATH`` outside the data root is the operator's
# choice and not capped.
DEFAULT_MAX_FILE_BYTES = 1 << 30
DEFAULT_LOAD_TIMEOUT_S = 120.0
DEFAULT_LOAD_WORKERS = 4
DEFAULT_UPLOAD_TIMEOUT_S = 60.0
# All sessions' unfinished uploads together (a server process's): two uploads at the cap can arrive
# at once; a third waits for one of them. Without it, five sessions each holding 190 MB took the
# server from 303 to 1,220 MB until their idle timeouts.
DEFAULT_UPLOADS_MAX_BYTES = 2 * MAX_UPLOAD_BYTES
UPLOADS_MAX_BYTES_ENV = "TILESCOPE_UPLOADS_MAX_BYTES"
MAX_FILE_BYTES_ENV = "TILESCOPE_MAX_FILE_BYTES"
LOAD_TIMEOUT_ENV = "TILESCOPE_LOAD_TIMEOUT"
LOAD_WORKERS_ENV = "TILESCOPE_LOAD_WORKERS"
UPLOAD_TIMEOUT_ENV = "TILESCOPE_UPLOAD_TIMEOUT"


class PathRefused(TilescopeError):
    """A ``?file=`` name that is not a plain relative path inside the data root."""


@dataclass(frozen=True)
class AppOptions:
    file: Path | None  # explicit file from --args PATH (None: the default sample or ?file=)
    data_root: Path  # where ?file= names are looked up
    dataset: Path | None = None  # --args --dataset DIR: the fleet view of that dataset (tilescope serve --dataset)
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES  # a file under the data root larger than this is refused unread
    load_timeout: float = DEFAULT_LOAD_TIMEOUT_S  # seconds one load may take (app.load_pool)
    load_workers: int = DEFAULT_LOAD_WORKERS  # loads running at once in this server process


def parse_app_args(argv: list[str], environ: Mapping[str, str] | None = None) -> AppOptions:
    """``panel serve app --args [PATH] [--data-root DIR] [--dataset DIR] [--max-file-bytes N]
    [--load-timeout S] [--load-workers N]`` (``sys.argv[1:]`` inside the app);
    a limit not given is read from its environment variable, else its default (module doc)."""
    environ = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(prog="panel serve app --args", add_help=False, exit_on_error=False)
    parser.add_argument("file", nargs="?", default=None)
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--dataset", default=None)
    parser.add_argument("--max-file-bytes", default=None)
    parser.add_argument("--load-timeout", default=None)
    parser.add_argument("--load-workers", default=None)
    try:
        ns, _unknown = parser.parse_known_args(argv)
    except argparse.ArgumentError as exc:
        raise TilescopeError(f"app arguments: {exc}") from None
    root = Path(ns.data_root).expanduser() if ns.data_root else DEFAULT_DATA_ROOT
    dataset = Path(ns.dataset).expanduser() if ns.dataset else None
    return AppOptions(
        Path(ns.file).expanduser() if ns.file else None,
        root,
        dataset,
        max_file_bytes=_limit(
            ns.max_file_bytes, "--max-file-bytes", environ, MAX_FILE_BYTES_ENV, DEFAULT_MAX_FILE_BYTES, _size
        ),
        load_timeout=_limit(
            ns.load_timeout, "--load-timeout", environ, LOAD_TIMEOUT_ENV, DEFAULT_LOAD_TIMEOUT_S, parse_seconds
        ),
        load_workers=_limit(
            ns.load_workers, "--load-workers", environ, LOAD_WORKERS_ENV, DEFAULT_LOAD_WORKERS, _workers
        ),
    )


def _limit(given: str | None, option: str, environ, variable: str, default, parse):
    """The option's value, else the environment variable's, else ``default``; a bad one is refused
    in one line naming where it came from."""
    for source, text in ((f"app argument {option}", given), (variable, environ.get(variable))):
        if text is None or text == "":
            continue
        try:
            return parse(text)
        except ValueError as exc:
            raise TilescopeError(f"{source}: expected {exc.args[0]}, found {text!r}") from None
    return default


def _size(text: str) -> int:
    try:
        size = parse_size(text)
    except ValueError:
        size = 0
    if size < 1:
        raise ValueError(f"a size in bytes of at least 1, such as {SIZE_EXAMPLES}")
    return size


def parse_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise ValueError("a number of seconds above 0")
    return seconds


def upload_timeout(environ: dict[str, str] | None = None) -> float:
    """Seconds an unfinished upload may stay silent before it is dropped (``app.widgets.upload``):
    ``TILESCOPE_UPLOAD_TIMEOUT``, else 60. (An environment variable only: the upload box exists
    before the session's options are read.)"""
    return _limit(
        None,
        "",
        os.environ if environ is None else environ,
        UPLOAD_TIMEOUT_ENV,
        DEFAULT_UPLOAD_TIMEOUT_S,
        parse_seconds,
    )


def uploads_max_bytes(environ: dict[str, str] | None = None) -> int:
    """The bytes all sessions' unfinished uploads may hold together: ``TILESCOPE_UPLOADS_MAX_BYTES``,
    else 400 MiB. (An environment variable only, as the upload timeout.)"""
    return _limit(
        None, "", os.environ if environ is None else environ, UPLOADS_MAX_BYTES_ENV, DEFAULT_UPLOADS_MAX_BYTES, _size
    )


def _workers(text: str) -> int:
    if not (text.strip().isascii() and text.strip().isdigit()) or not 1 <= int(text) <= 64:
        raise ValueError("a whole number of workers from 1 to 64")
    return int(text)


def initial_file(options: AppOptions) -> Path:
    """The file a session opens when its URL names none."""
    if options.file is not None:
        return options.file
    return (
        options.data_root / DEFAULT_FILE
        if (options.data_root / DEFAULT_FILE).exists()
        else DEFAULT_DATA_ROOT / DEFAULT_FILE
    )


def display_name(path: Path) -> str:
    """How a served file is named in the page: relative to the project when inside it."""
    resolved = path.resolve()
    return str(resolved.relative_to(REPO_ROOT)) if resolved.is_relative_to(REPO_ROOT) else str(path)


def resolve_in_root(root: str | Path, name: str) -> Path:
    """The file ``name`` names under ``root``; PathRefused for absolute paths, ``..`` parts, empty
    or ``.`` parts (``x/``, ``x/.``, ``x//y``, ``./x``: a name is folder and file names joined by
    ``/``, each spelt one way), or anything (e.g. a symlink) resolving outside the root."""
    if not name or "\x00" in name:
        raise PathRefused("refused file name: empty or not text")
    candidate = Path(name)
    if candidate.is_absolute() or name.startswith(("/", "\\")) or candidate.drive:
        raise PathRefused(
            f"refused file name {name!r}: absolute paths are not allowed; name a file under the data root"
        )
    parts = name.replace("\\", "/").split("/")
    if ".." in candidate.parts or ".." in parts:
        raise PathRefused(f"refused file name {name!r}: '..' is not allowed; name a file under the data root")
    if any(part in ("", ".") for part in parts):
        raise PathRefused(
            f"refused file name {name!r}: an empty or '.' part (as in 'x/', 'x/.', 'x//y' or './x') is not allowed; "
            "name a file under the data root as folder/file"
        )
    base = Path(root).resolve()
    resolved = (base / candidate).resolve()
    if not resolved.is_relative_to(base):
        raise PathRefused(f"refused file name {name!r}: it resolves outside the data root")
    return resolved


def check_file(path: str | Path, name: str, max_bytes: int | None) -> None:
    """Refuse, before a byte of it is read, a file the app would open as ``name``: anything but a
    regular file (a FIFO, a device, a socket, a directory: the loader's one-line message, as the
    CLI gives it), and a file larger than ``max_bytes`` (None: no cap). The file is only opened (non-blocking) and
    its size read from the open file."""
    try:
        with open_input(path) as handle:
            size = os.fstat(handle.fileno()).st_size
    except FileAccessError as exc:
        raise exc.naming(name) from None
    if max_bytes is not None and size > max_bytes:
        raise FileAccessError(
            name,
            "refused",
            f"{size:,} bytes is over the {max_bytes:,}-byte limit for a file under the data root "
            "(--args --max-file-bytes N, or TILESCOPE_MAX_FILE_BYTES, raises it)",
        )


def check_upload_size(size: int) -> None:
    if size > MAX_UPLOAD_BYTES:
        raise TilescopeError(
            f"refused upload: {size:,} bytes is over the {MAX_UPLOAD_BYTES // (1024 * 1024)} MB upload limit; "
            "serve the file with `panel serve app --address 127.0.0.1 --args PATH` instead"
        )
