"""The app's robustness corpus: ``write_app_corpus(folder)`` (or ``python
tests/corpus/make_app_corpus.py FOLDER``) writes it into a test's data root.

Files the served app must survive (tests/test_app_limits.py, tests/test_app_robust_server.py,
tests/test_app_robust_browser.py), each one change away from a sample. They are written where a
test serves them rather than kept in git (the search states are 1.2 MB copies of the sample):

- numbers the loader accepts but that no view may size anything by: a device of 2^53 tiles, a
  value with 2^44 blocks on an axis, a search state whose config has 2^40 tiles (and an input of
  2^44 blocks);
- search states that look like one but are broken (a bad ``context``, a chosen plan equal to none
  of the alternatives): opening one must keep the open profile.

``CASES`` says, for each, what it is and its outcome ("opens", or "refused" with the JSON path and
words of the one-line error), written here from docs/formats.md, not from tilescope's output. The
generator is deterministic.

Special files cannot live in git (a FIFO, a device, a socket): ``make_special_files(root)`` makes
them under a test's temporary data root, with ``SPECIAL_FILES`` saying what each must be refused
as (the words of the loader's one-line message, docs/formats.md §6 "Only regular files are read").
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SAMPLE = ROOT / "sample_data" / "vit_finalist5.memory_profile.json"
SEARCH_SAMPLE = ROOT / "sample_data" / "flash_attention.search_state.json"
sys.path.insert(0, str(HERE))
from make_robust_corpus import recompute, simple_value  # noqa: E402

HUGE_ID = 176  # the sample's values are 0…175
HUGE_BLOCKS = 2**44
DEVICE_TILES = 2**53
SEARCH_TILES = 2**40


def _sample() -> dict:
    return json.loads(SAMPLE.read_bytes())


def device_2_53_tiles() -> dict:
    doc = _sample()
    doc["tile_count"] = DEVICE_TILES  # every tiling stays ≤ the device; nothing else changes
    return doc


def blocks_2_44() -> dict:
    """The sample with one more value: [2^44] F16 in blocks of 1 over 1472 partitions (2^44 blocks
    on its axis), live at the sample's total peak step and the two before it. Its bytes: each of
    the 1472 shards holds ceil(2^44 / 1472) elements of 2 bytes, granule 1."""
    doc = _sample()
    huge = simple_value(
        HUGE_ID,
        shape=[HUGE_BLOCKS],
        precision="F16",
        axes=[{"axis": "FromEnd(1)", "partitions": 1472, "block": 1, "multiple": 1}],
    )
    huge.update(name="huge.2^44.blocks", origin=HUGE_ID)
    doc["timeline"]["values"].append(huge)
    peak = doc["total_peak_step"]
    for step in doc["timeline"]["steps"][peak - 2 : peak + 1]:
        step["live"].append(HUGE_ID)
    return recompute(doc)


def _search_sample() -> dict:
    return json.loads(SEARCH_SAMPLE.read_bytes())


def search_2_40_tiles() -> dict:
    """The search-state sample with its config's tile count 2^40 and the query's second dimension
    (17, cut in blocks of 1 into 16 partitions) 2^44 long."""
    doc = _search_sample()
    context = doc["context"]
    assert "PipelineConfig { tile_count: 64," in context and "TensorShape([4, 17, 72])" in context
    context = context.replace("PipelineConfig { tile_count: 64,", f"PipelineConfig {{ tile_count: {SEARCH_TILES},", 1)
    doc["context"] = context.replace("TensorShape([4, 17, 72])", f"TensorShape([4, {HUGE_BLOCKS}, 72])")
    return doc


def search_bad_context() -> dict:
    doc = _search_sample()
    doc["context"] = 'ComputeGraph { inputs: [GraphInput { name: "query"'
    return doc


def search_chosen_not_among() -> dict:
    doc = _search_sample()
    attention = doc["recipe"]["plans"]["0"]["dispatch"]["Attention"]
    attention["key_block_rows"] = 12345  # no alternative has it
    return doc


CASES = {
    "device_2_53_tiles.memory_profile.json": (
        device_2_53_tiles,
        {"what": "the sample on a device of 2^53 tiles", "outcome": "opens", "device_tiles": DEVICE_TILES},
    ),
    "blocks_2_44.memory_profile.json": (
        blocks_2_44,
        {
            "what": f"the sample with value {HUGE_ID}: 2^44 blocks on its one axis, 1472 partitions, live at the total peak step",
            "outcome": "opens",
            "value": HUGE_ID,
            "blocks": HUGE_BLOCKS,
        },
    ),
    "config_2_40_tiles.search_state.json": (
        search_2_40_tiles,
        {
            "what": "the search-state sample with 2^40 tiles in its config and an input dimension of 2^44",
            "outcome": "opens",
            "config_tiles": SEARCH_TILES,
            "blocks": HUGE_BLOCKS,
        },
    ),
    "bad_context.search_state.json": (
        search_bad_context,
        {
            "what": "a search state whose context is one cut line",
            "outcome": "refused",
            "path": "$.context",
            "words": ["expected lines of Debug text"],
        },
    ),
    "chosen_not_among.search_state.json": (
        search_chosen_not_among,
        {
            "what": "a search state whose chosen plan is equal to none of its alternatives",
            "outcome": "refused",
            "path": "$.recipe.plans.0",
            "words": ["plans in $.alternatives.0", "equal to none of them"],
        },
    ),
}


# ----------------------------------------------------------------------------- special files

# name → (how it is made, words of the refusal). A name a test asks for by ``?file=NAME``.
SPECIAL_FILES = {
    "fifo.json": ("a FIFO (named pipe)", ["cannot read it", "a FIFO (named pipe), not a regular file"]),
    "zero.json": (
        "a character device: /dev/zero's numbers (1, 5)",
        ["cannot read it", "a character device, not a regular file"],
    ),
    "socket.json": ("a listening Unix socket", ["cannot read it", "a socket, not a regular file"]),
    "folder.json": ("a directory", ["cannot read it", "a directory, not a regular file"]),
    "zero-link.json": ("a symlink to /dev/zero", ["resolves outside the data root"]),
}


def make_special_files(root: Path) -> dict[str, str]:
    """Make ``SPECIAL_FILES`` under ``root``; the names that could be made (a device needs the right
    to ``mknod``: skipped without it). The socket stays bound while the returned process lives
    (its listening socket is closed when the interpreter exits)."""
    made = {}
    os.mkfifo(root / "fifo.json")
    made["fifo.json"] = "fifo"
    try:
        os.mknod(root / "zero.json", 0o666 | stat.S_IFCHR, os.makedev(1, 5))
        made["zero.json"] = "device"
    except (PermissionError, OSError):
        pass
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(root / "socket.json"))
    server.listen(1)
    made["socket.json"] = "socket"
    (root / "folder.json").mkdir()
    made["folder.json"] = "directory"
    os.symlink("/dev/zero", root / "zero-link.json")
    made["zero-link.json"] = "symlink"
    _KEEP_OPEN.append(server)
    return made


_KEEP_OPEN: list = []  # (the test process's own sockets; not app code)


def write_app_corpus(folder: Path) -> dict[str, dict]:
    """Write every case of ``CASES`` into ``folder``; name → its expected outcome."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    expected = {}
    for name, (build, outcome) in CASES.items():
        (folder / name).write_text(json.dumps(build(), separators=(",", ":")), encoding="utf-8")
        expected[name] = outcome
    return expected


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("app-corpus")
    write_app_corpus(target)
    print(f"wrote {len(CASES)} files to {target}")
