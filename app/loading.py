"""Which file a session opens: ``panel serve app --args`` options, the ``?file=`` URL parameter (a
name under the data root, never outside it) and the upload size cap. Opening it is
``tilescope.derived.opening``. No Panel here: ``app.main`` wires these to the page.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from tilescope import samples
from tilescope.models.errors import TilescopeError

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_ROOT = samples.sample_dir()
DEFAULT_FILE = samples.MEMORY_PROFILE
# Uploads travel through the browser's websocket as one message and are parsed in memory: 200 MB
# covers the largest synthetic profiles (tens of thousands of steps) with room to spare. Larger
# files are refused with a message; open them from disk with ``--args PATH`` instead.
MAX_UPLOAD_BYTES = 200 * 1024 * 1024


class PathRefused(TilescopeError):
    """A ``?file=`` name that is not a plain relative path inside the data root."""


@dataclass(frozen=True)
class AppOptions:
    file: Path | None  # explicit file from --args PATH (None: the default sample or ?file=)
    data_root: Path  # where ?file= names are looked up
    dataset: Path | None = None  # --args --dataset DIR: the fleet view of that dataset (tilescope serve --dataset)


def parse_app_args(argv: list[str]) -> AppOptions:
    """``panel serve app --args [PATH] [--data-root DIR] [--dataset DIR]`` (``sys.argv[1:]`` inside the app)."""
    parser = argparse.ArgumentParser(prog="panel serve app --args", add_help=False, exit_on_error=False)
    parser.add_argument("file", nargs="?", default=None)
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--dataset", default=None)
    try:
        ns, _unknown = parser.parse_known_args(argv)
    except argparse.ArgumentError as exc:
        raise TilescopeError(f"app arguments: {exc}") from None
    root = Path(ns.data_root).expanduser() if ns.data_root else DEFAULT_DATA_ROOT
    dataset = Path(ns.dataset).expanduser() if ns.dataset else None
    return AppOptions(Path(ns.file).expanduser() if ns.file else None, root, dataset)


def initial_file(options: AppOptions) -> Path:
    """The file a session opens when its URL names none."""
    if options.file is not None:
        return options.file
    return options.data_root / DEFAULT_FILE if (options.data_root / DEFAULT_FILE).exists() else DEFAULT_DATA_ROOT / DEFAULT_FILE


def display_name(path: Path) -> str:
    """How a served file is named in the page: relative to the project when inside it."""
    resolved = path.resolve()
    return str(resolved.relative_to(REPO_ROOT)) if resolved.is_relative_to(REPO_ROOT) else str(path)


def resolve_in_root(root: str | Path, name: str) -> Path:
    """The file ``name`` names under ``root``; PathRefused for absolute paths, ``..`` parts, or
    anything (e.g. a symlink) resolving outside the root."""
    if not name or "\x00" in name:
        raise PathRefused("refused file name: empty or not text")
    candidate = Path(name)
    if candidate.is_absolute() or name.startswith(("/", "\\")) or candidate.drive:
        raise PathRefused(f"refused file name {name!r}: absolute paths are not allowed; name a file under the data root")
    if ".." in candidate.parts or ".." in name.replace("\\", "/").split("/"):
        raise PathRefused(f"refused file name {name!r}: '..' is not allowed; name a file under the data root")
    base = Path(root).resolve()
    resolved = (base / candidate).resolve()
    if not resolved.is_relative_to(base):
        raise PathRefused(f"refused file name {name!r}: it resolves outside the data root")
    return resolved


def check_upload_size(size: int) -> None:
    if size > MAX_UPLOAD_BYTES:
        raise TilescopeError(
            f"refused upload: {size:,} bytes is over the {MAX_UPLOAD_BYTES // (1024 * 1024)} MB upload limit; "
            "serve the file with `panel serve app --address 127.0.0.1 --args PATH` instead"
        )
