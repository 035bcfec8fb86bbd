"""The editor's value picker searches on the server (tilescope.derived.value_search, app.widgets.value_picker.ValuePicker).

LabelSearch is checked against the plain definition (labels containing the query, ignoring case,
in label order, the first ``limit``) on generated labels, including newlines and characters whose
lower case is longer. The picker is checked on a synthetic profile of 2,400 values: the browser
gets only the matches of what is typed, never every label.
"""

from __future__ import annotations

import json

import pytest
from bokeh.document import Document
from bokeh.protocol import Protocol
from hypothesis import given, settings
from hypothesis import strategies as st
from opening_support import open_into

from tilescope.app.state import SessionState
from tilescope.app.views.editor import EditorView
from tilescope.app.widgets.value_picker import PICKER_MATCHES
from tilescope.derived.value_search import LabelSearch
from tilescope.synth import write_synthetic_profile

ALPHABET = "ab#1 \nİK"  # 'İ'.lower() is two characters; '\n' is the search's own separator


def reference(labels: list[str], query: str, limit: int) -> list[str]:
    needle = query.lower()
    return [label for label in labels if needle and needle in label.lower()][:limit]


@settings(max_examples=300, deadline=None)
@given(
    labels=st.lists(st.text(alphabet=ALPHABET, max_size=8), max_size=30),
    query=st.text(alphabet=ALPHABET, max_size=4),
    limit=st.integers(min_value=0, max_value=12),
)
def test_matches_are_the_first_labels_containing_the_query(labels, query, limit):
    assert LabelSearch(labels).matches(query, limit) == reference(labels, query, limit)


def test_matches_on_value_labels():
    labels = [f"#{i} block{i // 10}.layer{i % 10}.weight" for i in range(200)]
    search = LabelSearch(labels)
    assert search.matches("#12 ", 10) == ["#12 block1.layer2.weight"]
    assert search.matches("LAYER3", 3) == [
        "#3 block0.layer3.weight",
        "#13 block1.layer3.weight",
        "#23 block2.layer3.weight",
    ]
    assert search.matches("nothing like it", 10) == []
    assert search.matches("", 10) == []
    assert len(search.matches("#", 50)) == 50


@pytest.fixture(scope="module")
def large_state(tmp_path_factory) -> SessionState:
    path = write_synthetic_profile(tmp_path_factory.mktemp("picker") / "b12_l4.memory_profile.json", 12, 4)
    state = SessionState()
    open_into(state, str(path))
    return state


def page_text(view) -> str:
    doc = Document()
    doc.add_root(view.__panel__().get_root(doc))
    return Protocol().create("PULL-DOC-REPLY", "x", doc).content_json


def test_the_picker_sends_only_the_matches_of_what_is_typed(large_state):
    editor = EditorView(state=large_state)
    names = large_state.profile.values.column("name").to_pylist()
    ids = large_state.arrays.value_ids
    assert len(names) == 2400
    shown = editor.value_picker.value
    assert editor.value_picker.options == [shown]
    # The page holds the shown value's label, not the others (a few hundred bytes, not ~100 kB).
    text = page_text(editor)
    far = next(i for i, name in enumerate(names) if name not in shown)
    assert json.dumps(shown) in text
    assert json.dumps(f"#{int(ids[far])} {names[far]}") not in text

    editor.value_picker.value_input = "#"
    assert len(editor.value_picker.options) == PICKER_MATCHES + 1  # the matches, and the shown value kept
    assert editor.value_picker.value == shown

    target = 2345
    label = f"#{int(ids[target])} {names[target]}"
    editor.value_picker.value_input = f"#{int(ids[target])} "
    assert label in editor.value_picker.options
    assert all(option.startswith(f"#{int(ids[target])} ") or option == shown for option in editor.value_picker.options)

    editor.value_picker.value = label  # what the browser sends when the completion is clicked
    assert large_state.selected_values == [int(ids[target])]
    assert editor.value_picker.value == label
    assert names[target] in editor.heading.object
