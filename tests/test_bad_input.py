"""Bad input gets one clear, located message and nothing else (loader and CLI).

The corpus (``tests/corpus``, written by ``tests/corpus/make_corpus.py`` from the sample) holds one
file per way a memory profile can be wrong; ``expected.json`` says, for each, which JSON path the
message must name and which words it must contain. Those expectations were written by hand from
docs/formats.md, not copied from the loader's output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tilescope import cli
from tilescope.loaders.layouts import layout_from_debug_text
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.loaders.search_state import load_search_state
from tilescope.models.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))
BASE = CORPUS / "base_valid.json"
SAMPLE_PROFILE = ROOT / "sample_data" / "vit_finalist5.memory_profile.json"
SAMPLE_SEARCH_STATE = ROOT / "sample_data" / "flash_attention.search_state.json"
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable

# The CLI also runs as a real subprocess, on files rejected by each layer of the loader (bytes,
# JSON syntax, msgspec types, Debug text, live lists, ids). Every corpus file goes through the same
# ``cli.main`` in-process below; a subprocess spends seconds on imports, so these are a selection.
SUBPROCESS_CASES = [
    ("check", "empty.json"),
    ("check", "syntax_semicolon.json"),
    ("check", "live_string_id.json"),
    ("check", "root_unknown.json"),
    ("plan", "not_utf8.json"),
    ("plan", "shard_bytes_negative.json"),
    ("plan", "layout_unbalanced.json"),
]


def assert_located(message: str, file: Path, entry: dict) -> None:
    """One line: ``FILE: at PATH: expected X[, found Y]`` with the corpus's path and words."""
    assert "\n" not in message and "\r" not in message, message
    assert message.startswith(f"{file}: at "), message
    where = message[len(f"{file}: at ") :]
    assert ": expected " in where, message
    located = where.split(": expected ", 1)[0]
    if entry["path"] == "$":  # the file as a whole: nothing more precise may be claimed
        assert located == "$", message
    else:
        assert entry["path"] in located, (entry["path"], message)
    for word in entry["words"]:
        assert word in message, (word, message)
    assert "Traceback" not in message


# ----------------------------------------------------------------------------- the corpus itself


def test_corpus_is_large_and_fully_described():
    bad = sorted(p.name for p in CORPUS.glob("*.json") if p.name not in ("expected.json", BASE.name))
    assert len(bad) >= 40
    assert bad == sorted(EXPECTED)
    for entry in EXPECTED.values():
        assert entry["path"].startswith(("$", "byte")) and entry["words"]


def test_corpus_files_are_what_the_generator_writes(tmp_path):
    sys.path.insert(0, str(CORPUS))
    try:
        import make_corpus
    finally:
        sys.path.remove(str(CORPUS))
    written = make_corpus.write_corpus(tmp_path)
    assert written == EXPECTED
    for name in [*EXPECTED, BASE.name, "expected.json"]:
        assert (tmp_path / name).read_bytes() == (CORPUS / name).read_bytes(), name


def test_base_is_valid_and_its_figures_reproduce(capsys):
    """Each corpus file fails only because of its one mutation: the file it was cut from passes
    ``check`` (its usage and peaks were recomputed by the generator from docs/formats.md §2)."""
    profile = load_memory_profile(BASE)
    assert profile.n_values == 15 and profile.n_steps == 6
    assert cli.main(["check", str(BASE)]) == 0
    assert "reproduce exactly" in capsys.readouterr().out


# ----------------------------------------------------------------------------- loader


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loader_names_file_and_path(name):
    path = CORPUS / name
    with pytest.raises(InputError) as info:
        load_memory_profile(path)
    assert info.value.file == str(path)
    assert_located(str(info.value), path, EXPECTED[name])


def test_debug_error_shows_position_and_surrounding_text():
    # The ':' after memory_class is missing: the parser stops at the name that follows it.
    text = "Layout { order: RowMajor, tiling: TensorTiling { tile_count: 1, replicas: 1, axes: [] }, memory_class Ipu21Standard }"
    position = text.index("Ipu21Standard")
    with pytest.raises(InputError) as info:
        layout_from_debug_text(text, "$.timeline.values[7].layout")
    message = str(info.value)
    assert f"$.timeline.values[7].layout (character {position})" in message
    assert repr(text[position - 20 : position + 20]) in message
    assert "':'" in message  # what was expected there


# ----------------------------------------------------------------------------- CLI


@pytest.mark.parametrize("command", ["check", "plan"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cli_exits_2_with_one_line(name, command, capsys):
    path = CORPUS / name
    assert cli.main([command, str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("tilescope: ")
    assert_located(err[len("tilescope: ") : -1], path, EXPECTED[name])


def _run(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [PYTHON, "-m", "tilescope", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.fixture(scope="module")
def subprocess_results():
    """Start every CLI subprocess of this module at once (each spends seconds importing), then
    collect ``(exit code, stdout, stderr)`` per ``(command, file)``."""
    runs = {(command, name): _run(command, str(CORPUS / name)) for command, name in SUBPROCESS_CASES}
    for command in ("check", "plan"):
        runs[(command, "search state")] = _run(command, str(SAMPLE_SEARCH_STATE))
    results = {}
    for key, process in runs.items():
        out, err = process.communicate(timeout=300)
        results[key] = (process.returncode, out, err)
    return results


@pytest.mark.parametrize("command, name", SUBPROCESS_CASES)
def test_cli_subprocess_exits_2_with_one_line(subprocess_results, name, command):
    code, out, err = subprocess_results[(command, name)]
    assert code == 2, err
    assert out == ""
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("tilescope: ")
    assert_located(err[len("tilescope: ") : -1], CORPUS / name, EXPECTED[name])


@pytest.mark.parametrize("command", ["check", "plan"])
def test_cli_given_a_search_state_says_so(subprocess_results, command):
    code, out, err = subprocess_results[(command, "search state")]
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"tilescope: {SAMPLE_SEARCH_STATE}: at $: ")
    assert "expected a memory profile" in err and "search state" in err.split("found", 1)[1]


def test_search_state_loader_given_a_profile_says_so():
    with pytest.raises(InputError) as info:
        load_search_state(SAMPLE_PROFILE)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{SAMPLE_PROFILE}: at $")
    assert "expected a search state" in message and "memory profile" in message.split("found", 1)[1]


def test_memory_profile_loader_given_a_search_state_says_so():
    with pytest.raises(InputError) as info:
        load_memory_profile(SAMPLE_SEARCH_STATE)
    message = str(info.value)
    assert message.startswith(f"{SAMPLE_SEARCH_STATE}: at $: ")
    assert "expected a memory profile" in message and "search state" in message.split("found", 1)[1]


def test_missing_file_is_one_line(tmp_path, capsys):
    missing = tmp_path / "nowhere.memory_profile.json"
    assert cli.main(["check", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err == f"tilescope: {missing}: cannot read it: No such file or directory\n"  # no JSON path: nothing was read
