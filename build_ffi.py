"""The cffi builders, thin: the work is in rocpy/_build.

``cffi_modules()`` lists the backend modules this machine can build: the stub
always, the amd backend when the ROCm libraries are installed, the nvidia
backend when asked for.  A missing
header stops the build with one message saying what to install.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rocpy._build import api as _api  # noqa: E402
from rocpy._build import backends, dropin, typestub  # noqa: E402
from rocpy._build.locate import RocmNotFound  # noqa: E402

_described = {}


def _amd_api():
    if "amd" not in _described:
        try:
            _described["amd"] = _api.describe("amd")
        except RocmNotFound as exc:
            sys.exit(f"rocpy: {exc}")
    return _described["amd"]


def _kept(ffi):
    # cffi runs this file again in its own namespace for cffi_modules: the FFIs are
    # kept in a module both executions share
    typestub.BUILDERS[ffi._assigned_source[0]] = ffi
    return ffi


def ffi_stub():
    return _kept(backends.stub_ffi(_amd_api()))


def ffi_amd():
    return _kept(backends.amd_ffi(_amd_api()))


def ffi_nvidia():
    try:
        return _kept(backends.nvidia_ffi(_api.describe("nvidia"), _amd_api()))
    except RocmNotFound as exc:
        sys.exit(f"rocpy: {exc}")


def cffi_modules():
    """The stub always; amd where ROCm's libraries are; nvidia on request
    (``ROCPY_BUILD_NVIDIA=1``, with CUDA 11 headers: see the README)."""
    mods = ["build_ffi.py:ffi_stub"]
    if os.environ.get("ROCPY_BUILD_NVIDIA") == "1":
        mods.append("build_ffi.py:ffi_nvidia")
    libs = _amd_api().install.libraries
    if "hsa" in libs and "hip" in libs and os.environ.get("ROCPY_BUILD_AMD", "1") != "0":
        mods.append("build_ffi.py:ffi_amd")
    return mods


def dropin_libraries(build_ext_cmd):
    """Link libhsa-runtime64.so.1 / libamdhip64.so.N from the stub's objects
    (after ``build_ext``; see rocpy/_build/dropin.py)."""
    return dropin.build(build_ext_cmd, _amd_api())


def type_stubs(build_ext_cmd):
    """Write ``_lib_X.pyi`` next to each compiled backend module (after ``build_ext``;
    see rocpy/_build/typestub.py)."""
    names = {n: [p for _, p in f.params] for n, f in _amd_api().functions.items()}
    for module, ffi in typestub.BUILDERS.items():
        path = build_ext_cmd.get_ext_fullpath(module)
        typestub.write(ffi, os.path.join(os.path.dirname(path), module.rpartition(".")[2] + ".pyi"),
                       names)
