"""The Docker files are linted and validated (test_docker_real.py runs them on a real daemon)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import setuptools

ROOT = Path(__file__).resolve().parents[2]


def _tool(name: str) -> str:
    path = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed: `make system-deps` / `make setup` install it")
        pytest.skip(f"{name} is not installed here (CI installs it)")
    return path


def test_dockerfile_passes_hadolint() -> None:
    result = subprocess.run(
        [_tool("hadolint"), str(ROOT / "docker" / "Dockerfile")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_file_is_valid() -> None:
    result = subprocess.run(
        [_tool("docker-compose"), "-f", str(ROOT / "docker" / "compose.yaml"), "config", "-q"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_copies_every_package_folder() -> None:
    """A package pyproject installs but the image does not copy would break the image's install."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = setuptools.find_packages(str(ROOT), include=include)
    copied = set(re.findall(r"^COPY (\w+) ", (ROOT / "docker" / "Dockerfile").read_text(), re.M))
    assert packages
    assert {package.split(".")[0] for package in packages} <= copied
