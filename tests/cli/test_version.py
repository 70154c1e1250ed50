"""``rocpy --version`` and the one version string it shows."""
from __future__ import annotations

import os

import pytest

import rocpy

from .conftest import ROOT


def test_version_flag_prints_the_package_version(subprocess_cli):
    out = subprocess_cli(["--version"])
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"rocpy {rocpy.__version__}\n"


def test_pyproject_takes_the_version_from_rocpy():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11+")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        meta = tomllib.load(f)
    assert "version" not in meta["project"]
    assert "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "rocpy.__version__"}
