"""Planner outputs → validated records → Arrow tables (and the content-hash cache).

The public names below are imported on first use (``__getattr__``), so importing one module of the
package does not import the rest."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cache import cached_profile, load_profile_cached, open_cached
    from .detect import top_fields
    from .edit_sets import load_edit_set, parse_edit_set
    from .memory_profile import load_memory_profile, parse_memory_profile
    from .minimalloc_csv import load_minimalloc_csv
    from .parquet import write_parquet_tables
    from .placement_dump import load_placement_dump
    from .search_state import load_search_state, parse_search_state

_FROM = {
    "cached_profile": "cache",
    "load_profile_cached": "cache",
    "open_cached": "cache",
    "top_fields": "detect",
    "load_edit_set": "edit_sets",
    "parse_edit_set": "edit_sets",
    "load_memory_profile": "memory_profile",
    "parse_memory_profile": "memory_profile",
    "load_minimalloc_csv": "minimalloc_csv",
    "write_parquet_tables": "parquet",
    "load_placement_dump": "placement_dump",
    "load_search_state": "search_state",
    "parse_search_state": "search_state",
}
__all__ = [
    "cached_profile",
    "load_edit_set",
    "load_memory_profile",
    "load_minimalloc_csv",
    "load_placement_dump",
    "load_profile_cached",
    "load_search_state",
    "open_cached",
    "parse_edit_set",
    "parse_memory_profile",
    "parse_search_state",
    "top_fields",
    "write_parquet_tables",
]


def __getattr__(name: str) -> Any:
    if name in _FROM:
        return getattr(import_module(f"{__name__}.{_FROM[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
