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
