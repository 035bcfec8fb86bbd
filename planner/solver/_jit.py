"""``njit``: numba's, caching compiled code on disk (numba falls back to a per-user cache folder
when the package's ``__pycache__`` is not writable), so a fresh process pays the compilation once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba


def njit(*, cache: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return numba.njit(cache=cache, nogil=True)
