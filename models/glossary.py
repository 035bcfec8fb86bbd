"""The words tilescope uses for its figures, each defined once (docs/formats.md §2).

Every view shows these definitions on hover (the app's ``title`` attributes and chart tooltips),
the app lists them under the timeline, and the README's glossary quotes them word for word
(``tests/test_glossary.py`` checks it): one meaning per word wherever it appears.
"""

from __future__ import annotations

GLOSSARY: dict[str, str] = {
    "standard": (
        "bytes per tile in the standard region at a step: the live standard values plus the step's standard scratch; "
        "the exchange rows are not in it (they are shown apart)"
    ),
    "interleaved": "bytes per tile in the interleaved region at a step: the live interleaved values plus the step's interleaved scratch",
    "total": "standard + interleaved + exchange rows at a step: everything a tile holds for the program",
    "standard peak": "the largest standard usage of any step, plus the exchange rows",
    "interleaved peak": "the largest interleaved usage of any step; fits compares it with the interleaved budget",
    "total peak": "the largest total (standard + interleaved + exchange rows) of any step",
    "effective peak": (
        "the largest standard + interleaved of any step, plus the support reserve; without the exchange rows, so it can be "
        "lower than the total peak; fits compares it with the budget"
    ),
    "exchange rows": "a whole-program reservation in the standard region, read from the file; counted in the standard and total peaks, not in the effective peak",
    "support reserve": "bytes reserved on every tile for runtime support code; added to usage for the effective peak",
    "fits": "effective peak ≤ budget and interleaved peak ≤ interleaved budget",
}


def define(term: str) -> str:
    """``term: definition`` for a hover text."""
    return f"{term}: {GLOSSARY[term]}"
