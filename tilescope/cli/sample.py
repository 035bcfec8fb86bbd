"""``tilescope sample [profile|search-state|edits]``: print the path of a file bundled with
tilescope, so the examples of the README and ``--help`` work from anywhere after ``pip install``:

- ``profile`` (the default): the ViT memory profile the app opens by default;
- ``search-state``: the flash-attention search state;
- ``edits``: an example edit set for that profile (value 84: axis 1 → 18 partitions, replicas →
  27; the advisor's best edit for the standard peak). Its format is below (``models.edits``).

``tilescope plan "$(tilescope sample)" --edits "$(tilescope sample edits)"`` is a complete what-if.
The files are read-only parts of the installation: copy one before changing it.
"""

from __future__ import annotations

import json

from tilescope import samples
from tilescope.models.edits import EDIT_SET_FORMAT

SAMPLES = {"profile": samples.MEMORY_PROFILE, "search-state": samples.SEARCH_STATE, "edits": samples.EDIT_SET}


def add_arguments(parser) -> None:
    parser.add_argument(
        "which", nargs="?", choices=list(SAMPLES), default="profile", help="which bundled file (default: profile)"
    )
    parser.add_argument(
        "--json", action="store_true", help='print {"profile": PATH, "search-state": PATH, "edits": PATH}'
    )
    parser.epilog = EDIT_SET_FORMAT


def run(args) -> int:
    if args.json:
        print(json.dumps({name: str(samples.sample_path(file)) for name, file in SAMPLES.items()}))
    else:
        print(samples.sample_path(SAMPLES[args.which]))
    return 0
