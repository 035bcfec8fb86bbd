"""The CLI's edits and advice: ``--edit`` numbers are ASCII digits only; ``plan --each`` applies the
advisor's own best edit set (a value's partitions and replicas, valid only together, as one step)
and names an edit it cannot apply; ``advise`` says why it found nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilescope.cli import main
from tilescope.synth import write_synthetic_profile


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("edit", ["٨٤:١=١٨", "84:1=١٨", "84:replicas=²⁷", "８４:1=18"])
def test_edit_numbers_are_ascii_digits_only(edit, capsys, sample_path):
    """``re`` matches ``\\d`` against ``٨`` and ``int`` reads it: ``٨٤:١=١٨`` was applied as 84:1=18."""
    with pytest.raises(SystemExit) as exit_:
        main(["plan", str(sample_path), "--edit", edit])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and "expected V:K=N or V:replicas=N" in err


def test_each_applies_the_advisors_best_set(capsys, sample_path, tmp_path, raw):
    code, out, _ = run(capsys, "advise", str(sample_path), "--peak", "standard", "--json", "-q")
    best = json.loads(out)["candidates"][0]
    edits = tmp_path / "best.json"
    edits.write_text(json.dumps(best["edits"]))
    assert [("replicas" in e) for e in best["edits"]] == [False, True]  # partitions, then replicas, of one value
    code, out, err = run(capsys, "plan", str(sample_path), "--edits", str(edits), "--each", "-q")
    assert code == 0, err
    (line,) = [json.loads(t) for t in out.splitlines()]
    assert line["index"] == 1 and line["edit"]["replicas"] == best["edits"][1]["replicas"]
    assert (
        line["applied_with"][0]["index"] == 0
        and line["applied_with"][0]["edit"]["count"] == best["edits"][0]["partitions"]
    )
    # the README's figures for #84's pair, worked from the profile by hand: 206,032 → 185,680 B
    assert raw["peak"]["standard"] == best["peak_before"] == 206_032
    assert line["standard"] == best["peak_after"] == 185_680
    code, out, _ = run(
        capsys, "plan", str(sample_path), "--edits", str(edits), "--json", "-q"
    )  # the whole set at once agrees
    assert json.loads(out)["peak"]["standard"] == line["standard"]


def test_each_names_the_edit_it_cannot_apply(capsys, sample_path):
    code, out, err = run(
        capsys,
        "plan",
        str(sample_path),
        "--edit",
        "84:1=6",
        "--edit",
        "84:1=18",
        "--edit",
        "85:replicas=3",
        "--each",
        "-q",
    )
    assert code == 2 and len(out.splitlines()) == 1  # the first edit's line, then the refusal
    assert err.count("\n") == 1
    assert err.startswith(
        "tilescope: --edit: edit 1 (value 84: axis 1 partitions → 18) cannot be applied: value 84 axis 1: "
    )
    assert "tile count must not exceed the device's tiles" in err


@pytest.fixture(scope="module")
def two_block_profile(tmp_path_factory):
    path = tmp_path_factory.mktemp("synth") / "two_blocks.json"
    write_synthetic_profile(path, 2, 2)
    return path


@pytest.mark.parametrize("peak", ["total", "standard", "interleaved"])
def test_advise_says_why_it_found_nothing(peak, capsys, two_block_profile):
    """Every block of a synthetic profile repeats the sample's peak, so no single edit lowers it:
    the reason names the steps that reach it, read here from the file's recorded usage."""
    raw = json.loads(two_block_profile.read_text())
    usage = [s["usage"] for s in raw["timeline"]["steps"]]
    figure = [u["standard"] + u["interleaved"] if peak == "total" else u[peak] for u in usage]
    ties = [i for i, f in enumerate(figure) if f == max(figure)]
    assert len(ties) >= 2
    code, out, _ = run(capsys, "advise", str(two_block_profile), "--peak", peak, "--json", "-q")
    found = json.loads(out)
    assert code == 0 and found["candidates"] == []
    why = found["why_none"]
    assert f"the {peak} peak is reached at {len(ties)} steps ({', '.join(map(str, ties[:5]))}" in why
    assert f"left the peak at {raw['peak'][peak]:,} B or more" in why
    code, out, _ = run(capsys, "advise", str(two_block_profile), "--peak", peak, "-q")
    assert out.strip().endswith(why) and "0 verified candidates: " in out


def test_advise_with_candidates_gives_no_reason(capsys, sample_path):
    code, out, _ = run(capsys, "advise", str(sample_path), "--json", "-q")
    assert "why_none" not in json.loads(out) and json.loads(out)["candidates"]


def test_sample_names_the_bundled_files(capsys):
    from tilescope.loaders.edit_sets import load_edit_set
    from tilescope.models.edits import TilingEdit

    code, out, _ = run(capsys, "sample", "--json")
    paths = json.loads(out)
    assert code == 0 and set(paths) == {"profile", "search-state", "edits"}
    for which, path in paths.items():
        code, out, _ = run(capsys, "sample", which)
        assert out == f"{path}\n"
    code, out, _ = run(capsys, "sample")
    assert out == f"{paths['profile']}\n" and json.loads(Path(paths["profile"]).read_text())["version"] == 1
    assert load_edit_set(paths["edits"]) == [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)]


@pytest.mark.parametrize("command", ["plan", "place", "advise", "report", "compare", "sample"])
def test_every_command_taking_an_edit_set_explains_its_format(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "An edit-set file (EDITS.json) is a JSON list of edits" in text
    assert '{"value": ID, "replicas": N} sets its replicas' in text


@pytest.mark.parametrize(
    "argv",
    [
        ["advise", "X", "--limit", "٥"],
        ["compare", "X", "X", "--top", "٣"],
        ["report", "X", "--out", "d", "--step", "٤٥"],
        ["plan", "X", "--json", "--tile", "０"],
        ["synth", "--blocks", "٢", "--out", "x.json"],
        ["batch", "d", "--out", "e", "--workers", "٢"],
        ["regress", "a", "b", "--top", "٣"],
        ["solve", "X", "--time-limit", "٥"],
        ["place", "X", "--exact-seconds", "٥"],
        ["serve", "--num-procs", "٢"],
    ],
)
def test_every_numeric_option_takes_ascii_digits_only(argv, capsys):
    """``int('٥')`` is 5: each typed option refuses such digits as a usage error, before any file is read."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert "expected a number in ASCII digits (0-9)" in err
