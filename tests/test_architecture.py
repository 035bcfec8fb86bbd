"""The layering and the size of modules, read from the source with ``ast`` (README, "Architecture").

Layers, lowest first: models (and ``tilescope.samples``) ← loaders, planner ← derived (and
``tilescope.synth``) ← report, fleet ← app, cli ← the package root (``tilescope/__init__``,
``__main__``). A module may import its own folder and any lower layer, nothing else: loaders and
planner do not import each other, nothing imports the app or the CLI but the root, and the app
and the CLI do not import each other (what loaders and planner both need — the shard rule, the
limits, JSON text checks — lives in ``models``). Below the app nothing imports Panel or Bokeh. No
source module passes 500 lines. (This file is the one architecture test: the former
``tests/test_layering.py`` checked a subset of it.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 500
# Folder of the repository → the package it is installed as (pyproject.toml's package-dir).
FOLDERS = {
    "models": "tilescope.models",
    "loaders": "tilescope.loaders",
    "planner": "tilescope.planner",
    "derived": "tilescope.derived",
    "report": "tilescope.report",
    "fleet": "tilescope.fleet",
    "app": "tilescope.app",
    "tilescope": "tilescope",
}
# Package (or module) → (layer, the unit it belongs to). Longest prefix wins.
LAYERS = {
    "tilescope.models": (0, "models"),
    "tilescope.samples": (0, "samples"),
    "tilescope.loaders": (1, "loaders"),
    "tilescope.planner": (1, "planner"),
    "tilescope.derived": (2, "derived"),
    "tilescope.synth": (2, "synth"),
    "tilescope.report": (3, "report"),
    "tilescope.fleet": (3, "fleet"),
    "tilescope.app": (4, "app"),
    "tilescope.cli": (4, "cli"),
    "tilescope": (5, "root"),
}
UI_LIBRARIES = ("panel", "bokeh")
UI_LAYER = 4  # the app: the only layer that may import Panel or Bokeh


def layer_of(module: str) -> tuple[int, str]:
    for prefix in sorted(LAYERS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return LAYERS[prefix]
    raise KeyError(module)


def source_modules() -> dict[str, Path]:
    """Module name → file, for every source module of the package."""
    found = {}
    for folder, package in FOLDERS.items():
        base = ROOT / folder
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def imports_of(module: str, path: Path, source: str | None = None) -> list[tuple[str, int]]:
    """Every module ``module`` imports (absolute names; also imports inside functions), with lines."""
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((target, node.lineno))
            # ``from tilescope import cli`` imports the module tilescope.cli
            found += [
                (f"{target}.{alias.name}", node.lineno) for alias in node.names if f"{target}.{alias.name}" in LAYERS
            ]
    return found


def violations(module: str, path: Path, source: str | None = None) -> list[str]:
    own_layer, own_unit = layer_of(module)
    out = []
    for target, line in imports_of(module, path, source):
        where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}"
        top = target.split(".")[0]
        if top in UI_LIBRARIES and own_layer < UI_LAYER:
            out.append(f"{where}: {module} imports {target} (only the app may use Panel/Bokeh)")
        if top != "tilescope" or target == "tilescope":
            continue
        layer, unit = layer_of(target)
        if unit == own_unit:
            continue
        if layer >= own_layer:
            out.append(f"{where}: {module} (layer {own_layer}, {own_unit}) imports {target} (layer {layer}, {unit})")
    return out


def test_every_import_goes_downward():
    modules = source_modules()
    assert {"tilescope.app.main", "tilescope.derived.plan_data", "tilescope.loaders.cache", "tilescope.cli"} <= set(
        modules
    )
    found = [v for module, path in modules.items() for v in violations(module, path)]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    "module, source",
    [
        ("tilescope.loaders.example", "from tilescope.planner.model import Plan\n"),  # loaders ↛ planner
        ("tilescope.loaders.example", "from ..planner import shards\n"),  # the same, relative
        ("tilescope.planner.example", "def f():\n    import panel\n"),  # no UI below the app, even inside a function
        ("tilescope.derived.example", "from tilescope import cli\n"),  # nothing imports the CLI
        ("tilescope.report.example", "import tilescope.app.state\n"),  # nothing imports the app
        ("tilescope.app.example", "from tilescope.cli.inputs import open_profile\n"),  # the app ↛ the CLI
        ("tilescope.models.example", "from tilescope.derived.live import LiveSet\n"),  # upward
    ],
)
def test_the_check_catches_an_import_against_the_layering(module, source):
    folder = {
        "tilescope.loaders": "loaders",
        "tilescope.planner": "planner",
        "tilescope.derived": "derived",
        "tilescope.report": "report",
        "tilescope.app": "app",
        "tilescope.models": "models",
    }[module.rpartition(".")[0]]
    assert violations(module, ROOT / folder / "example.py", source)


def test_allowed_imports_pass_the_check():
    assert (
        violations(
            "tilescope.derived.example",
            ROOT / "derived" / "example.py",
            "from tilescope.planner.live import live_rows_at\nfrom .values import tiling_summary\nimport numpy\n",
        )
        == []
    )
    assert (
        violations(
            "tilescope.app.example",
            ROOT / "app" / "example.py",
            "import panel\nfrom tilescope.report.png import png_of\n",
        )
        == []
    )


def test_no_source_module_passes_500_lines():
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in source_modules().values()}
    assert sizes, "no source found"
    over = {str(path.relative_to(ROOT)): n for path, n in sizes.items() if n > MAX_LINES}
    assert over == {}, over


def test_javascript_and_css_live_in_their_own_files():
    """No view carries a script or a stylesheet in a Python string."""
    markers = ("function ", "=> {", "export function", "{ display:", "font-size:", "border-radius:")
    for path in (ROOT / "app").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" in node.value:
                assert not any(m in node.value for m in markers), (
                    f"{path.relative_to(ROOT)}:{node.lineno} holds CSS or JavaScript"
                )


PACKAGES = [
    "tilescope",
    "tilescope.models",
    "tilescope.loaders",
    "tilescope.planner",
    "tilescope.planner.solver",
    "tilescope.derived",
    "tilescope.report",
    "tilescope.fleet",
    "tilescope.app",
    "tilescope.app.views",
    "tilescope.app.widgets",
    "tilescope.cli",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_has_a_public_face(package):
    """``__all__`` on each package, every name in it there (looked up as a user would)."""
    import importlib

    module = importlib.import_module(package)
    names = module.__all__
    assert isinstance(names, list) and len(set(names)) == len(names)
    missing = [name for name in names if not hasattr(module, name)]
    assert missing == [], missing
