"""The robustness corpus (``tests/corpus/robust``, written by ``tests/corpus/make_robust_corpus.py``):
every case under every command, each with the exact outcome ``robust/expected.json`` states
(docs/formats.md §6): a valid plan (exit 0 everywhere), a refusal (exit 2, one line naming the
file and the place, from every command), or a ``check`` finding (exit 1 with its lines; the other
commands exit 0). Expectations were written from docs/formats.md, not from tilescope's output.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tilescope import cli

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"
ROBUST = CORPUS / "robust"
EXPECTED = json.loads((ROBUST / "expected.json").read_text(encoding="utf-8"))
BASE = CORPUS / "base_valid.json"
PROFILE_CASES = sorted(name for name, entry in EXPECTED.items() if entry["edits"] is None)
EDIT_CASES = sorted(name for name, entry in EXPECTED.items() if entry["edits"] is not None)


def commands(path: Path, out: Path) -> dict[str, list[str]]:
    return {
        "check": ["check", str(path)],
        "plan": ["plan", str(path), "--json"],
        "summary": ["summary", str(path), "--json"],
        "normalise": ["normalise", str(path), "--out", str(out / "tables"), "--overwrite"],
        "advise": ["advise", str(path), "--json"],
        "report": ["report", str(path), "--out", str(out / "report"), "--overwrite"],
    }


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def assert_refusal(err: str, file: Path, entry: dict) -> None:
    assert err.endswith("\n") and err.count("\n") == 1, err
    prefix = f"tilescope: {file}: at "
    assert err.startswith(prefix), err
    located = err[len(prefix) :].split(": expected ", 1)[0]
    assert entry["path"] in located, (entry["path"], err)
    for word in entry["words"]:
        assert word in err, (word, err)


def test_corpus_is_what_the_generator_writes(tmp_path):
    sys.path.insert(0, str(CORPUS))
    try:
        import make_robust_corpus
    finally:
        sys.path.remove(str(CORPUS))
    written = make_robust_corpus.write_corpus(tmp_path)
    assert written == EXPECTED
    for name in [*EXPECTED, "expected.json"]:
        assert (tmp_path / name).read_bytes() == (ROBUST / name).read_bytes(), name
    outcomes = {entry["outcome"] for entry in EXPECTED.values()}
    assert outcomes == {"valid", "refused", "check"}


@pytest.mark.parametrize("name", PROFILE_CASES)
def test_every_command_on_each_case(name, tmp_path, capsys):
    entry, path = EXPECTED[name], ROBUST / name
    for command, argv in commands(path, tmp_path).items():
        code, out, err = run(argv, capsys)
        assert "Traceback" not in err
        if entry["outcome"] == "refused":
            assert code == 2 and out == "", (command, code, err)
            assert_refusal(err, path, entry)
        elif entry["outcome"] == "check" and command == "check":
            assert code == 1, (command, out, err)
            lines = out.splitlines()
            assert len(lines) == entry["findings"], out
            for word in entry["words"]:
                assert word in out, (word, out)
            found = entry["findings"]
            assert err == f"0 mismatches, {found} invariant violation{'' if found == 1 else 's'}\n"
        else:
            assert code == 0 and err == "", (command, code, err)
            if command == "check":
                assert out.startswith("ok: ") and "reproduce exactly" in out
            if command in ("plan", "summary", "advise"):
                json.loads(out)  # one JSON document


@pytest.mark.parametrize("name", EDIT_CASES)
def test_every_command_taking_edits_refuses_a_hostile_edit_set(name, tmp_path, capsys):
    entry, path = EXPECTED[name], ROBUST / name
    for argv in (
        ["plan", str(BASE), "--edits", str(path)],
        ["plan", str(BASE), "--edits", str(path), "--each"],
        ["advise", str(BASE), "--edits", str(path)],
        ["report", str(BASE), "--edits", str(path), "--out", str(tmp_path / "report")],
    ):
        code, out, err = run(argv, capsys)
        assert code == 2 and out == "", (argv, err)
        assert_refusal(err, path, entry)
    assert not (tmp_path / "report").exists()  # refused before anything is written


def test_largest_accepted_figures_are_exact_under_the_largest_edit(capsys):
    """At the bound a what-if edit may still make the value its largest (one partition): the plan
    says exactly 2^53 bytes and does not fit, computed with no overflow."""
    path = ROBUST / "bound_largest_accepted.json"
    code, out, err = run(["plan", str(path), "--json", "--edit", "0:0=1"], capsys)
    assert code == 0, err
    plan = json.loads(out)
    assert plan["usage"]["standard"] == [2**53]
    assert plan["values"][0]["bytes"] == 2**53 and plan["peak"]["total"] == 2**53
    assert plan["effective_peak_bytes"] == 2**53 and plan["fits_budget"] is False
