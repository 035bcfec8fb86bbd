"""Finding values by what the user types: the editor's picker searches on the server.

A large profile has ~10⁵–10⁶ values; sending every label to the browser for it to filter costs
tens of MB and a slow keystroke there. Instead the labels stay here, lower-cased once and joined
into one string, and each query is a run of C-level ``str.find`` calls over it that stops at the
first ``limit`` matches: a query matching nothing scans the text once (milliseconds even at 10⁶
labels), a common one stops early.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class LabelSearch:
    """Case-insensitive substring search over labels, matches in label order."""

    def __init__(self, labels: Sequence[str]):
        self.labels = list(labels)
        lowered = [label.lower() for label in self.labels]
        lengths = np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered))
        # Label k is text[starts[k] : starts[k] + lengths[k]]; one separator character between labels.
        self._starts = (
            np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(np.int64) if lowered else np.zeros(0, np.int64)
        )
        self._ends = self._starts + lengths
        self._text = "\n".join(lowered)

    def matches(self, query: str, limit: int) -> list[str]:
        """The first ``limit`` labels containing ``query`` (ignoring case); none for an empty query."""
        needle = query.lower()
        if not needle or limit <= 0 or not self.labels:
            return []
        found: list[str] = []
        text, starts, ends = self._text, self._starts, self._ends
        at = text.find(needle)
        while at >= 0 and len(found) < limit:
            k = int(np.searchsorted(starts, at, side="right")) - 1
            if at + len(needle) <= ends[k]:  # inside label k, not across the separator into the next
                found.append(self.labels[k])
                if k + 1 == len(starts):
                    break
                at = text.find(needle, int(starts[k + 1]))
            else:
                at = text.find(needle, at + 1)
        return found
