"""CSV writing: ``.venv/bin/python -m benchmarks.bench_csv [PROFILE]`` (default: a synthetic
200 blocks × 24 layers profile in a temporary folder).

Times ``report.csv_safe.to_csv_bytes`` (neutralise with Arrow compute, write with ``pyarrow.csv``)
on the report's values and steps tables, against a baseline measured in the same run: the stdlib
``csv`` module writing the same neutralised cells (``csv.writer`` over ``to_pylist`` rows, CRLF
line ends). Best of 3 each; prints the ratio (baseline time ÷ ours) and checks both files hold the
same cells.
"""

from __future__ import annotations

import argparse
import csv
import io
import tempfile
import time
from pathlib import Path

from tilescope.loaders.cache import load_profile_cached
from tilescope.planner.model import plan_profile
from tilescope.report.csv_safe import safe_table, to_csv_bytes
from tilescope.report.tables import report_input, steps_table, values_table
from tilescope.synth import write_synthetic_profile


def stdlib_csv(table) -> bytes:
    safe = safe_table(table)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(safe.column_names)
    writer.writerows(zip(*(column.to_pylist() for column in safe.columns)))
    return out.getvalue().encode("utf-8")


def best_of(function, repeat: int = 3) -> tuple[float, bytes]:
    times, result = [], b""
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return min(times), result


def cells(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def bench(path: Path, cache_dir: Path) -> None:
    profile = load_profile_cached(path, cache_dir)
    arrays, plan = plan_profile(profile)
    data = report_input(profile, arrays, plan, None, None)
    for name, table in (("values", values_table(data)), ("steps", steps_table(data))):
        baseline, expected = best_of(lambda: stdlib_csv(table))
        ours, written = best_of(lambda: to_csv_bytes(table))
        same = cells(expected) == cells(written)
        print(
            f"{name}.csv: {table.num_rows:,} rows; stdlib csv {baseline:.3f} s, tilescope {ours:.3f} s: "
            f"{baseline / ours:.1f}× faster; same cells: {same}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_csv")
    parser.add_argument("profile", nargs="?", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_csv.") as folder:
        path = args.profile or write_synthetic_profile(Path(folder) / "synthetic_200x24.memory_profile.json", 200, 24)
        bench(path, Path(folder) / "cache")


if __name__ == "__main__":
    main()
