"""``tilescope regress BASE HEAD [--by path|scope] [--threshold BYTES|PCT] [--top N] [--allow-inconclusive] [--json]``:
the profiles whose peaks grew from BASE to HEAD, each with the values that grew at the peak
(``tilescope.fleet.regress``). Exit 0 when pairs were compared and none regressed; 1 when a
profile regressed or a HEAD profile failed (to load, or to verify); 2 for a usage error or a
damaged dataset; 3 when the run is inconclusive (nothing compared, or ambiguous scopes) unless
``--allow-inconclusive``: a CI job can gate on it.

``--json`` prints ``fleet.regress.RegressReport.as_json``: ``base``/``head`` (dataset, folder,
rows), ``by``, ``threshold``, ``compared`` (count), ``regressed`` (each with ``figures``:
base/head/delta/regressed per figure, and ``attribution`` per regressed figure: ``grew``, the top
values that grew at the peak as ``{name, a_id, b_id, a_bytes, b_bytes, bytes}`` with a = BASE and
b = HEAD as in ``compare --json``; ``other_values``; ``scratch_delta``; ``exchange_rows_delta`` or
``support_reserve_delta``; ``delta``), ``only_base``, ``only_head``, ``failed``, ``not_compared``,
``ambiguous``, ``inconclusive`` (why the run cannot vouch for HEAD), ``profiles`` (every compared
pair's figures) and ``exit_code``.
"""

from __future__ import annotations

import argparse
import json

from tilescope.models.format import fmt_bytes, fmt_signed_bytes, shorten, terminal_text

NAME_CHARS = 48
FIGURE_LABELS = {
    "standard": "standard peak",
    "interleaved": "interleaved peak",
    "total": "total peak",
    "effective_peak_bytes": "effective peak",
}

HELP_EPILOG = """\
BASE and HEAD: a dataset written by `tilescope batch`, or DATASET:FOLDER for the profiles under
one folder of its paths, which are relative to the batch's DIR. After
`tilescope batch nightly --out fleet-data`, two folders of one dataset compare two nightly runs:
tilescope regress fleet-data:2024-05-01 fleet-data:2024-05-02

Matching: by the path relative to the folder (--by path, the default) or by the profile's scope
(--by scope). Figures: the standard, interleaved, total and effective peaks as the planner
recomputed them. A figure regressed when it grew by more than --threshold: bytes (4096, 4KiB,
1MiB) or a percentage of BASE's figure (2%, 0.5%); the default 0 flags any growth.

Each regressed figure is attributed value by value, as `tilescope compare` does, on both sides
rebuilt from the dataset's partitions (the input files need not exist any more). Profiles on one
side only, files that failed to load (never compared) and search states are listed.

Every compared pair is verified first: each value's bytes recomputed from the dataset's stored
tilings and shapes, the usage and peaks from them, all equal to what the dataset records (a row
that does not verify is listed as failed, not compared).

Exit status:
  0  pairs were compared and none regressed
  1  a profile regressed, or a HEAD profile failed to load or to verify
  2  usage error: not a dataset, a damaged dataset, a folder with no profiles, a bad threshold
  3  inconclusive: no pair compared, or ambiguous scopes (--by scope); --allow-inconclusive
     makes this 0
"""


def _top(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a count, found {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a count ≥ 0, found {n}")
    return n


def add_arguments(parser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = HELP_EPILOG
    parser.add_argument("base", metavar="BASE", help="DATASET or DATASET:FOLDER: the profiles before")
    parser.add_argument("head", metavar="HEAD", help="DATASET or DATASET:FOLDER: the profiles after")
    parser.add_argument(
        "--by", choices=("path", "scope"), default="path", help="match profiles by relative path (default) or scope"
    )
    parser.add_argument(
        "--threshold", default="0", metavar="BYTES|PCT", help="growth allowed before a figure regresses (default 0)"
    )
    parser.add_argument(
        "--top", type=_top, default=5, metavar="N", help="values listed per regressed figure (default 5)"
    )
    parser.add_argument(
        "--allow-inconclusive",
        action="store_true",
        help="exit 0, not 3, when nothing was compared or scopes were ambiguous (and nothing regressed)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    from tilescope.fleet.regress import parse_side, parse_threshold, regress

    threshold = parse_threshold(args.threshold)
    base, head = parse_side(args.base, "BASE"), parse_side(args.head, "HEAD")
    report = regress(
        base, head, by=args.by, threshold=threshold, top=args.top, allow_inconclusive=args.allow_inconclusive
    )
    print(json.dumps(report.as_json(), indent=1) if args.json else report_text(report))
    return report.exit_code


# ----------------------------------------------------------------------------- text form


def _t(text: object) -> str:
    return terminal_text(str(text))


def _threshold_text(threshold) -> str:
    if threshold.percent is not None:
        return f"more than {_t(threshold.text.strip())} of BASE's figure"
    return f"more than {fmt_bytes(threshold.bytes)}" if threshold.bytes else "more than 0 B (any growth)"


def _ids(part: dict) -> str:
    return f"[{'—' if part['a_id'] is None else part['a_id']} → {'—' if part['b_id'] is None else part['b_id']}]"


def _attribution_lines(figure: str, a: dict) -> list[str]:
    lines = [
        f"    {FIGURE_LABELS[figure]}: BASE step {a['base_step']} → HEAD step {a['head_step']}; values that grew at the peak:"
    ]
    for p in a["grew"]:
        name = shorten(_t(p["name"]), NAME_CHARS)
        lines.append(
            f"      {fmt_signed_bytes(p['bytes']):<26}{name} {_ids(p)}: live {p['a_bytes']:,} B → {p['b_bytes']:,} B"
        )
    if not a["grew"]:
        lines.append(f"      {'':<26}(none: the growth is scratch or reserved rows)")
    other = a["other_values"]
    if other["count"]:
        lines.append(f"      {fmt_signed_bytes(other['bytes']):<26}{other['count']:,} other values with a part")
    lines.append(f"      {fmt_signed_bytes(a['scratch_delta']):<26}scratch")
    if "exchange_rows_delta" in a:
        lines.append(f"      {fmt_signed_bytes(a['exchange_rows_delta']):<26}exchange rows")
    if "support_reserve_delta" in a:
        lines.append(f"      {fmt_signed_bytes(a['support_reserve_delta']):<26}support reserve")
    lines.append(
        f"      {'= ' + fmt_signed_bytes(a['delta'])}  ({a['live_unchanged']:,} values live at both peaks unchanged)"
    )
    return lines


def _row(profile: str, figure: str, base: str, head: str, delta: str) -> str:
    return f"  {profile:<44}{figure:<18}{base:<26}{head:<26}{delta}".rstrip()


def _side_text(side: dict) -> str:
    where = f"{side['dataset']}:{side['folder']}" if side["folder"] else side["dataset"]
    return f"{_t(where)} ({side['rows']:,} rows)"


def report_text(report) -> str:
    r = report.as_json()
    lines = [
        f"BASE {_side_text(r['base'])} → HEAD {_side_text(r['head'])}; matched by {r['by']}; "
        f"a figure regressed when it grew by {_threshold_text(report.threshold)}",
        f"{len(r['regressed'])} regressed of {r['compared']} compared; {len(r['only_base'])} only in BASE, "
        f"{len(r['only_head'])} only in HEAD; {len(r['failed'])} failed; {len(r['not_compared'])} not compared"
        + (f"; {len(r['ambiguous'])} ambiguous scopes" if r["ambiguous"] else ""),
    ]
    if r["inconclusive"]:
        allowed = (
            " (allowed by --allow-inconclusive)"
            if report.allow_inconclusive
            else " (exit 3; --allow-inconclusive accepts it)"
        )
        lines.append(f"inconclusive: {'; '.join(r['inconclusive'])}{allowed}")
    if r["regressed"]:
        lines += ["", _row("profile", "figure", "BASE", "HEAD", "Δ")]
    for entry in r["regressed"]:
        label = shorten(_t(entry["key"]), 42)
        for figure, v in entry["figures"].items():
            if v["regressed"]:
                lines.append(
                    _row(
                        label,
                        FIGURE_LABELS[figure],
                        fmt_bytes(v["base"]),
                        fmt_bytes(v["head"]),
                        fmt_signed_bytes(v["delta"]),
                    )
                )
                label = ""
        if entry["attribution"] is None:
            lines.append("    (no attribution: a side's partitions could not be read back; see failed)")
            continue
        for figure, a in entry["attribution"].items():
            lines += _attribution_lines(figure, a)
    for title, items in (("only in BASE", r["only_base"]), ("only in HEAD", r["only_head"])):
        if items:
            lines += ["", f"{title}:"] + [f"  {_t(i['path'])}" for i in items]
    if r["failed"]:
        lines += ["", "failed (not compared):"] + [f"  {f['side'].upper()} {_t(f['error'])}" for f in r["failed"]]
    if r["not_compared"]:
        lines += ["", "not compared:"] + [
            f"  {_t(n.get('head_path') or n.get('path'))}: {_t(n['reason'])}" for n in r["not_compared"]
        ]
    if r["ambiguous"]:
        lines += ["", "ambiguous scopes (several profiles on one side; not compared):"]
        lines += [
            f"  {_t(a['key'])}: BASE {', '.join(map(_t, a['base'])) or '—'}; HEAD {', '.join(map(_t, a['head'])) or '—'}"
            for a in r["ambiguous"]
        ]
    return "\n".join(lines)
