"""A whole report (the PNG and every table) as files: built in memory, written atomically."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tilescope.derived.plan_data import PlanData
from tilescope.models.files import (
    FileAccessError,
    InputPaths,
    exists_already,
    make_directory,
    refuse_inputs,
    write_atomically,
)

from .png import png_of
from .tables import (
    ALLOCATIONS_CSV,
    EDITS_CSV,
    EDITS_JSON,
    PNG_NAME,
    STEPS_CSV,
    VALUES_CSV,
    ReportInput,
    breakdown_name,
    report_input,
    tables_of,
)


@dataclass(frozen=True)
class Report:
    """File name → content, in writing order; ``step`` is the breakdown's step."""

    files: dict[str, bytes]
    step: int

    @property
    def png(self) -> bytes:
        return self.files[PNG_NAME]

    @property
    def breakdown_name(self) -> str:
        return breakdown_name(self.step)


def build_report(data: PlanData, selected_step: int | None = None) -> Report:
    """The whole report. ``selected_step`` defaults to the current plan's total peak step."""
    return report_of(report_input(data, selected_step))


def report_of(data: ReportInput) -> Report:
    return Report({PNG_NAME: png_of(data), **tables_of(data)}, data.step)


def report_names(step: int) -> list[str]:
    """The file names of a report whose breakdown is at ``step``, in writing order."""
    return [PNG_NAME, VALUES_CSV, STEPS_CSV, breakdown_name(step), EDITS_JSON, EDITS_CSV, ALLOCATIONS_CSV]


def check_targets(
    out_dir: str | Path, names: list[str], *, overwrite: bool = False, inputs: InputPaths = ()
) -> list[Path]:
    """The paths to write; FileAccessError if ``out_dir`` is not a directory, if any of the files
    is one of ``inputs`` (the files the report was made from: never written), or (without
    ``overwrite``) exists already. Callers check before the slow build, and again when writing."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise FileAccessError(out, "is not a directory")
    targets = [out / name for name in names]
    inputs = list(inputs)
    for path in targets:
        refuse_inputs(path, inputs)
    if not overwrite:
        for path in targets:
            if path.exists():
                raise exists_already(path)
    return targets


def write_report(
    report: Report, out_dir: str | Path, *, overwrite: bool = False, inputs: InputPaths = ()
) -> list[Path]:
    """Write every file of the report into ``out_dir`` (created if missing).

    Without ``overwrite`` nothing is written when any of the files exists already (FileAccessError
    naming the first one); nothing either when one of them is one of ``inputs``, with or without
    it; each file is written atomically (``models.files``).
    """
    inputs = list(inputs)
    targets = check_targets(out_dir, list(report.files), overwrite=overwrite, inputs=inputs)
    make_directory(out_dir)
    for path, data in zip(targets, report.files.values()):
        write_atomically(path, data, overwrite=overwrite, inputs=inputs)
    return targets
