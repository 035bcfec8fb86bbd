"""``tilescope cache [list|clear] [--json]``: the cache of normalised profiles (``loaders.cache_store``).

- ``list`` (the default): the folder, its cap, and each entry, most recently used first: its
  size, when it was last used and the file it was made from.
  ``--json``: ``{"folder", "max_bytes", "total_bytes", "entries": [{"key", "sha256",
  "size_bytes", "last_used", "source", "source_bytes"}]}``.
- ``clear``: remove every entry. ``--json``: ``{"folder", "removed_entries", "freed_bytes"}``.
"""

from __future__ import annotations

import json
import time

from tilescope.loaders import cache_store
from tilescope.models.format import count_of, fmt_bytes, terminal_text


def add_arguments(parser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=["list", "clear"],
        default="list",
        help="list the entries (default) or remove them all",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    folder = cache_store.default_cache_dir()
    if args.action == "clear":
        removed, freed = cache_store.clear(folder)
        if args.json:
            print(json.dumps({"folder": str(folder), "removed_entries": removed, "freed_bytes": freed}))
        elif not args.quiet:
            print(f"{terminal_text(str(folder))}: removed {count_of(removed, 'entry', 'entries')}, {fmt_bytes(freed)}")
        return 0
    max_bytes = cache_store.max_cache_bytes()
    found = cache_store.entries(folder)
    total = sum(e.size_bytes for e in found)
    if args.json:
        print(
            json.dumps(
                {
                    "folder": str(folder),
                    "max_bytes": max_bytes,
                    "total_bytes": total,
                    "entries": [e.to_json() for e in found],
                }
            )
        )
        return 0
    print(
        f"{terminal_text(str(folder))}: {count_of(len(found), 'entry', 'entries')}, {fmt_bytes(total)} of at most {fmt_bytes(max_bytes)}"
    )
    for entry in found:
        used = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.last_used))
        source = terminal_text(entry.source) if entry.source is not None else "(source not recorded)"
        print(f"  {entry.key[:12]}  {fmt_bytes(entry.size_bytes)}  last used {used}  {source}")
    return 0
