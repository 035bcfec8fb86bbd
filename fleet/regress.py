"""``tilescope regress``: which profiles' peaks grew from BASE to HEAD, and which values made them grow.

- **Sides.** BASE and HEAD are each a dataset written by ``tilescope batch``, optionally narrowed
  to a folder of its paths: ``DATASET`` or ``DATASET:FOLDER`` (``fleet-data:nightly/2024-05-02``;
  the folder's ``/`` at the end is optional). A side's *key* of a row is its path with the folder
  removed (``--by path``) or its scope (``--by scope``). An argument that is itself a dataset
  directory is never split at a ``:``.
- **Matching.** Rows with equal keys are matched. A key found on one side only is listed
  (``only_base``, ``only_head``); with ``--by scope`` a scope held by several rows of one side is
  listed as ambiguous and not compared, and rows without a scope (files that failed, search
  states) are matched by nothing.
- **Regressed**: a matched pair of loaded memory profiles where a figure (``standard``,
  ``interleaved``, ``total``, ``effective_peak_bytes``: the planner's recomputation, as in the
  ``profiles`` rows) grew by more than the threshold (``Threshold``).
- **Attribution** of each figure that grew past it: ``tilescope.derived.compare``'s (each value's
  bytes live at HEAD's peak step minus at BASE's; the parts, scratch and exchange rows add up to
  the delta, checked), on both sides rebuilt from the dataset's partitions (``fleet.reopen``: the
  input files may be gone or changed since). The effective peak is the total's usage plus the
  support reserve instead of the exchange rows, at the same step: its parts are the total's.
- **Verified**: every matched pair is rebuilt from the dataset (``fleet.reopen``): each value's
  bytes recomputed from its stored tiling and shape, the usage and peaks from them, and all of it
  must equal what the dataset records, else the row is refused (listed as failed): a dataset
  edited consistently (bytes, usage and peaks lowered together) cannot hide a regression.
- **Failures** (a row whose file did not load, or whose partitions cannot be read back or do not
  verify) are listed with their errors, never compared. A failure on HEAD's side (matched or not)
  fails the run like a regression: HEAD cannot be shown not to have regressed.
- **Inconclusive**: nothing compared, or scopes held by several profiles of a side (``--by
  scope``): the gate cannot pass (exit 3) unless the caller allows it (``allow_inconclusive``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from tilescope.derived.compare import CompareSide, Comparison, compare_plans
from tilescope.models.errors import InputError, TilescopeError
from tilescope.models.format import parse_size

from .layout import MANIFEST_NAME, Dataset
from .reopen import is_loaded_profile, reopen_profile

BY = ("path", "scope")
# figure → its column in ``profiles``; the attribution that explains it (derived.compare)
FIGURES = {
    "standard": "standard_peak",
    "interleaved": "interleaved_peak",
    "total": "total_peak",
    "effective_peak_bytes": "effective_peak_bytes",
}
ATTRIBUTED_AS = {
    "standard": "standard",
    "interleaved": "interleaved",
    "total": "total",
    "effective_peak_bytes": "total",
}
DEFAULT_TOP = 5
EXIT_PASSED, EXIT_REGRESSED, EXIT_USAGE, EXIT_INCONCLUSIVE = 0, 1, 2, 3


# ----------------------------------------------------------------------------- arguments


@dataclass(frozen=True)
class SideSpec:
    """One side: a dataset and the folder of its paths compared ('' for all of them)."""

    text: str  # as given
    dataset: Dataset
    folder: str  # '' or ending in '/'

    def to_json(self) -> dict:
        return {"dataset": str(self.dataset.root), "folder": self.folder}


def _is_dataset(path: str) -> bool:
    return bool(path) and (Path(path) / MANIFEST_NAME).is_file()


def parse_side(text: str, which: str) -> SideSpec:
    """``DATASET`` or ``DATASET:FOLDER`` (module doc); a usage error names ``which`` side."""
    dataset_text, folder = text, ""
    if not _is_dataset(text) and ":" in text:
        dataset_text, _, folder = text.rpartition(":")
    try:
        dataset = Dataset.open(dataset_text)
    except InputError as exc:
        raise TilescopeError(f"{which}: {exc}") from None
    folder = folder.strip("/")
    if folder and (".." in folder.split("/") or "\\" in folder):
        raise TilescopeError(
            f"{which}: folder {folder!r}: expected a folder of the dataset's paths ('/'-separated, no '..')"
        )
    return SideSpec(text, dataset, f"{folder}/" if folder else "")


@dataclass(frozen=True)
class Threshold:
    """A figure regressed when it grew by more than ``bytes``, or by more than ``percent`` % of
    its BASE value (exact: ``100 × delta > percent × base``; no rounding)."""

    text: str
    bytes: int | None = None
    percent: Fraction | None = None

    def exceeded(self, base: int, delta: int) -> bool:
        if self.percent is not None:
            return delta > 0 and 100 * delta > self.percent * base
        assert self.bytes is not None  # parse_threshold: a percent or bytes
        return delta > self.bytes

    def to_json(self) -> dict:
        if self.percent is not None:
            return {"percent": float(self.percent), "text": self.text}
        return {"bytes": self.bytes, "text": self.text}


def parse_threshold(text: str) -> Threshold:
    """A size as ``models.format.parse_size`` reads it (``4096``, ``4KiB``, ``5MB``, ``1.5MiB``; whole bytes) or ``2%``, ``0.5%`` (of BASE's figure)."""
    cleaned = text.strip().replace("_", "")
    if cleaned.endswith("%"):
        number = cleaned[:-1].strip()
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", number):
            raise TilescopeError(f"--threshold {text!r}: expected a percentage such as 2% or 0.5%")
        return Threshold(text, percent=Fraction(number))
    try:
        return Threshold(text, bytes=parse_size(cleaned))  # the one size parser (models.format)
    except ValueError as exc:
        raise TilescopeError(f"--threshold {text!r}: expected {exc} or a percentage (2%)") from None


# ----------------------------------------------------------------------------- the report


@dataclass
class RegressReport:
    base: SideSpec
    head: SideSpec
    by: str
    threshold: Threshold
    base_rows: int  # rows of each side (within its folder)
    head_rows: int
    compared: list[dict] = field(default_factory=list)  # every matched pair of loaded profiles, by key
    regressed: list[dict] = field(default_factory=list)  # those with a figure past the threshold, with attributions
    only_base: list[dict] = field(default_factory=list)
    only_head: list[dict] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)  # {key, side, path, error}
    not_compared: list[dict] = field(default_factory=list)  # matched, but not two memory profiles (search states)
    ambiguous: list[dict] = field(default_factory=list)  # --by scope: a scope held by several rows of a side

    @property
    def head_failed(self) -> bool:
        return any(f["side"] == "head" for f in self.failed)

    allow_inconclusive: bool = False

    @property
    def inconclusive(self) -> list[str]:
        """Why the comparison cannot vouch for HEAD, though nothing regressed."""
        out = []
        if not self.compared:
            out.append("no pair of memory profiles was compared")
        if self.ambiguous:
            out.append(f"{len(self.ambiguous)} ambiguous scopes were not compared")
        return out

    @property
    def exit_code(self) -> int:
        if self.regressed or self.head_failed:
            return EXIT_REGRESSED
        if self.inconclusive and not self.allow_inconclusive:
            return EXIT_INCONCLUSIVE
        return EXIT_PASSED

    def as_json(self) -> dict:
        return {
            "base": {**self.base.to_json(), "rows": self.base_rows},
            "head": {**self.head.to_json(), "rows": self.head_rows},
            "by": self.by,
            "threshold": self.threshold.to_json(),
            "compared": len(self.compared),
            "regressed": self.regressed,
            "only_base": self.only_base,
            "only_head": self.only_head,
            "failed": self.failed,
            "not_compared": self.not_compared,
            "ambiguous": self.ambiguous,
            "inconclusive": self.inconclusive,
            "profiles": self.compared,
            "exit_code": self.exit_code,
        }


def _side_rows(spec: SideSpec, all_rows: list[dict]) -> list[dict]:
    rows = [dict(r) for r in all_rows if r["path"].startswith(spec.folder)]
    for r in rows:
        r["relative_path"] = r["path"][len(spec.folder) :]
    return sorted(rows, key=lambda r: r["path"])


def existing_folders(paths: list[str], folder: str, limit: int = 20) -> str:
    """The folders of ``paths`` at the depth of ``folder`` (the first folders when it is one
    deep, else those under its existing part), for an error naming what a side could be."""
    parts = folder.strip("/").split("/")
    depth = len(parts)
    parent = "/".join(parts[:-1])
    found = sorted(
        {
            "/".join(p.split("/")[:depth])
            for p in paths
            if p.count("/") >= depth and (not parent or p.startswith(parent + "/"))
        }
    )
    if not found:
        found = sorted({p.split("/")[0] for p in paths if "/" in p})
    if not found:
        return "it has no folders (its paths are files directly in the batch's DIR)"
    shown = ", ".join(repr(f) for f in found[:limit]) + (f", … ({len(found)} in all)" if len(found) > limit else "")
    return f"its folders: {shown}"


def _brief(row: dict) -> dict:
    return {"path": row["path"], "scope": row["scope"], "kind": row["kind"]}


def _match(base: list[dict], head: list[dict], by: str, report: RegressReport) -> list[tuple[str, dict, dict]]:
    """Pairs (key, base row, head row); everything else goes into the report's lists."""
    keyed: list[dict[str, list[dict]]] = []
    for side, rows in (("base", base), ("head", head)):
        groups: dict[str, list[dict]] = {}
        for r in rows:
            key = r["relative_path"] if by == "path" else r["scope"]
            if key is None:  # --by scope: a failure or a search state has no scope
                if r["error"] is not None:
                    report.failed.append({"key": None, "side": side, "path": r["path"], "error": r["error"]})
                else:
                    report.not_compared.append(
                        {"key": None, "side": side, "path": r["path"], "reason": f"a {r['kind']} has no scope"}
                    )
                continue
            groups.setdefault(key, []).append(r)
        keyed.append(groups)
    pairs = []
    for key in sorted(set(keyed[0]) | set(keyed[1])):
        b_rows, h_rows = keyed[0].get(key, []), keyed[1].get(key, [])
        if len(b_rows) > 1 or len(h_rows) > 1:
            report.ambiguous.append(
                {"key": key, "base": [r["path"] for r in b_rows], "head": [r["path"] for r in h_rows]}
            )
            continue
        if not h_rows:
            report.only_base.append({"key": key, **_brief(b_rows[0])})
            if b_rows[0]["error"] is not None:
                report.failed.append(
                    {"key": key, "side": "base", "path": b_rows[0]["path"], "error": b_rows[0]["error"]}
                )
            continue
        if not b_rows:
            report.only_head.append({"key": key, **_brief(h_rows[0])})
            if h_rows[0]["error"] is not None:
                report.failed.append(
                    {"key": key, "side": "head", "path": h_rows[0]["path"], "error": h_rows[0]["error"]}
                )
            continue
        pairs.append((key, b_rows[0], h_rows[0]))
    return pairs


def _figures(base: dict, head: dict, threshold: Threshold) -> dict:
    out = {}
    for figure, column in FIGURES.items():
        b, h = base[column], head[column]
        out[figure] = {"base": b, "head": h, "delta": h - b, "regressed": threshold.exceeded(b, h - b)}
    return out


def _side(spec: SideSpec, row: dict) -> CompareSide:
    name = f"{spec.dataset.root.name}:{row['path']}"
    profile, arrays, plan = reopen_profile(spec.dataset, row, name)
    return CompareSide(profile, arrays, plan, label=name)


def attribution_json(comparison: Comparison, figure: str, top: int) -> dict:
    """The figure's change value by value (``Comparison.attribution``): the ``top`` values that
    grew most at the peak, the rest of the parts summed, then scratch and the exchange rows (the
    support reserve for the effective peak); they add up to the delta."""
    a = comparison.attribution(ATTRIBUTED_AS[figure])
    grew = [p for p in a.parts if p.bytes > 0][:top]
    shown = {p.entry for p in grew}
    others = [p for p in a.parts if p.entry not in shown]
    out = {
        "base_step": a.a_step,
        "head_step": a.b_step,
        "grew": [p.to_json() for p in grew],
        "other_values": {"count": len(others), "bytes": sum(p.bytes for p in others)},
        "live_unchanged": a.live_unchanged,
        "scratch_delta": a.scratch_delta,
    }
    if figure == "effective_peak_bytes":
        reserve = comparison.b.arrays.support_reserve_bytes - comparison.a.arrays.support_reserve_bytes
        out["support_reserve_delta"] = reserve
        delta = comparison.delta.effective_peak_bytes
        rest = reserve
    elif figure == "interleaved":
        delta, rest = a.delta, 0
    else:
        out["exchange_rows_delta"] = a.exchange_rows_delta
        delta, rest = a.delta, a.exchange_rows_delta
    if a.parts_total + a.scratch_delta + rest != delta:  # never print parts that do not add up
        raise ArithmeticError(
            f"{comparison.b.label}: {figure} Δ {delta} ≠ parts {a.parts_total} + scratch {a.scratch_delta} + {rest}"
        )
    out["delta"] = delta
    return out


def regress(
    base: SideSpec,
    head: SideSpec,
    *,
    by: str = "path",
    threshold: Threshold | None = None,
    top: int = DEFAULT_TOP,
    allow_inconclusive: bool = False,
) -> RegressReport:
    if by not in BY:
        raise TilescopeError(f"--by: expected one of {', '.join(BY)}, found {by!r}")
    threshold = threshold or parse_threshold("0")
    side_rows: list[list[dict]] = []
    for spec, which in ((base, "BASE"), (head, "HEAD")):
        all_rows = spec.dataset.rows().to_pylist()
        rows = _side_rows(spec, all_rows)
        if not rows:  # a gate that compared nothing must not pass
            if spec.folder:
                raise TilescopeError(
                    f"{which}: {spec.dataset.root} has no profiles under {spec.folder!r}; "
                    f"{existing_folders([r['path'] for r in all_rows], spec.folder)}"
                )
            raise TilescopeError(f"{which}: {spec.dataset.root} has no profiles at all")
        side_rows.append(rows)
    base_rows, head_rows = side_rows
    report = RegressReport(
        base, head, by, threshold, len(base_rows), len(head_rows), allow_inconclusive=allow_inconclusive
    )
    for key, b, h in _match(base_rows, head_rows, by, report):
        sides = {"base": b, "head": h}
        if b["error"] is not None or h["error"] is not None:
            report.failed += [
                {"key": key, "side": s, "path": r["path"], "error": r["error"]}
                for s, r in sides.items()
                if r["error"] is not None
            ]
            continue
        if not (is_loaded_profile(b) and is_loaded_profile(h)):
            kinds = " and ".join(sorted({r["kind"] for r in sides.values() if r["kind"] != "memory_profile"}))
            report.not_compared.append(
                {"key": key, "base_path": b["path"], "head_path": h["path"], "reason": f"{kinds}: no peaks"}
            )
            continue
        verified = _verified(report, key, base, b, head, h)
        if verified is None:
            continue
        entry = {
            "key": key,
            "base_path": b["path"],
            "head_path": h["path"],
            "base_scope": b["scope"],
            "head_scope": h["scope"],
            "figures": _figures(b, h, threshold),
        }
        report.compared.append(entry)
        grown = [f for f, v in entry["figures"].items() if v["regressed"]]
        if grown:
            comparison = compare_plans(*verified)
            report.regressed.append(
                {**entry, "attribution": {figure: attribution_json(comparison, figure, top) for figure in grown}}
            )
    return report


def _verified(
    report: RegressReport, key: str, base: SideSpec, b: dict, head: SideSpec, h: dict
) -> list[CompareSide] | None:
    """Both sides rebuilt and verified (module doc), or None with each side that does not listed as failed."""
    sides = []
    for which, spec, row in (("base", base, b), ("head", head, h)):
        try:
            sides.append(_side(spec, row))
        except InputError as exc:
            report.failed.append({"key": key, "side": which, "path": row["path"], "error": f"regress: {exc}"})
    return sides if len(sides) == 2 else None
