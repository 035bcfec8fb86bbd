"""``lazy``: a derived result computed on first use and kept on its (immutable) owner."""
from __future__ import annotations


class lazy:  # noqa: N801 (used like ``property``)
    """Like ``functools.cached_property``, without Python 3.11's lock shared by every instance of
    the class: one session computing a large profile's table must not stall another session's
    small one. Two threads asking at once may both compute; the results are equal (pure inputs),
    and the last one written stays."""

    def __init__(self, compute):
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, owner, cls=None):
        if owner is None:
            return self
        value = self.compute(owner)
        owner.__dict__[self.name] = value  # later reads find it before this (non-data) descriptor
        return value
