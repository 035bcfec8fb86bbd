"""One glossary: the README quotes every definition of ``tilescope.models.glossary`` word for word,
and the app's summary, step header and timeline show them on hover."""

from __future__ import annotations

import html
from pathlib import Path

from opening_support import open_into

from tilescope.models.glossary import GLOSSARY

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_quotes_every_definition():
    text = README.read_text(encoding="utf-8")
    for term, definition in GLOSSARY.items():
        assert f"- **{term}**: {definition}." in text, term


def test_the_summary_defines_its_words_on_hover(sample_path):
    from tilescope.app.state import SessionState
    from tilescope.app.views.summary import summary_html

    state = SessionState()
    assert open_into(state, sample_path)
    page = summary_html(state)
    for term in (
        "standard peak",
        "interleaved peak",
        "total peak",
        "effective peak",
        "exchange rows",
        "support reserve",
        "fits",
    ):
        assert f'title="{html.escape(GLOSSARY[term], quote=True)}"' in page, term


def test_the_timeline_peak_marks_carry_the_definitions(sample_path):
    from tilescope.app.state import SessionState
    from tilescope.app.views.timeline import TimelineView

    state = SessionState()
    assert open_into(state, sample_path)
    timeline = TimelineView(state=state)
    marks = timeline.peak_source.data
    assert sorted(marks["definition"]) == sorted(
        GLOSSARY[k] for k in ("total peak", "standard peak", "interleaved peak")
    )
    # labels never share a lane
    assert len(set(marks["label_y"])) == len(marks["label_y"]) == 3
    assert all(y > max(marks["y"]) for y in marks["label_y"])
