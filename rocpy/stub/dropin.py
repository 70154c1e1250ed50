"""Where the drop-in ROCm libraries are, and the environment that makes programs load them.

The build links the stub runtime a second time as ``libhsa-runtime64.so.1``
and ``libamdhip64.so.<major>`` (``rocpy/_build/dropin.py``) into
``rocpy/_stub_libs``.  A program built against the real ROCm libraries loads
these instead when their folder comes first in ``LD_LIBRARY_PATH``: it then
runs on the stub's simulated devices, on a machine without a GPU.
``rocpy stub env|run|libdir`` is the command-line face of this module.
"""
from __future__ import annotations

import glob
import os
import sys

FOLDER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_stub_libs")


class DropInMissing(RuntimeError):
    """The drop-in libraries were not built (a source tree never built, or a sanitizer build)."""


def libdir() -> str:
    """The folder holding the drop-in libraries; `DropInMissing` if they were not built."""
    if not glob.glob(os.path.join(FOLDER, "libhsa-runtime64.so.1")) or \
            not glob.glob(os.path.join(FOLDER, "libamdhip64.so.*")):
        raise DropInMissing(
            f"the stub's drop-in libraries are not built (no libhsa-runtime64.so.1 and "
            f"libamdhip64.so.N in {FOLDER}); build rocpy: python3 setup.py build_ext --inplace, "
            f"or bash tools/install.sh")
    return FOLDER


def libraries() -> list[str]:
    """The drop-in libraries' paths (sonames, not the unversioned links)."""
    return sorted(p for p in glob.glob(os.path.join(libdir(), "lib*.so.*")) if not os.path.islink(p))


def include_dir() -> str:
    """The folder holding ``rocpy_stub.h`` (C emulations for programs on the drop-in libraries)."""
    return os.path.join(os.path.dirname(FOLDER), "include")


def environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The variables to set (only those) so that programs load the drop-in libraries.

    ``LD_LIBRARY_PATH`` gets the folder first, ahead of what ``base`` (default:
    this process's environment) has.  ``ROCPY_PYTHON``, unless ``base`` sets it, is
    this interpreter: the stub's ``hiprtcCompileProgram`` runs ``$ROCPY_PYTHON -m
    rocpy cpukern build`` (``hip_rtc_compile.c``), and the ``python3`` on ``PATH``
    may lack rocpy's dependencies (a venv's rocpy, the system's Python).
    """
    base = dict(os.environ) if base is None else base
    folder = libdir()
    rest = [p for p in base.get("LD_LIBRARY_PATH", "").split(":") if p and p != folder]
    env = {"LD_LIBRARY_PATH": ":".join([folder] + rest)}
    if not base.get("ROCPY_PYTHON"):
        env["ROCPY_PYTHON"] = sys.executable
    return env
