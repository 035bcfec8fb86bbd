"""How numbers are written wherever a person reads them: the app, the CLI and the reports use
these and nothing else, so a figure reads the same everywhere (``429,904 B (419.8 KiB)``)."""
from __future__ import annotations


def fmt_bytes(n: int | float) -> str:
    """Exact bytes with separators and KiB beside: ``429,904 B (419.8 KiB)``."""
    n = int(n)
    return f"{n:,} B ({n / 1024:,.1f} KiB)"


def fmt_signed_bytes(n: int) -> str:
    """A difference: ``+1,024 B (+1.0 KiB)``, ``−2,048 B (−2.0 KiB)``, ``±0 B``."""
    n = int(n)
    if n == 0:
        return "±0 B"
    sign = "+" if n > 0 else "−"
    return f"{sign}{abs(n):,} B ({sign}{abs(n) / 1024:,.1f} KiB)"


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
