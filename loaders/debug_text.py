"""A real grammar for Rust ``{:?}`` text (formats.md §4), parsed with lark's LALR parser.

The parse gives plain data: ``Struct``/``Tuple``/``Unit`` records for named things, Python lists,
``Map``/``Set`` records for braces, and str/int/float/bool for literals. Nothing here knows what a
layout is; ``loaders.layouts`` turns these into the tiling model.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Union

from lark import Lark, Transformer, v_args
from lark.exceptions import UnexpectedInput

GRAMMAR = r"""
?start: value
sequence: value+

?value: struct
      | tuple
      | unit
      | list
      | braces
      | STRING   -> string
      | NUMBER   -> number
      | "true"   -> true
      | "false"  -> false

struct: NAME "{" [field ("," field)* [","]] "}"
field: NAME ":" value
tuple: NAME "(" [value ("," value)* [","]] ")"
unit: NAME
list: "[" [value ("," value)* [","]] "]"
braces: "{" [item ("," item)* [","]] "}"
item: value [":" value]

NAME: /[A-Za-z_][A-Za-z0-9_]*/
STRING: /"(?:[^"\\]|\\.)*"/s
NUMBER: /-?(?:\d+\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?)/

%import common.WS
%ignore WS
"""


@dataclass(frozen=True, slots=True)
class Unit:
    """A unit struct or unit enum variant: ``RowMajor``, ``None``."""

    name: str


@dataclass(slots=True)
class Struct:
    """``Name { field: value, ... }``."""

    name: str
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Tuple:
    """``Name(a, b)``: a tuple struct or tuple variant (``Some(x)``, ``FromEnd(2)``)."""

    name: str
    items: list[Any] = field(default_factory=list)


@dataclass(slots=True)
class Map:
    """``{k: v, ...}``; keys may be any value, so entries are kept as pairs in order."""

    entries: list[tuple[Any, Any]] = field(default_factory=list)


@dataclass(slots=True)
class Set:
    """``{a, b}``."""

    items: list[Any] = field(default_factory=list)


DebugValue = Union[Unit, Struct, Tuple, Map, Set, list, str, int, float, bool]


class DebugSyntaxError(ValueError):
    """Text that does not parse. ``position`` is a 0-based character offset."""

    def __init__(self, text: str, position: int, expected: str):
        self.position = position
        self.expected = expected
        start = max(0, position - 20)
        self.snippet = text[start : position + 20].replace("\n", "\\n")
        self.caret = position - start
        super().__init__(
            f"Debug text does not parse at character {position}: expected {expected}, "
            f"near {self.snippet!r}"
        )


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}


def _unescape(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt == "u" and body[i + 2 : i + 3] == "{":
            end = body.index("}", i)
            out.append(chr(int(body[i + 3 : end], 16)))
            i = end + 1
        else:
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
    return "".join(out)


class _ToData(Transformer):
    def string(self, items):
        return _unescape(items[0][1:-1])

    def number(self, items):
        text = str(items[0])
        return float(text) if any(c in text for c in ".eE") else int(text)

    def true(self, _):
        return True

    def false(self, _):
        return False

    def struct(self, items):
        name, *fields = items
        return Struct(str(name), dict(f for f in fields if f is not None))

    @v_args(inline=True)
    def field(self, name, value):
        return (str(name), value)

    def tuple(self, items):
        name, *values = items
        return Tuple(str(name), [v for v in values if v is not None] if values != [None] else [])

    @v_args(inline=True)
    def unit(self, name):
        return Unit(str(name))

    def list(self, items):
        return [] if items == [None] else list(items)

    def item(self, items):
        return tuple(items)

    def braces(self, items):
        items = [i for i in items if i is not None]
        if not items:
            return Map([])
        keyed = [len(i) == 2 and i[1] is not None for i in items]
        if all(keyed):
            return Map([(k, v) for k, v in items])
        if not any(keyed):
            return Set([i[0] for i in items])
        raise ValueError("mixed map and set entries")

    def sequence(self, items):
        return list(items)


@lru_cache(maxsize=None)
def _parser(start: str) -> Lark:
    # The parser is immutable once built; caching it per process is safe for concurrent sessions.
    return Lark(GRAMMAR, parser="lalr", start=start, transformer=_ToData(), maybe_placeholders=True)


_TERMINALS = {
    "COMMA": "','", "COLON": "':'", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'",
    "LBRACE": "'{'", "RBRACE": "'}'", "NAME": "a name", "NUMBER": "a number", "STRING": "a string",
    "TRUE": "true", "FALSE": "false",
}


def _parse(text: str, start: str):
    try:
        return _parser(start).parse(text)
    except UnexpectedInput as exc:
        token = getattr(exc, "token", None)
        at_end = token is not None and getattr(token, "type", None) == "$END"
        position = len(text) if at_end else (getattr(exc, "pos_in_stream", None) or 0)
        expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None)
        if expected:
            names = sorted({_TERMINALS.get(str(e), str(e)) for e in expected})
            what = "one of " + ", ".join(names[:6]) + ("…" if len(names) > 6 else "")
        else:
            what = "a Debug value"
        if at_end:
            what = f"more text ({what})"
        raise DebugSyntaxError(text, position, what) from None
    except ValueError as exc:  # from the transformer: braces mixing `k: v` and bare items
        raise DebugSyntaxError(text, 0, str(exc)) from None


def parse_debug(text: str) -> DebugValue:
    """Parse one Debug value (a layout, a precision, a line of a search-state context)."""
    return _parse(text, "start")


def parse_debug_sequence(text: str) -> list[DebugValue]:
    """Parse space-separated Debug values: step operations read ``Convert LocalKernel``,
    ``Repeat 2 boundary`` or ``Gemm { ... }``."""
    return _parse(text, "sequence")


def render(value: DebugValue) -> str:
    """Canonical Debug text of a parsed value (the inverse of ``parse_debug`` up to spacing)."""
    if isinstance(value, Unit):
        return value.name
    if isinstance(value, Struct):
        if not value.fields:
            return f"{value.name} {{}}"
        body = ", ".join(f"{k}: {render(v)}" for k, v in value.fields.items())
        return f"{value.name} {{ {body} }}"
    if isinstance(value, Tuple):
        return f"{value.name}({', '.join(render(v) for v in value.items)})"
    if isinstance(value, Map):
        return "{" + ", ".join(f"{render(k)}: {render(v)}" for k, v in value.entries) + "}"
    if isinstance(value, Set):
        return "{" + ", ".join(render(v) for v in value.items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)
