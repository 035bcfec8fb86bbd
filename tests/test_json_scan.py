"""loaders.json_scan (the vectorised duplicate-key, nesting and path scans every reader shares)
against a plain recursive-descent reader written here, one byte at a time, sharing nothing with
it: on random documents full of what trips a byte scanner (escaped quotes and backslashes, braces,
brackets and colons inside strings, blanks before colons, keys equal in length and in their first
and last 8 bytes) the first duplicate key, its object and first occurrence, the first bracket
deeper than a limit and the JSON path of a value are the reader's. Each document is scanned whole
and with the scan's chunk cut to 7 bytes, so strings and escapes straddle chunk boundaries."""

from __future__ import annotations

import json
import random

import msgspec
import pytest

from tilescope.loaders import json_scan
from tilescope.models.errors import InputError

# ----------------------------------------------------------------------------- the reference reader


class Reader:
    """Walks JSON text, recording per object its keys (offset of the opening quote, raw text) and
    every value's start offset with its JSON path; the depth of every bracket."""

    def __init__(self, data: bytes):
        self.d, self.i = data, 0
        self.objects: list[tuple[int, list[tuple[int, bytes]]]] = []  # ('{' offset, keys in order)
        self.paths: dict[int, str] = {}
        self.first_deeper: dict[int, int] = {}  # limit → offset of the first bracket deeper than it
        self.depth = 0
        self.value("$")

    def blanks(self) -> None:
        while self.i < len(self.d) and self.d[self.i] in b" \t\r\n":
            self.i += 1

    def bracket(self) -> None:
        self.depth += 1
        for limit in range(self.depth):
            self.first_deeper.setdefault(limit, self.i)

    def string(self) -> bytes:
        assert self.d[self.i] == ord('"')
        start = self.i = self.i + 1
        while self.d[self.i] != ord('"'):
            self.i += 2 if self.d[self.i] == ord("\\") else 1
        self.i += 1
        return self.d[start : self.i - 1]

    def value(self, path: str) -> None:
        self.blanks()
        self.paths.setdefault(self.i, path)
        c = self.d[self.i]
        if c == ord("{"):
            opened, keys = self.i, []
            self.objects.append((opened, keys))
            self.bracket()
            self.i += 1
            self.blanks()
            while self.d[self.i] != ord("}"):
                keys.append((self.i, self.string()))
                self.blanks()
                assert self.d[self.i] == ord(":")
                self.i += 1
                name = json.loads(b'"' + keys[-1][1] + b'"')
                self.value(f"{path}.{name}")
                self.blanks()
                if self.d[self.i] == ord(","):
                    self.i += 1
                    self.blanks()
            self.i += 1
            self.depth -= 1
        elif c == ord("["):
            self.bracket()
            self.i += 1
            self.blanks()
            k = 0
            while self.d[self.i] != ord("]"):
                self.value(f"{path}[{k}]")
                k += 1
                self.blanks()
                if self.d[self.i] == ord(","):
                    self.i += 1
                    self.blanks()
            self.i += 1
            self.depth -= 1
        elif c == ord('"'):
            self.string()
        else:
            while self.i < len(self.d) and self.d[self.i] not in b",]} \t\r\n":
                self.i += 1

    def first_duplicate(self) -> tuple[int, int, int, bytes] | None:
        """(offset, first offset, object offset, key) of the repeated key that comes first in the text."""
        found = []
        for opened, keys in self.objects:
            first: dict[bytes, int] = {}
            for offset, key in keys:
                if key in first:
                    found.append((offset, first[key], opened, key))
                    break
                first[key] = offset
        return min(found) if found else None


# ----------------------------------------------------------------------------- random documents

TRICKY = ['a"b', "a\\", "{", "}", "[", "]", ":", ",", "\\\\", '"', "x:{", "éß", "\u2028", "𝄞", " "]
SAME_ENDS = ["abcdefgh_1_abcdefgh", "abcdefgh_2_abcdefgh", "abcdefgh_3_abcdefgh"]  # one length, one head, one tail


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(TRICKY + ["k", "v", "long" * rng.randint(1, 4)]) for _ in range(rng.randint(0, 4)))


def _doc(rng: random.Random, depth: int = 0):
    kind = rng.random()
    if depth > 5 or kind < 0.3:
        return rng.choice([_text(rng), rng.randint(-5, 10**6), 1.5, True, None])
    if kind < 0.55:
        return [_doc(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    pairs = []
    for _ in range(rng.randint(0, 5)):
        key = rng.choice(SAME_ENDS + [_text(rng)])
        pairs.append((key, _doc(rng, depth + 1)))
    return ("object", pairs)


def _dump(node, rng: random.Random) -> str:
    """JSON text that may name a key twice in one object (json.dumps cannot), with random blanks."""
    blank = lambda: rng.choice(["", "", " ", "\n", " \t "])  # noqa: E731
    if isinstance(node, tuple):
        items = [
            f"{blank()}{json.dumps(k, ensure_ascii=rng.random() < 0.5)}{blank()}:{_dump(v, rng)}" for k, v in node[1]
        ]
        return "{" + ",".join(items) + blank() + "}"
    if isinstance(node, list):
        return "[" + ",".join(blank() + _dump(v, rng) for v in node) + blank() + "]"
    return blank() + json.dumps(node, ensure_ascii=rng.random() < 0.5) + blank()


def documents(count: int, seed: int):
    """``count`` random documents and the reference reader's reading of each."""
    rng = random.Random(seed)
    for _ in range(count):
        data = _dump(_doc(rng), rng).encode()
        msgspec.json.decode(data)  # valid JSON: what the scans assume
        yield data, Reader(data)


@pytest.fixture(params=[None, 7], ids=["whole", "7-byte-chunks"])
def chunk(request, monkeypatch):
    if request.param is not None:
        monkeypatch.setattr(json_scan, "_CHUNK", request.param)


@pytest.mark.parametrize("seed", range(3))
def test_first_duplicate_key_is_the_readers(chunk, seed):
    duplicated = 0
    for data, reader in documents(150, seed):
        expected = reader.first_duplicate()
        found = json_scan.first_duplicate_key(data)
        if expected is None:
            assert found is None, data
            continue
        duplicated += 1
        assert found is not None, data
        assert (found.offset, found.first_offset, found.object_offset, found.key) == expected, data
    assert duplicated >= 20  # the documents exercise the refusal, not only the clean case


@pytest.mark.parametrize("seed", range(3))
def test_deeper_than_is_the_readers_first_deep_bracket(chunk, seed):
    for data, reader in documents(120, seed + 10):
        for limit in range(0, 8):
            assert json_scan.deeper_than(data, limit) == reader.first_deeper.get(limit), (limit, data)


def test_json_path_to_every_value(seed: int = 21):
    checked = 0
    for data, reader in documents(400, seed):
        if reader.first_duplicate() is not None:  # (a path is a decoder's: it keeps one of the two)
            continue
        for offset, path in reader.paths.items():
            assert json_scan.json_path_to(data, offset) == path, (offset, data)
            checked += 1
    assert checked > 300


def test_refusal_names_the_object_path_and_both_places():
    data = b'{"timeline": {"values": [{"id": 1, "name": "a",\n "id": 2}]}}'
    with pytest.raises(InputError) as info:
        json_scan.refuse_duplicate_keys(data)
    second, first = data.index(b'"id": 2'), data.index(b'"id": 1')
    assert info.value.path == f"$.timeline.values[0].id ({json_scan.locate_byte(data, second)})"
    assert json_scan.locate_byte(data, second) == f"byte {second} (line 2, column 2)"
    assert f"the first at byte {first} (line 1, column {first + 1})" in str(info.value)
