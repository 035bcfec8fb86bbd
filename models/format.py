"""How numbers are written wherever a person reads them: the app, the CLI and the reports use
these and nothing else, so a figure reads the same everywhere (``429,904 B (419.8 KiB)``).

``parse_size`` is the other direction: every size a person types (an option, an environment
variable) is read by it, so ``5MB`` means the same to every command."""

from __future__ import annotations

import re
from fractions import Fraction

_BINARY_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB")


def scaled_bytes(n: int) -> str:
    """``|n|`` in the largest binary unit it reaches, KiB at least: ``419.8 KiB``, ``88.2 MiB``,
    ``4.0 GiB`` (the unit chosen from the exact bytes, so 1,048,576 B is ``1.0 MiB``)."""
    n = abs(int(n))
    power = 1
    while power < len(_BINARY_UNITS) and n >= 1024 ** (power + 1):
        power += 1
    return f"{n / 1024**power:,.1f} {_BINARY_UNITS[power - 1]}"


def fmt_bytes(n: int | float) -> str:
    """Exact bytes with separators, the scaled figure beside: ``429,904 B (419.8 KiB)``,
    ``92,480,619 B (88.2 MiB)``, ``4,294,967,296 B (4.0 GiB)``."""
    n = int(n)
    return f"{n:,} B ({'-' if n < 0 else ''}{scaled_bytes(n)})"


def fmt_signed_bytes(n: int) -> str:
    """A difference: ``+1,024 B (+1.0 KiB)``, ``−2,048 B (−2.0 KiB)``, ``±0 B``."""
    n = int(n)
    if n == 0:
        return "±0 B"
    sign = "+" if n > 0 else "−"
    return f"{sign}{abs(n):,} B ({sign}{scaled_bytes(n)})"


# Decimal units are powers of 1000, binary ones (``i``) of 1024; ``B`` optional, any case. ASCII
# digits only: ``str.isdigit`` and ``\d`` also take ``²`` or ``٨``, which ``int`` then refuses or reads.
_SIZE = re.compile(
    r"(?P<number>[0-9]+(?:\.[0-9]+)?)\s*(?:(?P<unit>[kmgtp])(?P<binary>i?))?b?", re.IGNORECASE | re.ASCII
)
SIZE_EXAMPLES = "4096, 500K, 5MB, 2G or 1GiB"


def parse_size(text: str) -> int:
    """A size as a person types it: ``4096``, ``4096B``, ``500K``/``500KB`` (500,000), ``4KiB``
    (4,096), ``5MB``, ``1.5GiB``, ``2T``; ``_`` between digits allowed. ValueError (its message: what
    was expected) for anything else, or a fraction of a byte (``1.1B``)."""
    cleaned = str(text).strip().replace("_", "")
    match = _SIZE.fullmatch(cleaned)
    if match is None:
        raise ValueError(f"a size such as {SIZE_EXAMPLES}")
    unit = (match["unit"] or "").lower()
    base = 1024 if match["binary"] else 1000
    value = Fraction(match["number"]) * base ** (" kmgtp".index(unit) if unit else 0)
    if value.denominator != 1:
        raise ValueError(f"a whole number of bytes (such as {SIZE_EXAMPLES})")
    return int(value)


def fmt_change(before: int, after: int) -> str:
    """``before → after (difference)``, or just the figure when nothing changed."""
    if int(before) == int(after):
        return fmt_bytes(after)
    return f"{fmt_bytes(before)} → {fmt_bytes(after)} ({fmt_signed_bytes(int(after) - int(before))})"


def shorten(text: str, limit: int = 160) -> str:
    """At most ``limit`` characters, an ellipsis marking a cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def terminal_text(text: str) -> str:
    """Untrusted text for a terminal: control characters written as escapes (``\\n``, ``\\x1b``)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def step_range(first: int, last: int) -> str:
    return f"step {first}" if first == last else f"steps {first}–{last}"


def count_of(n: int, word: str, plural: str | None = None) -> str:
    """``1 block``, ``2 blocks``, ``1,472 tiles``: a count with its noun, singular when one."""
    return f"{int(n):,} {word if int(n) == 1 else plural or word + 's'}"
