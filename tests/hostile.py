"""A hostile copy of the sample: value names, group names, the scope and step operation strings
replaced by HTML/script payloads, the file otherwise valid (every recorded figure unchanged).

Each payload that could run sets ``window.__xss`` to its own number (or calls ``alert``), so a
browser test can tell whether any of them ran and which. Which values are renamed, and why:

- 85 ``operation 17 result 0``: the largest value live at the total peak (step 47) and at the
  standard peak (step 45), so it heads the at-step table, the at-step bar and the editor;
- 4 (root) and 49 (its ``(body argument)`` alias) of storage group 4 (4, 5, 49): a group with an
  alias, live at the peak step (4 is live over steps 0–61);
- 153: live at the peak step in the interleaved region;
- 84: 85's predecessor in storage group 83 (they hand over at step 45).

Operation strings stay parseable Debug text: payloads sit inside Debug string literals, with the
step's operation kind (first word) kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "vit_finalist5.memory_profile.json"

VALUE_NAMES = {
    85: '<img src=x onerror="window.__xss=1">',
    4: "<script>window.__xss=2</script>",
    49: '"><svg onload="window.__xss=3">',
    153: "'><img src=x onerror='window.__xss=6'>",
    84: '</code><iframe srcdoc="<script>parent.__xss=7</script>"></iframe>',
}
GROUP_NAMES = {85: "<img src=x onerror=alert(1)>"}
SCOPE = '<script>window.__xss=9</script><b onmouseover="window.__xss=10">finalist</b>'
# step index -> the payload placed in a Debug string literal of that step's operation
OPERATION_PAYLOADS = {
    47: "<img src=x onerror=window.__xss=4>",  # the total peak step
    46: '"><svg onload=window.__xss=5>',
    45: "<script>window.__xss=8</script>",  # the standard peak step
}
# A file name that is itself a payload (legal on Linux: no "/" and no NUL).
HOSTILE_FILE_NAME = '"><img src=x onerror=window.__xss=11>.json'


def debug_string(text: str) -> str:
    """``text`` as a Rust Debug string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def hostile_operation(original: str, payload: str) -> str:
    """The step's operation kind followed by a struct or sequence carrying the payload."""
    kind = original.split(" ", 1)[0].split("{", 1)[0]
    return f"{kind} {{ note: {debug_string(payload)} }}" if "{" in original else f"{kind} {debug_string(payload)}"


@dataclass
class HostileProfile:
    path: Path
    doc: dict
    names: dict[int, str] = field(default_factory=dict)  # value id -> hostile name
    operations: dict[int, str] = field(default_factory=dict)  # step -> hostile operation string
    operation_payloads: dict[int, str] = field(default_factory=dict)  # step -> payload as it reads on screen

    @property
    def all_texts(self) -> list[str]:
        return [*self.names.values(), *self.operations.values(), *GROUP_NAMES.values(), SCOPE]


def hostile_doc(sample: Path = SAMPLE) -> tuple[dict, dict[int, str], dict[int, str]]:
    doc = json.loads(Path(sample).read_text())
    values = {v["id"]: v for v in doc["timeline"]["values"]}
    for value_id, name in VALUE_NAMES.items():
        values[value_id]["name"] = name
    for value_id, group in GROUP_NAMES.items():
        values[value_id]["group"] = group
    doc["scope"] = SCOPE
    steps = doc["timeline"]["steps"]
    operations = {}
    for step, payload in OPERATION_PAYLOADS.items():
        steps[step]["operation"] = operations[step] = hostile_operation(steps[step]["operation"], payload)
    return doc, dict(VALUE_NAMES), operations


def write_hostile_profile(folder: Path, name: str = "hostile.json", sample: Path = SAMPLE) -> HostileProfile:
    """Write the hostile copy as ``folder/name``; the sample itself is only read."""
    doc, names, operations = hostile_doc(sample)
    path = Path(folder) / name
    path.write_text(json.dumps(doc))
    return HostileProfile(path, doc, names, operations, dict(OPERATION_PAYLOADS))
