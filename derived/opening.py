"""Opening a file: the one entry (``open_file``: a path or an upload's bytes → an opened object),
and the registry of the kinds of file tilescope opens (``FILE_KINDS``).

Every caller opens through ``open_file``: the app (in a load worker, ``app.open_flow``), the
notebook API (``tilescope.open``), the CLI (``tilescope.cli.inputs``). A file's kind is recognised
once, here (``recognise``), then the kind's opener makes the opened object:

1. A path whose content was normalised before (``loaders.cache``: the content-hash cache, which
   only holds memory profiles) is a memory profile, recognised without reading the file.
2. Otherwise the bytes are read once (``loaders.json_input.InputBuffer``) and their top-level
   fields listed (``loaders.detect.top_fields``: the whole text checked to be JSON, no value
   built); the first kind in ``FILE_KINDS`` whose ``recognise`` accepts them opens those same bytes
   (a large profile's JSON is read once and parsed once).

**Adding a file kind is one registration**: a ``FileKind`` line in ``FILE_KINDS`` naming

- ``recognise(Found) -> bool``: from the file's top-level fields (``found.fields``, key → the start
  of its JSON text) and its name (``found.source.name``);
- ``open(Found, progress) -> object``: the opener (a module of the kind's own under ``derived/``);
  the object has ``name`` and a class attribute ``kind`` (the key);
- ``view``: ``"module:function"`` of the app's page for it, ``function(PageContext) -> Viewable``
  (``app.page_context``; the app imports it, so this layer never imports Panel);
- ``prepare`` (optional): what its view reads first, computed in the load worker (never on a
  session's event loop).

A staged open (``staged=``, the app's opens by path) gives a cached profile's overview first:
``staged(opened)`` is called with the profile whose ``overview`` is there and whose plan is not
built yet, then the plan is built in the calling thread before ``open_file`` returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilescope.loaders.cache import CachedProfile, Located, find_cached, open_cached
from tilescope.loaders.detect import top_fields
from tilescope.loaders.json_input import InputBuffer
from tilescope.loaders.memory_profile import load_memory_profile, parse_memory_profile
from tilescope.loaders.search_state import parse_search_state
from tilescope.models.errors import InputError

from .opened import Opened, OpenedProfile, OpenedSearchState, build_profile, opened_profile
from .overview import OVERVIEW_TABLE, UsageOverview
from .placement_opened import (
    is_placement_dump,
    is_placement_profile,
    open_placement_dump,
    open_placement_profile,
    prepare_dump,
    prepare_placement_profile,
)

__all__ = [
    "FILE_KINDS",
    "FileKind",
    "Found",
    "Opened",
    "OpenedProfile",
    "OpenedSearchState",
    "Source",
    "kind_label",
    "kind_named",
    "open_file",
    "opened_profile",
    "prepare_profile",
    "recognise",
]

Progress = Callable[[str, float], None]
Staged = Callable[[OpenedProfile], None]


@dataclass(frozen=True)
class Source:
    """What to open: a file (``path``) or an upload's bytes (``data``), shown and named in errors
    as ``name`` (a ``?file=`` name, not the server's absolute path)."""

    name: str
    path: Path | None = None
    data: bytes | None = None

    @classmethod
    def of_path(cls, path: str | Path, name: str | None = None) -> Source:
        return cls(name or str(path), Path(path))

    @classmethod
    def of_bytes(cls, data: bytes, name: str) -> Source:
        return cls(name, None, data)


@dataclass
class Found:
    """A source as recognised: its top-level fields, and what was read to recognise it (the
    kind's opener reads these, never the file again)."""

    source: Source
    fields: dict[str, bytes] = field(default_factory=dict)  # top-level key → the start of its JSON text
    buffer: InputBuffer | None = None  # the bytes, once read
    cached: CachedProfile | None = None  # a content normalised before (a memory profile)
    located: Located | None = None  # its cache entry, once hashed (the opener does not hash it again)
    use_cache: bool = True
    staged: Staged | None = None

    def has(self, *keys: str) -> bool:
        return all(k in self.fields for k in keys)

    def bytes(self) -> bytes:
        """The whole text (a small file's: an opener that needs plain bytes)."""
        assert self.buffer is not None
        return self.buffer.data if isinstance(self.buffer.data, bytes) else bytes(self.buffer.data)


@dataclass(frozen=True)
class FileKind:
    """One kind of file tilescope opens (module doc: how to add one)."""

    key: str  # the opened object's ``kind``; the session's ``state.kind``
    label: str  # what the page and messages call it: "memory profile"
    fields: str  # what recognises it, for the message when nothing does: "with `timeline`"
    recognise: Callable[[Found], bool]
    open: Callable[[Found, Progress], Any]
    view: str  # "module:function" of the app's page for it
    prepare: Callable[[Any], None] | None = None  # what its view reads first, computed in the load worker


# ---------------------------------------------------------------------- memory profiles


def _from_cache(name: str, cached: CachedProfile, staged: Staged | None) -> OpenedProfile:
    """A profile opened through the cache. When the entry has the overview (written the first
    time this content was planned), a staged open shows it first (``staged(opened)``), then the
    rest is built here; otherwise it is built, and the overview written to the entry for the next
    open."""
    stored = None
    if cached.profile is None:  # a cache hit: the overview may be there
        table = cached.entry.read_table(OVERVIEW_TABLE)
        stored = UsageOverview.from_table(table) if table is not None else None

    def build():
        try:
            built = build_profile(cached.read())
        except InputError as exc:  # (the entry was damaged and the file changed into a bad one since)
            raise exc.naming(name) from None
        if stored is None or not stored.same_as(built.overview):  # (another planner's: replaced)
            cached.entry.write_table(OVERVIEW_TABLE, built.overview.to_table())
        return built

    opened = OpenedProfile(name, build=build, overview=stored)
    if staged is not None and stored is not None:
        staged(opened)
    return opened.wait()


def open_memory_profile(found: Found, progress: Progress) -> OpenedProfile:
    """A memory profile, planned: through the cache for a path (the JSON is parsed only when this
    content was never normalised), else from the bytes."""
    source = found.source
    if found.cached is not None:
        return _from_cache(source.name, found.cached, found.staged)
    if source.path is not None and found.use_cache:
        return _from_cache(
            source.name,
            open_cached(source.path, progress=progress, buffer=found.buffer, located=found.located),
            found.staged,
        )
    if source.path is not None:
        return opened_profile(source.name, load_memory_profile(source.path, progress, found.buffer))
    return opened_profile(source.name, parse_memory_profile(found.bytes(), source.name, progress))


def prepare_profile(opened: OpenedProfile) -> None:
    """What the profile's page reads first (the timeline, the summary with its placement, the
    value search): computed once, kept on the shared profile."""
    opened.base.series, opened.base.placement, opened.steps, opened.value_search  # noqa: B018


# ---------------------------------------------------------------------- search states


def open_search_state(found: Found, progress: Progress) -> OpenedSearchState:
    return OpenedSearchState(found.source.name, parse_search_state(found.bytes(), found.source.name))


# ---------------------------------------------------------------------- the registry

FILE_KINDS: tuple[FileKind, ...] = (
    FileKind(
        "memory_profile",
        "memory profile",
        "with `timeline`",
        lambda f: f.has("timeline"),
        open_memory_profile,
        "tilescope.app.views.profile_page:profile_page",
        prepare_profile,
    ),
    FileKind(
        "search_state",
        "search state",
        "with `context` and `recipe`",
        lambda f: f.has("context") or f.has("recipe"),
        open_search_state,
        "tilescope.app.views.search_state:search_state_page",
    ),
    FileKind(
        "placement_dump",
        "placement dump",
        "with `requests` and `ranges`",
        lambda f: is_placement_dump(f.fields),
        open_placement_dump,
        "tilescope.app.views.placement_pages:placement_problem_page",
        prepare_dump,
    ),
    FileKind(
        "placement_profile",
        "placement profile",
        "with `schema_version` and `tiles`",
        lambda f: is_placement_profile(f.fields),
        open_placement_profile,
        "tilescope.app.views.placement_pages:placement_profile_page",
        prepare_placement_profile,
    ),
)


def kind_named(key: str) -> FileKind:
    return next(kind for kind in FILE_KINDS if kind.key == key)


def kind_label(key: str) -> str:
    """What the page calls kind ``key`` ("memory profile")."""
    return next((kind.label for kind in FILE_KINDS if kind.key == key), key.replace("_", " "))


def _nothing_matches(found: Found) -> InputError:
    if "version" not in found.fields and "schema_version" not in found.fields:
        return InputError("$.version", "a field `version` (1)", "none")
    wanted = " or ".join(f"a {kind.label} ({kind.fields})" for kind in FILE_KINDS)
    return InputError("$", wanted, "an object with none of these")


def recognise(
    source: Source, progress: Progress | None = None, *, use_cache: bool = True, staged: Staged | None = None
) -> tuple[FileKind, Found]:
    """The kind of ``source`` and what was read to tell (module doc). Raises ``InputError``."""
    note = progress or (lambda stage, fraction: None)
    found = Found(source, use_cache=use_cache, staged=staged)
    if source.path is not None and use_cache:
        found.cached, found.located = find_cached(source.path, progress=note)
        if found.cached is not None:
            return kind_named("memory_profile"), found
    note("reading", 0.1)
    found.buffer = InputBuffer.read(source.path) if source.path is not None else InputBuffer(source.data or b"")
    found.fields = top_fields(found.buffer.data)
    for kind in FILE_KINDS:
        if kind.recognise(found):
            return kind, found
    raise _nothing_matches(found)


def open_file(
    source: Source | str | Path,
    progress: Progress | None = None,
    *,
    use_cache: bool = True,
    staged: Staged | None = None,
    prepare: bool = False,
) -> Any:
    """Open ``source`` (a path, or a ``Source``: a path or bytes, with the name it is shown by) as
    the kind it is. ``staged``: called with a cached profile's overview-first object before its
    plan is built (module doc). ``prepare``: also compute what the kind's view reads first (the app
    does, in its load worker). Raises ``InputError`` naming the file as the user named it."""
    if not isinstance(source, Source):
        source = Source.of_path(source)
    note = progress or (lambda stage, fraction: None)
    try:
        kind, found = recognise(source, note, use_cache=use_cache, staged=staged)
        opened = kind.open(found, note)
        del found  # the bytes: what the loader did not release yet goes now
        if prepare and kind.prepare is not None:
            kind.prepare(opened)
    except InputError as exc:
        raise exc.naming(source.name) from None
    note("done", 1.0)
    return opened
