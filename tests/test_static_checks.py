"""The static checks of CI (``tests/static_checks.py``, also ``make check``) run from ``make test``:
ruff's lint and format check and mypy over the source find nothing, and each fails on a finding
put into a temporary copy of a real module (the source itself is never changed)."""

from __future__ import annotations

import shutil

from static_checks import REPO, mypy, ruff_format_check, ruff_lint


def test_ruff_lint_finds_nothing():
    code, output = ruff_lint()
    assert code == 0, output


def test_the_source_is_formatted():
    code, output = ruff_format_check()
    assert code == 0, output


def test_mypy_finds_nothing():
    code, output = mypy()
    assert code == 0, output


def test_each_check_fails_on_a_finding(tmp_path):
    models = tmp_path / "models"
    shutil.copytree(REPO / "models", models, ignore=shutil.ignore_patterns("__pycache__"))
    module = models / "format.py"
    text = module.read_text(encoding="utf-8")
    code, _ = ruff_lint([str(module)])
    assert code == 0  # the copy as it is passes (the findings below are the ones put in)

    unused = text.replace(
        "from __future__ import annotations\n", "from __future__ import annotations\n\nimport os\n", 1
    )
    (tmp_path / "unused.py").write_text(unused, encoding="utf-8")
    code, output = ruff_lint([str(tmp_path / "unused.py")])
    assert code == 1 and "F401" in output and "`os` imported but unused" in output, output

    (tmp_path / "unformatted.py").write_text("x = [1,2 ,   3]\n", encoding="utf-8")
    code, output = ruff_format_check([str(tmp_path / "unformatted.py")])
    assert code == 1 and "unformatted.py" in output, output

    module.write_text(text + '\n\ndef _wrong() -> int:\n    return "not an int"\n', encoding="utf-8")
    code, output = mypy(tmp_path / "tree", replace={"tilescope.models": models})
    assert code == 1 and "models/format.py" in output and "[return-value]" in output, output
