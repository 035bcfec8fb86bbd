"""``lazy``: a result computed on first use and kept on its (immutable) owner: the one way lazy
results are written (planner, derived), never ``functools.cached_property``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class lazy(Generic[T]):
    """Like ``functools.cached_property``, without Python 3.11's lock shared by every instance of
    the class: one session computing a large profile's table must not stall another session's
    small one. Two threads asking at once may both compute; the results are equal (pure inputs),
    and the last one written stays."""

    def __init__(self, compute: Callable[[Any], T]):
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, owner: None, cls: type | None = None) -> lazy[T]: ...
    @overload
    def __get__(self, owner: object, cls: type | None = None) -> T: ...

    def __get__(self, owner: object | None, cls: type | None = None) -> T | lazy[T]:
        if owner is None:
            return self
        value = self.compute(owner)
        owner.__dict__[self.name] = value  # later reads find it before this (non-data) descriptor
        return value
