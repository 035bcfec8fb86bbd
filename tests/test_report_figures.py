"""The report PNGs say what they show and draw it legibly: each carries its date, the tilescope
version and the SHA-256 of every source in its PNG text chunks (and in its header); no two text
boxes of a figure overlap and none leaves the figure (measured on the figure's renderer before
saving, on the sample, edited, and on seven-digit and 2,320-step synthetic profiles); compare.png
zooms on a change too narrow to see on the whole axis, and its waterfalls start at 0 bytes."""

from __future__ import annotations

import datetime
import hashlib
import importlib.metadata
import io
import itertools
import json
from argparse import Namespace

import numpy as np
import pytest
from matplotlib.text import Text
from PIL import Image

from tilescope.cli import main
from tilescope.cli.compare import comparison_of
from tilescope.derived.opening import open_file
from tilescope.derived.plan_data import PlanData
from tilescope.loaders.edit_sets import load_edit_set
from tilescope.planner.edits import apply_edits
from tilescope.report.compare_png import compare_figure
from tilescope.report.png import report_figure
from tilescope.report.tables import report_input
from tilescope.samples import EDIT_SET, sample_path
from tilescope.synth import write_synthetic_profile

EDITS = sample_path(EDIT_SET)


def text_boxes(figure) -> list[tuple[str, object]]:
    """Every drawn text of ``figure`` and its box in pixels: titles, labels, legends, annotations
    (their text only, not their leader line) and the tick labels inside each axis's view."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    tick_labels, boxes = set(), []
    for ax in figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                tick_labels.update((id(tick.label1), id(tick.label2)))
            low, high = sorted(axis.get_view_interval())
            for where, label in zip(axis.get_majorticklocs(), axis.get_majorticklabels(), strict=False):
                if low - 1e-9 <= where <= high + 1e-9 and label.get_visible() and label.get_text().strip():
                    boxes.append((f"tick {label.get_text()}", label.get_window_extent(renderer)))
    for text in figure.findobj(Text):
        if id(text) not in tick_labels and text.get_visible() and text.get_text().strip():
            boxes.append((text.get_text()[:60], Text.get_window_extent(text, renderer)))
    return boxes


def assert_legible(figure) -> None:
    boxes = text_boxes(figure)
    assert len(boxes) > 30
    overlapping = [(a, b) for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2) if box_a.overlaps(box_b)]
    assert overlapping == []
    width, height = figure.bbox.width, figure.bbox.height
    outside = [name for name, box in boxes if box.x0 < 0 or box.y0 < 0 or box.x1 > width or box.y1 > height]
    assert outside == []


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("figures")
    paths = {"long": folder / "long.json", "wide": folder / "wide.json", "wide_long": folder / "wide_long.json"}
    write_synthetic_profile(paths["long"], 20, 2)  # 2,320 steps: the dense drawing
    write_synthetic_profile(paths["wide"], 1, 24)  # 24 layers: seven-digit bytes per tile
    write_synthetic_profile(paths["wide_long"], 18, 24)  # both: 2,088 steps
    return paths


def report_of(path, edits=None):
    opened = open_file(path)
    whatif = apply_edits(opened.arrays, opened.plan, edits) if edits else None
    return opened, report_figure(report_input(PlanData(opened, whatif), None))


def test_report_figures_have_no_overlapping_text(synthetic, sample_path):
    _, figure = report_of(sample_path)
    assert_legible(figure)
    _, figure = report_of(sample_path, load_edit_set(EDITS))  # the two-row legend over "Live at step 47" once
    assert_legible(figure)
    opened, figure = report_of(
        synthetic["wide_long"]
    )  # 2,320 steps of seven-digit figures: the y label once left the figure
    assert opened.plan.peaks.total >= 1_000_000 and opened.arrays.n_steps > 2000
    assert_legible(figure)


def test_an_edited_seven_digit_report_is_legible(synthetic, capsys):
    assert main(["advise", str(synthetic["wide"]), "--json", "-q", "--limit", "1"]) == 0
    (best,) = json.loads(capsys.readouterr().out)["candidates"]
    from tilescope.models.edits import TilingEdit

    opened, figure = report_of(synthetic["wide"], [TilingEdit.from_json(e) for e in best["edits"]])
    assert opened.plan.peaks.total >= 1_000_000
    assert_legible(figure)


def comparison(a, b=None, edits_b=None):
    return comparison_of(
        Namespace(a=str(a), b=None if b is None else str(b), edits_a=None, edits_b=edits_b, top=0, quiet=True)
    )


def test_compare_figures_have_no_overlapping_text(synthetic, sample_path):
    for a, b, edits in (
        (sample_path, None, str(EDITS)),
        (synthetic["long"], None, str(EDITS)),
        (synthetic["long"], synthetic["wide"], None),
    ):
        assert_legible(compare_figure(comparison(a, b, edits), str(a), str(b or a)))


def test_compare_zooms_on_a_narrow_change_and_its_waterfalls_start_at_zero(synthetic):
    """The edit changes value 84 of the first block only: steps 44–45 of 2,320. The changed steps
    are found here from the two plans' per-step usage (the planner, not the compare)."""
    opened = open_file(synthetic["long"])
    edited = apply_edits(opened.arrays, opened.plan, load_edit_set(EDITS)).plan
    changed = np.flatnonzero(
        (opened.plan.usage_standard != edited.usage_standard)
        | (opened.plan.usage_interleaved != edited.usage_interleaved)
    )
    assert changed.size and changed[-1] - changed[0] < 10 and opened.arrays.n_steps == 2320
    figure = compare_figure(comparison(synthetic["long"], None, str(EDITS)), "long.json", "long.json")
    axes = {ax.get_label(): ax for ax in figure.axes}
    for region in ("standard", "interleaved", "total"):
        low, high = axes[f"zoom {region}"].get_xlim()
        assert low <= changed[0] and changed[-1] <= high and high - low < 0.1 * opened.arrays.n_steps
        assert axes[f"overlay {region}"].get_xlim()[1] >= opened.arrays.n_steps - 1  # the whole axis beside it
    for figure_name in ("total", "standard", "interleaved"):
        assert axes[f"waterfall {figure_name}"].get_xlim()[0] == 0
    # a change across most of the axis needs no zoom
    wide = compare_figure(comparison(synthetic["long"], synthetic["wide"]), "long.json", "wide.json")
    assert not any(ax.get_label().startswith("zoom") for ax in wide.axes)


def png_text(path) -> dict[str, str]:
    with Image.open(path) as image:
        return dict(image.text)


def test_each_png_carries_its_date_version_and_sources(tmp_path, sample_path):
    version = importlib.metadata.version("tilescope")
    sha_a = hashlib.sha256(sample_path.read_bytes()).hexdigest()
    edited = tmp_path / "edited.json"
    before = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    assert main(["plan", str(sample_path), "--edits", str(EDITS), "--write-profile", str(edited), "-q"]) == 0
    sha_b = hashlib.sha256(edited.read_bytes()).hexdigest()
    assert main(["report", str(sample_path), "--edits", str(EDITS), "--out", str(tmp_path / "r"), "-q"]) == 0
    assert main(["report", str(sample_path), "--compare", str(edited), "--out", str(tmp_path / "c"), "-q"]) == 0
    after = datetime.datetime.now(datetime.UTC)
    for png, shas in ((tmp_path / "r" / "report.png", [sha_a]), (tmp_path / "c" / "compare.png", [sha_a, sha_b])):
        text = png_text(png)
        assert text["Software"] == f"tilescope {version}" and text["tilescope.version"] == version
        created = datetime.datetime.strptime(text["Creation Time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
        assert before <= created <= after and text["tilescope.created"] == text["Creation Time"]
        assert text["tilescope.source_sha256"].split() == shas
        assert all(sha in text["Source"] for sha in shas)
    with Image.open(tmp_path / "r" / "report.png") as image:
        assert image.size[0] == 1600  # a real picture, not only text
    assert (
        png_text(io.BytesIO((tmp_path / "r" / "report.png").read_bytes()))["Source"]
        == f"{sample_path.name} sha256:{sha_a}"
    )


def test_source_date_epoch_fixes_the_creation_time_so_two_reports_are_the_same_bytes(
    tmp_path, sample_path, monkeypatch
):
    # 1764633600 s = 20,424 days (2025-12-02, 00:00 UTC) after 1970-01-01, worked by hand
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764633600")
    for out in ("a", "b"):
        assert main(["report", str(sample_path), "--out", str(tmp_path / out), "-q"]) == 0
    text = png_text(tmp_path / "a" / "report.png")
    assert text["Creation Time"] == text["tilescope.created"] == "2025-12-02T00:00:00Z"
    assert (tmp_path / "a" / "report.png").read_bytes() == (tmp_path / "b" / "report.png").read_bytes()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "next tuesday")  # malformed: ignored, the time is now's
    assert main(["report", str(sample_path), "--out", str(tmp_path / "c"), "-q"]) == 0
    assert png_text(tmp_path / "c" / "report.png")["Creation Time"] != "2025-12-02T00:00:00Z"
