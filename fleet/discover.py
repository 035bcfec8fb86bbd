"""Which files under a directory a batch reads, and what each is.

The client only lists DIR (``find_inputs``); it reads no file. Every regular file is a candidate,
whatever its name: the compiler names its profiles ``{scope}-{pid}-{serial}.json``, its placement
profiles ``placement-{pid}.json`` and its dumps ``tile-{tile}-{hash}.json``. The worker that gets
a file tells what it is from its first ``SNIFF_BYTES`` (``recognise``: ``sniff``, or the name
``*.memory_profile.json`` / ``*.search_state.json`` of a file whose loader should say what is
wrong with it) and only then reads it whole. ``serve --data-root``'s picker lists a data root's
files by the same test (``recognise_file``).

Everything else the listing meets is recorded with why it is not read: a FIFO, socket or device
(never opened: it could block), a dangling symlink or a symlink loop, a symlink to a file outside
DIR (its bytes are not copied into the dataset), a symlink to a folder (not followed: no cycles).
Names starting with '.' (files and folders) are left out, and so is the dataset itself when it lies
under DIR. A name that is not UTF-8 is shown with its undecodable bytes as ``\\xNN``.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from tilescope.loaders.json_input import file_kind, open_input
from tilescope.models.errors import InputError

SNIFF_BYTES = 1 << 16
NAMED_SUFFIXES = (".memory_profile.json", ".search_state.json")


def display_path(relative: str) -> str:
    """A relative path as text a dataset can hold: undecodable bytes of the name as ``\\xNN``."""
    return os.fsencode(relative).decode("utf-8", "backslashreplace")


@dataclass(frozen=True)
class Input:
    path: str  # relative to DIR, '/'-separated, as the dataset names it (display_path)
    fs_path: str  # relative to DIR as the filesystem names it
    size: int


@dataclass
class Found:
    inputs: list[Input] = field(default_factory=list)  # regular files (or symlinks to them inside DIR), by path
    skipped: list[dict] = field(default_factory=list)  # {path, why}: entries not read


def _skip(found: Found, rel: str, why: str) -> None:
    found.skipped.append({"path": display_path(rel), "why": why})


def _symlink(found: Found, base: Path, real_base: str, rel: str, entry: os.DirEntry) -> None:
    try:
        target = os.stat(entry.path)
    except OSError as exc:
        why = (
            "a symlink loop"
            if exc.errno == errno.ELOOP
            else "a dangling symlink"
            if exc.errno == errno.ENOENT
            else f"a symlink that cannot be followed ({exc.strerror})"
        )
        _skip(found, rel, why)
        return
    real = os.path.realpath(entry.path)
    if stat.S_ISDIR(target.st_mode):
        _skip(found, rel, "a symlink to a folder (not followed)")
    elif os.path.commonpath([real, real_base]) != real_base:
        _skip(found, rel, "a symlink to a file outside DIR (not read)")
    elif not stat.S_ISREG(target.st_mode):
        _skip(found, rel, f"a symlink to {file_kind(target.st_mode)}, not a regular file (not read)")
    else:
        found.inputs.append(Input(display_path(rel), rel, target.st_size))


def find_inputs(root: str | Path, exclude: str | Path | None = None) -> Found:
    """Every entry under ``root`` (module doc)."""
    base = Path(root)
    if not base.is_dir():
        raise InputError(
            "$",
            "a directory of planner outputs",
            "no such directory" if not base.exists() else "a file",
            file=str(root),
        )
    real_base = os.path.realpath(base)
    skip = os.path.realpath(exclude) if exclude is not None else None
    found = Found()
    pending = [""]
    while pending:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(base / folder) if folder else os.scandir(base), key=lambda e: e.name)
        except OSError as exc:
            _skip(found, folder, f"a folder that cannot be listed ({exc.strerror})")
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = f"{folder}/{entry.name}" if folder else entry.name
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError as exc:
                _skip(found, rel, f"cannot be listed ({exc.strerror})")
                continue
            if stat.S_ISLNK(mode):
                _symlink(found, base, real_base, rel, entry)
            elif stat.S_ISDIR(mode):
                if os.path.realpath(entry.path) != skip:
                    pending.append(rel)
            elif stat.S_ISREG(mode):
                found.inputs.append(Input(display_path(rel), rel, entry.stat(follow_symlinks=False).st_size))
            else:
                _skip(found, rel, f"{file_kind(mode)}, not a regular file (not opened)")
    found.inputs.sort(key=lambda i: i.path)
    found.skipped.sort(key=lambda s: s["path"])
    return found


# ----------------------------------------------------------------------------- sniffing

_KEY = re.compile(rb'"((?:[^"\\]|\\.)*)"\s*:')


def top_level_keys(head: bytes) -> tuple[list[str], bytes | None] | None:
    """The keys of the JSON object ``head`` begins (as far as it goes) and its ``version`` value's
    text; None when ``head`` does not begin a JSON object. Strings are skipped, not decoded, so
    what a file holds is never quoted back."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"{"):
        return None
    keys: list[str] = []
    version = None
    depth, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == 0x22:  # a string: a key when depth is 1 and a ':' follows
            j = i + 1
            while j < n and text[j] != 0x22:
                j += 2 if text[j] == 0x5C else 1
            if j >= n:
                break
            rest = text[j + 1 : j + 64].lstrip()
            if depth == 1 and rest.startswith(b":"):
                key = text[i + 1 : j].decode("utf-8", "replace")
                keys.append(key)
                if key == "version":
                    version = rest[1:].lstrip()[:12].split(b",")[0].split(b"}")[0].strip()
            i = j + 1
            continue
        if c in b"{[":
            depth += 1
        elif c in b"}]":
            depth -= 1
            if depth == 0:
                break
        i += 1
    return keys, version


def sniff(head: bytes) -> tuple[str | None, str]:
    """What a file is from its first bytes: ``(kind, detail)`` with kind ``memory_profile``,
    ``search_state``, ``placement_dump``, ``placement_profile`` or None (not a planner output,
    detail says why; never the file's content)."""
    found = top_level_keys(head)
    if found is None:
        return None, "not a JSON object"
    keys, version = found
    have = set(keys)
    v = (version or b"?").decode("ascii", "replace")
    if "schema_version" in have and ({"start", "end"} & have or len(keys) == 1):
        return "placement_profile", "placement profile"
    if {"context", "recipe", "alternatives"} & have:
        return "search_state", f"search state v{v}"
    if {"timeline", "scope", "budget_bytes", "peak", "model"} & have:
        return "memory_profile", f"memory profile v{v}"
    if {"requests", "ranges", "region_boundary", "assigned_root_spans", "interleaved_offset"} & have:
        return "placement_dump", f"placement dump v{v}"
    return None, "JSON, but not a planner output" if keys else "not a planner output"


def recognise(head: bytes, name: str) -> tuple[str | None, str]:
    """``sniff``, and a file named as a memory profile or a search state is taken as one (its
    loader then says what is wrong with it)."""
    kind, what = sniff(head)
    if kind is None and name.endswith(NAMED_SUFFIXES):
        kind = "search_state" if name.endswith(NAMED_SUFFIXES[1]) else "memory_profile"
    return kind, what


def read_head(path: str | Path) -> bytes:
    """The first ``SNIFF_BYTES`` of a regular file (InputError for anything else: a FIFO is
    refused, not waited on)."""
    with open_input(path) as handle:
        return handle.read(SNIFF_BYTES)


def recognise_file(path: str | Path) -> str | None:
    """The planner output kind of the file at ``path`` from its first bytes (``recognise``), None
    when it is not one or cannot be read."""
    try:
        return recognise(read_head(path), os.fsdecode(path))[0]
    except (OSError, InputError):
        return None
