"""``tilescope normalise`` keeps its peak memory down by importing neither pandas nor the other
commands' dependencies (issue #26; ``benchmarks/bench_load.py``'s ``measure_cli`` measures the peak):
checked in a fresh process, with the tables it writes compared with a load in this one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from tilescope.loaders.memory_profile import load_memory_profile

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "vit_finalist5.memory_profile.json"

_PROBE = """
import json, sys
from tilescope.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "imported": sorted(m for m in ("pandas", "panel", "bokeh") if m in sys.modules)}))
"""


def test_normalise_imports_no_pandas_and_writes_the_loaded_tables(tmp_path):
    out = tmp_path / "pq"
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "normalise", str(SAMPLE), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"TILESCOPE_NO_CACHE": "1", "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"code": 0, "imported": []}
    expected = load_memory_profile(SAMPLE).file_tables()
    assert sorted(p.stem for p in out.iterdir()) == sorted(expected)
    for name, table in expected.items():
        written = pq.read_table(out / f"{name}.parquet")
        assert written.num_rows == table.num_rows
        assert written.replace_schema_metadata(None).equals(table.replace_schema_metadata(None)), name


def test_a_process_that_has_pandas_keeps_it_for_pyarrow(tmp_path):
    """The normalise command's pandas guard leaves a process that imported pandas already as it was."""
    probe = (
        "import sys, pandas, pyarrow as pa\n"
        "from tilescope.cli import main\n"
        f"assert main(['normalise', {str(SAMPLE)!r}, '--out', {str(tmp_path / 'pq')!r}, '--quiet']) == 0\n"
        "print(type(pa.table({'a': [1]}).to_pandas()).__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"TILESCOPE_NO_CACHE": "1", "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "DataFrame"
