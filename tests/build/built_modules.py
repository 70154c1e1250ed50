"""The compiled backend modules built from the installed headers, as test parameters."""
from __future__ import annotations

import pytest


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
