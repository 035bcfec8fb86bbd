"""The shareable state of a session as a URL query, and back:
``?file=NAME&step=45&value=84&tab=editor&edits=84:1=18,84:r=27``.

- ``file``: the open file's name under the data root (absent for the served default or an upload);
- ``step``: the selected step; ``value``: the value open in the editor (the last one selected);
- ``tile``: the device tile the per-tile views show (``SessionState.selected_tile``);
- ``tab``: the side panel's tab (``app.side_tabs.SIDE_TABS`` keys);
- ``edits``: the what-if edits in ``models.edits.compact_edits`` form;
- ``compare``: the file (under the data root) the open profile is compared with (picked in the
  Compare tab's picker, ``?compare=``, or two rows of the fleet view);
- ``dataset``: the dataset whose fleet view the session shows (``?dataset=NAME``, a directory under
  the data root); with ``file`` too, the profile opened from one of its rows (Back shows the fleet).

Parsing never trusts the URL: a part that is not what it should be is dropped (and said), the
rest still applies. Numbers are ASCII digits only; a URL of more than ``models.edits.MAX_COMPACT_EDITS`` edits
has none applied (said), so a long URL costs a bounded amount of work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode

from tilescope.models.edits import TilingEdit, compact_edits, parse_compact_edits
from tilescope.models.errors import InputError

MAX_NUMBER_DIGITS = 18


@dataclass(frozen=True)
class UrlState:
    file: str | None = None
    step: int | None = None
    value: int | None = None
    tab: str | None = None
    edits: tuple[TilingEdit, ...] = ()
    problems: tuple[str, ...] = field(default=(), compare=False)  # what was dropped, and why
    compare: str | None = None
    tile: int | None = None
    dataset: str | None = None

    def query(self) -> str:
        """``?file=…&step=…`` (parts that are unset are left out; ``,``, ``:`` and ``=`` kept readable)."""
        parts = {
            "dataset": self.dataset,
            "file": self.file,
            "step": self.step,
            "value": self.value,
            "tile": self.tile,
            "tab": self.tab,
            "edits": compact_edits(self.edits) if self.edits else None,
            "compare": self.compare,
        }
        text = urlencode({k: v for k, v in parts.items() if v is not None}, safe=",:=")
        return f"?{text}" if text else ""


def _number(text: str) -> int | None:
    """ASCII digits only: ``str.isdigit`` is also true of ``²`` (which ``int`` refuses) and of ``٨``
    (which ``int`` reads as 8)."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= MAX_NUMBER_DIGITS else None


def parse_query(args: dict[str, list] | str, tab_keys: tuple[str, ...]) -> UrlState:
    """A URL's state from Panel's ``session_args`` (name → list of bytes) or a query string."""
    if isinstance(args, str):
        args = parse_qs(args.lstrip("?"), keep_blank_values=True)

    def first(name: str) -> str | None:
        found = args.get(name)
        if not found:
            return None
        item = found[0]
        return item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)

    problems = []
    numbers: dict[str, int | None] = {"step": None, "value": None, "tile": None}
    for name in numbers:
        text = first(name)
        if text is None:
            continue
        number = _number(text)
        if number is None:
            problems.append(f"the URL's {name}={text[:40]!r} is not a {name} number; ignored")
        else:
            numbers[name] = number
    step, value = numbers["step"], numbers["value"]
    tab = first("tab")
    if tab is not None and tab not in tab_keys:
        problems.append(f"the URL's tab={tab[:40]!r} is not one of {', '.join(tab_keys)}; ignored")
        tab = None
    edits: tuple[TilingEdit, ...] = ()
    text = first("edits")
    if text:
        try:
            edits = tuple(parse_compact_edits(text))
        except InputError as exc:
            problems.append(f"{exc}; the URL's edits were not applied")
    return UrlState(
        first("file"),
        step,
        value,
        tab,
        edits,
        tuple(problems),
        compare=first("compare"),
        tile=numbers["tile"],
        dataset=first("dataset"),
    )
