"""Every file tilescope writes goes through here: written under a temporary name beside the target,
then renamed into place (a reader sees the old file, or the whole new one, never a part), with the
permissions of a normal file (``0666`` less the umask, as ``open(path, "w")`` would give), and an
existing file is never replaced unless the caller says ``overwrite``, and a command's input is
never written at all: each writer passes the files it read as ``inputs``, and a target that is one
of them — by any spelling: the same path, ``..``, a symlink to it or to its folder, a hard link, an
input itself reached through a symlink — is refused, ``overwrite`` or not (``refuse_inputs``, by
device and inode, checked before the work and again just before the rename).

Errors of the file system (a missing folder, no permission, a file in the way) are
``FileAccessError``: one line naming the file and what the system said, no JSON path.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from .errors import InputError

_FILE_MODE = 0o666  # the kernel takes the umask off, exactly as for any newly created file


class FileAccessError(InputError):
    """A file that cannot be read or written: ``FILE: cannot read it: No such file or directory``.

    An InputError, so everything that handles bad input (the CLI's exit 2, the app's error line)
    handles it too."""

    def __init__(self, file: str | Path, problem: str, reason: str | None = None):
        super().__init__("", problem, reason, file=str(file))

    @property
    def message(self) -> str:
        reason = f": {self.found}" if self.found else ""
        return f"{self.file}: {self.expected}{reason}"


def cannot_read(path: str | Path, exc: OSError) -> FileAccessError:
    return FileAccessError(path, "cannot read it", exc.strerror or str(exc))


def cannot_write(path: str | Path, exc: OSError) -> FileAccessError:
    return FileAccessError(path, "cannot write it", exc.strerror or str(exc))


def exists_already(path: str | Path, option: str = "--overwrite") -> FileAccessError:
    return FileAccessError(path, f"exists already (pass {option} to replace it)")


InputPaths = Iterable["str | Path | None"]


def _identity(path: str | Path) -> tuple[int, int] | None:
    """The file a path reaches (symlinks followed): device and inode; None when it reaches none."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return found.st_dev, found.st_ino


def refuse_inputs(target: str | Path, inputs: InputPaths) -> None:
    """A FileAccessError when writing ``target`` would write over one of ``inputs``, however either
    is spelled (the module doc); ``None`` inputs (an option not given) are skipped."""
    named = [given for given in inputs if given is not None]
    reached = _identity(target) if named else None  # (no stat at all for a writer without inputs)
    if reached is None:
        return
    for given in named:
        if _identity(given) == reached:
            same = "" if str(given) == str(target) else f" (given as {given})"
            raise FileAccessError(
                target, f"is an input of this command{same}: inputs are never written, even with --overwrite"
            )


def _create_temporary(folder: Path, name: str) -> tuple[int, Path]:
    """A new file ``.NAME.XXXX.tmp`` in ``folder``, opened for writing, mode 0666 & ~umask."""
    for _ in range(100):
        tmp = folder / f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), _FILE_MODE), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")


@contextlib.contextmanager
def atomic_output(
    path: str | Path, *, overwrite: bool = False, buffering: int = -1, inputs: InputPaths = ()
) -> Iterator[BinaryIO]:
    """``with atomic_output(path) as handle: handle.write(...)``: the file appears whole when the
    block ends without an exception, and not at all otherwise.

    Without ``overwrite`` an existing ``path`` is a FileAccessError, checked before writing and
    again at the rename (a hard link, which fails if the name was taken meanwhile). A ``path``
    that is one of ``inputs`` is a FileAccessError with or without ``overwrite`` (``refuse_inputs``),
    checked before writing and again before the rename."""
    path = Path(path)
    inputs = list(inputs)
    refuse_inputs(path, inputs)
    if not overwrite and os.path.lexists(path):
        raise exists_already(path)
    folder = path.parent
    try:
        fd, tmp = _create_temporary(folder, path.name)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    try:
        with os.fdopen(fd, "wb", buffering=buffering) as handle:
            yield handle
        refuse_inputs(path, inputs)  # the name may have been pointed at an input meanwhile
        try:
            if overwrite:
                os.replace(tmp, path)
            else:
                os.link(tmp, path)
                os.unlink(tmp)
        except FileExistsError:
            raise exists_already(path) from None
        except OSError as exc:
            raise cannot_write(path, exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomically(path: str | Path, data: bytes, *, overwrite: bool = False, inputs: InputPaths = ()) -> Path:
    """Write ``data`` to ``path`` (see ``atomic_output``)."""
    try:
        with atomic_output(path, overwrite=overwrite, inputs=inputs) as handle:
            handle.write(data)
    except FileAccessError:
        raise
    except OSError as exc:  # e.g. the disk filled up while writing
        raise cannot_write(path, exc) from None
    return Path(path)


def make_directory(path: str | Path) -> Path:
    """``mkdir -p``; a file in the way or no permission is a FileAccessError."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise FileAccessError(path, "is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FileAccessError(path, "cannot create the directory", exc.strerror or str(exc)) from None
    return path
