"""The compiled backend modules built from the installed headers, as test parameters."""
from __future__ import annotations

import importlib
import os

import pytest


def built_module(name: str):
    """``rocpy._lib_<name>`` if this tree's rocpy holds it, else None.

    An editable install of another checkout maps ``rocpy.*`` submodules this
    tree lacks onto that checkout's files (setuptools' finder): such a module
    was built from other headers, so it is not this build's.
    """
    import rocpy
    try:
        mod = importlib.import_module(f"rocpy._lib_{name}")
    except ImportError:
        return None
    here = os.path.dirname(os.path.realpath(rocpy.__file__))
    return mod if os.path.dirname(os.path.realpath(mod.__file__)) == here else None


def backend_modules():
    """The compiled backend modules built from the installed headers."""
    mods = []
    for name in ("stub", "amd"):
        mod = built_module(name)
        if mod is not None:
            mods.append(pytest.param(mod, id=name))
        else:
            mods.append(pytest.param(None, id=name, marks=pytest.mark.skip(
                reason=f"rocpy._lib_{name} is not built in this tree (ROCm libraries not "
                       "installed, or ROCPY_BUILD_AMD=0)")))
    return mods
