"""What the page gives the view of a file kind (``derived.opening.FileKind.view``): a function
``view(context: PageContext) -> Viewable`` builds it once per session, the first time a file of
its kind is open; afterwards it follows ``context.state`` (Lumen's views following ``Pipeline``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from tilescope.app.open_flow import SessionOpener
from tilescope.app.state import SessionState

__all__ = ["PageContext", "kind_view"]


@dataclass(frozen=True)
class PageContext:
    state: SessionState  # the session: ``opened``, ``data``, the selection…
    opener: SessionOpener  # to open another file (compare, a row of a dataset) or run file-sized work
    upload_box: Any  # the page's "open another file" box, placed where the view wants it


def kind_view(spec: str) -> Callable[[PageContext], Any]:
    """The function a ``FileKind.view`` names (``"module:function"``)."""
    module, _, name = spec.partition(":")
    return getattr(import_module(module), name)
