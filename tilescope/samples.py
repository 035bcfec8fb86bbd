"""Where the bundled sample planner outputs are: inside the installed package
(``tilescope/sample_data/``, see pyproject.toml), or the repository's ``sample_data/`` in a checkout
(an editable install maps that folder, but a folder of data files is not importable there)."""

from __future__ import annotations

from pathlib import Path

MEMORY_PROFILE = "vit_finalist5.memory_profile.json"
SEARCH_STATE = "flash_attention.search_state.json"
EDIT_SET = "edits_84.json"  # an edit set for MEMORY_PROFILE: the advisor's best for its standard peak


def sample_dir() -> Path:
    packaged = Path(__file__).resolve().with_name("sample_data")
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "sample_data"


def sample_path(name: str = MEMORY_PROFILE) -> Path:
    return sample_dir() / name
