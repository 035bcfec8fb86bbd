"""compare, report, advise, place, normalise and batch accept memory profiles v2/v3 (docs/formats.md
§7). Profiles from ``tests/profile_generator.py``; expected figures from its own estimate."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

from tilescope import cli
from tilescope.loaders.memory_profile import load_memory_profile

sys.path.insert(0, str(Path(__file__).parent))
import profile_generator as gen


def _run(capsys, *args) -> tuple[int, str]:
    code = cli.main([str(a) for a in args])
    return code, capsys.readouterr().out


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("v2_commands")
    program = gen.program_scaled(2)
    return program, {v: gen.write(program, v, folder / f"p_v{v}.memory_profile.json") for v in (1, 2, 3)}


def test_compare_v2_with_v3_attributes_the_rows(capsys, files):
    """Same program, v2 against v3: the peaks differ by exactly the exchange rows, the effective
    peak not at all, and the attribution adds up on the peak tiles."""
    program, paths = files
    code, out = _run(capsys, "compare", paths[2], paths[3], "--json")
    assert code == 0
    result = json.loads(out)
    rows = program.exchange_rows
    total = result["attribution"]["total"]
    assert total["delta"] == -rows and total["exchange_rows_delta"] == -rows and total["scratch_delta"] == 0
    assert all(p["bytes"] == 0 for p in total["parts"])
    assert result["b"]["effective_peak_bytes"] == result["a"]["effective_peak_bytes"]
    code, out = _run(capsys, "compare", paths[1], paths[3], "--json")  # v1 against v3: each by its own rules
    assert code == 0
    for attribution in json.loads(out)["attribution"].values():
        assert (
            attribution["delta"]
            == sum(p["bytes"] for p in attribution["parts"])
            + attribution["scratch_delta"]
            + attribution["exchange_rows_delta"]
        )


@pytest.mark.parametrize("version", [2, 3])
def test_report_advise_place_accept_per_tile_profiles(tmp_path, capsys, files, version):
    program, paths = files
    doc = gen.profile_json(program, version)
    code, _ = _run(capsys, "report", paths[version], "--out", tmp_path / "report")
    assert code == 0 and (tmp_path / "report" / "report.png").stat().st_size > 0
    code, out = _run(capsys, "advise", paths[version])
    assert code == 0 and f"{doc['peak']['total']:,} B" in out
    code, out = _run(capsys, "place", paths[version], "--json")
    assert code == 0 and json.loads(out)


@pytest.mark.parametrize("version", [1, 3])
def test_normalise_writes_the_run_tables_of_per_tile_profiles(tmp_path, capsys, files, version):
    _, paths = files
    code, out = _run(capsys, "normalise", paths[version], "--out", tmp_path / "pq", "--json")
    assert code == 0
    written = json.loads(out)["tables"]
    assert ("value_tiles" in written) == (version >= 2) and ("step_tiles" in written) == (version >= 2)
    if version >= 2:
        loaded = load_memory_profile(paths[version])
        assert pq.read_table(written["step_tiles"]["path"]).equals(loaded.step_tiles)


def test_batch_rows_hold_version_and_peak_tiles(tmp_path, capsys, files):
    program, paths = files
    tree = tmp_path / "tree"
    for version, path in paths.items():
        (tree / f"v{version}").mkdir(parents=True)
        (tree / f"v{version}" / path.name).write_bytes(path.read_bytes())
    code, _ = _run(capsys, "batch", tree, "--out", tmp_path / "dataset", "--workers", "1", "--json")
    assert code == 0
    rows = {
        r["path"].split("/")[0]: r
        for r in pads.dataset(tmp_path / "dataset" / "profiles", format="parquet").to_table().to_pylist()
    }
    for version in (1, 2, 3):
        row = rows[f"v{version}"]
        assert row["format_version"] == version and row["check_mismatches"] == 0
        expected = gen.expected_figures(program, version)
        assert row["total_peak"] == expected["doc"]["peak"]["total"]
        tiles = (row["standard_peak_tile"], row["interleaved_peak_tile"], row["total_peak_tile"])
        if version == 1:
            assert tiles == (None, None, None)
        else:
            assert tiles == tuple(expected["peak_tiles"][k] for k in ("standard", "interleaved", "total"))
