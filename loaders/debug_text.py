"""A real grammar for Rust ``{:?}`` text (docs/formats.md §4), parsed with lark's LALR parser.

Text that parses is read first by ``_Reader``, a direct recursive-descent reader of the same
grammar (about 30× faster than lark, whose pure-Python parser was a fifth of the time to normalise
a 90 MB profile); anything it does not accept, lark parses again, so every error (its position,
what was expected) is lark's. The reader accepts only what the grammar accepts and gives the same
data (tests/test_debug_text.py checks both against each other, on real and random text).

The parse gives plain data: ``Struct``/``Tuple``/``Unit`` records for named things, Python lists,
``Map``/``Set`` records for braces, and str/int/float/bool for literals. Nothing here knows what a
layout is; ``loaders.layouts`` turns these into the tiling model.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from lark import Lark, Transformer, v_args
from lark.exceptions import UnexpectedInput

GRAMMAR = r"""
?start: value
sequence: value+

?value: struct
      | tuple
      | unit
      | list
      | map
      | set
      | STRING   -> string
      | NUMBER   -> number
      | "true"   -> true
      | "false"  -> false

struct: NAME "{" [field ("," field)* [","]] "}"
field: NAME ":" value
tuple: NAME "(" [value ("," value)* [","]] ")"
unit: NAME
list: "[" [value ("," value)* [","]] "]"
map: "{" [pair ("," pair)* [","]] "}"
pair: value ":" value
set: "{" value ("," value)* [","] "}"

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


DebugValue = Unit | Struct | Tuple | Map | Set | list | str | int | float | bool


class DebugSyntaxError(ValueError):
    """Text that does not parse. ``position`` is a 0-based character offset."""

    def __init__(self, text: str, position: int, expected: str):
        self.position = position
        self.expected = expected
        start = max(0, position - 20)
        self.snippet = text[start : position + 20].replace("\n", "\\n")
        self.caret = position - start
        super().__init__(
            f"Debug text does not parse at character {position}: expected {expected}, near {self.snippet!r}"
        )


class _BadLiteral(ValueError):
    """A token that lexes but has no value (``\\u{zz}``, a 5000-digit integer), with its position."""

    def __init__(self, position: int, expected: str):
        super().__init__(expected)
        self.position = position
        self.expected = expected


# Rust Debug values nest a few levels deep; far deeper text is not a planner's output and would
# exhaust Python's recursion limit in anything that walks the parsed value.
MAX_DEPTH = 100
_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\](){}]', re.S)
_OPENERS = frozenset("[({")


def _check_depth(text: str) -> None:
    depth = 0
    for match in _NESTING.finditer(text):
        token = match.group()
        if token in _OPENERS:
            depth += 1
            if depth > MAX_DEPTH:
                raise DebugSyntaxError(text, match.start(), f"at most {MAX_DEPTH} nested brackets")
        elif len(token) == 1:
            depth -= 1


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
            code = int(body[i + 3 : end], 16)
            if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:  # a lone surrogate or beyond Unicode: no text holds it
                raise ValueError("not a Unicode scalar value")
            out.append(chr(code))
            i = end + 1
        else:
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
    return "".join(out)


class _ToData(Transformer):
    def string(self, items):
        token = items[0]
        try:
            return _unescape(token[1:-1])
        except (ValueError, IndexError):
            raise _BadLiteral(
                token.start_pos, "a string whose \\u{...} escapes name Unicode characters (not surrogates D800–DFFF)"
            ) from None

    def number(self, items):
        token = items[0]
        text = str(token)
        try:
            return float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:  # more digits than Python converts
            raise _BadLiteral(token.start_pos, f"a number of at most {sys.get_int_max_str_digits()} digits") from None

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

    def pair(self, items):
        return tuple(items)

    def map(self, items):
        return Map([] if items == [None] else list(items))

    def set(self, items):
        return Set(list(items))

    def sequence(self, items):
        return list(items)


@cache
def _parser(start: str) -> Lark:
    # The parser is immutable once built; caching it per process is safe for concurrent sessions.
    return Lark(GRAMMAR, parser="lalr", start=start, transformer=_ToData(), maybe_placeholders=True)


_TERMINALS = {
    "COMMA": "','",
    "COLON": "':'",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a string",
    "TRUE": "true",
    "FALSE": "false",
}


_WHITESPACE = " \t\f\r\n"  # lark's common.WS
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NUMBER = re.compile(r"-?(?:\d+\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?)")
_KEYWORDS = {"true": True, "false": False}  # lark lexes these as literals wherever a value may be


class _NotRead(Exception):
    """The reader does not accept the text: lark parses it (and says what is wrong, if anything)."""


class _Reader:
    """Recursive descent over ``GRAMMAR``, one character of look-ahead; raises ``_NotRead`` at the
    first thing it does not expect."""

    __slots__ = ("pos", "text")

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def _peek(self) -> str:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in _WHITESPACE:
            pos += 1
        self.pos = pos
        return text[pos] if pos < len(text) else ""

    def _expect(self, char: str) -> None:
        if self._peek() != char:
            raise _NotRead
        self.pos += 1

    def _name(self) -> str:
        self._peek()
        match = _NAME.match(self.text, self.pos)
        if match is None:
            raise _NotRead
        self.pos = match.end()
        return match.group()

    def _items(self, close: str, item) -> list:
        """``[item ("," item)* [","]] close`` (the opening bracket already read)."""
        out = []
        while self._peek() != close:
            out.append(item())
            if self._peek() == ",":
                self.pos += 1
            elif self._peek() != close:
                raise _NotRead
        self.pos += 1
        return out

    def value(self):
        char = self._peek()
        text = self.text
        if char == "[":
            self.pos += 1
            return self._items("]", self.value)
        if char == "{":
            return self._braces()
        if char == '"':
            match = _STRING.match(text, self.pos)
            if match is None:
                raise _NotRead
            self.pos = match.end()
            try:
                return _unescape(match.group()[1:-1])
            except Exception:  # whatever lark's reading of it says or raises, it says it
                raise _NotRead from None
        if char == "-" or char.isdigit():
            match = _NUMBER.match(text, self.pos)
            if match is None:
                raise _NotRead
            self.pos = match.end()
            number = match.group()
            try:
                return float(number) if any(c in number for c in ".eE") else int(number)
            except Exception:
                raise _NotRead from None
        name = self._name()
        if name in _KEYWORDS:
            return _KEYWORDS[name]
        after = self._peek()
        if after == "{":
            self.pos += 1
            return Struct(name, dict(self._items("}", self._field)))
        if after == "(":
            self.pos += 1
            return Tuple(name, self._items(")", self.value))
        return Unit(name)

    def _field(self) -> tuple[str, Any]:
        name = self._name()  # (``true`` here is a field's name: lark's lexer expects only a name)
        self._expect(":")
        return name, self.value()

    def _braces(self):
        """``{}``, ``{k: v, ...}`` (a Map) or ``{a, ...}`` (a Set)."""
        self.pos += 1
        if self._peek() == "}":
            self.pos += 1
            return Map([])
        first = self.value()
        if self._peek() == ":":
            self.pos += 1

            def pair():
                key = self.value()
                self._expect(":")
                return key, self.value()

            return Map([(first, self.value()), *self._rest("}", pair)])
        return Set([first, *self._rest("}", self.value)])

    def _rest(self, close: str, item) -> list:
        """After a first item: ``("," item)* [","] close``."""
        char = self._peek()
        self.pos += 1
        if char == close:
            return []
        if char != ",":
            raise _NotRead
        return self._items(close, item)

    def read(self, start: str):
        if start == "start":
            result = self.value()
        else:
            result = [self.value()]
            while self._peek():
                result.append(self.value())
        if self._peek():
            raise _NotRead
        return result


def _parse(text: str, start: str):
    _check_depth(text)
    try:
        return _Reader(text).read(start)
    except (_NotRead, RecursionError):
        pass
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
    except _BadLiteral as exc:
        raise DebugSyntaxError(text, exc.position, exc.expected) from None


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
