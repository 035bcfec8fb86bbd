"""The lock files agree with pyproject.toml (a dependency added without ``make lock`` fails here),
with each other, and, under CI, with the environment the tests run in."""

from __future__ import annotations

import importlib.metadata
import os
import re
import tomllib

import pytest
from browser_support import REPO_ROOT
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

LOCKS = REPO_ROOT / "requirements"
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)")


def pins(lock: str) -> dict[str, str]:
    found = {}
    for line in (LOCKS / lock).read_text().splitlines():
        match = _PIN.match(line)
        if match:
            name = canonicalize_name(match["name"])
            assert name not in found, f"{lock} pins {name} twice: every machine must get one version"
            found[name] = match["version"]
    return found


def declared() -> tuple[list[Requirement], list[Requirement]]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in project["dependencies"]], [
        Requirement(r) for r in project["optional-dependencies"]["test"]
    ]


@pytest.mark.parametrize("lock, which", [("run.lock", "run"), ("test.lock", "test")])
def test_every_dependency_is_pinned_within_its_bounds(lock, which):
    run, test = declared()
    pinned = pins(lock)
    for requirement in run + (test if which == "test" else []):
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{requirement} is not in requirements/{lock}: run `make lock`"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"requirements/{lock} pins {name}=={pinned[name]}, outside {requirement.specifier}: run `make lock`"
        )


def test_every_dependency_has_both_bounds():
    run, test = declared()
    for requirement in run + test:
        operators = {spec.operator for spec in requirement.specifier}
        assert ">=" in operators and "<" in operators, (
            f"{requirement}: a tested lower bound and an upper bound below the next major"
        )


def test_the_run_lock_is_the_test_locks_stack():
    run, test = pins("run.lock"), pins("test.lock")
    assert {name: test.get(name) for name in run} == run  # the same versions, so `make run` runs what CI tested


def test_the_test_environment_is_the_locked_one():
    if not os.environ.get("CI"):
        pytest.skip("a developer's venv may hold more; CI installs exactly the lock (make test)")
    differing = {}
    for name, version in pins("test.lock").items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a package of another platform (the lock is for every platform)
        if installed != version:
            differing[name] = (installed, version)
    assert differing == {}, f"installed vs locked: {differing}"
