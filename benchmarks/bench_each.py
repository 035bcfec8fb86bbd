"""``tilescope plan --each``: time against the number of edits (it must grow linearly).

    .venv/bin/python -m benchmarks.bench_each [--edits 2000] [--profile FILE]

Builds a sequence of ``2 × --edits`` edits of the sample (default; or ``--profile``) every prefix
of which is valid (random partition and replica counts, seeded), writes the first N and all 2N as
edit-set files, and times (CPU time of the process, best of ``--repeat`` interleaved rounds: the
machine is shared), in the same run:

- the whole command, ``tilescope plan FILE --edits EDITS --each`` in-process (output discarded),
  for N and for 2N edits; the ratio t(2N) / t(N) is 2 for linear growth, 4
  for quadratic (the command re-planned the set so far from scratch before: 2,000 edits took 11 s);
- the re-planning alone (``extend_edits``, one edit after the other) for N and 2N, and its ratio;
- the old way as a baseline for the same N: ``apply_edits`` of each prefix (quadratic), on the
  first ``--baseline`` edits only (it is slow), with its own 2× ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import tempfile
import time
from pathlib import Path

from tilescope.cli import main as cli_main
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.edits import TilingEdit, save_edit_set
from tilescope.planner.edits import EditError, apply_edits, extend_edits
from tilescope.planner.model import plan_profile
from tilescope.synth import SAMPLE_PATH


def valid_sequence(arrays, plan, count: int, seed: int = 18) -> list[TilingEdit]:
    """``count`` edits, each valid on top of the ones before (random ones tried until one is)."""
    rng = random.Random(seed)
    ids = arrays.value_ids.tolist()
    edits, whatif = [], apply_edits(arrays, plan, [])
    while len(edits) < count:
        value = rng.choice(ids)
        if rng.random() < 0.3:
            edit = TilingEdit(value, replicas=rng.choice([1, 2, 3, 8, 27, 54]))
        else:
            edit = TilingEdit(
                value, axis=rng.choice([0, 1, 2]), partitions=rng.choice([1, 2, 3, 4, 8, 9, 16, 18, 46, 72])
            )
        try:
            whatif = extend_edits(arrays, whatif, [edit])
        except EditError:
            continue
        edits.append(edit)
    return edits


def best_of(repeat: int, runs: dict) -> dict:
    """The least CPU time of this process (the machine is shared: other processes' load would
    count in wall time) over ``repeat`` rounds of every run in ``runs``, interleaved, by key."""
    best = {key: float("inf") for key in runs}
    for _ in range(repeat):
        for key, run in runs.items():
            t0 = time.process_time()
            run()
            best[key] = min(best[key], time.process_time() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=2000, help="N: the shorter sequence (the longer is 2N)")
    parser.add_argument("--baseline", type=int, default=250, help="N for the quadratic baseline (default 250)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", type=Path, default=SAMPLE_PATH)
    args = parser.parse_args(argv)
    n = args.edits
    arrays, plan = plan_profile(load_memory_profile(args.profile))
    edits = valid_sequence(arrays, plan, 2 * n)
    print(
        f"{args.profile.name}: {arrays.n_values:,} values, {arrays.n_steps:,} steps; {2 * n:,} edits, every prefix valid"
    )

    with tempfile.TemporaryDirectory(prefix="bench_each.") as folder:
        files = {count: save_edit_set(Path(folder) / f"edits_{count}.json", edits[:count]) for count in (n, 2 * n)}

        def command(count: int) -> None:
            with contextlib.redirect_stdout(io.StringIO()):
                assert cli_main(["plan", str(args.profile), "--edits", str(files[count]), "--each"]) == 0

        cli = best_of(args.repeat, {count: (lambda c=count: command(c)) for count in (n, 2 * n)})

    def stepwise(count: int) -> None:
        whatif = apply_edits(arrays, plan, [])
        for edit in edits[:count]:
            whatif = extend_edits(arrays, whatif, [edit])

    def prefixes(count: int) -> None:
        for k in range(count):
            apply_edits(arrays, plan, edits[: k + 1])

    loop = best_of(args.repeat, {count: (lambda c=count: stepwise(c)) for count in (n, 2 * n)})
    b = args.baseline
    old = best_of(1, {count: (lambda c=count: prefixes(c)) for count in (b, 2 * b)})

    print(
        f"plan --each, whole command: {n:,} edits {cli[n]:.2f} s, {2 * n:,} edits {cli[2 * n]:.2f} s: "
        f"ratio {cli[2 * n] / cli[n]:.2f} for 2x edits (2 = linear, 4 = quadratic)"
    )
    print(
        f"re-planning alone (extend_edits): {n:,} edits {loop[n]:.2f} s ({loop[n] / n * 1e3:.3f} ms per edit), "
        f"{2 * n:,} edits {loop[2 * n]:.2f} s: ratio {loop[2 * n] / loop[n]:.2f}"
    )
    print(
        f"baseline, apply_edits of every prefix: {b:,} edits {old[b]:.2f} s, {2 * b:,} edits {old[2 * b]:.2f} s: "
        f"ratio {old[2 * b] / old[b]:.2f}; at {b:,} edits extend_edits is {old[b] / (loop[n] * b / n):.0f}x faster"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
