"""Byte figures and sizes as a person reads and types them (``models.format``): the scaled figure
beside the exact bytes climbs KiB → MiB → GiB, and one parser reads every size option, so ``5MB``
means 5,000,000 bytes to ``regress --threshold``, ``TILESCOPE_CACHE_MAX_BYTES`` and the app's
``--max-file-bytes`` alike. Expected texts are worked by hand here."""

from __future__ import annotations

import json

import pytest

from tilescope import cli
from tilescope.app.loading import parse_app_args
from tilescope.fleet.regress import parse_threshold
from tilescope.models.format import fmt_bytes, fmt_signed_bytes, parse_size


@pytest.mark.parametrize(
    "n, text",
    [
        (0, "0 B (0.0 KiB)"),
        (512, "512 B (0.5 KiB)"),
        (429_904, "429,904 B (419.8 KiB)"),
        (1_048_575, "1,048,575 B (1,024.0 KiB)"),  # one byte short of a MiB: still KiB
        (1_048_576, "1,048,576 B (1.0 MiB)"),
        (92_480_619, "92,480,619 B (88.2 MiB)"),  # the 92 MB profile: 92,480,619 / 1,048,576 = 88.196…
        (4 * 1024**3, "4,294,967,296 B (4.0 GiB)"),  # the cache's default cap, once "4,194,304.0 KiB"
        (3 * 1024**4 + 1024**4 // 2, "3,848,290,697,216 B (3.5 TiB)"),
        (2**53, "9,007,199,254,740,992 B (8.0 PiB)"),  # the largest figure tilescope computes
    ],
)
def test_fmt_bytes_picks_the_largest_unit_reached(n, text):
    assert fmt_bytes(n) == text


def test_differences_scale_the_same_way():
    assert fmt_signed_bytes(0) == "±0 B"
    assert fmt_signed_bytes(-20_352) == "−20,352 B (−19.9 KiB)"
    assert fmt_signed_bytes(114_688) == "+114,688 B (+112.0 KiB)"
    assert fmt_signed_bytes(3 * 1024**2) == "+3,145,728 B (+3.0 MiB)"
    assert fmt_signed_bytes(-5 * 1024**3) == "−5,368,709,120 B (−5.0 GiB)"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0", 0),
        ("4096", 4096),
        ("4096B", 4096),
        ("500K", 500_000),
        ("500kb", 500_000),
        ("4KiB", 4096),
        ("5MB", 5_000_000),
        ("5 MB", 5_000_000),
        ("5MiB", 5 * 2**20),
        ("1.5G", 1_500_000_000),
        ("1.5GiB", 3 * 2**29),
        ("2T", 2 * 10**12),
        ("1_000", 1000),
        (" 2g ", 2 * 10**9),
    ],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    "text", ["", "MB", "-1", "5x", "5MBB", "1.1B", "0.3B", "²", "5MB²", "٥MB", "１０", "1e6", "5 M B"]
)
def test_parse_size_refuses_anything_else(text):
    """Non-ASCII digits (``²``, Arabic-Indic ``٥``, fullwidth ``１０``) are not numbers here."""
    with pytest.raises(ValueError):
        parse_size(text)


def test_every_size_option_reads_5MB_the_same(monkeypatch, capsys, tmp_path):
    assert parse_threshold("5MB").bytes == 5_000_000
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TILESCOPE_CACHE_MAX_BYTES", "5MB")
    assert cli.main(["cache", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["max_bytes"] == 5_000_000
    monkeypatch.setenv("TILESCOPE_CACHE_MAX_BYTES", "4GiB")
    assert cli.main(["cache", "list"]) == 0
    assert "of at most 4,294,967,296 B (4.0 GiB)" in capsys.readouterr().out
    assert parse_app_args(["--max-file-bytes", "5MB"]).max_file_bytes == 5_000_000
