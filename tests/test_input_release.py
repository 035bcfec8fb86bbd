"""A file's text is handed back to the system as it is parsed (loaders.json_input.InputBuffer).

Loading from a path reads the file into private anonymous memory and releases each batch of
values and each chunk of live lists once parsed; released pages of anonymous memory read back as
zero bytes, which JSON text never contains, so the tests see exactly which text was let go. The
tables must be the same as parsing the bytes whole, and an error found after some text was
released must read exactly as it does from the bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tilescope.loaders import json_input, memory_profile
from tilescope.loaders.memory_profile import load_memory_profile, parse_memory_profile
from tilescope.models.errors import InputError
from tilescope.synth import write_synthetic_profile


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> Path:
    return write_synthetic_profile(tmp_path_factory.mktemp("release") / "b12_l4.memory_profile.json", 12, 4)


@pytest.fixture
def buffers(monkeypatch) -> list[json_input.InputBuffer]:
    """Every InputBuffer read from a file during the test (kept alive so its pages can be read),
    with values decoded 500 at a time so a few-MB file has several batches."""
    read = json_input.InputBuffer.read.__func__
    seen: list[json_input.InputBuffer] = []

    def spy(cls, path):
        buffer = read(cls, path)
        seen.append(buffer)
        return buffer

    monkeypatch.setattr(json_input.InputBuffer, "read", classmethod(spy))
    monkeypatch.setattr(memory_profile, "_BATCH_SIZE", 500)
    return seen


def released_fraction(buffer: json_input.InputBuffer) -> float:
    text = np.frombuffer(buffer.data, dtype=np.uint8)
    return float(np.count_nonzero(text == 0)) / text.size


def test_file_load_releases_its_text_and_builds_the_same_tables(synthetic, buffers):
    from_file = load_memory_profile(synthetic)
    from_bytes = parse_memory_profile(synthetic.read_bytes(), str(synthetic))
    for name, table in from_bytes.tables().items():
        assert from_file.tables()[name].equals(table), name
    (buffer,) = buffers
    assert len(buffer.data) == synthetic.stat().st_size
    # The values (most of a profile) and the live lists go; what stays is the header, the steps'
    # other fields and the pages shared by two batches.
    fraction = released_fraction(buffer)
    values_and_lists = json.loads(synthetic.read_bytes())["timeline"]
    text_share = sum(len(json.dumps(v, separators=(",", ":"))) for v in values_and_lists["values"]) + sum(
        len(json.dumps(s["live"], separators=(",", ":"))) for s in values_and_lists["steps"]
    )
    assert fraction >= 0.9 * text_share / synthetic.stat().st_size
    assert fraction > 0.5


def test_the_file_itself_is_untouched(synthetic, buffers):
    before = synthetic.read_bytes()
    load_memory_profile(synthetic)
    assert synthetic.read_bytes() == before
    assert released_fraction(buffers[0]) > 0.5


def _rewritten(tmp_path: Path, synthetic: Path, change) -> Path:
    data = json.loads(synthetic.read_bytes())
    change(data)
    out = tmp_path / "changed.memory_profile.json"
    out.write_text(json.dumps(data))
    return out


def _last_value_copies_text(data):
    data["timeline"]["values"][-1]["copies"] = "two"


def _last_value_unknown_class(data):
    data["timeline"]["values"][-1]["class"] = "Ipu21Nowhere"


def _late_step_unknown_live_id(data):
    data["timeline"]["steps"][-3]["live"].append(10**9)


def _late_step_bad_live_entry(data):
    data["timeline"]["steps"][-2]["live"].append(-4)


@pytest.mark.parametrize(
    "change, where",
    [
        (_last_value_copies_text, "$.timeline.values[2399].copies"),
        (_last_value_unknown_class, "$.timeline.values[2399].class"),
        (_late_step_unknown_live_id, "$.timeline.steps[1389].live["),
        (_late_step_bad_live_entry, "$.timeline.steps[1390].live"),
    ],
)
def test_an_error_after_text_was_released_reads_as_from_the_bytes(tmp_path, synthetic, buffers, change, where):
    path = _rewritten(tmp_path, synthetic, change)
    with pytest.raises(InputError) as from_bytes:
        parse_memory_profile(path.read_bytes(), str(path))
    with pytest.raises(InputError) as from_file:
        load_memory_profile(path)
    assert str(from_file.value) == str(from_bytes.value)
    assert from_file.value.path.startswith(where), from_file.value.path
    assert released_fraction(buffers[0]) > 0.1  # the error came after text had been let go


def test_a_file_smaller_than_a_page_is_read_as_bytes(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_bytes(b'{"version": 1}')
    buffer = json_input.InputBuffer.read(path)
    assert buffer.data == b'{"version": 1}'
    with pytest.raises(InputError) as caught:
        load_memory_profile(path)
    assert caught.value.file == str(path)
