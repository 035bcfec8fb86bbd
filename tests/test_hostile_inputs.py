"""Inputs that are not files, names that are not text, and error lines (docs/formats.md §6):

- every command refuses a FIFO, ``/dev/zero`` (also through a symlink), a directory and a socket,
  as its input and as ``--edits``, with one located line and without reading, waiting or hashing;
- an error line is one line whatever the file name holds (newlines, ANSI escapes, bidi controls
  escaped; a 5,000-digit token cut), and never glued to an unfinished progress line.
"""

from __future__ import annotations

import io
import json
import os
import socket
import threading
from pathlib import Path

import pytest

from tilescope import cli
from tilescope.cli import progress as progress_module
from tilescope.cli.progress import StderrProgress
from tilescope.loaders.cache import content_key
from tilescope.loaders.edit_sets import load_edit_set
from tilescope.loaders.json_input import InputBuffer, read_bytes
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.loaders.search_state import load_search_state
from tilescope.models.errors import InputError, one_line

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "vit_finalist5.memory_profile.json"
BASE = ROOT / "tests" / "corpus" / "base_valid.json"
WATCHDOG_SECONDS = 30  # a refusal is immediate; this only turns a hang into a failure


@pytest.fixture
def special_files(tmp_path):
    """``{description: (path, what the error must say it is)}``, made for the test."""
    fifo = tmp_path / "pipe.memory_profile.json"
    os.mkfifo(fifo)
    zero_link = tmp_path / "zero.memory_profile.json"
    zero_link.symlink_to("/dev/zero")
    folder = tmp_path / "folder.memory_profile.json"
    folder.mkdir()
    sock_path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(sock_path))
    try:
        yield {
            "fifo": (fifo, "a FIFO (named pipe)"),
            "/dev/zero": (Path("/dev/zero"), "a character device"),
            "link to /dev/zero": (zero_link, "a character device"),
            "directory": (folder, "a directory"),
            "socket": (sock_path, "a socket"),
        }
    finally:
        server.close()


def run_with_watchdog(argv: list[str]) -> tuple[int, str]:
    """``cli.main(argv)`` in a thread, its exit code and stderr; fails if it does not return."""
    result: dict = {}
    stderr = io.StringIO()

    def target():
        import contextlib

        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            result["code"] = cli.main(argv)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(WATCHDOG_SECONDS)
    assert not thread.is_alive(), f"{argv} did not return within {WATCHDOG_SECONDS} s"
    return result["code"], stderr.getvalue()


@pytest.mark.parametrize("use_cache", [True, False])
def test_every_command_refuses_special_files(special_files, tmp_path, monkeypatch, use_cache):
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    if not use_cache:
        monkeypatch.setenv("TILESCOPE_NO_CACHE", "1")
    for path, what in special_files.values():
        for argv in (
            ["check", str(path)],
            ["plan", str(path)],
            ["summary", str(path)],
            ["advise", str(path)],
            ["normalise", str(path), "--out", str(tmp_path / "tables")],
            ["report", str(path), "--out", str(tmp_path / "report")],
            ["plan", str(BASE), "--edits", str(path)],
            ["advise", str(BASE), "--edits", str(path)],
            ["report", str(BASE), "--edits", str(path), "--out", str(tmp_path / "report")],
            ["synth", "--blocks", "1", "--layers", "1", "--sample", str(path), "--out", str(tmp_path / "synth.json")],
        ):
            code, err = run_with_watchdog(argv)
            assert code == 2, (argv, err)
            assert err == f"tilescope: {path}: cannot read it: {what}, not a regular file\n", (argv, err)
    assert (
        not (tmp_path / "tables").exists()
        and not (tmp_path / "report").exists()
        and not (tmp_path / "synth.json").exists()
    )


def test_every_reader_refuses_special_files_before_reading(special_files):
    """The check lives where files are opened (``loaders.json_input.open_input``), for the app too."""
    readers = (read_bytes, InputBuffer.read, load_memory_profile, load_search_state, load_edit_set, content_key)
    for path, what in special_files.values():
        for read in readers:
            with pytest.raises(InputError) as info:
                read(path)
            assert str(info.value) == f"{path}: cannot read it: {what}, not a regular file", read


def test_error_lines_stay_one_line_whatever_the_name(tmp_path, capsys):
    name = tmp_path / "evil\nname\x1b[31m\u202e.json"
    name.write_bytes(BASE.read_bytes()[:100])
    assert cli.main(["check", str(name)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and "\u202e" not in err
    assert "evil\\nname\\x1b[31m\\u202e.json: at byte" in err


def exit_code(argv: list[str]) -> int:
    """``cli.main``'s exit code, also for an argument error (argparse exits)."""
    try:
        return cli.main(argv)
    except SystemExit as exc:
        return int(exc.code)


def test_long_tokens_are_cut(tmp_path, capsys):
    digits = "7" * 5000
    assert exit_code(["report", str(BASE), "--step", digits, "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 400 and "[5,002 characters]" in err
    assert exit_code(["plan", str(BASE), "--edit", f"84:1={digits}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 400 and "at most 16 digits" in err
    deep = tmp_path / ("d" * 200)
    deep.mkdir()
    long_name = deep / ("n" * 200)  # a token of 400+ characters: head and tail kept
    assert cli.main(["check", str(long_name)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "characters]…" in err and err.rstrip().endswith("No such file or directory")


def test_one_line_escapes_every_control_character():
    text = " ".join(chr(c) for c in [*range(0x20), 0x7F, 0x9B, 0x2028, 0x202E, 0xD800]) + " ok"
    line = one_line(text)
    assert line.isprintable() and line.endswith(" ok")
    assert "\\n" in line and "\\x1b" in line and "\\x9b" in line and "\\u202e" in line and "\\ud800" in line


def test_an_error_is_never_glued_to_a_progress_line(tmp_path, monkeypatch, capsys):
    """On a non-terminal stderr the progress line ends with a newline before the error line."""
    broken = tmp_path / "cut.memory_profile.json"
    broken.write_bytes(SAMPLE.read_bytes()[:5000])
    monkeypatch.setenv("TILESCOPE_NO_CACHE", "1")
    monkeypatch.setattr(
        progress_module,
        "progress_for",
        lambda path, quiet=False, stream=None: StderrProgress("loading cut", __import__("sys").stderr),
    )
    assert cli.main(["check", str(broken)]) == 2
    lines = capsys.readouterr().err.split("\n")
    assert lines[-1] == "" and lines[-2].startswith(f"tilescope: {broken}: at byte 5000")
    assert "loading cut: decoding JSON" in lines[-3] and "tilescope" not in lines[-3]


SEARCH_STATE = ROOT / "sample_data" / "flash_attention.search_state.json"


def _changed(text: str, old: str, new: str) -> bytes:
    assert old in text, old
    return text.replace(old, new, 1).encode()


def _search_state_case(name: str) -> bytes:
    text = SEARCH_STATE.read_text(encoding="utf-8")
    doc = json.loads(text)
    if name == "repeated key":
        return _changed(text, '"attempts":', '"attempts": 1, "attempts":')
    if name == "surrogate in the context":
        assert 'name: "query"' in doc["context"]
        doc["context"] = doc["context"].replace('name: "query"', 'name: "q\\u{D800}"', 1)
    elif name == "lone surrogate escape":
        return _changed(text, '"version":1', '"version":1, "note": "\\udc00"')
    elif name == "an id key of 5,000 digits":
        doc["inputs"]["7" * 5000] = doc["inputs"]["0"]
    elif name == "nested past 256":
        return _changed(text, '"version":1', '"version":1, "deep": ' + "[" * 300 + "]" * 300)
    elif name == "a tensor past 2^53 elements":
        assert "TensorShape([4, 17, 72])" in doc["context"]
        doc["context"] = doc["context"].replace("TensorShape([4, 17, 72])", f"TensorShape([{2**44}, 17, 72])")
    return json.dumps(doc).encode()


@pytest.mark.parametrize(
    "name, located, words",
    [
        ("repeated key", "$.attempts (byte", ["each key once", "'attempts' a second time"]),
        ("surrogate in the context", "$.context line 1 (character", ["surrogates"]),
        ("lone surrogate escape", "byte", ["lone \\udc00"]),
        ("an id key of 5,000 digits", "$.inputs", ["keys that are ids", "…"]),
        ("nested past 256", "byte", ["nested at most 256 deep"]),
        ("a tensor past 2^53 elements", "$.context line 1", ["at most 9007199254740992 elements"]),
    ],
)
def test_search_state_text_keys_and_sizes(name, located, words, tmp_path, capsys):
    path = tmp_path / "hostile.search_state.json"
    path.write_bytes(_search_state_case(name))
    with pytest.raises(InputError) as info:
        load_search_state(path)
    message = str(info.value)
    assert message.startswith(f"{path}: at {located}") and message.isprintable() and len(message) < 600, message
    for word in words:
        assert word in message, (word, message)
    assert cli.main(["summary", str(path)]) == 2
    assert capsys.readouterr().err == f"tilescope: {message}\n"


def test_repeated_keys_are_proved_absent_by_counting_not_scanned(monkeypatch):
    """The sample and the corpus base are proved free of repeated keys by their ':' count (no scan);
    a file with unknown fields is scanned, and a repeated key in one is refused."""
    import tilescope.loaders.memory_profile as memory_profile

    scanned = []
    real = memory_profile.refuse_duplicate_keys
    monkeypatch.setattr(memory_profile, "refuse_duplicate_keys", lambda data: scanned.append(len(data)) or real(data))
    load_memory_profile(SAMPLE)
    load_memory_profile(BASE)
    assert scanned == []
    load_memory_profile(ROOT / "tests" / "corpus" / "robust" / "unknown_fields.json")
    assert len(scanned) == 1
    text = BASE.read_text().replace('"scope": "finalist-5",', '"scope": "finalist-5", "extra": {"a": 1, "a": 2},', 1)
    with pytest.raises(InputError) as info:
        memory_profile.parse_memory_profile(text.encode(), "extra.json")
    assert str(info.value).startswith("extra.json: at $.extra.a (byte ")
