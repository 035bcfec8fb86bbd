"""``tilescope synth --blocks B --layers L --out FILE [--gaps] [--overwrite] [--json]``: write a
synthetic memory profile.

The profile repeats the sample program ``B`` times with ``L`` layers of stacked weights per loop;
every recorded figure is recomputed, so ``tilescope check`` passes on it (see ``tilescope.synth``).
An existing FILE is never replaced unless ``--overwrite``. ``--json`` prints ``{"path",
"size_bytes", "blocks", "layers", "gaps"}``.
"""

from __future__ import annotations

import argparse
import json

from tilescope.cli.inputs import check_regular
from tilescope.models.errors import InputError, TilescopeError
from tilescope.models.format import count_of, fmt_bytes
from tilescope.synth import write_synthetic_profile


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {text!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {number}")
    return number


def add_arguments(parser) -> None:
    parser.add_argument(
        "--blocks", type=_positive, default=200, help="copies of the program, one after another (default 200)"
    )
    parser.add_argument("--layers", type=_positive, default=24, help="layers of stacked weights per loop (default 24)")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--overwrite", action="store_true", help="replace FILE if it exists")
    parser.add_argument("--sample", default=None, help="the profile to build from (default: the bundled ViT sample)")
    parser.add_argument(
        "--gaps", action="store_true", help="make long live ranges non-contiguous (one step missing in the middle)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    check_regular(args.sample)  # a FIFO or a device is refused before it is read
    try:
        path = write_synthetic_profile(
            args.out, args.blocks, args.layers, args.sample, gaps=args.gaps, overwrite=args.overwrite
        )
    except InputError as exc:  # the --sample file is bad (or --out exists / cannot be written: that error names it)
        raise exc.in_file(str(args.sample)) from None
    except (ValueError, KeyError) as exc:  # a --sample without the structure the generator copies
        raise TilescopeError(f"{args.sample}: cannot build a synthetic profile from it ({exc})") from None
    size = path.stat().st_size
    if args.json:
        print(
            json.dumps(
                {"path": str(path), "size_bytes": size, "blocks": args.blocks, "layers": args.layers, "gaps": args.gaps}
            )
        )
    elif not args.quiet:
        print(f"{path}: {fmt_bytes(size)}, {count_of(args.blocks, 'block')} of {count_of(args.layers, 'layer')}")
    return 0
