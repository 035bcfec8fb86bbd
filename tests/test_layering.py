"""The layers below the app keep to their order (models ← loaders, planner) and to the size limit.

The loaders never import the planner: what both need (the shard rule, the limits, JSON text
checks) lives in ``models``. No module of ``models``, ``loaders`` or ``planner`` is over 500 lines.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {  # package folder → tilescope packages it must not import
    "models": {"loaders", "planner", "derived", "report", "app", "cli"},
    "loaders": {"planner", "derived", "report", "app", "cli"},
    "planner": {"loaders", "derived", "report", "app", "cli"},
}


def imported(path: Path) -> set[str]:
    """The ``tilescope.X`` packages (and relative ``..X``) a module imports, at any depth in it."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.level == 0 and node.module.startswith("tilescope."):
                out.add(node.module.split(".")[1])
            elif node.level >= 2:
                out.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("tilescope.")}
    return out


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_only_go_downward(package):
    for path in sorted((ROOT / package).glob("*.py")):
        assert not imported(path) & FORBIDDEN[package], (path.name, imported(path) & FORBIDDEN[package])


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_module_over_500_lines(package):
    for path in sorted((ROOT / package).glob("*.py")):
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 500, path.name
