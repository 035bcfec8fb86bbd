"""docs/explore.ipynb runs in a real Jupyter kernel (nbclient): ``tilescope.explore`` shows the
explorer as a cell output with its resources inlined (no URL to fetch), and the session it returns
re-plans an edit; the expected peak comes from the raw sample by docs/formats.md §2."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from editor_support import RawProfile, edited_bytes

NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "explore.ipynb"

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")


def test_importing_tilescope_does_not_import_panel():
    code = "import sys, tilescope; assert 'panel' not in sys.modules; assert callable(tilescope.explore); assert 'panel' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_example_notebook_runs_and_shows_the_explorer(sample_path):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    shown = notebook.cells[1].outputs
    bundles = [o.data for o in shown if o.output_type in ("display_data", "execute_result")]
    assert any("application/vnd.holoviews_exec.v0+json" in b or "text/html" in b for b in bundles), bundles
    text = "".join(str(v) for b in bundles for v in b.values())
    # inlined: no <script src> or <link href> loads anything from a URL (Bokeh's inlined code names a
    # MathJax URL it would fetch only for TeX labels, which tilescope never draws: PlainText labels)
    assert "BokehJS" in text or "Bokeh" in text
    assert not re.search(r"""<(script|link)\b[^>]*\b(src|href)=["']https?://""", text)

    raw = RawProfile.load(sample_path)
    value = raw.value(84)
    expected = raw.peaks_with({84: edited_bytes(value, {1: 18})[2] - value["bytes"]})["standard"]
    printed = "".join(o.get("text", "") for o in notebook.cells[-1].outputs)
    assert printed.strip() == f"standard peak {raw.doc['peak']['standard']:,} B → {expected:,} B"
    assert "step 45:" in "".join(o.get("text", "") for o in notebook.cells[2].outputs)
    # tilescope.open and tilescope.compare (the commands' mirrors): figures from the raw JSON
    api = "".join(o.get("text", "") for o in notebook.cells[4].outputs).splitlines()
    assert api == [
        f"memory_profile: total peak {raw.doc['peak']['total']:,} B at step {raw.doc['total_peak_step']}",
        f"standard peak change: {expected - raw.doc['peak']['standard']:+,} B",
    ]
    # tilescope.solve: b overlaps a and c, which never meet: 8 bytes are the least (by hand)
    solved = "".join(o.get("text", "") for o in notebook.cells[6].outputs).splitlines()
    assert solved == ["capacity 8: placed, height 8", "capacity 7: infeasible, height None"]
