"""Placement profiles (``placement-{pid}.json``, schema 1, compiler-formats.md §5) generated for tests,
and their expected figures computed the simple way (loops over the JSON, sharing no code with
``loaders.placement_profile`` or ``derived.placement_profile_view``).

Each tile is laid out so that its rows are valid by construction: the fixed reservations of §5
(image data below the host aperture, the host exchange aperture twice at events 0 and 4294967295,
the loader-inaccessible tail as one padding row), parameters (0 … 4294967295) stacked above the
aperture, then lanes of sequential activations and scratch (a lane's segments never overlap in
time), a Repeat sequence whose members are shorter than their stride (a "Repeat stride padding" row
fills each gap), and short-lived rows borrowing the aperture between its two rows.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

START, END = 311_296, 950_272
HOST = (327_680, 360_448)
BOUNDARY = 524_288  # region 0 below, region 1 at or above: no row crosses it
TAIL = (949_168, 950_272)
MAX_EVENT = 4_294_967_295
EVENTS = 60
HOSTILE_LABEL = '<img src=x onerror="window.__xss=1">w</script>\nF16 [4] · Ipu21Standard'
FIXED_LABELS = (
    "Per-tile image data / host descriptors",
    "host exchange aperture",
    "Outside application load range",
    "Repeat stride padding",
)


class _Labels:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, text: str) -> int:
        if text not in self.texts:
            self.texts.append(text)
        return self.texts.index(text)


def _row(
    labels: _Labels,
    start: int,
    end: int,
    label: str,
    kind: str,
    first: int,
    last: int,
    shards=(),
    payload: int | None = None,
) -> dict:
    return {
        "start": start,
        "end": end,
        "payload_end": start + (end - start if payload is None else payload),
        "label": labels(label),
        "kind": kind,
        "first": first,
        "last": last,
        "shards": list(shards),
    }


def _tile(labels: _Labels, rng: random.Random, logical: int) -> list[dict]:
    shard = iter(range(logical * 1000, logical * 1000 + 1000))
    rows = [
        _row(labels, START, HOST[0], FIXED_LABELS[0], "support", 0, MAX_EVENT, payload=HOST[0] - START - 512),
        _row(labels, *HOST, FIXED_LABELS[1], "support", 0, 0, payload=4096),
        _row(labels, *HOST, FIXED_LABELS[1], "support", MAX_EVENT, MAX_EVENT, payload=4096),
        _row(labels, *TAIL, FIXED_LABELS[2], "padding", 0, MAX_EVENT),
    ]
    # Short-lived rows borrowing the aperture between its two rows (never at event 0 or the end).
    at, event = HOST[0], 1
    while event < EVENTS - 2:
        last = min(event + rng.randint(2, 8), EVENTS - 1)
        size = rng.randrange(1024, HOST[1] - HOST[0], 32)
        rows.append(
            _row(
                labels,
                at,
                at + size,
                f"value {next(shard)} · origin host\nF16 [{size // 2}] · Ipu21Standard",
                "activation",
                event,
                last,
                [next(shard)],
            )
        )
        event = last + 1
    address = HOST[1]
    for p in range(rng.randint(2, 4)):  # parameters: the whole program (all below the boundary)
        size = rng.randrange(2048, 40_000, 32)
        name = HOSTILE_LABEL if (logical, p) == (0, 0) else f"w{p}\nF16 [{size // 2}] · Ipu21Standard"
        rows.append(
            _row(labels, address, address + size, name, "parameter", 0, MAX_EVENT, [next(shard)], payload=size - 16)
        )
        address += size
    for lane in range(rng.randint(5, 7)):  # lanes of sequential activations and scratch
        width = rng.choice((8192, 16_384, 24_576, 32_768))
        if address < BOUNDARY < address + width:
            address = BOUNDARY
        event = 0 if lane % 3 == 0 else rng.randint(1, 5)  # some lanes start with a program input
        while event < EVENTS:
            last = min(event + rng.randint(1, 12), EVENTS)
            size = rng.randrange(width // 2, width + 1, 32)
            kind = rng.choice(("activation", "scratch"))
            cls = rng.choice(("Ipu21Standard", "Ipu21Interleaved")) if address >= BOUNDARY else "Ipu21Standard"
            end_event = MAX_EVENT if last == EVENTS else last  # a lane's last segment is an output
            rows.append(
                _row(
                    labels,
                    address,
                    address + size,
                    f"value {next(shard)} · origin {lane}\nF16 [{size // 2}] · {cls}",
                    kind,
                    event,
                    end_event,
                    [next(shard)],
                    payload=max(size - 32, 0),
                )
            )
            event = last + 1
        address += width
    members, stride = (rng.randint(2, 4), 4096)  # a Repeat sequence: storage shorter than the stride, padding between
    if address < BOUNDARY < address + members * stride:
        address = BOUNDARY
    first, last = rng.randint(5, 20), rng.randint(25, 40)
    for m in range(members):
        storage = rng.randrange(1024, stride, 32)
        base = address + m * stride
        rows.append(
            _row(
                labels,
                base,
                base + storage,
                f"value {next(shard)} · origin seq\nF16 [{storage // 2}] · Ipu21Standard",
                "activation",
                first,
                last,
                [next(shard)],
            )
        )
        rows.append(_row(labels, base + storage, base + stride, FIXED_LABELS[3], "padding", first, last))
    address += members * stride
    assert address <= TAIL[0], address
    rng.shuffle(rows)  # the loader sorts them by (first, start, last)
    return rows


def placement_profile(tiles: int = 3, seed: int = 7) -> dict:
    rng = random.Random(seed)
    labels = _Labels()
    for text in FIXED_LABELS:
        labels(text)
    return {
        "schema_version": 1,
        "start": START,
        "end": END,
        "labels": labels.texts,
        "tiles": [{"logical": t, "physical": 1000 + 7 * t, "allocations": _tile(labels, rng, t)} for t in range(tiles)],
    }


def write_placement_profile(folder: Path, name: str = "placement-4242.json", **kwargs) -> Path:
    path = Path(folder) / name
    path.write_text(json.dumps(placement_profile(**kwargs), indent=1))
    return path


# ----------------------------------------------------------------------------- expected figures, the simple way


def is_fixed(row: dict) -> bool:
    """A reservation the placement does not move: support rows, and padding spanning the program."""
    return row["kind"] == "support" or (row["kind"] == "padding" and row["first"] == 0 and row["last"] == MAX_EVENT)


def placed_top(rows: list[dict]) -> int:
    return max((r["end"] for r in rows if not is_fixed(r)), default=START)


def live_lower_bound(rows: list[dict]) -> tuple[int, int]:
    """(most bytes of movable rows live at one event, the first event they are) by trying every event."""
    movable = [r for r in rows if not is_fixed(r)]
    events = sorted({r["first"] for r in movable} | {r["last"] for r in movable})
    best, at = 0, 0
    for e in events:
        live = 0
        for r in movable:
            if r["first"] <= e <= r["last"]:
                live += r["end"] - r["start"]
        if live > best:
            best, at = live, e
    return best, at
