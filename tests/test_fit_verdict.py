"""One fit verdict (derived/fit_verdict.py) in the PNG report: a plan that fits by the compiler's
estimate but cannot be placed (``84:1=6, 84:0=2`` on the sample) reads "no", with the estimate's and
the placement's figures side by side. The figures are checked against ``tilescope plan --json`` and
``tilescope place --json`` run as separate processes.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tilescope.derived.opening import open_file
from tilescope.derived.plan_data import PlanData
from tilescope.loaders.edit_sets import parse_edit_set
from tilescope.planner.edits import apply_edits
from tilescope.report.png import report_figure
from tilescope.report.tables import report_input
from tilescope.samples import sample_path

EDITS = ["84:1=6", "84:0=2"]


def cli_json(*args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "tilescope", *args, "--json", "-q"], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def figures() -> tuple[dict, dict]:
    path = str(sample_path())
    edit_args = [arg for edit in EDITS for arg in ("--edit", edit)]
    return cli_json("plan", path, *edit_args), cli_json("place", path, "--exact-seconds", "0", *edit_args)


def report_text(edits: list | None) -> str:
    opened = open_file(sample_path())
    whatif = apply_edits(opened.arrays, opened.plan, edits) if edits else None
    figure = report_figure(report_input(PlanData(opened, whatif), None))
    return "\n".join(text.get_text() for text in figure.findobj(lambda artist: hasattr(artist, "get_text")))


def test_the_report_gives_one_verdict_with_the_estimate_and_the_placed_figures(figures):
    plan, place = figures
    # the case: the compiler's estimate passes, our placement proves a region cannot fit
    assert plan["fits_budget"] is True and place["fits"] is False
    assert "infeasible" in {place["regions"][r]["verdict"] for r in ("standard", "interleaved")}
    edits = parse_edit_set(
        json.dumps([{"value": 84, "axis": 1, "partitions": 6}, {"value": 84, "axis": 0, "partitions": 2}])
    )
    text = report_text(edits)
    lines = [line for line in text.splitlines() if line.startswith("fits budget")]
    assert len(lines) == 1 and lines[0].split()[2:] == ["no", "(was", "yes)"], lines
    assert "fits budget" not in text.replace(lines[0], "", 1)  # one verdict, no second one
    assert "does NOT fit" not in text and "fits budget      yes" not in text
    budget = open_file(sample_path()).arrays.budget_bytes
    assert f"effective peak {plan['effective_peak_bytes']:,} B" in text and f"budget {int(budget):,} B" in text
    standard = place["regions"]["standard"]
    assert f"standard placed {standard['placed']:,} B" in text and f"capacity {standard['capacity']:,} B" in text
    assert "cannot place it and fails the build" in text  # the rule that decided it


def test_the_file_plan_fits_by_both(figures):
    path = str(sample_path())
    plan, place = cli_json("plan", path), cli_json("place", path, "--exact-seconds", "0")
    assert plan["fits_budget"] is True and place["fits"] is True
    lines = [line for line in report_text(None).splitlines() if line.startswith("fits budget")]
    assert [line.split()[2:] for line in lines] == [["yes"]]
