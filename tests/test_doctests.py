"""Run the doctest examples of every hetsched module."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import hetsched

PACKAGES = [
    "hetsched",
    "hetsched.core",
    "hetsched.heuristics",
    "hetsched.schedulers",
    "hetsched.engine",
    "hetsched.platforms",
    "hetsched.workloads",
    "hetsched.metrics",
    "hetsched.running",
    "hetsched.studies",
]


def _modules() -> list[str]:
    names = []
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        names.append(package_name)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
            names.append(info.name)
    return sorted(set(names))


@pytest.mark.parametrize("module_name", _modules())
def test_doctests(module_name: str) -> None:
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {module_name}"


def test_version() -> None:
    assert hetsched.__version__
