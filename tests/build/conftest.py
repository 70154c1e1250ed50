"""Fixtures for the build-pipeline tests: the installed headers, run once."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="session")
def installed_api():
    from rocpy._build.api import describe
    return describe("amd")


@pytest.fixture(scope="session")
def installed_preprocessed(installed_api):
    from rocpy._build.preprocess import preprocess
    p = installed_api.platform
    return preprocess(p.headers, installed_api.include_dirs, p.defines)


def backend_modules():
    """The compiled backend modules built from the installed headers."""
    import importlib
    mods = []
    for name in ("stub", "amd"):
        try:
            mods.append(pytest.param(importlib.import_module(f"rocpy._lib_{name}"), id=name))
        except ImportError:
            mods.append(pytest.param(None, id=name, marks=pytest.mark.skip(
                reason=f"rocpy._lib_{name} is not built (ROCm libraries not installed)")))
    return mods
