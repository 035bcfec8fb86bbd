"""An independent checker of a placement of a compiler placement dump (the fixture README's seven
rules, compiler-formats.md §4), reading the raw JSON and sharing no code with tilescope's solver,
loader or views. ``problems(raw, spans)`` lists what breaks; empty means valid.

``spans``: request index → ``(start, end)``; every request must be placed.
"""

from __future__ import annotations

BOUNDARY = 524_288
E0, E1 = 16_384, 32_768
HOST = (327_680, 360_448)
MAX_EVENT = 4_294_967_295


def elements(start: int, end: int, boundary: int, e0: int, e1: int) -> set[tuple[int, int]]:
    """The memory elements [start, end) touches, as (element size, index)."""
    out = set()
    if start < boundary:
        low, high = start, min(end, boundary)
        out |= {(e0, i) for i in range(low // e0, -(-high // e0))}
    if end > boundary:
        low, high = max(start, boundary), end
        out |= {(e1, i) for i in range(low // e1, -(-high // e1))}
    return out


def problems(raw: dict, spans: dict[int, tuple[int, int]]) -> list[str]:
    boundary = raw.get("region_boundary", BOUNDARY)
    e0, e1 = raw.get("region0_element_bytes", E0), raw.get("region1_element_bytes", E1)
    host = tuple(raw.get("host_scratch_range", HOST))
    offset = raw.get("interleaved_offset", 0)
    requests = raw["requests"]
    out = []
    for i, r in enumerate(requests):
        if i not in spans:
            out.append(f"request {i} unplaced")
            continue
        s, e = spans[i]
        stride = r.get("region1_stride")
        size = stride * len(r["assignments"]) if stride and s >= boundary else r["bytes"]
        if e - s != size:
            out.append(f"request {i}: size {e - s} != {size}")
        if not any(a <= s and e <= b for a, b in raw["ranges"]):
            out.append(f"request {i}: [{s}, {e}) outside every range")
        if s % r["alignment"]:
            out.append(f"request {i}: start {s} not a multiple of {r['alignment']}")
        if s < boundary < e:
            out.append(f"request {i}: crosses the boundary")
        if r["class"] == "Ipu21Interleaved" and s < boundary + offset:
            out.append(f"request {i}: interleaved below {boundary + offset}")
        life = r["lifetime"]
        if (life["first"] == 0 or life["last"] == MAX_EVENT) and s < host[1] and e > host[0]:
            out.append(f"request {i}: start-of-program or persistent in the host range")
    owner = {root: i for i, r in enumerate(requests) for root, _ in r["assignments"]}
    for i, a in enumerate(requests):
        for j in range(i + 1, len(requests)):
            b = requests[j]
            if i not in spans or j not in spans:
                continue
            (s1, e1_), (s2, e2) = spans[i], spans[j]
            live = a["lifetime"]["first"] <= b["lifetime"]["last"] and b["lifetime"]["first"] <= a["lifetime"]["last"]
            conflict = any(owner.get(c) == j for c in a["conflicts"]) or any(owner.get(c) == i for c in b["conflicts"])
            if (live or conflict) and s1 < e2 and s2 < e1_:
                out.append(f"requests {i} and {j} overlap in bytes")
            if conflict and elements(s1, e1_, boundary, e0, e1) & elements(s2, e2, boundary, e0, e1):
                out.append(f"requests {i} and {j} conflict but share a memory element")
    return out


def conflict_partners(raw: dict) -> list[set[int]]:
    """Each request's partners: the requests owning a root it names in ``conflicts``, and those naming one of its roots."""
    requests = raw["requests"]
    owner = {root: i for i, r in enumerate(requests) for root, _ in r["assignments"]}
    partners: list[set[int]] = [set() for _ in requests]
    for i, r in enumerate(requests):
        for c in r["conflicts"]:
            j = owner.get(c)
            if j is not None and j != i:
                partners[i].add(j)
                partners[j].add(i)
    return partners
